//! The exit-code table (mirrored in the man page's EXIT STATUS section and the README), the
//! `ExitStatus` every command returns, and the error types that `lib::run` maps onto it.

/// How headroom ends: one variant per row of the exit-code table (`TABLE`), `run`'s
/// passthrough of the command's own status included, plus `Level`, which shares rows 0-3
/// with the statuses whose numbers the monitoring-plugin convention gives it. Every command
/// returns one; `code` is the only place a number is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Ran cleanly; nothing wrong.
    Ok,
    /// Ran cleanly, but the answer is the unhappy one the command tests for (reap: a target
    /// survived; hangs: a confirmed hang was left; login-item status: not registered).
    Unhappy,
    /// Something the user asked for failed. Never a reading's level: a critical reading is
    /// `Level(Critical)`, an answer, not a failure.
    Error,
    /// Refused by a safety rule. Never a reading's level: an unknown reading is
    /// `Level(Unknown)`.
    Refused,
    /// probe, limits and a watch round: the reading's level, exiting as the
    /// monitoring-plugin convention numbers it (0 normal, 1 warning, 2 critical, 3 unknown),
    /// so a caller can tell a critical reading from a failure that shares its number.
    Level(crate::core::reading::Level),
    /// The command line or a config value is wrong; nothing was done.
    Usage,
    /// `run`: headroom itself failed before or while supervising the command.
    RunFailed,
    /// `run`: the command exists but is not executable.
    NotExecutable,
    /// `run`: the command was not found.
    NotFound,
    /// `run`: the command exited by itself with this status, passed through.
    Child(u8),
    /// `run`: the tree ended by this signal (128 + N, as a shell reports it).
    Signalled(i32),
    /// Interrupted by Ctrl-C (SIGINT).
    Interrupted,
    /// A loop stopped so that it is started afresh: SIGHUP, or `watch` under a service
    /// manager found its own program replaced. Non-zero, so a manager that restarts on
    /// failure (launchd `KeepAlive = {SuccessfulExit = false}`, systemd `Restart=on-failure`)
    /// restarts it; 75 is sysexits' EX_TEMPFAIL ("try again").
    Restart,
}

impl ExitStatus {
    /// The process exit status.
    pub fn code(self) -> u8 {
        use crate::core::reading::Level;
        match self {
            Self::Level(Level::Normal) => 0,
            Self::Level(Level::Warning) => 1,
            Self::Level(Level::Critical) => 2,
            Self::Level(Level::Unknown) => 3,
            Self::Ok => 0,
            Self::Unhappy => 1,
            Self::Error => 2,
            Self::Refused => 3,
            Self::Usage => 64,
            Self::RunFailed => 125,
            Self::NotExecutable => 126,
            Self::NotFound => 127,
            Self::Child(c) => c,
            Self::Signalled(n) => u8::try_from(128_i32.saturating_add(n)).unwrap_or(u8::MAX),
            Self::Interrupted => 130,
            Self::Restart => 75,
        }
    }

    /// Whether it exits 0 (a command's own 0 included).
    pub fn is_success(self) -> bool {
        self.code() == 0
    }

    /// The row of `TABLE` that documents it (a level's is the row of its number, which
    /// names the level).
    fn row(self) -> &'static str {
        use crate::core::reading::Level;
        match self {
            Self::Level(Level::Normal) => "0",
            Self::Level(Level::Warning) => "1",
            Self::Level(Level::Critical) => "2",
            Self::Level(Level::Unknown) => "3",
            Self::Ok => "0",
            Self::Unhappy => "1",
            Self::Error => "2",
            Self::Refused => "3",
            Self::Usage => "64",
            Self::RunFailed => "125",
            Self::NotExecutable => "126",
            Self::NotFound => "127",
            Self::Child(_) => "0-255",
            Self::Signalled(_) => "128+N",
            Self::Interrupted => "130",
            Self::Restart => "75",
        }
    }
}

/// probe and limits speak the monitoring-plugin convention: 0 OK, 1 WARNING, 2 CRITICAL,
/// 3 UNKNOWN (numbered in `code`). The one place a level becomes an exit status.
impl From<crate::core::reading::Level> for ExitStatus {
    fn from(l: crate::core::reading::Level) -> Self {
        Self::Level(l)
    }
}

