//! The liveness guard: is a zombie-holding parent still hosting a session someone is using?
//! (all OSes, pure; the caller supplies argv, clocks and the log judge).
//!
//! Ancestry protects nothing once headroom runs at login (its ancestors are itself and PID 1),
//! so the guard looks at what the parent's *session children* — live children running a
//! different executable; the leaked ones are self-spawns — are doing, through two signals
//! that fail in different directions and must agree before anything is reaped:
//!
//! - CPU: a session child that burned less than 0.1 % of a core between two readings did no
//!   work in between. Readings persist across runs per (pid, start time), so a `reap` from
//!   cron sees hours. CPU misses delegated work (builds in short-lived grandchildren).
//! - Log content (`--log-dir` of the session child): misses CPU-bound work that writes
//!   nothing, but sees delegated work.
//!
//! A parent is idle only when both signals are readable and both are past the threshold. No
//! history means busy; one unreadable child makes the parent unreadable.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::session_log::log_dir_from_argv;

use serde::{Deserialize, Serialize};

use crate::process_table::ProcessTable;
use crate::snapshot::{ProcState, ProcessRecord};

/// Default idle threshold: long enough that thinking, reading or lunch is never mistaken for
/// a finished session; short enough to rescue a machine leaking ~600 zombies an hour.
pub const DEFAULT_IDLE_THRESHOLD_S: f64 = 2.0 * 3600.0;
/// Below this, a live session between turns will read as finished: warn.
pub const RECKLESS_THRESHOLD_S: f64 = 30.0 * 60.0;
/// CPU share of one core below which a child "did no work": 0.1 %, an order of magnitude
/// below the lowest working rate measured (1.29 %) and above the worst heartbeat (0.02 %).
pub const DEFAULT_ACTIVE_FRACTION: f64 = 0.001;

/// Live children of `parent` that are not self-spawns: the executable path differs (when
/// both are known) **or** the name differs. The leak's children are self-spawns, matching on
/// both; a wrapper and its session that run under one interpreter (`python3`, `node`) share
/// the path but not the name (on Linux `comm` is the script name or `process.title`).
/// The reverse case, a self-spawn whose path changed after an update, then counts as a
/// session and protects its parent: the safe direction.
pub fn session_children<'a>(
    table: &ProcessTable<'a>,
    parent: &ProcessRecord,
) -> Vec<&'a ProcessRecord> {
    table
        .children(parent.pid)
        .filter(|c| !c.is_zombie())
        .filter(|c| {
            c.name != parent.name || matches!((&c.exe, &parent.exe), (Some(a), Some(b)) if a != b)
        })
        .collect()
}

/// One session child's CPU reading, persisted across runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CpuEntry {
    pub pid: i32,
    pub start_time: u64,
    pub cpu_ns: u64,
    /// Awake-clock milliseconds (time asleep is not idle time) of this reading.
    pub read_at_ms: i64,
    /// Awake-clock milliseconds of the last reading at which the child had worked.
    pub last_active_ms: i64,
}

/// Per-child CPU history and the rate that counts as work.
#[derive(Debug, Clone, PartialEq)]
pub struct CpuTracker {
    entries: HashMap<i32, CpuEntry>,
    pub active_fraction: f64,
}

impl CpuTracker {
    pub fn new(entries: Vec<CpuEntry>, active_fraction: f64) -> Self {
        Self {
            entries: entries.into_iter().map(|e| (e.pid, e)).collect(),
            active_fraction,
        }
    }

    pub fn entries(&self) -> Vec<CpuEntry> {
        let mut v: Vec<CpuEntry> = self.entries.values().cloned().collect();
        v.sort_by_key(|e| e.pid);
        v
    }

