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

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TopRow {
    pub pid: i32,
    pub cmd: String,
    pub footprint_kb: u64,
    pub tree_pids: Vec<i32>,
    pub process_count: usize,
    pub state: String,
    pub growth_kb_s: i64,
    pub cpu_pct: Option<f64>,
    pub park_candidate: bool,
    pub reason_code: String,
    pub reason: String,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Top {
    pub schema: String,
    pub ts: i64,
    pub uid: u32,
    pub free_pct: Option<u8>,
    pub total_bytes: Option<u64>,
    pub available_bytes: Option<u64>,
    pub park_min_mb: u64,
    pub sample_ms: u64,
    pub processes: Vec<TopRow>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ParkStep {
    pub pid: i32,
    pub name: String,
    pub outcome: String,
    #[serde(default)]
    pub detail: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Park {
    pub schema: String,
    pub action: String,
    pub pid: i32,
    pub name: String,
    pub changed: usize,
    pub processes: Vec<ParkStep>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TreePeak {
    pub pid: i32,
    pub name: String,
    pub peak_bytes: u64,
    pub processes: usize,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Calibrate {
    pub schema: String,
    pub duration_ms: u64,
    pub samples: usize,
    pub total_bytes: u64,
    pub free_pct: Option<f64>,
    pub min_free_pct: Option<f64>,
    pub largest_trees: Vec<TreePeak>,
    pub suggested_limit_bytes: u64,
    pub suggested_limit: String,
    pub rule: String,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CommandStatus {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RunSummary {
    pub schema: String,
    pub exit_code: u8,
    pub command_status: Option<CommandStatus>,
    pub peak_footprint_bytes: u64,
    pub peak_processes: usize,
    pub limit_bytes: u64,
    pub lowest_effective_limit_bytes: u64,
    pub breaches: u32,
    pub parked: usize,
    pub ended_by: Option<String>,
    pub terminated: usize,
    pub killed: usize,
    pub forwarded: Vec<String>,
    pub survivors: Vec<i32>,
    pub duration_ms: u64,
    pub samples: u64,
}

/// `run --json`: one of these per line on stderr.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum RunEvent {
    Start {
        schema: String,
        pid: i32,
        command_pid: i32,
        command: Vec<String>,
        limit_bytes: u64,
        interval_ms: u64,
        grace_ms: u64,
        subreaper: bool,
        terminal: bool,
    },
    Breach {
        footprint_bytes: u64,
        effective_limit_bytes: u64,
        free_pct: Option<f64>,
        processes: usize,
    },
    Park {
        root: i32,
        name: String,
        pids: Vec<i32>,
        footprint_bytes: u64,
        cpu_pct: f64,
    },
    ParkResult {
        relieved: bool,
        footprint_bytes: u64,
        effective_limit_bytes: u64,
    },
    Signal {
        signal: String,
        reason: String,
        pids: Vec<i32>,
        gone: usize,
        failed: Vec<String>,
    },
    Forward {
        signal: String,
        pids: Vec<i32>,
    },
    JobControl {
        action: String,
        signal: i32,
    },
    Warning {
        message: String,
    },
    Summary(RunSummary),
}

/// Every JSON line of a `run --json` stderr, strictly parsed.
pub fn run_events(stderr: &str) -> Vec<RunEvent> {
    stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}
