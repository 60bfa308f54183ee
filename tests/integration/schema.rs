//! Test-side mirrors of every `--json` output, with `deny_unknown_fields`: a renamed or
//! removed field fails here, and so does an added one until it is mirrored (and documented).

#![allow(dead_code)]

use serde::Deserialize;

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TopParent {
    pub pid: i32,
    pub name: String,
    pub zombies: u64,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    pub schema: String,
    pub at: String,
    pub os: String,
    pub uid: u32,
    pub processes: u64,
    pub tasks: Option<u64>,
    pub zombies: u64,
    pub used: u64,
    pub limit: Option<u64>,
    pub limit_source: Option<String>,
    pub usage_pct: Option<f64>,
    pub free_slots: Option<u64>,
    pub level: String,
    pub warn_pct: f64,
    pub crit_pct: f64,
    pub top_parents: Vec<TopParent>,
    pub growth_per_min: Option<f64>,
    pub eta_seconds: Option<f64>,
    pub trend_samples: usize,
    pub history: bool,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ceiling {
    pub source: String,
    pub value: Option<i64>,
    pub unlimited: bool,
    pub scope: String,
    pub in_use: Option<u64>,
    pub origin: String,
    pub enforced: bool,
    #[serde(default)]
    pub note: Option<String>,
    pub status: String,
    pub effective: Option<u64>,
    pub binds: bool,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub schema: String,
    pub at: String,
    pub os: String,
    pub uid: u32,
    pub used: u64,
    pub processes: u64,
    pub tasks: Option<u64>,
    pub limit: Option<u64>,
    pub limit_source: Option<String>,
    pub level: String,
    pub ceilings: Vec<Ceiling>,
    pub notes: Vec<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SnapshotProcess {
    pub pid: i32,
    pub ppid: i32,
    pub uid: u32,
    pub state: String,
    pub start_time: Option<u64>,
    pub name: String,
    #[serde(default)]
    pub exe: Option<String>,
    pub pgid: Option<i32>,
    pub sid: Option<i32>,
    pub threads: Option<u32>,
    pub cpu_ns: Option<u64>,
    pub footprint_bytes: Option<u64>,
    #[serde(default)]
    pub argv: Option<Vec<String>>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SnapshotCeiling {
    pub source: String,
    pub value: Option<i64>,
    pub unlimited: bool,
    pub scope: String,
    pub in_use: Option<u64>,
    pub origin: String,
    pub enforced: bool,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Memory {
    pub total_bytes: u64,
    pub available_bytes: u64,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    pub schema: String,
    pub detail: String,
    pub os: String,
    pub taken_at_ms: i64,
    pub self_pid: i32,
    pub uid: u32,
    pub processes: Vec<SnapshotProcess>,
    pub ceilings: Vec<SnapshotCeiling>,
    pub memory: Option<Memory>,
}

/// One step of a restart sequence (`step`: signal, wait-exit, exec, wait-replacement).
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HangsStep {
    pub step: String,
    #[serde(default)]
    pub signal: Option<String>,
    #[serde(default)]
    pub pid: Option<i32>,
    #[serde(default)]
    pub condition: Option<String>,
    #[serde(default)]
    pub up_to_ms: Option<u64>,
    #[serde(default)]
    pub argv: Option<Vec<String>>,
    #[serde(default)]
    pub executable_under: Option<String>,
    pub result: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HangsAction {
    pub outcome: String,
    pub performed: bool,
    pub detail: Option<String>,
    pub new_pid: Option<i32>,
    pub steps: Vec<HangsStep>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HangsNotification {
    pub message: String,
    pub sent: bool,
    pub note: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HangsApp {
    pub identity: String,
    pub name: String,
    pub pid: i32,
    pub bundle_id: Option<String>,
    pub bundle_path: String,
    pub policy: String,
    pub kind: Option<String>,
    pub state: String,
    pub reason: Option<String>,
    pub rounds: u32,
    pub cooldown_until: Option<String>,
    pub action: Option<HangsAction>,
    pub notification: Option<HangsNotification>,
}

/// `hangs --json` (one round: `schema`) and each line of `--watch` / `--observations`
/// (`type: "round"`).
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HangsRound {
    #[serde(default)]
    pub schema: Option<String>,
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    pub at: String,
    pub status: String,
    pub unavailable_reason: Option<String>,
    pub mode: String,
    pub checked: usize,
    pub cleared_pending: usize,
    pub apps: Vec<HangsApp>,
}

/// The last line of `hangs --watch --json`.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HangsSummary {
    #[serde(rename = "type")]
    pub kind: String,
    pub rounds: u64,
    pub restarted: u64,
    pub restart_failed: u64,
    pub blocked: u64,
    pub unavailable_rounds: u64,
    pub stopped_by: Option<String>,
}

/// One line of `hangs-events.jsonl`, and each element of `hangs --events --json`.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HangEvent {
    #[serde(rename = "type")]
    pub event: String,
    pub at: String,
    pub identity: String,
    pub name: String,
    pub pid: i32,
    pub bundle_path: String,
    pub kind: String,
    pub reason: Option<String>,
    pub new_pid: Option<i32>,
    pub replayed: bool,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct HangsEvents {
    pub schema: String,
    pub since: Option<String>,
    pub skipped_lines: usize,
    pub events: Vec<HangEvent>,
}
