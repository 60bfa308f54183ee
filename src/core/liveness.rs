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

use crate::core::session_log::log_dir_from_argv;

use serde::{Deserialize, Serialize};

use crate::core::snapshot::{ProcState, ProcessRecord, ProcessTable};

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
pub(crate) mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::core::snapshot::fixture::*;

    /// A judge that answers from a table of directory → last activity.
    pub(crate) struct FakeJudge(pub HashMap<PathBuf, i64>);

    impl LogJudge for FakeJudge {
        fn last_activity(&self, dir: &Path, _now: i64) -> Option<i64> {
            self.0.get(dir).copied()
        }
    }

    const MIN: i64 = 60_000;

    #[test]
    fn i11_tracker_first_unknown_then_idle_then_busy_then_reuse() {
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        assert_eq!(t.observe(60640, 7, 74_480_000_000, 0), None);
        assert_eq!(t.observe(60640, 7, 74_480_000_000, 60 * MIN), Some(3600.0));
        assert_eq!(t.observe(60640, 7, 75_480_000_000, 61 * MIN), Some(0.0));
        assert_eq!(t.observe(60640, 7, 75_480_000_000, 121 * MIN), Some(3600.0));
        assert_eq!(
            t.observe(60640, 8, 1, 122 * MIN),
            None,
            "a new start time is a new process"
        );
    }

    #[test]
    fn i11_prune_keeps_only_current_children() {
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        for pid in 0..101 {
            t.observe(pid, 1, 0, 0);
        }
        t.retain(&HashSet::from([(3, 1), (4, 1), (5, 99)]));
        assert_eq!(t.entries().len(), 2);
    }

    /// Simulate `polls` one-minute polls burning `cpu_per_poll_s`; return the final idle.
    fn idle_after(polls: i64, cpu_per_poll_s: f64, fraction: f64) -> Option<f64> {
        let mut t = CpuTracker::new(vec![], fraction);
        let mut idle = None;
        for i in 0..=polls {
            let cpu = 74_480_000_000 + (i as f64 * cpu_per_poll_s * 1e9) as u64;
            idle = t.observe(60640, 7, cpu, i * MIN);
        }
        idle
    }

    #[test]
    fn i1_three_hours_at_zero_burn_is_three_hours_idle() {
        assert_eq!(
            idle_after(180, 0.0, DEFAULT_ACTIVE_FRACTION),
            Some(10_800.0)
        );
    }

    #[test]
    fn i2_i3_an_hour_or_less_of_quiet_stays_below_the_two_hour_threshold() {
        for minutes in [1, 5, 20, 45, 60] {
            let idle = idle_after(minutes, 0.0, DEFAULT_ACTIVE_FRACTION).unwrap_or_default();
            assert_eq!(idle, minutes as f64 * 60.0);
            let s = Session {
                children: vec![1],
                cpu_idle_s: Some(idle),
                log_age_s: Some(36_000.0),
                blind: None,
            };
            assert_eq!(
                s.verdict(DEFAULT_IDLE_THRESHOLD_S),
                SessionVerdict::Active,
                "{minutes} min"
            );
        }
    }

    #[test]
    fn i4_a_working_session_never_goes_idle() {
        assert_eq!(idle_after(720, 2.48, DEFAULT_ACTIVE_FRACTION), Some(0.0));
    }

    #[test]
    fn i5_heartbeat_burn_counts_as_work_at_the_0_1_percent_threshold() {
        // 0.13 s a minute is 0.22 % of a core. The reference's old 1 % threshold called this
        // idle (and reaped); headroom uses 0.1 %, so the heartbeat keeps the session
        // protected: erring low is the safe direction.
        assert_eq!(idle_after(180, 0.13, DEFAULT_ACTIVE_FRACTION), Some(0.0));
        assert_eq!(
            idle_after(180, 0.13, 0.01),
            Some(10_800.0),
            "the old 1 % threshold"
        );
    }

    #[test]
    fn idle_rate_measurements_from_the_reference() {
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        t.observe(1, 1, 0, 0);
        // 0.40 s per 180 s is 0.22 %: work at 0.1 %.
        assert_eq!(t.observe(1, 1, 400_000_000, 3 * MIN), Some(0.0));
        // 10,000 s idle, then 40 s of CPU in 60 s: work.
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        t.observe(1, 1, 0, 0);
        assert_eq!(t.observe(1, 1, 0, 10_000_000), Some(10_000.0));
        assert_eq!(t.observe(1, 1, 40_000_000_000, 10_060_000), Some(0.0));
    }

    /// Wrapper 60581 with copilot 60640 and an agency self-spawn 93295.
    fn wrapper() -> crate::core::snapshot::Snapshot {
        let mut procs = leaker(60581, 308, 100_000);
        procs[0].exe = Some("/Users/x/.config/agency/CurrentVersion/agency".into());
        let mut copilot = proc(60640, 60581, "copilot");
        copilot.cpu_ns = Some(74_480_000_000);
        let mut selfspawn = proc(93295, 60581, "agency");
        selfspawn.exe = procs[0].exe.clone();
        procs.extend([copilot, selfspawn]);
        snapshot("macos", procs)
    }

    #[test]
    fn i6_only_the_different_executable_is_a_session_child() {
        let s = wrapper();
        let t = ProcessTable::new(&s);
        let parent = t.get(60581).unwrap();
        let live = t.children(60581).filter(|c| !c.is_zombie()).count();
        assert_eq!(live, 2);
        let kids: Vec<i32> = session_children(&t, parent).iter().map(|c| c.pid).collect();
        assert_eq!(kids, vec![60640]);
    }

    #[test]
    fn the_default_threshold_is_two_hours_of_quiet() {
        // The documented default: 1 h 59 min of quiet on both signals is still a session in
        // use, 2 h is idle.
        let s = |quiet_s: f64| Session {
            children: vec![1],
            cpu_idle_s: Some(quiet_s),
            log_age_s: Some(quiet_s),
            blind: None,
        };
        let th = DEFAULT_IDLE_THRESHOLD_S;
        assert_eq!(s(119.0 * 60.0).verdict(th), SessionVerdict::Active);
        assert_eq!(s(120.0 * 60.0).verdict(th), SessionVerdict::Idle);
    }

    #[test]
    fn a_threshold_below_half_an_hour_is_reckless_and_the_default_is_not() {
        // reap warns when the threshold is below this, in words: "below 30 min".
        let reckless = |minutes: f64| minutes * 60.0 < RECKLESS_THRESHOLD_S;
        assert!(reckless(29.0));
        assert!(!reckless(30.0));
        assert!(!reckless(DEFAULT_IDLE_THRESHOLD_S / 60.0));
    }

    #[test]
    fn exactly_the_active_fraction_is_work_and_just_below_is_not() {
        // 1 s of CPU in 1000 s is 0.1 % exactly (both exact in binary): not below, so work.
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        t.observe(1, 1, 0, 0);
        assert_eq!(t.observe(1, 1, 0, 60 * MIN), Some(3600.0));
        assert_eq!(
            t.observe(1, 1, 1_000_000_000, 60 * MIN + 1_000_000),
            Some(0.0)
        );
        // Control: a nanosecond less over the same 1000 s is below it, quiet.
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        t.observe(1, 1, 0, 0);
        assert_eq!(t.observe(1, 1, 999_999_999, 1_000_000), Some(1000.0));
    }

    #[test]
    fn two_readings_in_one_millisecond_count_any_cpu_as_work_and_none_as_quiet() {
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        t.observe(1, 1, 0, 0);
        assert_eq!(t.observe(1, 1, 0, 60 * MIN), Some(3600.0));
        assert_eq!(
            t.observe(1, 1, 0, 60 * MIN),
            Some(3600.0),
            "no CPU: still quiet"
        );
        assert_eq!(
            t.observe(1, 1, 1, 60 * MIN),
            Some(0.0),
            "a nanosecond of CPU is work"
        );
    }

    #[test]
    fn each_blind_reason_says_what_it_is_about() {
        for (b, about) in [
            (Blind::ChildStopped, "stopped"),
            (Blind::ChildrenUnreadable, "could not be read"),
            (Blind::NotAssessed, "not assessed"),
        ] {
            assert!(b.describe().contains(about), "{b:?}: {}", b.describe());
        }
    }

    #[test]
    fn a_child_reader_names_itself_in_debug_output() {
        // Its closures have no Debug; the struct still shows up in `{:?}` of what holds it.
        let argv = |_: i32| None;
        let cwd = |_: i32| None;
        let read = ChildReader {
            argv: &argv,
            cwd: &cwd,
        };
        assert_eq!(format!("{read:?}"), "ChildReader");
    }

    #[test]
    fn both_signals_must_agree_and_unknown_protects() {
        let th = DEFAULT_IDLE_THRESHOLD_S;
        let s = |cpu: Option<f64>, log: Option<f64>| Session {
            children: vec![1],
            cpu_idle_s: cpu,
            log_age_s: log,
            blind: None,
        };
        assert_eq!(
            s(Some(th), Some(th)).verdict(th),
            SessionVerdict::Idle,
            "equality counts as idle"
        );
        assert_eq!(
            s(Some(27_534.0), Some(4.0)).verdict(th),
            SessionVerdict::Active
        );
        assert_eq!(
            s(Some(0.0), Some(9000.0)).verdict(th),
            SessionVerdict::Active
        );
        assert_eq!(
            s(None, Some(9000.0)).verdict(th),
            SessionVerdict::Unreadable,
            "i7: no history means busy"
        );
        assert_eq!(
            s(Some(0.0), None).verdict(th),
            SessionVerdict::Unreadable,
            "blind outranks active"
        );
        assert_eq!(Session::none().verdict(th), SessionVerdict::NoSession);
        assert_eq!(
            s(Some(1560.0), None).signal_text(),
            "cpu_idle=1560;log_age=unknown"
        );
        assert_eq!(Session::none().signal_text(), "no-session");
    }

    fn assess_once(
        snap: &crate::core::snapshot::Snapshot,
        t: &mut CpuTracker,
        judge: &FakeJudge,
        awake_ms: i64,
    ) -> Session {
        let table = ProcessTable::new(snap);
        let argv = |pid: i32| table.get(pid).and_then(|p| p.argv.clone());
        let cwd = |pid: i32| {
            table
                .get(pid)
                .and_then(|p| p.cwd.clone())
                .map(PathBuf::from)
        };
        let clocks = Clocks {
            wall_s: 1_788_000_000,
            awake_ms: Some(awake_ms),
        };
        let read = ChildReader {
            argv: &argv,
            cwd: &cwd,
        };
        assess(&table, &[60581], t, &read, judge, clocks)
            .remove(&60581)
            .unwrap()
    }

    #[test]
    fn assess_combines_cpu_history_and_log_content() {
        let mut snap = wrapper();
        let copilot = snap.processes.iter_mut().find(|p| p.pid == 60640).unwrap();
        copilot.argv = Some(vec![
            "copilot".into(),
            "--log-dir".into(),
            "/logs/s1".into(),
        ]);
        let judge = FakeJudge(HashMap::from([(
            PathBuf::from("/logs/s1"),
            1_788_000_000 - 9000,
        )]));
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        let first = assess_once(&snap, &mut t, &judge, 0);
        assert_eq!((first.cpu_idle_s, first.log_age_s), (None, Some(9000.0)));
        assert_eq!(
            first.verdict(DEFAULT_IDLE_THRESHOLD_S),
            SessionVerdict::Unreadable
        );
        let later = assess_once(&snap, &mut t, &judge, 3 * 3600 * 1000);
        assert_eq!(
            (later.cpu_idle_s, later.log_age_s),
            (Some(10_800.0), Some(9000.0))
        );
        assert_eq!(
            later.verdict(DEFAULT_IDLE_THRESHOLD_S),
            SessionVerdict::Idle
        );
    }

    #[test]
    fn i8_a_second_child_with_unreadable_cpu_keeps_the_parent_unreadable() {
        let mut snap = wrapper();
        let mut helper = proc(70000, 60581, "node");
        helper.cpu_ns = None;
        helper.argv = Some(vec!["node".into(), "--log-dir=/logs/s1".into()]);
        snap.processes.push(helper);
        let copilot = snap.processes.iter_mut().find(|p| p.pid == 60640).unwrap();
        copilot.argv = Some(vec!["copilot".into(), "--log-dir=/logs/s1".into()]);
        let judge = FakeJudge(HashMap::from([(PathBuf::from("/logs/s1"), 0)]));
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        for i in 0..300 {
            let s = assess_once(&snap, &mut t, &judge, i * MIN);
            assert_eq!(s.cpu_idle_s, None);
        }
    }

    #[test]
    fn a_rotating_helper_child_never_produces_a_readable_cpu_signal() {
        let base = wrapper();
        let judge = FakeJudge(HashMap::new());
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        for i in 0..6 {
            let mut snap = base.clone();
            snap.processes.retain(|p| p.pid != 60640);
            let mut helper = proc(80_000 + i as i32, 60581, "helper");
            helper.start_time = Some(5000 + i as u64);
            snap.processes.push(helper);
            assert_eq!(assess_once(&snap, &mut t, &judge, i * MIN).cpu_idle_s, None);
        }
    }

    #[test]
    fn a_reading_that_contradicts_the_stored_entry_starts_over() {
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        t.observe(1, 1, 5_000_000_000, 10 * MIN);
        assert_eq!(
            t.observe(1, 1, 1_000_000_000, 130 * MIN),
            None,
            "a counter that went down"
        );
        assert_eq!(
            t.observe(1, 1, 1_000_000_000, 250 * MIN),
            Some(7200.0),
            "measured from the replacing reading"
        );
        assert_eq!(
            t.observe(1, 1, 1_000_000_000, 200 * MIN),
            None,
            "a reading older than the stored one"
        );
        assert_eq!(
            t.observe(1, 1, 1_000_000_000, 201 * MIN),
            Some(60.0),
            "control: a consistent next reading is measured"
        );
    }

    #[test]
    fn no_awake_clock_means_no_cpu_reading() {
        let snap = wrapper();
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        let judge = FakeJudge(HashMap::new());
        let table = ProcessTable::new(&snap);
        let no_argv = |_: i32| None;
        let no_cwd = |_: i32| None;
        let read = ChildReader {
            argv: &no_argv,
            cwd: &no_cwd,
        };
        for _ in 0..3 {
            let clocks = Clocks {
                wall_s: 1_788_000_000,
                awake_ms: None,
            };
            let s = assess(&table, &[60581], &mut t, &read, &judge, clocks);
            assert_eq!(s[&60581].cpu_idle_s, None);
        }
        assert!(t.entries().is_empty(), "nothing recorded without a clock");
        assert_eq!(assess_once(&snap, &mut t, &judge, 0).cpu_idle_s, None);
        assert_eq!(
            assess_once(&snap, &mut t, &judge, 3 * 3600 * 1000).cpu_idle_s,
            Some(10_800.0),
            "control: with the clock the same child is measured"
        );
    }

    #[test]
    fn asleep_is_not_idle_because_the_awake_clock_is_used() {
        // 8 h of wall time asleep, 30 s awake: the tracker only ever sees awake time.
        let mut t = CpuTracker::new(vec![], DEFAULT_ACTIVE_FRACTION);
        t.observe(1, 1, 0, 0);
        assert_eq!(t.observe(1, 1, 0, 30_000), Some(30.0));
    }
}