/// `doctor`: 0 when headroom agrees with the system's tools, 1 on a mismatch.
impl From<crate::core::doctor::Agreement> for ExitStatus {
    fn from(v: crate::core::doctor::Agreement) -> Self {
        use crate::core::doctor::Agreement;
        match v {
            Agreement::Agrees => Self::Ok,
            Agreement::Mismatch => Self::Unhappy,
        }
    }
}

impl From<ExitStatus> for std::process::ExitCode {
    fn from(s: ExitStatus) -> Self {
        Self::from(s.code())
    }
}

/// In JSON (`run`'s summary) it is the number the process exits with.
impl serde::Serialize for ExitStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.code())
    }
}

impl schemars::JsonSchema for ExitStatus {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        u8::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        u8::json_schema(generator)
    }
}

/// How a long-running loop (`watch`, `hangs --watch`, `idle-watch`, `calibrate`) ends when a
/// signal asked it to stop after the round in flight: 130 for SIGINT (Ctrl-C), 0 for SIGTERM
/// (a supervisor's ordinary stop, which it does not undo), 75 for SIGHUP (start me afresh:
/// the guard reads its config only at start, and a service manager that restarts on failure
/// restarts it; an exit 0 here left a systemd unit with `Restart=on-failure` stopped for
/// good), its own status when nothing asked.
pub fn after_stop(sig: Option<i32>, otherwise: ExitStatus) -> ExitStatus {
    match sig {
        Some(s) if crate::platform::stop_flag::is_interrupt(s) => ExitStatus::Interrupted,
        Some(s) if crate::platform::stop_flag::is_hangup(s) => ExitStatus::Restart,
        Some(_) => ExitStatus::Ok,
        None => otherwise,
    }
}

/// The table as printed in `headroom(1)` and the README: each status's row and what it
/// means (the code column is `ExitStatus`'s, so the two cannot drift).
pub(crate) const TABLE: &[(ExitStatus, &str)] = &[
    (
        ExitStatus::Ok,
        "ok; probe/limits: level normal; a dry run (reap, hangs), whatever it found; a loop (watch, hangs --watch, top --watch, idle-watch, calibrate) stopped by SIGTERM; watch under a service manager that found another service's guard running (not restarted)",
    ),
    (
        ExitStatus::Unhappy,
        "the unhappy answer the command is about; probe/limits: level warning; reap: a target survived, or its zombies were not reaped within 10 s; hangs: a confirmed hang was left (blocked, restart failed, or replay); park-tree/wake-tree: members left unchanged",
    ),
    (
        ExitStatus::Error,
        "error: something asked for failed; probe/limits: level critical",
    ),
    (
        ExitStatus::Refused,
        "refused by a safety rule; probe/limits: level unknown (no reading: no ceiling readable, an unreadable --snapshot); a reading whose history could not be saved keeps its level, with a warning",
    ),
    (
        ExitStatus::Usage,
        "usage error: bad flag, value or config; nothing was done",
    ),
    (
        ExitStatus::Restart,
        "stopped to be started afresh: a loop stopped by SIGHUP, or watch under a service manager whose program was replaced (an upgrade); the service manager restarts it",
    ),
    (ExitStatus::RunFailed, "run: headroom itself failed"),
    (ExitStatus::NotExecutable, "run: command not executable"),
    (ExitStatus::NotFound, "run: command not found"),
    (
        ExitStatus::Child(0),
        "run: the command's own exit status, passed through when it exited by itself",
    ),
    (
        ExitStatus::Signalled(0),
        "run: the tree ended by signal N (143 after SIGTERM, 137 after SIGKILL)",
    ),
    (
        ExitStatus::Interrupted,
        "interrupted (SIGINT, Ctrl-C); a loop (watch, hangs --watch, top --watch, idle-watch, calibrate) ends after the round in flight",
    ),
];

/// The rows of `TABLE` as printed: the code column and the meaning.
pub fn table() -> impl Iterator<Item = (&'static str, &'static str)> {
    TABLE.iter().map(|(s, meaning)| (s.row(), *meaning))
}

/// A usage error detected after parsing (a value clap cannot check alone). Exit 64.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A safety rule refused the request. Exit 3.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RefusedError(pub String);

