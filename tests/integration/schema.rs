//! Typed views of the `--json` outputs, for the fields the tests read. They are not the
//! contract: `read` holds every output to its committed schema, closed (`contract.rs`),
//! before a view sees it, so a view names only what some test looks at, and a field
//! added, renamed or removed fails there.

// Some fields are read only by the Linux-only modules; on Linux an unread field is a
// warning, so a view never names more than the tests look at.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

use serde::Deserialize;
use serde::de::DeserializeOwned;

/// A one-shot output and the schema it is published under.
pub trait Report: DeserializeOwned {
    const SCHEMA: &'static str;
}

/// `json` (a command's stdout), held to `T`'s closed schema, as its view.
pub fn read<T: Report>(json: &[u8]) -> T {
    crate::contract::parse(T::SCHEMA, json, "")
}

/// `read`, with `context` (the command's stderr) in the failure.
pub fn read_or<T: Report>(json: &[u8], context: &str) -> T {
    crate::contract::parse(T::SCHEMA, json, context)
}

macro_rules! published_as {
    ($($view:ident: $name:literal),* $(,)?) => {
        $(impl Report for $view {
            const SCHEMA: &'static str = $name;
        })*
    };
}

published_as! {
    Probe: "headroom.probe/2",
    Limits: "headroom.limits/2",
    Snapshot: "headroom.snapshot/1",
    Reap: "headroom.reap/3",
    Evidence: "headroom.evidence/3",
    LogProbe: "headroom.log-probe/4",
    HangsEvents: "headroom.hangs-events/2",
    HangsSummary: "headroom.hangs/2",
    Top: "headroom.top/2",
    Park: "headroom.park/1",
    Calibrate: "headroom.calibrate/1",
    Doctor: "headroom.doctor/1",
}

#[derive(Debug, Deserialize, PartialEq)]
pub struct TopParent {
    pub pid: i32,
    pub name: String,
    pub zombies: u64,
}

#[derive(Debug, Deserialize)]
pub struct Probe {
    pub schema: String,
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
    pub top_parents: Vec<TopParent>,
    pub trend_samples: usize,
    pub history: bool,
}

#[derive(Debug, Deserialize)]
pub struct Ceiling {
    pub source: String,
    pub value: Option<i64>,
    pub enforced: bool,
    pub status: String,
    pub binds: bool,
}

#[derive(Debug, Deserialize)]
pub struct Limits {
    pub schema: String,
    pub used: u64,
    pub limit: Option<u64>,
    pub limit_source: Option<String>,
    pub level: String,
    pub ceilings: Vec<Ceiling>,
    pub notes: Vec<String>,
}

