//! What a finished `run_limited` call says: the report, from what `headroom run` left (its
//! exit, its records, the tails of its output), and the one-line summary.

use std::time::Duration;

use super::{Plan, RunLimitedReport};
use crate::mcp::tools::run_output::{Records, Tail};
use crate::output::human_bytes;

/// What was read of `run` once it ended.
pub(super) struct Finished {
    /// `None` when it was killed (by a signal, or by the server's SIGKILL).
    pub(super) exit_code: Option<i32>,
    /// The server's escalation sent it SIGKILL.
    pub(super) killed: bool,
    pub(super) duration: Duration,
    pub(super) stdout: Tail,
    pub(super) stderr: Tail,
    pub(super) records: Records,
}

/// The report, the summary line, and whether the call failed (`run` gave no summary: it
/// could not run the command).
pub(super) fn report(p: Plan, f: Finished) -> (RunLimitedReport, String, bool) {
    let records = f.records;
    let outcome = records.summary.as_ref().map(|(_, o)| o);
    let ended_by = outcome.and_then(|o| o.ended_by.as_deref());
    let capped = ended_by == Some("limit");
    let timed_out = ended_by == Some("timeout");
    let peak = outcome.map(|o| o.peak_footprint_bytes);
    let report = RunLimitedReport {
        command: p.command,
        cwd: p.cwd.display().to_string(),
        limit_bytes: p.limit_bytes,
        timeout_ms: u64::try_from(p.timeout.as_millis()).unwrap_or(u64::MAX),
        exit_code: f.exit_code,
        capped,
        timed_out,
        killed_after_timeout: f.killed,
        peak_footprint_bytes: peak,
        duration_ms: u64::try_from(f.duration.as_millis()).unwrap_or(u64::MAX),
        stdout_tail: f.stdout.text(),
        stdout_bytes: f.stdout.total,
        stderr_tail: f.stderr.text(),
        stderr_bytes: f.stderr.total,
        summary: records.summary.map(|(v, _)| v),
    };
    let mut text = match (peak, report.exit_code) {
        (Some(pk), Some(code)) => format!(
            "exit {code}; peak {} of {}",
            human_bytes(pk),
            human_bytes(p.limit_bytes)
        ),
        (None, Some(code)) => format!(
            "`headroom run` could not run the command (exit {code}){}",
            records
                .error
                .as_ref()
                .map_or(String::new(), |e| format!(": {e}"))
        ),
        (_, None) => "`headroom run` was killed".to_string(),
    };
    if capped {
        text += "; capped: headroom ended the tree for being over its limit";
    }
    if timed_out {
        text += &format!(
            "; timed out after {}: the tree was ended",
            humantime::format_duration(p.timeout)
        );
    }
    let failed = report.summary.is_none();
    (report, text, failed)
}