/// A failure whose exit status the command chose, typed by the row of the table it maps to
/// (`code`). With `UsageError` (64), `RefusedError` (3) and any other error (2) these are every
/// way a command fails; `lib::run`, `headroom mcp` and probe's UNKNOWN read them alike.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    /// Something asked for failed (2), said in the command's own words.
    #[error("{0}")]
    Failed(String),
    /// `probe`/`limits`: no reading could be produced (3, UNKNOWN).
    #[error("{0}")]
    NoReading(String),
    /// `run`: headroom itself failed before or while supervising (125).
    #[error("{0}")]
    RunFailed(String),
    /// `run`: the command exists but is not executable (126).
    #[error("{0}")]
    NotExecutable(String),
    /// `run`: the command was not found (127).
    #[error("{0}")]
    NotFound(String),
}

impl Failure {
    pub(crate) fn status(&self) -> ExitStatus {
        match self {
            Self::Failed(_) => ExitStatus::Error,
            Self::NoReading(_) => ExitStatus::Refused,
            Self::RunFailed(_) => ExitStatus::RunFailed,
            Self::NotExecutable(_) => ExitStatus::NotExecutable,
            Self::NotFound(_) => ExitStatus::NotFound,
        }
    }
}

/// What kind of failure an error is, as every front end names it (`headroom mcp`'s
/// `_meta.headroom.error`, a stable name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A safety rule refused it (`Reported::reason` names the rule when it has a name).
    Refused,
    /// The arguments or the config make no valid request.
    Usage,
    /// It ran and failed.
    Failed,
}

impl ErrorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Refused => "refused",
            Self::Usage => "usage",
            Self::Failed => "failed",
        }
    }
}

/// An error as it is said: the one mapping from an error to its message and exit status,
/// shared by the command line (`lib::run`), probe's UNKNOWN (`commands::unknown_on_error`)
/// and `headroom mcp`'s tool errors, so none of them says a cause twice or picks another
/// status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reported {
    /// The cause chain, each cause said once (`said_once`); a `Failure`'s own words.
    pub message: String,
    pub status: ExitStatus,
    pub kind: ErrorKind,
    /// The refusing rule's stable name (`core::parking::ParkRefusal`).
    pub reason: Option<&'static str>,
    /// A closed pipe (`headroom probe | head -1`): not an error, said nowhere.
    pub broken_pipe: bool,
}

/// Map `e` onto the exit-code table.
pub fn report(e: &anyhow::Error) -> Reported {
    let broken_pipe = e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    });
    let (status, kind, reason, message) = if let Some(f) = e.downcast_ref::<Failure>() {
        let kind = match f.status() {
            ExitStatus::Refused => ErrorKind::Refused,
            _ => ErrorKind::Failed,
        };
        (f.status(), kind, None, f.to_string())
    } else if let Some(r) = e.downcast_ref::<crate::core::parking::ParkRefusal>() {
        let m = said_once(e);
        (ExitStatus::Refused, ErrorKind::Refused, Some(r.reason()), m)
    } else if e.downcast_ref::<RefusedError>().is_some() {
        (ExitStatus::Refused, ErrorKind::Refused, None, said_once(e))
    } else if e.downcast_ref::<UsageError>().is_some() {
        (ExitStatus::Usage, ErrorKind::Usage, None, said_once(e))
    } else {
        (ExitStatus::Error, ErrorKind::Failed, None, said_once(e))
    };
    Reported {
        message,
        status,
        kind,
        reason,
        broken_pipe,
    }
}

/// The cause chain joined with `: `, each cause said once: an error whose message already
/// ends with its source's (`cannot read `x`: No such file…`, then the io::Error itself) would
/// otherwise print the OS error twice.
pub fn said_once(e: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || msg.ends_with(&text) || msg.contains(&format!("{text}: ")) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
}

pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// With `--json`, an error is also a document (`headroom.error/1`): on stdout, or as the
/// last line of a JSON Lines stream, so `headroom probe --json | jq` gets input even when
/// it fails. The same message goes to stderr.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct ErrorDocument {
    /// What went wrong, as said on stderr (without `headroom: error: `).
    pub error: String,
    /// The exit status headroom ends with (the table above).
    pub exit_code: u8,
}

impl ErrorDocument {
    pub fn new(error: &str, exit_code: u8) -> Self {
        Self {
            error: crate::output::clip_words(error).into_owned(),
            exit_code,
        }
    }
}

impl crate::schema::Document for ErrorDocument {
    const SCHEMA: &'static str = "headroom.error/1";
    const TYPE: Option<&'static str> = Some("error");
}

#[cfg(test)]
mod tests;