#[derive(Debug, Deserialize)]
pub struct SnapshotProcess {
    pub pid: i32,
    pub uid: u32,
    pub state: String,
    #[serde(default)]
    pub argv: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
pub struct SnapshotCeiling {
    pub source: String,
}

#[derive(Debug, Deserialize)]
pub struct Snapshot {
    pub schema: String,
    pub os: String,
    pub processes: Vec<SnapshotProcess>,
    pub ceilings: Vec<SnapshotCeiling>,
}

#[derive(Debug, Deserialize)]
pub struct ReapParent {
    pub pid: i32,
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
}

#[derive(Debug, Deserialize)]
pub struct ReapTarget {
    pub pid: i32,
    pub outcome: String,
    pub signals: Vec<String>,
    pub zombies_reaped: u64,
    pub zombies_left: u64,
    pub held_by: Option<ReapHolder>,
    pub verified: bool,
}

#[derive(Debug, Deserialize, PartialEq)]
pub struct ReapHolder {
    pub pid: i32,
    pub name: String,
}

#[derive(Debug, Deserialize)]
pub struct Reap {
    pub schema: String,
    pub at: String,
    pub dry_run: bool,
    pub pressure: bool,
    pub grace_ms: u64,
    pub parents: Vec<ReapParent>,
    pub targets: Vec<ReapTarget>,
    pub verify_ms: u64,
    pub already_handled: Vec<i32>,
    pub summary: String,
}

/// A row of `evidence --json`: the reading's fields (each null where the file predates
/// its column), then the row's own.
#[derive(Debug, Deserialize)]
pub struct EvidenceRow {
    pub at: Option<String>,
    pub processes: Option<u64>,
    pub used: Option<u64>,
    pub usage_pct: Option<f64>,
    pub free_slots: Option<u64>,
    pub level: Option<String>,
    pub eta_seconds: Option<i64>,
    pub result: String,
}

#[derive(Debug, Deserialize)]
pub struct Anomaly {
    pub line: u64,
    pub fields: usize,
    pub expected: usize,
    /// `field_count`, `unreadable_value`, `no_header`, `csv`, `file_unreadable`.
    pub reason: String,
    pub column: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Evidence {
    pub rows: usize,
    pub peak_usage: Option<EvidenceRow>,
    pub lowest_free: Option<EvidenceRow>,
    pub shortest_eta: Option<EvidenceRow>,
    pub cleanups: Vec<EvidenceRow>,
    pub anomalies: Vec<Anomaly>,
}

#[derive(Debug, Deserialize)]
pub struct LogProbeLimits {
    pub chunk_bytes: usize,
    pub budget_bytes: u64,
    pub horizon_seconds: i64,
}

#[derive(Debug, Deserialize)]
pub struct LogProbeFile {
    pub name: String,
    pub size_bytes: u64,
    pub mtime_age_seconds: Option<i64>,
    /// "work" | "heartbeat-only" | "unknown" | "skipped"
    pub verdict: String,
    pub skip_reason: Option<String>,
    pub tail_only: bool,
    #[serde(rename = "last_activity_at")]
    pub last_activity: Option<String>,
    pub age_seconds: Option<i64>,
    pub bytes_read: u64,
    pub error: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct LogProbeDirectory {
    /// "work" | "heartbeat-only" | "unknown"
    pub verdict: String,
    #[serde(rename = "last_activity_at")]
    pub last_activity: Option<String>,
    pub age_seconds: Option<i64>,
    pub unknown_reason: Option<String>,
    pub bytes_read: u64,
}

#[derive(Debug, Deserialize)]
pub struct LogProbe {
    pub schema: String,
    pub dir: String,
    pub at: String,
    pub replay: bool,
    pub limits: LogProbeLimits,
    pub files: Vec<LogProbeFile>,
    pub directory: LogProbeDirectory,
}

/// One step of a restart sequence (`step`: signal, wait-exit, exec, wait-replacement).
#[derive(Debug, Deserialize)]
pub struct HangsStep {
    pub step: String,
    #[serde(default)]
    pub signal: Option<String>,
    #[serde(default)]
    pub condition: Option<String>,
    #[serde(default)]
    pub argv: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
pub struct HangsAction {
    pub outcome: String,
    pub performed: bool,
    pub steps: Vec<HangsStep>,
}

#[derive(Debug, Deserialize)]
pub struct HangsNotification {
    pub message: String,
    pub sent: bool,
}

#[derive(Debug, Deserialize)]
pub struct HangsApp {
    pub identity: String,
    pub pid: i32,
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
#[derive(Debug, Deserialize)]
pub struct HangsRound {
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    pub status: String,
    pub mode: String,
    pub cleared_pending: usize,
    pub apps: Vec<HangsApp>,
}

/// The last line of `hangs --watch --json`.
#[derive(Debug, Deserialize)]
pub struct HangsSummary {
    pub schema: String,
    #[serde(rename = "type")]
    pub kind: String,
}

/// One line of `hangs-events.jsonl`, and each element of `hangs --events --json`.
#[derive(Debug, Deserialize)]
pub struct HangEvent {
    #[serde(rename = "type")]
    pub event: String,
    pub at: String,
    pub identity: String,
    pub name: String,
    pub pid: i32,
    pub bundle_path: String,
    pub replayed: bool,
}

#[derive(Debug, Deserialize)]
pub struct HangsEvents {
    pub schema: String,
    pub since_at: Option<String>,
    pub events: Vec<HangEvent>,
}

#[derive(Debug, Deserialize)]
pub struct TopRow {
    pub pid: i32,
    pub cmd: String,
    pub footprint_kb: u64,
    pub tree_pids: Vec<i32>,
    pub process_count: usize,
    pub state: String,
    pub park_candidate: bool,
    pub reason_code: String,
    pub reason: String,
}

#[derive(Debug, Deserialize)]
pub struct Top {
    pub schema: String,
    pub uid: u32,
    pub sample_ms: u64,
    pub processes: Vec<TopRow>,
}

#[derive(Debug, Deserialize)]
pub struct ParkStep {
    pub pid: i32,
    pub outcome: String,
}

#[derive(Debug, Deserialize)]
pub struct Park {
    pub schema: String,
    pub action: String,
    pub changed: usize,
    pub processes: Vec<ParkStep>,
}

#[derive(Debug, Deserialize)]
pub struct TreePeak {}

#[derive(Debug, Deserialize)]
pub struct Calibrate {
    pub schema: String,
    pub samples: usize,
    pub total_bytes: u64,
    pub largest_trees: Vec<TreePeak>,
    pub suggested_limit_bytes: u64,
    pub suggested_limit: String,
}

#[derive(Debug, Deserialize)]
pub struct CommandStatus {
    pub signal: Option<i32>,
}

#[derive(Debug, Deserialize)]
pub struct RunSummary {
    pub exit_code: u8,
    pub command_status: Option<CommandStatus>,
    pub peak_footprint_bytes: u64,
    pub parked: usize,
    pub ended_by: Option<String>,
    pub terminated: usize,
    pub killed: usize,
    pub survivors: Vec<i32>,
    pub spared: Vec<i32>,
    pub samples: u64,
}

/// `run --json`: one of these per line on stderr.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RunEvent {
    Start {
        command_pid: i32,
        subreaper: bool,
    },
    ApproachingLimit {
        pct: f64,
        warn_pct: f64,
    },
    Breach {},
    Park {
        pids: Vec<i32>,
    },
    ParkResult {},
    Signal {
        signal: String,
        reason: String,
        pids: Vec<i32>,
    },
    Spared {},
    Forward {
        signal: String,
        pids: Vec<i32>,
    },
    JobControl {
        action: String,
    },
    Warning {},
    /// Who holds the limit (`--enforce`), right after `start`.
    Enforcement {
        by: String,
        cgroup: Option<String>,
        reason: Option<String>,
        pressure: Option<String>,
    },
    /// What the kernel did in the command's cgroup, just before the summary.
    KernelOutcome {
        oom_kills: u64,
        cgroup_peak_bytes: Option<u64>,
        remove_error: Option<String>,
    },
    Summary(RunSummary),
}

/// Every JSON line of a `run --json` stderr, held to `headroom.run/1`, closed.
pub fn run_events(stderr: &str) -> Vec<RunEvent> {
    let v = crate::contract::validator("headroom.run/1");
    stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| run_event_with(&v, l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// One `run --json` record, held to `headroom.run/1`, closed.
pub fn run_event(line: &str) -> Result<RunEvent, String> {
    run_event_with(&crate::contract::validator("headroom.run/1"), line)
}

fn run_event_with(v: &crate::contract::Validator, line: &str) -> Result<RunEvent, String> {
    crate::contract::parse_line(v, "headroom.run/1", line)
}

/// `hangs --json` stream lines (`--watch`, `--observations`), each held to
/// `headroom.hangs/2`, closed.
pub fn hangs_rounds(out: &[u8]) -> Vec<HangsRound> {
    let v = crate::contract::validator("headroom.hangs/2");
    parse_lines(&v, "headroom.hangs/2", &String::from_utf8_lossy(out))
}

/// The lines of `hangs-events.jsonl`, each held to the event the closed
/// `headroom.hangs-events/2` lists (`$defs/HangEvent`).
pub fn hang_events(text: &str) -> Vec<HangEvent> {
    let v = crate::contract::def_validator("headroom.hangs-events/2", "HangEvent");
    parse_lines(&v, "a HangEvent", text)
}

fn parse_lines<T: DeserializeOwned>(
    v: &crate::contract::Validator,
    what: &str,
    text: &str,
) -> Vec<T> {
    text.lines()
        .map(|l| crate::contract::parse_line(v, what, l).unwrap_or_else(|e| panic!("{e}\n  {l}")))
        .collect()
}

#[derive(Debug, Deserialize)]
pub struct DoctorCheck {
    pub name: String,
    pub outcome: String,
    pub headroom: Option<String>,
    pub system: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct Doctor {
    pub schema: String,
    pub uid: u32,
    pub ok: usize,
    pub mismatches: usize,
    pub skipped: usize,
    pub checks: Vec<DoctorCheck>,
    pub guard: DoctorGuard,
}

#[derive(Debug, Deserialize)]
pub struct DoctorGuard {
    pub running: Option<GuardHolder>,
    pub config: Option<String>,
    pub acts: Vec<GuardAct>,
}

#[derive(Debug, Deserialize, PartialEq)]
pub struct GuardHolder {
    pub pid: u32,
    pub label: Option<String>,
    pub once: bool,
    pub locked_at: String,
    pub version: String,
    pub program: Option<String>,
}

#[derive(Debug, Deserialize)]
pub struct GuardAct {
    pub name: String,
    pub on: bool,
    pub what: String,
    pub switch: String,
}
