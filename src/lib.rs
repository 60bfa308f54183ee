//! headroom keeps a developer's machine from running out of room: process slots (zombie
//! exhaustion of the per-user process limit), memory (a runaway process tree) and
//! responsiveness (apps macOS marks "not responding").
//!
//! Data flows one way: `platform` (read) → `core` (decide) → `actions` (act through
//! `platform`) → `commands` (report) → `output`.
//! `store` keeps what lasts between runs (state files, the evidence log); the core reads
//! no file and no clock.

// Every system call and `unsafe` block is the platform crate's (`crates/headroom-platform`):
// this package has no system-call crate among its dependencies, and no `unsafe` here.
#![forbid(unsafe_code)]

// The library's public surface is `run`, what `src/main.rs` calls before it, and `testing`
// (hidden). Every layer is a crate of its own (`crates/`, ARCHITECTURE.md "The crates"),
// named here by the name it has in every crate (`crate::commands::…`), so a path reads the
// same wherever a file is; each crate keeps its items `pub(crate)` unless a crate above
// names them (ARCHITECTURE.md, "The public surface").
/// The actions (`crates/headroom-actions`): `crate::actions::…` paths are that crate's
/// module.
use headroom_actions::actions;
/// The command line (`crates/headroom-cli`): `crate::cli::…`, `crate::cli_help::…` paths
/// are that crate's modules.
use headroom_cli::{cli, cli_help};
/// The commands (`crates/headroom-commands`): `crate::commands::…` paths are that crate's
/// module.
use headroom_commands::commands;
/// The exit-code table and the error types (`crates/headroom-exit`): `crate::exit::…` paths
/// are that crate's module.
use headroom_exit::exit;
/// The MCP front end (`crates/headroom-mcp`): `crate::mcp::…` paths are that crate's module.
use headroom_mcp::mcp;
/// The Printer and the formatting (`crates/headroom-output`): `crate::output::…` paths are
/// that crate's `output` module.
use headroom_output::output;
/// The system calls, a crate of their own (`crates/headroom-platform`): `crate::platform::…`
/// paths are that crate's public items.
use headroom_platform as platform;
/// The documents' schemas (`crates/headroom-schema`): `crate::schema::…` paths are its
/// `schema` module.
use headroom_schema::schema;
/// The files headroom keeps, a crate of its own (`crates/headroom-store`): `crate::store::…`
/// paths are that crate's public items.
use headroom_store as store;

/// What `run` returns: the exit-code table's rows.
pub use exit::ExitStatus;
/// `src/main.rs`'s start-up checks, before `run`.
#[cfg(unix)]
#[doc(hidden)]
pub use platform::start::prepare;

/// What the integration tests (`tests/integration`) and the examples (`hr-fixture`,
/// `hr-pidreuse`) reach inside the crate for, and nothing else: not an API (hidden, no
/// stability promise). An item joins this list when a test needs it, with the reason;
/// the core's items are `headroom_core`'s own, public there.
#[doc(hidden)]
pub mod testing {
    /// `hr-pidreuse`: the real termination path, run with a stale identity and a fresh one,
    /// on the real process source and control.
    pub use crate::actions::clock::RealClock;
    pub use crate::actions::terminate::terminate;
    pub use crate::platform::{ProcessSource, native, native_control, signal_delivery};

    /// `generated.rs`: the Homebrew service's names in the committed service files.
    pub use crate::actions::login_item::{BREW_LABEL, BREW_UNIT};

    /// The clap tree: the help, man pages and completions are checked against it
    /// (`generated.rs`, `interface.rs`, `doc_commands.rs`).
    pub use crate::cli::{Cli, full_command};

    /// `interface.rs`: every subcommand's help ends in its examples.
    pub use crate::cli_help::EXAMPLES;

    /// The registry of JSON documents and their schemas (`json_schemas.rs`,
    /// `json_conventions.rs`, `generated.rs`), the file each schema is committed as, and a
    /// document as one JSON line.
    pub use crate::commands::schema::{ALL, find};
    pub use crate::schema::{file_name, to_line};

    /// `hangs.rs`: a summary serialised as the command writes it.
    pub use crate::commands::hangs::report::HangsSummary;

    /// `interface.rs`: the exit-code table the docs print.
    pub use crate::exit::table as exit_table;

