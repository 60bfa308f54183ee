//! What `run --limit`'s watchdog tells the world: the events it streams while the tree
//! runs and the summary it ends with (`headroom.run/1`; JSON Lines on stderr with `--json`).
//! Every event carries `at`, the instant it happened (taken where it happened, not when
//! printed: a breach at the sample that found it).

use serde::Serialize;

use crate::platform::Signal;

/// Why the tree was ended by headroom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EndReason {
    /// Over the limit after parking (or with nothing to park).
    Limit,
    /// headroom was signalled and the command had not exited a grace period later.
    Signal,
    /// The command exited; these processes of its tree were still running.
    Leftovers,
    /// `--timeout` passed while the tree was still running.
    Timeout,
    /// The process that started headroom exited (`--die-with-parent`).
    ParentExited,
}

/// What the terminal's job control did to the command's group (`headroom` follows it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum JobAction {
    /// Ctrl-Z or a background read/write stopped the group; headroom stops too.
    Stopped,
    /// Continued (`fg`, `bg`): headroom continues the group.
    Continued,
}

/// Streamed while the tree runs: JSON Lines on stderr with `--json`; without it, a few of
/// them as lines of text (`commands::run` words them).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(description = "A record `run --json` streams on stderr while the command's tree runs.")]
#[serde(tag = "type", rename_all = "snake_case")]
#[schemars(rename = "Event")]
pub enum RunEvent {
    Start {
        /// When it happened (RFC 3339, UTC).
        at: String,
        pid: i32,
        command_pid: i32,
        command: Vec<String>,
        limit_bytes: u64,
        interval_ms: u64,
        grace_ms: u64,
        subreaper: bool,
        terminal: bool,
    },
    /// The tree crossed the warning line (`--warn`, once per crossing).
    ApproachingLimit {
        /// When it happened (RFC 3339, UTC).
        at: String,
        footprint_bytes: u64,
        limit_bytes: u64,
        pct: f64,
        warn_pct: f64,
    },
    Breach {
        /// When it happened (RFC 3339, UTC).
        at: String,
        footprint_bytes: u64,
        effective_limit_bytes: u64,
        free_pct: Option<f64>,
        processes: usize,
    },
    Park {
        /// When it happened (RFC 3339, UTC).
        at: String,
        root: i32,
        name: String,
        pids: Vec<i32>,
        footprint_bytes: u64,
        cpu_pct: f64,
    },
    ParkResult {
        /// When it happened (RFC 3339, UTC).
        at: String,
        relieved: bool,
        footprint_bytes: u64,
        effective_limit_bytes: u64,
    },
    Signal {
        /// When it happened (RFC 3339, UTC).
        at: String,
        signal: Signal,
        reason: EndReason,
        pids: Vec<i32>,
        gone: usize,
        failed: Vec<String>,
    },
    /// Grace survivors not sent SIGKILL: under the limit by then.
    Spared {
        /// When it happened (RFC 3339, UTC).
        at: String,
        reason: EndReason,
        pids: Vec<i32>,
    },
    Forward {
        /// When it happened (RFC 3339, UTC).
        at: String,
        signal: Signal,
        pids: Vec<i32>,
    },
    JobControl {
        /// When it happened (RFC 3339, UTC).
        at: String,
        action: JobAction,
        signal: i32,
    },
    Warning {
        /// When it happened (RFC 3339, UTC).
        at: String,
        message: String,
    },
    Summary(RunSummary),
}

/// The instant now, as every event's `at` is printed.
pub fn now_at() -> String {
    crate::core::time::format_ms(crate::platform::now_ms())
}

impl crate::schema::Document for RunEvent {
    const SCHEMA: &'static str = "headroom.run/1";
    const TYPE: Option<&'static str> = None;
}

/// How the command itself ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct CommandStatus {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

/// The one record `run` ends with.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Summary")]
pub struct RunSummary {
    /// When the run ended: the command's tree was gone (RFC 3339, UTC).
    pub at: String,
    pub exit_code: crate::exit::ExitStatus,
    pub command_status: Option<CommandStatus>,
    pub peak_footprint_bytes: u64,
    pub peak_processes: usize,
    pub limit_bytes: u64,
    pub lowest_effective_limit_bytes: u64,
    pub breaches: u32,
    pub parked: usize,
    pub ended_by: Option<EndReason>,
    /// Processes sent SIGTERM / SIGKILL by headroom.
    pub terminated: usize,
    pub killed: usize,
    /// Grace survivors of a limit ending not sent SIGKILL: together they held less than the
    /// limit by then (the survivors of a breach are sent SIGKILL only if still over it).
    pub spared: Vec<i32>,
    /// Signals headroom received and forwarded to the command's group.
    pub forwarded: Vec<Signal>,
    /// Processes of the tree that could not be ended.
    pub survivors: Vec<i32>,
    pub duration_ms: u64,
    pub samples: u64,
}
