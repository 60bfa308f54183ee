//! The tool table. Every tool is the command of the same name: its arguments become a
//! command line, parsed by the same clap definitions, run by `commands::dispatch_with` (the
//! settings loaded once for the call) with a capturing Printer, and the command's typed
//! report becomes the result (`results::report`). No tool has a rule or a report of its
//! own. Which tools a server offers is its selection (`Selection`: read, act, run).

use clap::Parser;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::args::{
    LogProbeArgs, NoArgs, PidArgs, ProbeArgs, ReapArgs, SinceArgs, TopArgs, input_schema,
};
use super::calls::Call;
use super::results;
use super::summaries::{Summary, summarize};
use crate::cli::{Cli, GlobalArgs};
use crate::commands::doctor::DoctorReport;
use crate::commands::evidence::EvidenceReport;
use crate::commands::hangs::report::EventsReport;
use crate::commands::limits::LimitsReport;
use crate::commands::log_probe::LogProbeReport;
use crate::commands::park::ParkReport;
use crate::commands::probe::ProbeReport;
use crate::commands::reap_report::ReapReport;
use crate::commands::top::TopReport;
use crate::config::{Settings, ToolGroup};
use crate::output::{Printer, ReportHook};

/// The one tool that is not a command: `headroom run` under a timeout, as a child process.
pub mod run_limited;

/// What an agent may expect of a tool (MCP `annotations`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads the machine; writes nothing but headroom's own history files in its state
    /// directory (probe's readings, the CPU history of session children), never a process.
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
    /// The selection that offers it (`--tools`).
    pub group: ToolGroup,
    pub effect: Effect,
    /// The command's exit code reports a level (probe, limits, doctor), not a failure.
    pub level_exit: bool,
    pub input: fn() -> Value,
    pub output: fn() -> Value,
    pub call: fn(&Tools, &Spec, &Call, Value) -> Value,
}

/// The tools a server offers, and what each runs with.
#[derive(Debug, Clone)]
pub struct Tools {
    pub global: GlobalArgs,
    pub selection: Selection,
}

/// Which groups of tools are offered, and which programs `run_limited` may start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub groups: Vec<ToolGroup>,
    /// `[mcp] run_allow`: the programs `run_limited` may start (None: any).
    pub run_allow: Option<Vec<String>>,
}

impl Selection {
    pub fn all() -> Self {
        Self {
            groups: vec![ToolGroup::Read, ToolGroup::Act, ToolGroup::Run],
            run_allow: None,
        }
    }

    pub fn has(&self, g: ToolGroup) -> bool {
        self.groups.contains(&g)
    }

    /// Whether a tool may start a process: only with `run` (then `doctor` runs its checks
    /// that ask other tools, too).
    pub fn may_start_processes(&self) -> bool {
        self.has(ToolGroup::Run)
    }
}

fn report_of<R: crate::schema::Document>() -> Value {
    let mut v = crate::schema::of::<R>();
    super::args::clean(&mut v, false);
    v
}

