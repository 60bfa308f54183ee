use std::path::PathBuf;

use super::*;
use crate::snapshot::fixture::*;

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
fn wrapper() -> crate::snapshot::Snapshot {
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
    snap: &crate::snapshot::Snapshot,
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