    /// Record a reading and return the child's CPU idle seconds, or `None` (unknown) on a
    /// first sighting, a changed start time (pid reuse), or a previous entry this reading
    /// contradicts (a counter that went down, a reading older than the stored one): such an
    /// entry is replaced, never measured against.
    pub fn observe(&mut self, pid: i32, start_time: u64, cpu_ns: u64, now_ms: i64) -> Option<f64> {
        let fresh = CpuEntry {
            pid,
            start_time,
            cpu_ns,
            read_at_ms: now_ms,
            last_active_ms: now_ms,
        };
        let Some(prev) = self
            .entries
            .get_mut(&pid)
            .filter(|e| e.start_time == start_time && e.cpu_ns <= cpu_ns && e.read_at_ms <= now_ms)
        else {
            self.entries.insert(pid, fresh);
            return None;
        };
        let elapsed_s = (now_ms - prev.read_at_ms) as f64 / 1000.0;
        let consumed_s = (cpu_ns - prev.cpu_ns) as f64 / 1e9;
        // The rate is measured against the previous reading, not the last active one.
        let working = if elapsed_s <= 0.0 {
            // Two readings in one millisecond: no rate, but any CPU used is work.
            consumed_s > 0.0
        } else {
            // "Below" the fraction is no work: exactly at it is work (the safe side).
            consumed_s / elapsed_s >= self.active_fraction
        };
        prev.cpu_ns = cpu_ns;
        prev.read_at_ms = now_ms;
        if working {
            prev.last_active_ms = now_ms;
        }
        Some(((now_ms - prev.last_active_ms).max(0)) as f64 / 1000.0)
    }

    /// Forget children that are no longer session children.
    pub fn retain(&mut self, keep: &HashSet<(i32, u64)>) {
        self.entries
            .retain(|pid, e| keep.contains(&(*pid, e.start_time)));
    }
}

/// Judges a session log directory by content; `None` when it cannot tell.
pub trait LogJudge {
    /// Unix seconds of the last sign of work in `dir`, judged as of `now`.
    fn last_activity(&self, dir: &Path, now: i64) -> Option<i64>;
}

/// Why a parent's session gives no evidence whatever its readings say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Blind {
    /// A session child is stopped (SIGSTOP from `park`, `park-tree` or a memory guard) or
    /// traced: it burns no CPU and writes no log, whatever its session is doing.
    ChildStopped,
    /// Table entries could not be read, so this parent's child list may be incomplete.
    ChildrenUnreadable,
    /// The parent was not assessed at all.
    NotAssessed,
}

impl Blind {
    pub fn describe(self) -> &'static str {
        match self {
            Self::ChildStopped => "session child stopped",
            Self::ChildrenUnreadable => "some processes could not be read; children may be missing",
            Self::NotAssessed => "the session was not assessed",
        }
    }
}

/// What the guard knows about one parent's session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Session {
    /// Session children's pids (empty: no session).
    pub children: Vec<i32>,
    /// Minimum CPU idle over the children; `None` when any child's is unknown.
    pub cpu_idle_s: Option<f64>,
    /// Freshest log age over the children; `None` when any child's is unknown.
    pub log_age_s: Option<f64>,
    /// Set: no evidence, the parent is `Unreadable` even with no session child.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blind: Option<Blind>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SessionVerdict {
    /// No session child: nothing to protect.
    NoSession,
    /// Both signals readable and both past the threshold.
    Idle,
    /// Both readable, at least one shows recent activity.
    Active,
    /// A signal could not be read: no basis for a decision, so protected.
    Unreadable,
}

impl Session {
    pub fn none() -> Self {
        Self {
            children: Vec::new(),
            cpu_idle_s: None,
            log_age_s: None,
            blind: None,
        }
    }

    /// Nothing known: what a parent missing from the session map reads as.
    pub fn unknown() -> Self {
        Self {
            blind: Some(Blind::NotAssessed),
            ..Self::none()
        }
    }

    /// An unreadable signal outranks activity: a parent with one blind signal stays
    /// protected even at the wall, where "active" may be overridden.
    pub fn verdict(&self, threshold_s: f64) -> SessionVerdict {
        if self.blind.is_some() {
            return SessionVerdict::Unreadable;
        }
        if self.children.is_empty() {
            return SessionVerdict::NoSession;
        }
        match (self.cpu_idle_s, self.log_age_s) {
            (Some(cpu), Some(log)) if cpu >= threshold_s && log >= threshold_s => {
                SessionVerdict::Idle
            }
            (Some(_), Some(_)) => SessionVerdict::Active,
            _ => SessionVerdict::Unreadable,
        }
    }

