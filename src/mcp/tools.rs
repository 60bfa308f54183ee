//! The tool table. Every tool is the command of the same name: its arguments become a
//! command line, parsed by the same clap definitions, run by `commands::dispatch` with a
//! capturing Printer, and its `--json` report is the result's `structuredContent` (same
//! `schema` name). No tool has a rule or a report of its own. Input schemas are derived
//! from the argument types below, output schemas from the report types (`schemars`,
//! draft 2020-12).

use clap::Parser;
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use super::rpc::RpcError;
use crate::cli::{Cli, GlobalArgs};
use crate::config::Settings;
use crate::core::parking::Refusal;
use crate::exit::{ExitStatus, Failure, Refused, UsageError};
use crate::output::{Printer, plural};

/// What an agent may expect of a tool (MCP `annotations`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads the machine; at most appends to headroom's own history (probe).
    Reads,
    /// Changes processes: (destructive, idempotent).
    Acts { destructive: bool, idempotent: bool },
}

/// One tool.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub effect: Effect,
    /// The command's exit code reports a level (probe, limits), not a failure.
    pub level_exit: bool,
    pub input: fn() -> Value,
    pub output: fn() -> Value,
    pub call: fn(&Tools, Value) -> Result<Value, RpcError>,
}

/// A JSON Schema (draft 2020-12) of `T`.
pub fn schema_of<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or_else(|_| json!({"type": "object"}))
}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeArgs {
    /// Neither read nor write the reading history (then no trend and no ETA).
    #[serde(default)]
    pub no_history: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopArgs {
    /// Only the tree rooted at this pid.
    pub pid: Option<i32>,
    /// Footprint (MiB) from which an idle tree is a park candidate [default: 512].
    #[schemars(range(min = 1))]
    pub park_min_mb: Option<u64>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SinceArgs {
    /// Only the last DUR, like `90s`, `2h`, `7d`.
    pub since: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogProbeArgs {
    /// The session log directory.
    pub dir: String,
    /// Judge as of this instant (RFC 3339 UTC, like `2026-08-29T09:21:47Z`).
    pub at: Option<String>,
}

/// Arguments that can only narrow the configured reap policy.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReapArgs {
    /// Deny patterns added to the configured ones (plain case-insensitive substrings).
    #[serde(default)]
    pub deny: Vec<String>,
    /// At most this many parents; above the configured value it has no effect.
    #[schemars(range(min = 1))]
    pub max_targets: Option<u64>,
    /// At least this many zombies per parent; below the configured value it has no effect.
    #[schemars(range(min = 1))]
    pub min_zombies: Option<u64>,
    /// Never relax the session guard, even at the wall.
    #[serde(default)]
    pub no_emergency: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PidArgs {
    /// The process id (the root, for a tree).
    pub pid: i64,
}

/// The tools a server offers, and what each runs with.
#[derive(Debug)]
pub struct Tools {
    global: GlobalArgs,
    read_only: bool,
}

const ALL: &[Spec] = &[
    Spec {
        name: "probe",
        title: "Process slots left",
        description: "One reading of the current user's process slots: used, effective \
limit and which ceiling binds, level (normal/warning/critical/unknown), zombie parents, \
growth and the time left before fork() fails. Records the reading in headroom's own history \
(for the trend) unless no_history.",
        effect: Effect::Reads,
        level_exit: true,
        input: schema_of::<ProbeArgs>,
        output: crate::schema::of::<crate::commands::probe::ProbeReport>,
        call: |t, a| {
            t.run::<ProbeArgs>("probe", a, |a, _| {
                let mut v = vec!["probe".to_string()];
                if a.no_history {
                    v.push("--no-history".into());
                }
                Ok(v)
            })
        },
    },
    Spec {
        name: "limits",
        title: "Process-slot ceilings",
        description: "Every process-slot ceiling of this machine: its value, where it was \
read, whether it binds, and the traps that apply here.",
        effect: Effect::Reads,
        level_exit: true,
        input: schema_of::<NoArgs>,
        output: crate::schema::of::<crate::commands::limits::LimitsReport>,
        call: |t, a| t.run::<NoArgs>("limits", a, |_, _| Ok(vec!["limits".into()])),
    },
    Spec {
        name: "top",
        title: "Process trees by memory",
        description: "One row per process tree the user owns, largest footprint first, with \
growth and CPU over two samples 500 ms apart, park candidates and a reason code \
(PARK_IDLE, GROWTH_RATE, PRESSURE, NONE); optionally only the tree of one pid.",
        effect: Effect::Reads,
        level_exit: false,
        input: schema_of::<TopArgs>,
        output: crate::schema::of::<crate::commands::top::TopReport>,
        call: |t, a| {
            t.run::<TopArgs>("top", a, |a, _| {
                let mut v = vec!["top".to_string()];
                if let Some(p) = a.pid {
                    v.push(format!("--pid={p}"));
                }
                if let Some(m) = a.park_min_mb {
                    v.push(format!("--park-min-mb={m}"));
                }
                Ok(v)
            })
        },
    },
    Spec {
        name: "evidence",
        title: "Evidence log summary",
        description: "Summarise the evidence log: peak usage, lowest free slots, shortest \
ETA, every cleanup, and rows that could not be read; optionally only the last `since`.",
        effect: Effect::Reads,
        level_exit: false,
        input: schema_of::<SinceArgs>,
        output: crate::schema::of::<crate::commands::evidence::EvidenceReport>,
        call: |t, a| {
            t.run::<SinceArgs>("evidence", a, |a, _| {
                let mut v = vec!["evidence".to_string()];
                v.extend(a.since.map(|s| format!("--since={s}")));
                Ok(v)
            })
        },
    },
    Spec {
        name: "log_probe",
        title: "Is this session still working?",
        description: "What the session-log reader makes of one log directory, file by file: \
work N ago, heartbeat only, unknown or skipped, and the directory's verdict; optionally as \
of an archived instant `at`.",
        effect: Effect::Reads,
        level_exit: false,
        input: schema_of::<LogProbeArgs>,
        output: crate::schema::of::<crate::commands::log_probe::LogProbeReport>,
        call: |t, a| {
            t.run::<LogProbeArgs>("log_probe", a, |a, _| {
                let mut v = vec!["log-probe".to_string()];
                v.extend(a.at.map(|s| format!("--at={s}")));
                v.extend(["--".to_string(), a.dir]);
                Ok(v)
            })
        },
    },
    Spec {
        name: "hangs_events",
        title: "GUI hang history",
        description: "The history of apps macOS marked not responding (detected, restarted, \
restart-failed, blocked); optionally only the last `since`. Empty where nothing was \
recorded (any OS).",
        effect: Effect::Reads,
        level_exit: false,
        input: schema_of::<SinceArgs>,
        output: crate::schema::of::<crate::commands::hangs::report::EventsReport>,
        call: |t, a| {
            t.run::<SinceArgs>("hangs_events", a, |a, _| {
                let mut v = vec!["hangs".to_string(), "--events".into()];
                v.extend(a.since.map(|s| format!("--since={s}")));
                Ok(v)
            })
        },
    },
    Spec {
        name: "doctor",
        title: "Is headroom reading this machine right?",
        description: "headroom doctor: each reading checked against the system's own tool \
(processes and zombies against ps, every ceiling against sysctl/ulimit/the kernel's files, a \
child's CPU time and footprint against ps, the state directory, the login item, whether \
notifications can be posted, the WindowServer interface), each ok, mismatch or skipped (why) \
with both values. A diagnostic: it runs those tools and burns CPU in a child for a moment; \
not for use when the machine is at the wall.",
        effect: Effect::Reads,
        level_exit: true,
        input: schema_of::<NoArgs>,
        output: crate::schema::of::<crate::commands::doctor::DoctorReport>,
        call: |t, a| t.run::<NoArgs>("doctor", a, |_, _| Ok(vec!["doctor".into()])),
    },
    Spec {
        name: "explain_reap",
        title: "What reap would do",
        description: "reap --dry-run: the decision table for every parent holding the user's \
zombies under the configured policy (narrowed by the arguments), each with its verdict and \
the stable name of the rule that decided it. Signals nothing.",
        effect: Effect::Reads,
        level_exit: false,
        input: schema_of::<ReapArgs>,
        output: crate::schema::of::<crate::commands::reap_report::ReapReport>,
        call: |t, a| t.run::<ReapArgs>("explain_reap", a, |a, s| Ok(reap_argv(a, s, true))),
    },
    Spec {
        name: "reap",
        title: "Reap zombie-leaking parents",
        description: "Terminate the parents the configured policy approves (SIGTERM, grace, \
SIGKILL only for the same process), then verify their zombies are gone. Arguments can only \
narrow the policy: more deny patterns, fewer targets, more zombies required. Call \
explain_reap first.",
        effect: Effect::Acts {
            destructive: true,
            idempotent: false,
        },
        level_exit: false,
        input: schema_of::<ReapArgs>,
        output: crate::schema::of::<crate::commands::reap_report::ReapReport>,
        call: |t, a| t.run::<ReapArgs>("reap", a, |a, s| Ok(reap_argv(a, s, false))),
    },
    Spec {
        name: "park",
        title: "Park a process",
        description: "Stop one process with SIGSTOP so its memory can be reclaimed; wake \
continues it. Refused for pid <= 1, another user's process, headroom and its ancestors \
(which include the agent running this server).",
        effect: Effect::Acts {
            destructive: true,
            idempotent: true,
        },
        level_exit: false,
        input: schema_of::<PidArgs>,
        output: crate::schema::of::<crate::commands::park::ParkReport>,
        call: |t, a| t.run::<PidArgs>("park", a, |a, _| Ok(pid_argv("park", &a))),
    },
    Spec {
        name: "wake",
        title: "Wake a process",
        description: "Continue one stopped process with SIGCONT. Same refusals as park.",
        effect: Effect::Acts {
            destructive: false,
            idempotent: true,
        },
        level_exit: false,
        input: schema_of::<PidArgs>,
        output: crate::schema::of::<crate::commands::park::ParkReport>,
        call: |t, a| t.run::<PidArgs>("wake", a, |a, _| Ok(pid_argv("wake", &a))),
    },
    Spec {
        name: "park_tree",
        title: "Park a process tree",
        description: "Stop a whole process tree, root first, children that appear meanwhile \
too; each member is checked as park checks one process. wake_tree undoes it.",
        effect: Effect::Acts {
            destructive: true,
            idempotent: true,
        },
        level_exit: false,
        input: schema_of::<PidArgs>,
        output: crate::schema::of::<crate::commands::park::ParkReport>,
        call: |t, a| t.run::<PidArgs>("park_tree", a, |a, _| Ok(pid_argv("park-tree", &a))),
    },
    Spec {
        name: "wake_tree",
        title: "Wake a process tree",
        description: "Continue a whole stopped process tree, leaves first. Same refusals as \
park.",
        effect: Effect::Acts {
            destructive: false,
            idempotent: true,
        },
        level_exit: false,
        input: schema_of::<PidArgs>,
        output: crate::schema::of::<crate::commands::park::ParkReport>,
        call: |t, a| t.run::<PidArgs>("wake_tree", a, |a, _| Ok(pid_argv("wake-tree", &a))),
    },
    super::run_limited::SPEC,
];

fn pid_argv(cmd: &str, a: &PidArgs) -> Vec<String> {
    vec![cmd.to_string(), "--".into(), a.pid.to_string()]
}

/// `reap`'s command line: the configured policy, narrowed. `--deny` replaces the configured
/// list on the command line, so the configured patterns are repeated before the added ones;
/// `--allow`, `--grace` and `--idle-threshold` are never passed.
pub fn reap_argv(a: ReapArgs, s: &Settings, dry_run: bool) -> Vec<String> {
    let mut v = vec!["reap".to_string()];
    if dry_run {
        v.push("--dry-run".into());
    }
    let added = a.deny.into_iter().filter(|p| !p.trim().is_empty());
    for p in s.reap.deny.value.iter().cloned().chain(added) {
        v.push(format!("--deny={p}"));
    }
    if let Some(m) = a.max_targets {
        v.push(format!("--max-targets={}", m.min(s.reap.max_targets.value)));
    }
    if let Some(m) = a.min_zombies {
        v.push(format!("--min-zombies={}", m.max(s.reap.min_zombies.value)));
    }
    if a.no_emergency {
        v.push("--no-emergency".into());
    }
    v
}

impl Tools {
    pub fn new(global: &GlobalArgs, read_only: bool) -> Self {
        Self {
            global: global.clone(),
            read_only,
        }
    }

    pub fn global(&self) -> &GlobalArgs {
        &self.global
    }

    /// An acting tool's refusal while the server's config file is one someone else could
    /// have written (`Settings::trusted_for_action`), or an unreadable config's error: the
    /// tool result to return instead of acting.
    pub fn refuse_acting(&self) -> Option<Value> {
        match Settings::load(self.global.config.as_deref()) {
            Ok(s) => s
                .trusted_for_action()
                .err()
                .map(|f| error_result(&f.into())),
            Err(e) => Some(error_result(&e)),
        }
    }

    fn offered(&self) -> impl Iterator<Item = &'static Spec> {
        ALL.iter()
            .filter(move |s| !self.read_only || s.effect == Effect::Reads)
    }

    /// The `tools/list` result.
    pub fn list(&self) -> Value {
        let tools: Vec<Value> = self.offered().map(describe).collect();
        json!({ "tools": tools })
    }

    /// The `tools/call` result: a tool result, or a protocol error for an unknown tool or
    /// arguments that do not fit its input schema.
    pub fn call(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("`name` (a string) is required"))?;
        let spec = self.offered().find(|s| s.name == name).ok_or_else(|| {
            let known: Vec<&str> = self.offered().map(|s| s.name).collect();
            RpcError::invalid_params(format!(
                "unknown tool `{name}`; the tools are {}",
                known.join(", ")
            ))
        })?;
        let args = match params.get("arguments") {
            None | Some(Value::Null) => json!({}),
            Some(v @ Value::Object(_)) => v.clone(),
            Some(_) => return Err(RpcError::invalid_params("`arguments` must be an object")),
        };
        (spec.call)(self, args)
    }

    /// Parse `args` as `A`, turn them into the command line, run it, and make the result.
    fn run<A: DeserializeOwned>(
        &self,
        tool: &str,
        args: Value,
        argv: impl FnOnce(A, &Settings) -> Result<Vec<String>, RpcError>,
    ) -> Result<Value, RpcError> {
        let spec = ALL.iter().find(|s| s.name == tool);
        let a: A = serde_json::from_value(args)
            .map_err(|e| RpcError::invalid_params(format!("arguments of `{tool}`: {e}")))?;
        let settings = match Settings::load(self.global.config.as_deref()) {
            Ok(s) => s,
            Err(e) => return Ok(error_result(&e)),
        };
        if spec.is_some_and(|s| matches!(s.effect, Effect::Acts { .. })) {
            if let Err(f) = settings.trusted_for_action() {
                return Ok(error_result(&f.into()));
            }
        }
        let argv = argv(a, &settings)?;
        let mut cli = Cli::try_parse_from(std::iter::once("headroom".to_string()).chain(argv))
            .map_err(|e| {
                RpcError::invalid_params(format!("arguments of `{tool}`: {}", clap_message(&e)))
            })?;
        cli.global = self.global.clone();
        cli.global.json = true;
        let (printer, sink) = Printer::capturing();
        let outcome = crate::commands::dispatch(cli, &printer);
        let captured = std::mem::take(
            &mut *sink
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let status = match outcome {
            Ok(status) => status,
            Err(e) => return Ok(error_result(&e)),
        };
        let report: Value = match serde_json::from_slice(&captured.stdout) {
            Ok(v @ Value::Object(_)) => v,
            _ => {
                return Ok(tool_error(
                    ErrorKind::Internal,
                    None,
                    &format!("`{tool}` printed no JSON report (exit {})", status.code()),
                    status,
                ));
            }
        };
        let level_exit = spec.is_some_and(|s| s.level_exit);
        let mut text = summary(tool, &report);
        if !status.is_success() {
            text += &format!(" (exit {})", status.code());
        }
        for line in &captured.stderr {
            text += &format!("\n{line}");
        }
        Ok(json!({
            "content": [{"type": "text", "text": text}],
            "structuredContent": report,
            "isError": !level_exit && !status.is_success(),
        }))
    }
}

/// clap's message without its "error: " and usage tail.
fn clap_message(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let first = rendered.lines().next().unwrap_or("invalid arguments");
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

fn describe(s: &Spec) -> Value {
    let (read_only, destructive, idempotent) = match s.effect {
        Effect::Reads => (true, false, true),
        Effect::Acts {
            destructive,
            idempotent,
        } => (false, destructive, idempotent),
    };
    json!({
        "name": s.name,
        "title": s.title,
        "description": s.description,
        "inputSchema": (s.input)(),
        "outputSchema": (s.output)(),
        "annotations": {
            "title": s.title,
            "readOnlyHint": read_only,
            "destructiveHint": destructive,
            "idempotentHint": idempotent,
            // Only this machine's processes and headroom's own files, except the command
            // run_limited starts, which may reach anything.
            "openWorldHint": s.name == "run_limited",
        },
    })
}

/// A command's failure as a tool result: `isError`, with the kind, the rule's stable name
/// for a safety refusal, and the message the command line would print.
pub fn error_result(e: &anyhow::Error) -> Value {
    let message = format!("{e:#}");
    if let Some(r) = e.downcast_ref::<Refusal>() {
        return tool_error(
            ErrorKind::Refused,
            Some(r.reason()),
            &message,
            ExitStatus::Refused,
        );
    }
    if e.downcast_ref::<Refused>().is_some() {
        return tool_error(ErrorKind::Refused, None, &message, ExitStatus::Refused);
    }
    if e.downcast_ref::<UsageError>().is_some() {
        return tool_error(ErrorKind::Usage, None, &message, ExitStatus::Usage);
    }
    if let Some(f) = e.downcast_ref::<Failure>() {
        return tool_error(ErrorKind::Failed, None, &f.to_string(), f.status());
    }
    tool_error(ErrorKind::Failed, None, &message, ExitStatus::Error)
}

/// What kind of failure a tool result reports (`_meta.headroom.error`, a stable name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A safety rule refused it (`reason` names the rule when it has a stable name).
    Refused,
    /// The arguments make no valid command.
    Usage,
    /// The command ran and failed.
    Failed,
    /// The command gave no report to return.
    Internal,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Refused => "refused",
            Self::Usage => "usage",
            Self::Failed => "failed",
            Self::Internal => "internal",
        }
    }
}