    /// The evidence log as headroom writes it (`hr-fixture evidence-writer`) and reads it
    /// (the fault tests); its rows and columns are `headroom_core::evidence_csv`'s.
    pub use crate::store::evidence::{EvidenceLog, read_file};
}

use std::ffi::OsString;

use crate::output::Printer;

/// Parse `args`, run the command, and map the outcome onto the exit-code table.
pub fn run<I, T>(args: I) -> exit::ExitStatus
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    let cli = match parse(&args) {
        Ok(c) => c,
        Err(e) => return clap_error(&e, &args),
    };
    let mut printer = Printer::new(cli.global.json, cli.global.quiet, cli.global.color);
    let stream = ErrorStream::of(&cli.command, cli.global.json);
    #[cfg(unix)]
    if let cli::Command::Run(a) = &cli.command {
        if let Some(fd) = a.records_fd {
            match platform::adopt_records_fd(fd) {
                Ok(f) => printer = printer.with_stderr_to(f),
                Err(e) => {
                    let msg = format!("--records-fd `{fd}`: {e}");
                    printer.error(&msg);
                    stream.emit(&msg, exit::ExitStatus::Usage, &printer);
                    return exit::ExitStatus::Usage;
                }
            }
        }
    }
    let result = match &cli.command {
        // The second front end beside the CLI: it runs the commands as MCP tools.
        cli::Command::Mcp(a) => commands::with_ctx(&cli, &printer, |ctx| mcp::run(&ctx, a)),
        _ => commands::dispatch(cli, &printer),
    };
    match result {
        Ok(status) => status,
        Err(e) => report_error(&e, &printer, stream),
    }
}

/// Where, with `--json`, the `headroom.error/1` object goes besides the line on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ErrorStream {
    /// No JSON: the stderr line alone.
    None,
    /// stdout, where the report or the JSON Lines stream goes.
    Stdout,
    /// stderr: `run`'s records go there (stdout is the command's).
    Stderr,
}

impl ErrorStream {
    fn of(cmd: &cli::Command, json: bool) -> Self {
        match cmd {
            _ if !json => Self::None,
            // stdout carries the protocol's messages only.
            cli::Command::Mcp(_) => Self::None,
            cli::Command::Run(_) => Self::Stderr,
            _ => Self::Stdout,
        }
    }

    /// For a command line clap refused: `--json` among the options (before `--`).
    fn of_args(args: &[OsString], sub: Option<&str>) -> Self {
        let json = args
            .iter()
            .skip(1)
            .take_while(|a| *a != "--")
            .any(|a| a == "--json");
        match sub {
            _ if !json => Self::None,
            Some("mcp") => Self::None,
            Some("run") => Self::Stderr,
            _ => Self::Stdout,
        }
    }

    /// The error object, after the stderr line. A closed stdout is no worse than the exit.
    /// `printer`'s stderr is where `run`'s records go (`--records-fd`).
    fn emit(self, message: &str, status: exit::ExitStatus, printer: &Printer) {
        let doc = exit::ErrorDocument::new(message, status.code());
        let p = Printer::new(true, false, output::ColorChoice::Never);
        match self {
            Self::None => {}
            Self::Stdout => {
                let _ = p.json_value(&doc);
            }
            Self::Stderr => printer.stderr_json(&doc),
        }
    }
}

/// The parser's tree, with each subcommand's help ending in its examples.
fn parse(args: &[OsString]) -> Result<cli::Cli, clap::Error> {
    use clap::{CommandFactory, FromArgMatches};
    let mut cmd = cli::Cli::command();
    // Only the subcommand named is defined up front (the rest stay deferred, as parsing
    // wants): its help is the one that can be shown.
    if let Some(name) = subcommand_of(args) {
        cmd = cmd.mut_subcommand(name, cli_help::with_examples);
    }
    let matches = cmd.try_get_matches_from_mut(args)?;
    cli::Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))
}

/// Help and version go to stdout with 0; a usage error is one line on stderr with 64.
fn clap_error(e: &clap::Error, args: &[OsString]) -> exit::ExitStatus {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            exit::ExitStatus::Ok
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            exit::ExitStatus::Usage
        }
        _ => {
            let sub = subcommand_of(args);
            let msg = usage_line(&e.render().to_string(), sub.as_deref());
            let p = Printer::new(false, false, output::ColorChoice::Never);
            p.error(&msg);
            ErrorStream::of_args(args, sub.as_deref()).emit(&msg, exit::ExitStatus::Usage, &p);
            exit::ExitStatus::Usage
        }
    }
}

