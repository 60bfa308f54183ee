//! The report of the MCP tool `run_limited` (`headroom run --limit` under a wall-clock
//! timeout, `mcp::run_limited`): a report like every command's, so the list of published
//! schemas (`commands::schema::ALL`) names it without importing the front end.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

#[cfg(unix)]
use crate::actions::watchdog::Summary;

/// The `headroom.run-limited/1` report.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct RunLimitedReport {
    pub command: Vec<String>,
    pub cwd: String,
    pub limit_bytes: u64,
    pub timeout_ms: u64,
    /// `run`'s exit code: the command's own, 143/137 when headroom ended the tree, 125 to
    /// 127 when it could not start it; null if `run` itself was killed.
    pub exit_code: Option<i32>,
    /// headroom ended the tree for being over its limit.
    pub capped: bool,
    /// The timeout passed and the tree was ended.
    pub timed_out: bool,
    /// `run` did not end within two graces of the SIGTERM the server sent it (past its
    /// timeout) and was killed.
    pub killed_after_timeout: bool,
    pub peak_footprint_bytes: Option<u64>,
    pub duration_ms: u64,
    pub stdout_tail: String,
    pub stdout_bytes: u64,
    /// The command's stderr, byte for byte (`run`'s records come on a pipe of their own).
    pub stderr_tail: String,
    pub stderr_bytes: u64,
    /// `run`'s final `headroom.run/1` record, as it wrote it; null when it could not start
    /// the command.
    #[cfg_attr(unix, schemars(with = "Option<Summary>"))]
    pub summary: Option<Value>,
}

impl crate::schema::Document for RunLimitedReport {
    const SCHEMA: &'static str = "headroom.run-limited/1";
    const TYPE: Option<&'static str> = Some("run-limited");
}
