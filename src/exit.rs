//! The exit-code table (mirrored in the man page's EXIT STATUS section) and the error types
//! that `lib::run` maps onto it.

/// Ran cleanly; nothing wrong.
pub const OK: u8 = 0;
/// Ran cleanly, but the answer is the unhappy one the command tests for (probe: warning;
/// reap: a target survived; hangs: a confirmed hang was left; login-item status: not
/// registered).
pub const UNHAPPY: u8 = 1;
/// Something the user asked for failed (probe: critical).
pub const ERROR: u8 = 2;
/// Refused by a safety rule (probe and limits: unknown).
pub const REFUSED: u8 = 3;
/// The command line or a config value is wrong; nothing was done.
pub const USAGE: u8 = 64;
/// `run`: headroom itself failed before or while supervising the command.
pub const RUN_FAILED: u8 = 125;
/// `run`: the command exists but is not executable.
pub const RUN_NOT_EXECUTABLE: u8 = 126;
/// `run`: the command was not found.
pub const RUN_NOT_FOUND: u8 = 127;
/// Interrupted by Ctrl-C.
pub const INTERRUPTED: u8 = 130;

/// How a long-running loop (`watch`, `hangs --watch`, `idle-watch`, `calibrate`) ends when a
/// signal asked it to stop after the round in flight: 130 for SIGINT (Ctrl-C), 0 for SIGTERM
/// or SIGHUP (a supervisor's ordinary stop), its own code when nothing asked.
pub fn after_stop(sig: Option<i32>, otherwise: u8) -> u8 {
    match sig {
        Some(s) if crate::platform::stop_flag::is_interrupt(s) => INTERRUPTED,
        Some(_) => OK,
        None => otherwise,
    }
}

/// The table as printed in `headroom --help` and `headroom(1)`.
pub const TABLE: &[(&str, &str)] = &[
    (
        "0",
        "ok; probe/limits: level normal; a dry run (reap, hangs), whatever it found; a loop (watch, hangs --watch, top --watch, idle-watch, calibrate) stopped by SIGTERM",
    ),
    (
        "1",
        "the unhappy answer the command is about; probe/limits: level warning; reap: a target survived or was not verified; hangs: a confirmed hang was left (blocked, restart failed, or replay); park-tree/wake-tree: members left unchanged",
    ),
    (
        "2",
        "error: something asked for failed; probe/limits: level critical",
    ),
    (
        "3",
        "refused by a safety rule; probe/limits: level unknown (no reading: no ceiling readable, an unreadable --snapshot); a reading whose history could not be saved keeps its level, with a warning",
    ),
    (
        "64",
        "usage error: bad flag, value or config; nothing was done",
    ),
    ("125", "run: headroom itself failed"),
    ("126", "run: command not executable"),
    ("127", "run: command not found"),
    (
        "128+N",
        "run: the tree ended by signal N (143 after SIGTERM, 137 after SIGKILL)",
    ),
    (
        "130",
        "interrupted (SIGINT, Ctrl-C); a loop (watch, hangs --watch, top --watch, idle-watch, calibrate) ends after the round in flight",
    ),
];

/// A usage error detected after parsing (a value clap cannot check alone). Exit 64.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// A safety rule refused the request. Exit 3.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Refused(pub String);

/// A failure whose exit status the command chose, typed by the row of the table it maps to
/// (`code`). With `UsageError` (64), `Refused` (3) and any other error (2) these are every
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
    pub fn code(&self) -> u8 {
        match self {
            Self::Failed(_) => ERROR,
            Self::NoReading(_) => REFUSED,
            Self::RunFailed(_) => RUN_FAILED,
            Self::NotExecutable(_) => RUN_NOT_EXECUTABLE,
            Self::NotFound(_) => RUN_NOT_FOUND,
        }
    }
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
mod tests {
    use super::*;

    #[test]
    fn each_failure_exits_with_its_row_of_the_table() {
        let m = || "m".to_string();
        let codes: Vec<u8> = [
            Failure::Failed(m()),
            Failure::NoReading(m()),
            Failure::RunFailed(m()),
            Failure::NotExecutable(m()),
            Failure::NotFound(m()),
        ]
        .iter()
        .map(Failure::code)
        .collect();
        assert_eq!(codes, [2, 3, 125, 126, 127]);
        for c in &codes {
            assert!(
                TABLE.iter().any(|(row, _)| row == &c.to_string()),
                "{c} is in the documented table"
            );
        }
    }
}
