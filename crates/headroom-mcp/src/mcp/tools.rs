//! The tool table. Every tool is the command of the same name: its arguments become a
//! command line, parsed by the same clap definitions, run by `commands::dispatch_with` (the
//! settings loaded once for the call) with a capturing Printer, and the command's typed
//! report becomes the result (`results::report`). No tool has a rule or a report of its
//! own. Which tools a server offers is its selection (`ToolSelection`: read, act, run).

use clap::Parser;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::args::input_schema;
use super::calls::Call;
use super::results;
use super::summaries::{SummaryLine, summarize};
use crate::cli::{Cli, GlobalArgs};
use crate::config::{Settings, ToolGroup};
use crate::output::{Printer, ReportHook};

/// The live hangs round, offered only where the WindowServer can be asked.
pub(crate) mod hangs_check;
/// The one tool that is not a command: `headroom run` under a timeout, as a child process.
pub(crate) mod run_limited;
/// `run_limited`'s output: the tails and `run`'s records.
mod run_output;
/// Long commands as tasks: run_start, run_status, run_terminate, run_list.
pub(crate) mod run_tasks;
/// The tools that are commands, in the order `tools/list` gives them.
mod table;

use table::ALL;
// Re-exported for the unit tests only (they name it by this path).
#[cfg(test)]
pub(crate) use table::reap_argv;

/// What an agent may expect of a tool (MCP `annotations`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Effect {
    /// Reads the machine; writes nothing but headroom's own history files in its state
    /// directory (probe's readings, the CPU history of session children), never a process.
    Reads,
    /// Changes processes: (destructive, idempotent).
    Acts { destructive: bool, idempotent: bool },
}

/// One tool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Spec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// The selection that offers it (`--tools`).
    pub group: ToolGroup,
    pub effect: Effect,
    /// The command's exit code reports a level (probe, limits, doctor), not a failure.
    pub level_exit: bool,
    /// It asks the WindowServer: offered only in a GUI session, run on the main thread.
    pub needs_gui: bool,
    pub input: fn() -> Value,
    pub output: fn() -> Value,
    pub call: fn(&Tools, &Spec, &Call, Value) -> Value,
}

/// The tools a server offers, and what each runs with.
#[derive(Debug, Clone)]
pub(crate) struct Tools {
    pub global: GlobalArgs,
    pub selection: ToolSelection,
    /// A hangs round can ask the WindowServer from here (`hangs_check::gui_session`).
    pub gui: bool,
    /// The session's tasks (`run_start`), shared by every clone.
    pub tasks: std::sync::Arc<run_tasks::Tasks>,
}

/// Which groups of tools are offered, and which programs `run_limited` may start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolSelection {
    pub groups: Vec<ToolGroup>,
    /// `[mcp] run_allow`: the programs `run_limited` may start (None: any).
    pub run_allow: Option<Vec<String>>,
}

impl ToolSelection {
    #[cfg(test)]
    pub(crate) fn all() -> Self {
        Self {
            groups: vec![ToolGroup::Read, ToolGroup::Act, ToolGroup::Run],
            run_allow: None,
        }
    }

    pub(crate) fn has(&self, g: ToolGroup) -> bool {
        self.groups.contains(&g)
    }

    /// Whether a tool may start a process: only with `run` (then `doctor` runs its checks
    /// that ask other tools, too).
    pub(crate) fn may_start_processes(&self) -> bool {
        self.has(ToolGroup::Run)
    }
}

pub(super) fn report_of<R: crate::schema::Document>() -> Value {
    let mut v = crate::schema::of::<R>();
    super::args::clean(&mut v, false);
    v
}

impl Tools {
    /// The tools of `selection`; whether there is a GUI session to offer `hangs_check` in
    /// is asked here, once (call it on the main thread).
    pub(crate) fn new(global: &GlobalArgs, selection: ToolSelection) -> Self {
        Self::with_gui(global, selection, hangs_check::gui_session())
    }

    /// The same, with the GUI session's presence given (a test's, or a recorded answer).
    pub(crate) fn with_gui(global: &GlobalArgs, selection: ToolSelection, gui: bool) -> Self {
        Self {
            global: global.clone(),
            selection,
            gui,
            tasks: std::sync::Arc::default(),
        }
    }

    pub(crate) fn offered(&self) -> impl Iterator<Item = &'static Spec> + '_ {
        ALL.iter().filter(|s| self.offers(s))
    }

    /// The names of the offered tools of `group`, in table order.
    pub(crate) fn names_of(&self, group: ToolGroup) -> Vec<&'static str> {
        self.offered()
            .filter(|s| s.group == group)
            .map(|s| s.name)
            .collect()
    }

    /// An acting tool's refusal while the server's config file is one someone else could
    /// have written (`Settings::trusted_for_action`), or an unreadable config's error: the
    /// tool result to return instead of acting.
    pub(crate) fn refuse_acting(&self) -> Option<Value> {
        match Settings::load(self.global.config.as_deref()) {
            Ok(s) => s
                .trusted_for_action()
                .err()
                .map(|f| results::error(&f.into())),
            Err(e) => Some(results::error(&e)),
        }
    }

    /// The `tools/list` result.
    pub(crate) fn list(&self) -> Value {
        let tools: Vec<Value> = self.offered().map(describe).collect();
        json!({ "tools": tools })
    }

    /// The tool named `name`, if this server offers it; else the names it does offer.
    pub(crate) fn find(&self, name: &str) -> Result<&'static Spec, Vec<&'static str>> {
        self.offered()
            .find(|s| s.name == name)
            .ok_or_else(|| self.offered().map(|s| s.name).collect())
    }

    /// The `--json` report of `argv` run in-process (a resource's content).
    pub(crate) fn report_value(&self, argv: &[&str]) -> Result<Value, String> {
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
    pub(super) fn command<A: DeserializeOwned, R: SummaryLine>(
        &self,
        spec: &Spec,
        _call: &Call,
        args: Value,
        argv: impl FnOnce(A, &Settings, &ToolSelection) -> Vec<String>,
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
pub(crate) fn schema_of<T: JsonSchema>() -> Value {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::reading::Level;
    use crate::exit::ExitStatus;

    fn printed(tool: &str, status: ExitStatus) -> Value {
        let Some(spec) = ALL.iter().find(|s| s.name == tool) else {
            panic!("no tool `{tool}`");
        };
        let captured = crate::output::Captured {
            report: Some(crate::output::CapturedReport {
                value: json!({"schema": "t/1"}),
                summary: Some("s".into()),
            }),
            ..Default::default()
        };
        report(spec, status, captured)
    }

    #[test]
    fn a_critical_or_unknown_reading_is_a_result_not_an_error() {
        for l in [Level::Critical, Level::Unknown, Level::Warning] {
            let r = printed("probe", ExitStatus::Level(l));
            assert_eq!(r["isError"], false, "{l:?}: {r}");
            let code = ExitStatus::Level(l).code();
            assert!(r.to_string().contains(&format!("(exit {code})")), "{r}");
        }
        // Control: a tool whose exit status is not a level reports the same number as an error.
        let r = printed("top", ExitStatus::Error);
        assert_eq!(r["isError"], true, "{r}");
    }
}