    /// `cpu_idle=S;log_age=S` (`unknown` for what could not be read), or `no-session`;
    /// `;blind=REASON` when the session gives no evidence.
    pub fn signal_text(&self) -> String {
        if self.children.is_empty() && self.blind.is_none() {
            return "no-session".into();
        }
        let f = |v: Option<f64>| v.map_or("unknown".to_string(), |s| format!("{s:.0}"));
        let blind = match self.blind {
            Some(b) => format!(
                ";blind={}",
                serde_json::to_value(b)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            ),
            None => String::new(),
        };
        format!(
            "cpu_idle={};log_age={}{blind}",
            f(self.cpu_idle_s),
            f(self.log_age_s)
        )
    }
}

/// Inputs of one assessment.
#[derive(Debug, Clone, Copy)]
pub struct Clocks {
    /// Unix seconds (log timestamps are wall time).
    pub wall_s: i64,
    /// Awake-clock milliseconds (CPU history; excludes sleep). `None` when the clock or the
    /// history cannot be trusted: no CPU reading is taken and the CPU signal is unknown.
    pub awake_ms: Option<i64>,
}

/// How to read a session child's command line and working directory (`None` when
/// unreadable, or not recorded in a replay).
pub struct ChildReader<'a> {
    pub argv: &'a dyn Fn(i32) -> Option<Vec<String>>,
    pub cwd: &'a dyn Fn(i32) -> Option<PathBuf>,
}

impl std::fmt::Debug for ChildReader<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChildReader")
    }
}

/// The session child's `--log-dir`, a relative one resolved against the child's own working
/// directory (never headroom's: another directory's stale logs would supply the "idle"
/// half of the verdict). `None` when there is none or it cannot be resolved.
pub fn child_log_dir(pid: i32, read: &ChildReader<'_>) -> Option<PathBuf> {
    let dir = log_dir_from_argv(&(read.argv)(pid)?)?;
    if dir.is_absolute() {
        return Some(dir);
    }
    let cwd = (read.cwd)(pid)?;
    cwd.is_absolute().then(|| cwd.join(dir))
}

/// Assess the session of every parent in `parents`, updating the CPU history.
pub fn assess(
    table: &ProcessTable<'_>,
    parents: &[i32],
    tracker: &mut CpuTracker,
    read: &ChildReader<'_>,
    judge: &dyn LogJudge,
    clocks: Clocks,
) -> HashMap<i32, Session> {
    let mut out = HashMap::new();
    let mut seen: HashSet<(i32, u64)> = HashSet::new();
    // A table with unread entries may be missing any parent's children.
    let incomplete = table
        .snapshot
        .partial()
        .then_some(Blind::ChildrenUnreadable);
    for &pid in parents {
        let Some(parent) = table.get(pid) else {
            continue;
        };
        let children = session_children(table, parent);
        if children.is_empty() {
            out.insert(
                pid,
                Session {
                    blind: incomplete,
                    ..Session::none()
                },
            );
            continue;
        }
        let stopped = children
            .iter()
            .any(|c| matches!(c.state, ProcState::Stopped | ProcState::Traced))
            .then_some(Blind::ChildStopped);
        let mut cpu: Option<f64> = Some(f64::INFINITY);
        let mut log: Option<f64> = Some(f64::INFINITY);
        for c in &children {
            let idle = match (c.start_time, c.cpu_ns, clocks.awake_ms) {
                (Some(st), Some(ns), Some(now)) => {
                    seen.insert((c.pid, st));
                    tracker.observe(c.pid, st, ns, now)
                }
                _ => None,
            };
            cpu = match (cpu, idle) {
                (Some(a), Some(b)) => Some(a.min(b)),
                _ => None,
            };
            // One unknown child makes the parent's log age unknown for good: the rest need
            // neither their argv read nor their log directories judged.
            if let Some(freshest) = log {
                log = child_log_dir(c.pid, read)
                    .and_then(|dir| judge.last_activity(&dir, clocks.wall_s))
                    .map(|last| freshest.min((clocks.wall_s - last).max(0) as f64));
            }
        }
        out.insert(
            pid,
            Session {
                children: children.iter().map(|c| c.pid).collect(),
                cpu_idle_s: cpu,
                log_age_s: log,
                blind: stopped.or(incomplete),
            },
        );
    }
    tracker.retain(&seen);
    out
}

#[cfg(test)]
pub(crate) mod tests;