/// The subcommand path `args` names (`run`, `login-item`), if any: where its help is.
fn subcommand_of(args: &[OsString]) -> Option<String> {
    let cmd = <cli::Cli as clap::CommandFactory>::command();
    let mut words = args.iter().skip(1).filter_map(|a| a.to_str());
    words
        .find(|w| {
            cmd.get_subcommands()
                .any(|s| s.get_name() == *w && !s.is_hide_set())
        })
        .map(str::to_string)
}

/// Words other tools use for a value of ours: (subcommand, what was typed, what we call it).
const SYNONYMS: &[(&str, &str, &str)] = &[
    ("login-item", "install", "register"),
    ("login-item", "enable", "register"),
    ("login-item", "add", "register"),
    ("login-item", "load", "register"),
    ("login-item", "uninstall", "unregister"),
    ("login-item", "disable", "unregister"),
    ("login-item", "remove", "unregister"),
    ("login-item", "unload", "unregister"),
];

/// clap's rendered error as one line: its message, its tips ("did you mean `--json`?", "to
/// pass `echo` as a value, use `-- echo`"), the possible values, and where the help is.
pub(crate) fn usage_line(rendered: &str, sub: Option<&str>) -> String {
    let mut lines = rendered.lines();
    let first = lines.next().unwrap_or("invalid command line");
    let mut msg = first.strip_prefix("error: ").unwrap_or(first).to_string();
    let mut notes: Vec<String> = Vec::new();
    let mut missing: Vec<&str> = Vec::new();
    for line in lines {
        let t = line.trim();
        if let Some(tip) = t.strip_prefix("tip: ") {
            let tip = tip
                .replace("a similar argument exists: ", "did you mean ")
                .replace("a similar subcommand exists: ", "did you mean ")
                .replace("some similar arguments exist: ", "did you mean one of ")
                .replace("some similar subcommands exist: ", "did you mean one of ");
            let question = tip.starts_with("did you mean");
            notes.push(format!(
                "{}{}",
                backticks(&tip),
                if question { "?" } else { "" }
            ));
        } else if let Some(vals) = t.strip_prefix("[possible values: ") {
            notes.push(format!("possible values: {}", vals.trim_end_matches(']')));
        } else if line.starts_with("  ") && msg.ends_with(':') && !t.is_empty() {
            // "… were not provided:" is followed by the missing arguments, indented.
            missing.push(t);
        } else if t.starts_with("Usage:") {
            // A bare word where only `run`'s trailing command may go: clap gives no tip.
            if t.contains(" -- <") && msg.starts_with("unexpected argument '") {
                let word = msg.split('\'').nth(1).unwrap_or_default().to_string();
                if !word.starts_with('-') && !notes.iter().any(|n| n.contains("use `--")) {
                    notes.push(format!("to pass `{word}` as the command, use `-- {word}`"));
                }
            }
        }
    }
    if !missing.is_empty() {
        msg = format!("{msg} {}", missing.join(", "));
    }
    // clap suggests only spellings close to a value; a word from another tool's vocabulary
    // (`install`) is far from ours (`register`), so it gets its hint here.
    if let (Some(s), Some(typed)) = (sub, msg.strip_prefix("invalid value '")) {
        let typed = typed.split('\'').next().unwrap_or_default();
        let meant = SYNONYMS
            .iter()
            .find(|(cmd, word, _)| *cmd == s && *word == typed)
            .map(|(_, _, meant)| *meant);
        if let Some(meant) = meant {
            if !notes.iter().any(|n| n.starts_with("did you mean")) {
                notes.insert(0, format!("did you mean `{meant}`?"));
            }
        }
    }
    let mut out = backticks(&msg);
    for n in notes {
        // After a question, the next note is a sentence of its own ("…`--json`? To pass …").
        if out.ends_with('?') {
            out.push(' ');
            let mut c = n.chars();
            out.extend(c.next().map(|f| f.to_ascii_uppercase()));
            out.push_str(c.as_str());
        } else {
            out.push_str("; ");
            out.push_str(&n);
        }
    }
    let help = match sub {
        Some(s) => format!("headroom {s} --help"),
        None => "headroom --help".to_string(),
    };
    format!("{out} (see `{help}`)")
}

