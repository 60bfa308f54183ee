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
    #[serde(rename = "type")]
    pub kind: String,
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
    pub eta_seconds: Option<i64>,
    pub trend_samples: usize,
    pub history: bool,
    pub unreadable: u64,
    pub others_hidden: bool,
    pub partial: bool,
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
    #[serde(rename = "type")]
    pub kind: String,
    pub at: String,
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
    pub growth_per_min: Option<f64>,
    pub eta_seconds: Option<i64>,
    pub trend_samples: usize,
    pub partial: bool,
    pub os: String,
    pub ceilings: Vec<Ceiling>,
    pub notes: Vec<String>,
    pub memory_pressure: Option<String>,
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
    pub tpgid: Option<i32>,
    pub threads: Option<u32>,
    pub cpu_ns: Option<u64>,
    pub footprint_bytes: Option<u64>,
    #[serde(default)]
    pub argv: Option<Vec<String>>,
    #[serde(default)]
    pub cwd: Option<String>,
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
    #[serde(rename = "type")]
    pub kind: String,
    pub detail: String,
    pub os: String,
    pub taken_at: String,
    pub taken_at_ms: i64,
    pub self_pid: i32,
    pub uid: u32,
    pub processes: Vec<SnapshotProcess>,
    pub unreadable: u64,
    pub others_hidden: bool,
    pub ceilings: Vec<SnapshotCeiling>,
    pub memory: Option<Memory>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReapUsage {
    pub at: String,
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
    pub growth_per_min: Option<f64>,
    pub eta_seconds: Option<i64>,
    pub trend_samples: usize,
    pub partial: bool,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReapEmergency {
    pub enabled: bool,
    pub free_fraction: f64,
    pub recovery_fraction: f64,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReapPolicy {
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub min_zombies: u64,
    pub max_targets: u64,
    pub spare_sessions: bool,
    #[serde(rename = "idle_threshold_seconds")]
    pub idle_threshold_s: i64,
    pub emergency: ReapEmergency,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReapParent {
    pub pid: i32,
    pub name: String,
    pub exe: Option<String>,
    pub zombies: u64,
    pub verdict: String,
    pub reason: Option<String>,
    pub session_children: Vec<i32>,
    pub session: String,
    pub cpu_idle_seconds: Option<f64>,
    pub log_age_seconds: Option<f64>,
    /// `child-stopped`, `children-unreadable` or `not-assessed`; absent when the session
    /// could be judged.
    #[serde(default)]
    pub session_blind: Option<String>,
    #[serde(rename = "override")]
    pub override_: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReapTarget {
    pub pid: i32,
    pub name: String,
    pub outcome: String,
    pub signals: Vec<String>,
    pub zombies_before: u64,
    pub zombies_reaped: u64,
    pub zombies_left: u64,
    pub held_by: Option<ReapHolder>,
    pub verified: bool,
    #[serde(rename = "override")]
    pub override_: Option<String>,
    pub error: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReapHolder {
    pub pid: i32,
    pub name: String,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reap {
    pub schema: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub at: String,
    pub uid: u32,
    pub dry_run: bool,
    pub pressure: bool,
    pub usage: ReapUsage,
    pub policy: ReapPolicy,
    pub grace_ms: u64,
    pub parents: Vec<ReapParent>,
    pub targets: Vec<ReapTarget>,
    pub slots_freed: u64,
    pub verify_ms: u64,
    pub already_handled: Vec<i32>,
    pub summary: String,
}

/// A row of `evidence --json`: the reading's fields (each null where the file predates
/// its column), then the row's own.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EvidenceRow {
    pub at: Option<String>,
    pub uid: Option<u32>,
    pub processes: Option<u64>,
    pub tasks: Option<u64>,
    pub zombies: Option<u64>,
    pub used: Option<u64>,
    pub limit: Option<u64>,
    pub limit_source: Option<String>,
    pub usage_pct: Option<f64>,
    pub free_slots: Option<u64>,
    pub level: Option<String>,
    pub growth_per_min: Option<f64>,
    pub eta_seconds: Option<i64>,
    pub trend_samples: Option<usize>,
    pub partial: Option<bool>,
    pub top_parent_pid: Option<i32>,
    pub top_parent_name: Option<String>,
    pub top_parent_zombies: Option<u64>,
    pub session_signal: Option<String>,
    pub action: String,
    pub result: String,
    #[serde(rename = "override")]
    pub override_: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Anomaly {
    pub file: String,
    pub line: u64,
    pub fields: usize,
    pub expected: usize,
    pub text: String,
    /// `field_count`, `unreadable_value`, `no_header`, `csv`, `file_unreadable`.
    pub reason: String,
    pub column: Option<String>,
    pub through_line: Option<u64>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Evidence {
    pub schema: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub files: Vec<String>,
    pub rows: usize,
    #[serde(rename = "first_at")]
    pub first: Option<String>,
    #[serde(rename = "last_at")]
    pub last: Option<String>,
    pub peak_usage: Option<EvidenceRow>,
    pub lowest_free: Option<EvidenceRow>,
    pub shortest_eta: Option<EvidenceRow>,
    pub cleanups: Vec<EvidenceRow>,
    pub anomalies: Vec<Anomaly>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LogProbeLimits {
    pub chunk_bytes: usize,
    pub budget_bytes: u64,
    pub horizon_seconds: i64,
    pub max_files: usize,
    pub max_tail_files: usize,
    pub tail_bytes: u64,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LogProbeFile {
    pub name: String,
    pub size_bytes: u64,
    #[serde(rename = "modified_at")]
    pub mtime: Option<String>,
    pub mtime_age_seconds: Option<i64>,
    /// "work" | "heartbeat-only" | "unknown" | "skipped"
    pub verdict: String,
    pub skip_reason: Option<String>,
    pub tail_only: bool,
    #[serde(rename = "last_activity_at")]
    pub last_activity: Option<String>,
    pub age_seconds: Option<i64>,
    pub bytes_read: u64,
    pub read_ms: u64,
    pub error: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LogProbeDirectory {
    /// "work" | "heartbeat-only" | "unknown"
    pub verdict: String,
    #[serde(rename = "last_activity_at")]
    pub last_activity: Option<String>,
    pub age_seconds: Option<i64>,
    pub unknown_reason: Option<String>,
    pub bytes_read: u64,
    pub read_ms: u64,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LogProbe {
    pub schema: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub dir: String,
    pub at: String,
    pub replay: bool,
    pub limits: LogProbeLimits,
    pub files: Vec<LogProbeFile>,
    pub directory: LogProbeDirectory,
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
    #[serde(rename = "cooldown_ends_at")]
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
    pub schema: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub at: String,
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
    #[serde(rename = "type")]
    pub kind: String,
    pub since_at: Option<String>,
    pub skipped_lines: usize,
    pub events: Vec<HangEvent>,
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
    #[serde(rename = "type")]
    pub kind: String,
    pub at: String,
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
    #[serde(rename = "type")]
    pub kind: String,
    pub action: String,
    pub pid: i32,
    pub name: String,
    pub changed: usize,
    pub left: Vec<i32>,
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
    #[serde(rename = "type")]
    pub kind: String,
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
    pub at: String,
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
    pub spared: Vec<i32>,
    pub duration_ms: u64,
    pub samples: u64,
}

/// `run --json`: one of these per line on stderr.
#[derive(Debug, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum RunEvent {
    Start {
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
    ApproachingLimit {
        at: String,
        footprint_bytes: u64,
        limit_bytes: u64,
        pct: f64,
        warn_pct: f64,
    },
    Breach {
        at: String,
        footprint_bytes: u64,
        effective_limit_bytes: u64,
        free_pct: Option<f64>,
        processes: usize,
    },
    Park {
        at: String,
        root: i32,
        name: String,
        pids: Vec<i32>,
        footprint_bytes: u64,
        cpu_pct: f64,
    },
    ParkResult {
        at: String,
        relieved: bool,
        footprint_bytes: u64,
        effective_limit_bytes: u64,
    },
    Signal {
        at: String,
        signal: String,
        reason: String,
        pids: Vec<i32>,
        gone: usize,
        failed: Vec<String>,
    },
    Spared {
        at: String,
        reason: String,
        pids: Vec<i32>,
    },
    Forward {
        at: String,
        signal: String,
        pids: Vec<i32>,
    },
    JobControl {
        at: String,
        action: String,
        signal: i32,
    },
    Warning {
        at: String,
        message: String,
    },
    /// Who holds the limit (`--enforce`), right after `start`.
    Enforcement {
        at: String,
        requested: String,
        by: String,
        cgroup: Option<String>,
        cgroup_version: Option<String>,
        memory_max_bytes: Option<u64>,
        memory_high_bytes: Option<u64>,
        swap_capped: bool,
        reason: Option<String>,
        removed_leftovers: Vec<String>,
        pressure: Option<String>,
    },
    /// What the kernel did in the command's cgroup, just before the summary.
    KernelOutcome {
        at: String,
        cgroup: String,
        oom_kills: u64,
        cgroup_peak_bytes: Option<u64>,
        ended_with_cgroup: Vec<i32>,
        remove_error: Option<String>,
    },
    Summary(RunSummary),
}

/// Every JSON line of a `run --json` stderr, strictly parsed: each says it is a
/// `headroom.run/1` record.
pub fn run_events(stderr: &str) -> Vec<RunEvent> {
    stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| run_event(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// One `run --json` record, strictly parsed; it must say it is `headroom.run/1`.
pub fn run_event(line: &str) -> Result<RunEvent, String> {
    let mut v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let schema = v.as_object_mut().and_then(|o| o.remove("schema"));
    if schema != Some("headroom.run/1".into()) {
        return Err(format!("schema {schema:?}, not headroom.run/1"));
    }
    serde_json::from_value(v).map_err(|e| e.to_string())
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DoctorCheck {
    pub name: String,
    pub outcome: String,
    pub headroom: Option<String>,
    pub system: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Doctor {
    pub schema: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub at: String,
    pub os: String,
    pub uid: u32,
    pub ok: usize,
    pub mismatches: usize,
    pub skipped: usize,
    pub checks: Vec<DoctorCheck>,
    pub guard: DoctorGuard,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DoctorGuard {
    pub running: Option<GuardHolder>,
    pub config: Option<String>,
    pub acts: Vec<GuardAct>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GuardHolder {
    pub pid: u32,
    pub label: Option<String>,
    pub once: bool,
    pub locked_at: String,
    pub version: String,
    pub program: Option<String>,
}

#[derive(Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GuardAct {
    pub name: String,
    pub on: bool,
    pub what: String,
    pub switch: String,
}