const ALL: &[Spec] = &[
    Spec {
        name: "probe",
        title: "Process slots left",
        description: "One reading of the current user's process slots: used, effective \
limit and which ceiling binds, level (normal/warning/critical/unknown), zombie parents, \
growth and the time left before fork() fails. Records the reading in headroom's own history \
(for the trend) unless no_history.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: true,
        input: input_schema::<ProbeArgs>,
        output: report_of::<ProbeReport>,
        call: |t, s, c, a| {
            t.command::<ProbeArgs, ProbeReport>(s, c, a, |a, _, _| {
                let mut v = vec!["probe".to_string()];
                if a.no_history {
                    v.push("--no-history".into());
                }
                v
            })
        },
    },
    Spec {
        name: "limits",
        title: "Process-slot ceilings",
        description: "Every process-slot ceiling of this machine: its value, where it was \
read, whether it binds, and the traps that apply here.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: true,
        input: input_schema::<NoArgs>,
        output: report_of::<LimitsReport>,
        call: |t, s, c, a| {
            t.command::<NoArgs, LimitsReport>(s, c, a, |_, _, _| vec!["limits".into()])
        },
    },
    Spec {
        name: "top",
        title: "Process trees by memory",
        description: "One row per process tree the user owns, largest footprint first, with \
growth and CPU over two samples 500 ms apart, park candidates and a reason code \
(PARK_IDLE, GROWTH_RATE, PRESSURE, NONE); optionally only the tree of one pid.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: false,
        input: input_schema::<TopArgs>,
        output: report_of::<TopReport>,
        call: |t, s, c, a| {
            t.command::<TopArgs, TopReport>(s, c, a, |a, _, _| {
                let mut v = vec!["top".to_string()];
                v.extend(a.pid.map(|p| format!("--pid={}", p.0)));
                v.extend(a.park_min_mb.map(|m| format!("--park-min-mb={}", m.0)));
                v
            })
        },
    },
    Spec {
        name: "evidence",
        title: "Evidence log summary",
        description: "Summarise the evidence log: peak usage, lowest free slots, shortest \
ETA, every cleanup, and rows that could not be read; optionally only the last `since`.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: false,
        input: input_schema::<SinceArgs>,
        output: report_of::<EvidenceReport>,
        call: |t, s, c, a| {
            t.command::<SinceArgs, EvidenceReport>(s, c, a, |a, _, _| {
                let mut v = vec!["evidence".to_string()];
                v.extend(a.since.map(|s| format!("--since={s}")));
                v
            })
        },
    },
    Spec {
        name: "log_probe",
        title: "Is this session still working?",
        description: "What the session-log reader makes of one log directory, file by file: \
work N ago, heartbeat only, unknown or skipped, and the directory's verdict; optionally as \
of an archived instant `at`.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: false,
        input: input_schema::<LogProbeArgs>,
        output: report_of::<LogProbeReport>,
        call: |t, s, c, a| {
            t.command::<LogProbeArgs, LogProbeReport>(s, c, a, |a, _, _| {
                let mut v = vec!["log-probe".to_string()];
                v.extend(a.at.map(|s| format!("--at={s}")));
                v.extend(["--".to_string(), a.dir]);
                v
            })
        },
    },
    Spec {
        name: "hangs_events",
        title: "GUI hang history",
        description: "The history of apps macOS marked not responding (detected, restarted, \
restart-failed, blocked); optionally only the last `since`. Empty where nothing was \
recorded (any OS).",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: false,
        input: input_schema::<SinceArgs>,
        output: report_of::<EventsReport>,
        call: |t, s, c, a| {
            t.command::<SinceArgs, EventsReport>(s, c, a, |a, _, _| {
                let mut v = vec!["hangs".to_string(), "--events".into()];
                v.extend(a.since.map(|s| format!("--since={s}")));
                v
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
with both values. The checks that start a process (ps, a login shell, sysctl, launchctl, a \
child burning CPU for a moment) run only when this server offers the run tools; otherwise \
they are skipped and say so. Not for use when the machine is at the wall.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: true,
        input: input_schema::<NoArgs>,
        output: report_of::<DoctorReport>,
        call: |t, s, c, a| {
            t.command::<NoArgs, DoctorReport>(s, c, a, |_, _, sel| {
                let mut v = vec!["doctor".to_string()];
                if !sel.may_start_processes() {
                    v.push("--no-exec".into());
                }
                v
            })
        },
    },
    Spec {
        name: "explain_reap",
        title: "What reap would do",
        description: "reap --dry-run: the decision table for every parent holding the user's \
zombies under the configured policy (narrowed by the arguments), each with its verdict and \
the stable name of the rule that decided it. Signals nothing; writes only headroom's own CPU \
history of session children (cpu-history.json in its state directory), which the idle \
judgement of the next reap needs.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: false,
        input: input_schema::<ReapArgs>,
        output: report_of::<ReapReport>,
        call: |t, s, c, a| {
            t.command::<ReapArgs, ReapReport>(s, c, a, |a, st, _| reap_argv(a, st, true))
        },
    },
    Spec {
        name: "reap",
        title: "Reap zombie-leaking parents",
        description: "Terminate the parents the configured policy approves (SIGTERM, grace, \
SIGKILL only for the same process), then verify their zombies are gone. Arguments can only \
narrow the policy: more deny patterns, fewer targets, more zombies required. Call \
explain_reap first.",
        group: ToolGroup::Act,
        effect: Effect::Acts {
            destructive: true,
            idempotent: false,
        },
        level_exit: false,
        input: input_schema::<ReapArgs>,
        output: report_of::<ReapReport>,
        call: |t, s, c, a| {
            t.command::<ReapArgs, ReapReport>(s, c, a, |a, st, _| reap_argv(a, st, false))
        },
    },
    Spec {
        name: "park",
        title: "Park a process",
        description: "Stop one process with SIGSTOP so its memory can be reclaimed; wake \
continues it. Refused for pid <= 1, another user's process, headroom and its ancestors \
(which include the agent running this server).",
        group: ToolGroup::Act,
        effect: Effect::Acts {
            destructive: true,
            idempotent: true,
        },
        level_exit: false,
        input: input_schema::<PidArgs>,
        output: report_of::<ParkReport>,
        call: |t, s, c, a| {
            t.command::<PidArgs, ParkReport>(s, c, a, |a, _, _| pid_argv("park", &a))
        },
    },
    Spec {
        name: "wake",
        title: "Wake a process",
        description: "Continue one stopped process with SIGCONT. Same refusals as park.",
        group: ToolGroup::Act,
        effect: Effect::Acts {
            destructive: false,
            idempotent: true,
        },
        level_exit: false,
        input: input_schema::<PidArgs>,
        output: report_of::<ParkReport>,
        call: |t, s, c, a| {
            t.command::<PidArgs, ParkReport>(s, c, a, |a, _, _| pid_argv("wake", &a))
        },
    },
    Spec {
        name: "park_tree",
        title: "Park a process tree",
        description: "Stop a whole process tree, root first, children that appear meanwhile \
too; each member is checked as park checks one process. wake_tree undoes it.",
        group: ToolGroup::Act,
        effect: Effect::Acts {
            destructive: true,
            idempotent: true,
        },
        level_exit: false,
        input: input_schema::<PidArgs>,
        output: report_of::<ParkReport>,
        call: |t, s, c, a| {
            t.command::<PidArgs, ParkReport>(s, c, a, |a, _, _| pid_argv("park-tree", &a))
        },
    },
    Spec {
        name: "wake_tree",
        title: "Wake a process tree",
        description: "Continue a whole stopped process tree, leaves first. Same refusals as \
park.",
        group: ToolGroup::Act,
        effect: Effect::Acts {
            destructive: false,
            idempotent: true,
        },
        level_exit: false,
        input: input_schema::<PidArgs>,
        output: report_of::<ParkReport>,
        call: |t, s, c, a| {
            t.command::<PidArgs, ParkReport>(s, c, a, |a, _, _| pid_argv("wake-tree", &a))
        },
    },
    run_limited::SPEC,
];

fn pid_argv(cmd: &str, a: &PidArgs) -> Vec<String> {
    vec![cmd.to_string(), "--".into(), a.pid.0.to_string()]
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
        v.push(format!(
            "--max-targets={}",
            m.0.min(s.reap.max_targets.value)
        ));
    }
    if let Some(m) = a.min_zombies {
        v.push(format!(
            "--min-zombies={}",
            m.0.max(s.reap.min_zombies.value)
        ));
    }
    if a.no_emergency {
        v.push("--no-emergency".into());
    }
    v
}

/// The names of every tool of `group`, in table order.
pub fn names_of(group: ToolGroup) -> Vec<&'static str> {
    ALL.iter()
        .filter(|s| s.group == group)
        .map(|s| s.name)
        .collect()
}

impl Tools {
    pub fn new(global: &GlobalArgs, selection: Selection) -> Self {
        Self {
            global: global.clone(),
            selection,
        }
    }

    pub fn offered(&self) -> impl Iterator<Item = &'static Spec> + '_ {
        ALL.iter().filter(|s| self.selection.has(s.group))
    }

    /// An acting tool's refusal while the server's config file is one someone else could
    /// have written (`Settings::trusted_for_action`), or an unreadable config's error: the
    /// tool result to return instead of acting.
    pub fn refuse_acting(&self) -> Option<Value> {
        match Settings::load(self.global.config.as_deref()) {
            Ok(s) => s
                .trusted_for_action()
                .err()
                .map(|f| results::error(&f.into())),
            Err(e) => Some(results::error(&e)),
        }
    }

    /// The `tools/list` result.
    pub fn list(&self) -> Value {
        let tools: Vec<Value> = self.offered().map(describe).collect();
        json!({ "tools": tools })
    }

    /// The tool named `name`, if this server offers it; else the names it does offer.
    pub fn find(&self, name: &str) -> Result<&'static Spec, Vec<&'static str>> {
        self.offered()
            .find(|s| s.name == name)
            .ok_or_else(|| self.offered().map(|s| s.name).collect())
    }

    /// The `--json` report of `argv` run in-process (a resource's content).
    pub fn report_value(&self, argv: &[&str]) -> Result<Value, String> {
        let mut cli = Cli::try_parse_from(std::iter::once("headroom").chain(argv.iter().copied()))
            .map_err(|e| clap_message(&e))?;
        cli.global = self.global.clone();
        cli.global.json = true;
        let (printer, sink) = Printer::capturing(None);
        let outcome = crate::commands::dispatch(cli, &printer);
        let captured = std::mem::take(
            &mut *sink
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        match (outcome, captured.report) {
            (Ok(_), Some(r)) => Ok(r.value),
            (Err(e), _) => Err(crate::exit::report(&e).message),
            (Ok(s), None) => Err(format!("no report (exit {})", s.code())),
        }
    }

    /// Parse `args` as `A`, load the settings, make the command line, run it, and make the
    /// result from the command's report `R`. Bad argument values are tool errors.
    fn command<A: DeserializeOwned, R: Summary>(
        &self,
        spec: &Spec,
        _call: &Call,
        args: Value,
        argv: impl FnOnce(A, &Settings, &Selection) -> Vec<String>,
    ) -> Value {
        let tool = spec.name;
        let a: A = match serde_json::from_value(args) {
            Ok(a) => a,
            Err(e) => return results::usage(&format!("arguments of `{tool}`: {e}")),
        };
        let settings = match Settings::load(self.global.config.as_deref()) {
            Ok(s) => s,
            Err(e) => return results::error(&e),
        };
        // Acting tools refuse a config someone else could have written, as the CLI's
        // acting commands do; park and wake too, which take nothing from the file.
        if matches!(spec.effect, Effect::Acts { .. }) {
            if let Err(f) = settings.trusted_for_action() {
                return results::error(&f.into());
            }
        }
        let argv = argv(a, &settings, &self.selection);
        let mut cli = match Cli::try_parse_from(std::iter::once("headroom".to_string()).chain(argv))
        {
            Ok(c) => c,
            Err(e) => {
                return results::usage(&format!("arguments of `{tool}`: {}", clap_message(&e)));
            }
        };
        cli.global = self.global.clone();
        cli.global.json = true;
        let hook = ReportHook(std::sync::Arc::new(summarize::<R>));
        let (printer, sink) = Printer::capturing(Some(hook));
        let outcome = crate::commands::dispatch_with(cli, &printer, settings);
        let captured = std::mem::take(
            &mut *sink
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        let status = match outcome {
            Ok(status) => status,
            Err(e) => return results::error(&e),
        };
        report(spec, status, captured)
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
            "openWorldHint": s.group == ToolGroup::Run,
        },
    })
}

/// The schema of `T` for tools outside this file.
pub fn schema_of<T: JsonSchema>() -> Value {
    input_schema::<T>()
}

/// What a command printed, as its tool's result.
fn report(
    spec: &Spec,
    status: crate::exit::ExitStatus,
    captured: crate::output::Captured,
) -> Value {
    let Some(r) = captured.report else {
        return results::failure(
            "internal",
            None,
            &format!(
                "`{}` printed no JSON report (exit {})",
                spec.name,
                status.code()
            ),
            status,
        );
    };
    let mut summary = r.summary.unwrap_or_else(|| spec.title.to_string());
    if !status.is_success() {
        summary += &format!(" (exit {})", status.code());
    }
    for line in &captured.stderr {
        summary += &format!("\n{line}");
    }
    results::with_report(r.value, summary, !spec.level_exit && !status.is_success())
}