/// clap quotes values as `'x'`; headroom's messages put them in backticks.
fn backticks(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut open = false;
    let chars: Vec<char> = s.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        // An apostrophe inside a word (`don't`) is not a quote.
        let inside_word = i > 0
            && chars[i - 1].is_alphanumeric()
            && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        if c == '\'' && !inside_word {
            out.push('`');
            open = !open;
        } else {
            out.push(c);
        }
    }
    out
}

fn report_error(e: &anyhow::Error, printer: &Printer, stream: ErrorStream) -> exit::ExitStatus {
    let r = exit::report(e);
    if r.broken_pipe {
        return exit::ExitStatus::Ok;
    }
    // An empty message: the command has said it all (and printed its report).
    if !r.message.is_empty() {
        printer.error(&r.message);
        stream.emit(&r.message, r.status, printer);
    }
    r.status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cause_already_in_its_context_is_said_once() {
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e: anyhow::Error =
            platform::PlatformError::io("cannot read snapshot `missing.json`", io).into();
        let msg = exit::said_once(&e);
        assert_eq!(msg.matches("not found").count(), 1, "{msg}");
        // Every front end says it the same way, and once: the CLI, probe's UNKNOWN and MCP
        // read `exit::report`, and `{:#}` (anyhow's own chain) agrees now too.
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        let e: anyhow::Error =
            platform::PlatformError::io("cannot read snapshot `missing.json`", io).into();
        let r = exit::report(&e);
        assert_eq!(r.message, msg);
        assert_eq!(r.status, exit::ExitStatus::Error);
        let chained = format!("{e:#}");
        assert_eq!(chained.matches("not found").count(), 1, "{chained}");
        // Control: causes that differ are all said, outermost first.
        let e = anyhow::anyhow!("inner").context("middle").context("outer");
        assert_eq!(exit::said_once(&e), "outer: middle: inner");
    }

    fn usage_error(argv: &[&str]) -> String {
        let args: Vec<OsString> = argv.iter().map(OsString::from).collect();
        let e = parse(&args).unwrap_err();
        usage_line(&e.render().to_string(), subcommand_of(&args).as_deref())
    }

    #[test]
    fn another_tools_word_for_a_login_item_action_gets_a_did_you_mean() {
        let e = usage_error(&["headroom", "login-item", "install"]);
        assert!(
            e.starts_with("invalid value `install` for `[ACTION]`; did you mean `register`? Possible values: register, status, unregister"),
            "{e}"
        );
        let e = usage_error(&["headroom", "login-item", "uninstall"]);
        assert!(e.contains("did you mean `unregister`?"), "{e}");
        // Control: a word with no counterpart gets the possible values and no guess.
        let e = usage_error(&["headroom", "login-item", "frobnicate"]);
        assert!(!e.contains("did you mean"), "{e}");
        assert!(
            e.contains("possible values: register, status, unregister"),
            "{e}"
        );
    }

    #[test]
    fn usage_errors_keep_clap_tips_on_one_line_and_point_at_the_subcommand_help() {
        let e = usage_error(&["headroom", "run", "--limit", "1G", "--jsn", "--", "true"]);
        assert!(e.contains("did you mean `--json`?"), "{e}");
        assert!(e.ends_with("(see `headroom run --help`)"), "{e}");
        let e = usage_error(&["headroom", "run", "--limit", "1G", "echo"]);
        assert!(e.contains("use `-- echo`"), "{e}");
        let e = usage_error(&["headroom", "probe", "--color", "sometimes"]);
        assert!(e.contains("possible values: auto, always, never"), "{e}");
        assert!(e.ends_with("(see `headroom probe --help`)"), "{e}");
        let e = usage_error(&["headroom", "prob"]);
        assert!(e.contains("did you mean `probe`?"), "{e}");
        assert!(e.ends_with("(see `headroom --help`)"), "{e}");
        let e = usage_error(&["headroom", "run", "--", "true"]);
        assert!(e.contains("not provided: --limit <SIZE>"), "{e}");
        for e in [e, usage_error(&["headroom", "reap", "--dry-runn"])] {
            assert_eq!(e.lines().count(), 1, "{e}");
            assert!(!e.contains("For more information"), "{e}");
        }
    }
}
