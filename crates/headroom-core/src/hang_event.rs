//! One line of the hang monitor's event log (`hangs-events.jsonl`, kept by
//! `store::hang_events`) and the rules over the log as data: how a line parses, which
//! events are kept (30 days, at most `MAX_EVENTS`), which a `--since` shows.

use serde::{Deserialize, Serialize};

use crate::hangs::{AppDecision, EventKind, RecoveryKind};
use crate::time::{format_ms, parse_ms};

/// Events are kept this long.
pub const EVENT_RETENTION_MS: i64 = 30 * 24 * 3_600_000;
/// And at most this many (oldest dropped first).
pub const MAX_EVENTS: usize = 10_000;

/// One line of `hangs-events.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HangEvent {
    #[serde(rename = "type")]
    pub event: EventKind,
    pub at: String,
    pub identity: String,
    pub name: String,
    pub pid: i32,
    pub bundle_path: String,
    /// `app` or `service`.
    pub kind: RecoveryKind,
    /// Why a restart failed or an app was blocked.
    #[serde(default)]
    pub reason: Option<String>,
    /// The service's replacement pid after a restart.
    #[serde(default)]
    pub new_pid: Option<i32>,
    /// Written by `hangs --observations`: decided from a recording; nothing was done.
    #[serde(default)]
    pub replayed: bool,
}

impl HangEvent {
    pub fn new(event: EventKind, at_ms: i64, d: &AppDecision, kind: RecoveryKind) -> Self {
        Self {
            event,
            at: format_ms(at_ms),
            identity: d.identity.clone(),
            name: d.app.name.clone(),
            pid: d.app.pid,
            bundle_path: d.app.bundle_path.clone(),
            kind,
            reason: None,
            new_pid: None,
            replayed: false,
        }
    }

    pub fn at_ms(&self) -> Option<i64> {
        parse_ms(&self.at).ok()
    }
}

/// Parse the events file: the events, and how many lines could not be read.
pub fn parse_events(text: &str) -> (Vec<HangEvent>, usize) {
    let mut events = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<HangEvent>(line) {
            Ok(e) if e.at_ms().is_some() => events.push(e),
            _ => bad += 1,
        }
    }
    (events, bad)
}

/// The log after appending `new` as of `now_ms`: events older than the retention dropped,
/// then the oldest beyond `MAX_EVENTS`.
pub fn retain(events: &mut Vec<HangEvent>, new: &[HangEvent], now_ms: i64) {
    events.retain(|e| e.at_ms().is_some_and(|t| now_ms - t <= EVENT_RETENTION_MS));
    events.extend(new.iter().cloned());
    if events.len() > MAX_EVENTS {
        let excess = events.len() - MAX_EVENTS;
        events.drain(..excess);
    }
}

/// Keep the events at or after `since_ms`.
pub fn since_filter(events: &mut Vec<HangEvent>, since_ms: i64) {
    events.retain(|e| e.at_ms().is_some_and(|t| t >= since_ms));
}
