//! Fixtures for the session-log tests: log directories built in a temp dir from the
//! incident's own line shapes (reference A.7), judged as of the incident capture instant.

use crate::core::time::format_secs;
use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::Instant;
use std::time::{Duration, UNIX_EPOCH};

use super::judge_dir;
use crate::core::session_log::*;

/// The capture instant of the 2026-08-29 incident evidence: 2026-08-29T09:21:47Z.
pub(super) const NOW: i64 = 1_787_995_307;
pub(super) const MIN: i64 = 60;
pub(super) const HOUR: i64 = 3600;

/// The wrapper's microsecond form.
pub(super) fn us(t: i64) -> String {
    format!("{}.499123Z", &format_secs(t)[..19])
}

/// The session's millisecond form.
pub(super) fn ms(t: i64) -> String {
    format!("{}.499Z", &format_secs(t)[..19])
}

/// The three verbatim incident heartbeat lines, as the wrapper writes them every 30 s.
pub(super) fn triplet(t: i64) -> String {
    let pid = 32_302 + (t % 1000);
    format!(
        "{} DEBUG tokio-runtime-worker ThreadId(09) agency::send_telemetry_events: client/agency/src/send_telemetry_events.rs:427: telem periodic flush: queue empty, nothing to commit\n\
         {} DEBUG tokio-runtime-worker ThreadId(09) agency::send_telemetry_events: client/agency/src/send_telemetry_events.rs:282: telem flush: spawned detached child pid={pid}\n\
         {} DEBUG tokio-runtime-worker ThreadId(11) otel_receiver::server: client/otel_receiver/src/server.rs:136: accepted OTLP signal (not yet processed) signal=/v1/metrics\n",
        us(t),
        us(t),
        us(t + 1)
    )
}

/// Heartbeat triplets every 30 s from `from` up to `to` (both as unix seconds).
pub(super) fn heartbeats(from: i64, to: i64) -> String {
    (0..)
        .map(|k| from + 30 * k)
        .take_while(|t| *t <= to)
        .map(triplet)
        .collect()
}

pub(super) fn work(t: i64, event: &str) -> String {
    format!(
        "{} [DEBUG] Forwarding event for session 4da0d54f: {event}\n",
        ms(t)
    )
}

/// The hourly policy self-fetch: three lines that are housekeeping, not work.
pub(super) fn policy_fetch(t: i64) -> String {
    format!(
        "{} [INFO] [managedSettings] self-fetch starting for account\n\
         {} [DEBUG] [MDM] Read 3 managed setting(s) from plist\n\
         {} [DEBUG] Forwarding event for session 4da0d54f: session.managed_settings_resolved (ephemeral)\n",
        ms(t),
        ms(t),
        ms(t)
    )
}

pub(super) fn trace_batch(t: i64) -> String {
    format!(
        "{} DEBUG tokio-runtime-worker ThreadId(11) otel_receiver::server: client/otel_receiver/src/server.rs:210: received Copilot trace batch span_count=3 sample=[\"execute_tool bash\", \"chat\"]\n",
        us(t)
    )
}

pub(super) const WRAPPER_LOG: &str = "agency_copilot_1787933424_86183.log";
pub(super) const SESSION_LOG: &str = "process-1787933425-86242.log";

pub(super) struct LogDir(tempfile::TempDir);

impl LogDir {
    pub(super) fn new() -> Self {
        Self(tempfile::tempdir().unwrap())
    }

    pub(super) fn path(&self) -> &Path {
        self.0.path()
    }

    /// Write `content` to `name` with its mtime set to `mtime` (unix seconds): the tests
    /// judge as of NOW, not as of the machine's clock.
    pub(super) fn file(&self, name: &str, content: impl AsRef<[u8]>, mtime: i64) -> &Self {
        let path = self.0.path().join(name);
        let mut f = File::create(&path).unwrap();
        f.write_all(content.as_ref()).unwrap();
        f.set_modified(UNIX_EPOCH + Duration::from_secs(mtime as u64))
            .unwrap();
        self
    }

    pub(super) fn judge(&self) -> DirReport {
        self.judge_with(&ReaderLimits::default())
    }

    pub(super) fn judge_with(&self, limits: &ReaderLimits) -> DirReport {
        judge_dir(self.path(), NOW, limits, Instant::now).unwrap()
    }
}

pub(super) fn file<'a>(r: &'a DirReport, name: &str) -> &'a FileReport {
    r.files.iter().find(|f| f.name == name).unwrap()
}

pub(super) fn age(r: &DirReport) -> i64 {
    r.age(NOW).unwrap_or_else(|| panic!("unknown: {r:#?}"))
}

/// The incident session log: real work until `last_work`, heartbeats every 30 s after it
/// up to 3 s ago.
pub(super) fn session_log(last_work: i64) -> String {
    work(last_work - 60, "tool.execution_start")
        + &trace_batch(last_work - 57)
        + &work(last_work, "assistant.turn_end")
        + &heartbeats(last_work + 27, NOW - 3)
}