pub fn tool_error(
    kind: ErrorKind,
    reason: Option<&str>,
    message: &str,
    status: ExitStatus,
) -> Value {
    let kind = kind.as_str();
    let head = match reason {
        Some(r) => format!("{kind} ({r})"),
        None => kind.to_string(),
    };
    json!({
        "content": [{"type": "text", "text": format!("{head}: {message}")}],
        "isError": true,
        "_meta": {"headroom": {"error": kind, "reason": reason, "exit_code": status.code()}},
    })
}

fn num(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::Null) | None => "?".into(),
        Some(Value::String(s)) => s.clone(),
        Some(x) => x.to_string(),
    }
}

/// `key`'s count with its noun, singular at 1 ("1 zombie", "3 zombies", "? zombies").
fn counted(v: &Value, key: &str, one: &str) -> String {
    match v.get(key).and_then(Value::as_u64) {
        Some(n) => plural(n, one),
        None => plural(0u64, one).replacen('0', "?", 1),
    }
}

/// The short human line beside the structured report.
fn summary(tool: &str, r: &Value) -> String {
    match tool {
        "probe" => format!(
            "level {}: {} of {} slots used ({} %), {} free; binding limit {}; {}",
            num(r, "level"),
            num(r, "used"),
            num(r, "limit"),
            num(r, "usage_pct"),
            num(r, "free_slots"),
            num(r, "limit_source"),
            counted(r, "zombies", "zombie"),
        ),
        "limits" => format!(
            "effective limit {} ({}), {} used; level {}",
            num(r, "limit"),
            num(r, "limit_source"),
            num(r, "used"),
            num(r, "level"),
        ),
        "top" => {
            let rows = r.get("processes").and_then(Value::as_array);
            let first = rows.and_then(|p| p.first());
            format!(
                "{}; {} % of memory free{}",
                plural(rows.map_or(0, Vec::len) as u64, "process tree"),
                num(r, "free_pct"),
                first.map_or(String::new(), |f| format!(
                    "; largest: pid {} ({} KiB, {})",
                    num(f, "pid"),
                    num(f, "footprint_kb"),
                    num(f, "reason_code")
                )),
            )
        }
        "evidence" => format!(
            "{} from {} to {}; peak usage {} %",
            counted(r, "rows", "evidence row"),
            num(r, "first_at"),
            num(r, "last_at"),
            r.get("peak_usage")
                .map_or("?".into(), |m| num(m, "usage_pct")),
        ),
        "log_probe" => {
            let d = r.get("directory").cloned().unwrap_or(Value::Null);
            format!(
                "directory verdict {} (last activity {}, {} s ago)",
                num(&d, "verdict"),
                num(&d, "last_activity_at"),
                num(&d, "age_seconds"),
            )
        }
        "hangs_events" => plural(
            r.get("events")
                .and_then(Value::as_array)
                .map_or(0, Vec::len) as u64,
            "hang event",
        ),
        "doctor" => format!(
            "{} ok, {} mismatch, {} skipped",
            num(r, "ok"),
            num(r, "mismatches"),
            num(r, "skipped"),
        ),
        "explain_reap" | "reap" => num(r, "summary"),
        _ => {
            let procs = r.get("processes").and_then(Value::as_array);
            format!(
                "{} pid {}: {} of {} changed",
                num(r, "action"),
                num(r, "pid"),
                num(r, "changed"),
                plural(procs.map_or(0, Vec::len) as u64, "process"),
            )
        }
    }
}
