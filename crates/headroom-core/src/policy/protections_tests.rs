//! The situations in which a parent hosting a live session used to be selected (issue 16),
//! each replayed from a snapshot through the whole pure path (`liveness::assess`, then
//! `select`), each with its control: the same leaker without the session child (or with an
//! idle one) is still a target, so a fix that refuses everything fails here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::*;
use crate::emergency::Emergency;
use crate::liveness::{
    self, Blind, ChildReader, Clocks, CpuEntry, CpuTracker, DEFAULT_ACTIVE_FRACTION, LogJudge,
};
use crate::patterns::{AllowDeny, Patterns};
use crate::process_table::ProcessTable;
use crate::snapshot::fixture::{UID, proc, snapshot, zombie};
use crate::snapshot::{ProcState, ProcessRecord, Snapshot};

const WALL_S: i64 = 1_788_000_000;
const HOUR_MS: i64 = 3_600_000;
/// Three hours of awake time since the previous reading.
const NOW_MS: i64 = 3 * HOUR_MS;

fn policy() -> Policy {
    Policy {
        allow_deny: AllowDeny {
            allow: Patterns::new(["agency"]),
            deny: Patterns::default(),
        },
        min_zombies: 100,
        max_targets: 10,
        spare_sessions: true,
        idle_threshold_s: 7200.0,
        emergency: Emergency::default(),
    }
}

/// Log directory → last activity (unix seconds).
struct FakeLogJudge(HashMap<PathBuf, i64>);

impl LogJudge for FakeLogJudge {
    fn last_activity(&self, dir: &Path, _now: i64) -> Option<i64> {
        self.0.get(dir).copied()
    }
}

/// A leaker `pid` holding `zombies`, with headroom (pid 77) under launchd.
fn leaker(pid: i32, zombies: i32, name: &str, exe: &str) -> Vec<ProcessRecord> {
    let mut p = proc(pid, 1, name);
    p.exe = Some(exe.into());
    let mut v = vec![proc(1, 0, "launchd"), p];
    v.extend((0..zombies).map(|i| zombie(pid * 1000 + i, pid)));
    v.push(proc(77, 1, "headroom"));
    v
}

/// A live child of `ppid`: `cpu_ns` now, with `--log-dir DIR` in its argv.
fn child(pid: i32, ppid: i32, name: &str, exe: &str, log_dir: &str) -> ProcessRecord {
    let mut c = proc(pid, ppid, name);
    c.exe = Some(exe.into());
    c.cpu_ns = Some(80_000_000_000);
    c.argv = Some(vec![name.into(), "--log-dir".into(), log_dir.into()]);
    c
}

/// The previous reading of each child, three hours ago: `burned` seconds of CPU since.
fn history(snap: &Snapshot, burned_s: u64) -> CpuTracker {
    let entries = snap
        .processes
        .iter()
        .filter(|p| !p.is_zombie())
        .filter_map(|p| {
            Some(CpuEntry {
                pid: p.pid,
                start_time: p.start_time?,
                cpu_ns: p.cpu_ns?.checked_sub(burned_s * 1_000_000_000)?,
                read_at_ms: 0,
                last_active_ms: 0,
            })
        })
        .collect();
    CpuTracker::new(entries, DEFAULT_ACTIVE_FRACTION)
}

/// Assess and select, as `reap` does, against `judge` and the children's recorded argv/cwd.
fn decide(snap: &Snapshot, burned_s: u64, judge: &FakeLogJudge) -> Selection {
    let table = ProcessTable::new(snap);
    let parents: Vec<i32> = table.zombie_parents(UID).iter().map(|z| z.pid).collect();
    let argv = |pid: i32| table.get(pid).and_then(|p| p.argv.clone());
    let cwd = |pid: i32| {
        table
            .get(pid)
            .and_then(|p| p.cwd.clone())
            .map(PathBuf::from)
    };
    let read = ChildReader {
        argv: &argv,
        cwd: &cwd,
    };
    let mut tracker = history(snap, burned_s);
    let clocks = Clocks {
        wall_s: WALL_S,
        awake_ms: Some(NOW_MS),
    };
    let sessions = liveness::assess(&table, &parents, &mut tracker, &read, judge, clocks);
    let s = Situation {
        table: &table,
        uid: UID,
        self_pid: snap.self_pid,
        ancestry: &[],
        used: 1000,
        limit: Some(4000),
        sessions: &sessions,
    };
    select(s, &policy())
}

fn reason_of(sel: &Selection, pid: i32) -> Option<SkipReason> {
    sel.decisions
        .iter()
        .find(|d| d.pid == pid)
        .unwrap_or_else(|| panic!("no decision for {pid}"))
        .reason
}

fn with_self(mut procs: Vec<ProcessRecord>) -> Snapshot {
    procs.sort_by_key(|p| p.pid);
    let mut s = snapshot("linux", procs);
    s.self_pid = 77;
    s
}

/// Logs: fresh (30 s ago) and stale (5 h ago).
fn judge(fresh: &[&str], stale: &[&str]) -> FakeLogJudge {
    let mut m = HashMap::new();
    for d in fresh {
        m.insert(PathBuf::from(d), WALL_S - 30);
    }
    for d in stale {
        m.insert(PathBuf::from(d), WALL_S - 5 * 3600);
    }
    FakeLogJudge(m)
}

// 1. A session under the parent's interpreter.

const NODE: &str = "/usr/bin/node";

#[test]
fn a_session_child_under_the_same_interpreter_protects_its_wrapper() {
    let mut procs = leaker(500, 150, "agency-wrap", NODE);
    // Same executable, another name (`comm` is the script name / process.title).
    procs.push(child(501, 500, "copilot", NODE, "/logs/s"));
    let snap = with_self(procs);
    // Working: 60 s of CPU in 3 h and a fresh log.
    let sel = decide(&snap, 60, &judge(&["/logs/s"], &[]));
    assert_eq!(reason_of(&sel, 500), Some(SkipReason::HasActiveSession));
}

#[test]
fn control_the_interpreter_wrapper_without_a_session_child_or_with_a_self_spawn_is_a_target() {
    let snap = with_self(leaker(500, 150, "agency-wrap", NODE));
    assert_eq!(reason_of(&decide(&snap, 0, &judge(&[], &[])), 500), None);
    // A self-spawn matches on both name and path: not a session.
    let mut procs = leaker(500, 150, "agency-wrap", NODE);
    procs.push(child(501, 500, "agency-wrap", NODE, "/logs/s"));
    let sel = decide(&with_self(procs), 60, &judge(&["/logs/s"], &[]));
    assert_eq!(reason_of(&sel, 500), None);
    assert!(sel.decisions[0].session.children.is_empty());
}

// 2. A gap in the ancestor chain (the seed's near-miss: bash → copilot(87594) → agency
//    copilot(87537) → GitHub Copilot.app(4264)).

fn near_miss(with_copilot: bool) -> Snapshot {
    let mut procs = vec![
        proc(1, 0, "launchd"),
        proc(4264, 1, "GitHub Copilot"),
        proc(90000, 87594, "headroom"),
        proc(55555, 1, "agency"),
    ];
    let mut wrapper = proc(87537, 4264, "agency");
    wrapper.exe = Some("/Users/x/.config/agency/CurrentVersion/agency".into());
    procs.push(wrapper);
    if with_copilot {
        procs.push(proc(87594, 87537, "copilot"));
    }
    procs.extend((0..600).map(|i| zombie(200_000 + i, 87537)));
    procs.extend((0..300).map(|i| zombie(300_000 + i, 55555)));
    procs.sort_by_key(|p| p.pid);
    let mut s = snapshot("macos", procs);
    s.self_pid = 90000;
    s
}

fn select_with(snap: &Snapshot, ancestry: &[i32]) -> Selection {
    let table = ProcessTable::new(snap);
    // Sessions as assessed: neither parent has a live session child in view.
    let sessions: HashMap<i32, Session> = table
        .zombie_parents(UID)
        .iter()
        .map(|z| (z.pid, Session::none()))
        .collect();
    let s = Situation {
        table: &table,
        uid: UID,
        self_pid: snap.self_pid,
        ancestry,
        used: 1000,
        limit: Some(4000),
        sessions: &sessions,
    };
    select(s, &policy())
}

#[test]
fn a_missing_intermediate_ancestor_is_read_directly_and_the_wrapper_stays_protected() {
    let snap = near_miss(false);
    let table = ProcessTable::new(&snap);
    // The scan dropped 87594; reading it directly finds its parent.
    let chain = table
        .ancestry(90000, &mut |pid| (pid == 87594).then_some(87537))
        .expect("the chain is complete once 87594 is read");
    assert_eq!(chain, [90000, 87594, 87537, 4264, 1]);
    let sel = select_with(&snap, &chain);
    assert_eq!(reason_of(&sel, 87537), Some(SkipReason::ProtectedAncestor));
    // Control: the unrelated leaker is still taken.
    assert_eq!(reason_of(&sel, 55555), None);
}

#[test]
fn an_ancestor_that_cannot_be_read_at_all_breaks_the_chain() {
    let snap = near_miss(false);
    let table = ProcessTable::new(&snap);
    assert_eq!(table.ancestry(90000, &mut |_| None), Err(87594));
    // Without the walk through the gap the wrapper reads as a perfect target: what the
    // refusal (exit 3 in `reap`) prevents.
    assert_eq!(reason_of(&select_with(&snap, &[]), 87537), None);
    // With the intermediate in the table nothing needs to be read.
    let full = near_miss(true);
    let t = ProcessTable::new(&full);
    let chain = t.ancestry(90000, &mut |pid| panic!("read {pid}"));
    assert_eq!(chain, Ok(vec![90000, 87594, 87537, 4264, 1]));
    assert_eq!(
        reason_of(&select_with(&full, &[]), 87537),
        Some(SkipReason::ProtectedAncestor)
    );
}

#[test]
fn unread_table_entries_make_a_childless_parent_blind_not_sessionless() {
    let mut snap = with_self(leaker(500, 150, "agency", "/opt/agency"));
    snap.unreadable = 1;
    let sel = decide(&snap, 0, &judge(&[], &[]));
    assert_eq!(
        reason_of(&sel, 500),
        Some(SkipReason::SessionSignalUnavailable)
    );
    assert_eq!(
        sel.decisions[0].session.blind,
        Some(Blind::ChildrenUnreadable)
    );
    // Control: every entry read, the same leaker is a target.
    snap.unreadable = 0;
    assert_eq!(reason_of(&decide(&snap, 0, &judge(&[], &[])), 500), None);
}

#[test]
fn a_proc_that_hides_other_users_makes_every_parent_blind() {
    // hidepid=2: another user's session child of this parent would not even be listed.
    let mut snap = with_self(leaker(500, 150, "agency", "/opt/agency"));
    snap.others_hidden = true;
    assert!(snap.partial());
    let sel = decide(&snap, 0, &judge(&[], &[]));
    assert_eq!(
        reason_of(&sel, 500),
        Some(SkipReason::SessionSignalUnavailable)
    );
    snap.others_hidden = false;
    assert_eq!(reason_of(&decide(&snap, 0, &judge(&[], &[])), 500), None);
}

// 3. A relative --log-dir.

const COPILOT: &str = "/usr/local/bin/copilot";

fn relative_session(cwd: Option<&str>) -> Snapshot {
    let mut procs = leaker(500, 150, "agency", "/opt/agency");
    let mut c = child(501, 500, "copilot", COPILOT, "logs");
    c.cwd = cwd.map(str::to_string);
    procs.push(c);
    with_self(procs)
}

#[test]
fn a_relative_log_dir_is_resolved_against_the_session_childs_cwd() {
    // The session's own logs are fresh; `logs` next to headroom is stale.
    let j = judge(
        &["/home/x/session/logs"],
        &["logs", "/home/x/headroom/logs"],
    );
    let sel = decide(&relative_session(Some("/home/x/session")), 0, &j);
    assert_eq!(reason_of(&sel, 500), Some(SkipReason::HasActiveSession));
    assert_eq!(sel.decisions[0].session.log_age_s, Some(30.0));
}

#[test]
fn a_relative_log_dir_without_a_readable_cwd_is_unknown_and_protects() {
    let j = judge(&[], &["logs"]);
    let sel = decide(&relative_session(None), 0, &j);
    assert_eq!(
        reason_of(&sel, 500),
        Some(SkipReason::SessionSignalUnavailable)
    );
    assert_eq!(sel.decisions[0].session.log_age_s, None);
}

#[test]
fn control_a_finished_session_with_a_relative_log_dir_is_released() {
    let j = judge(&[], &["/home/x/session/logs"]);
    let sel = decide(&relative_session(Some("/home/x/session")), 0, &j);
    assert_eq!(reason_of(&sel, 500), None);
    assert_eq!(sel.decisions[0].session_verdict, SessionVerdict::Idle);
}

// 4. A stopped (or traced) session child.

fn finished_session(state: ProcState) -> Snapshot {
    let mut procs = leaker(500, 150, "agency", "/opt/agency");
    let mut c = child(501, 500, "copilot", COPILOT, "/logs/s");
    c.state = state;
    procs.push(c);
    with_self(procs)
}

#[test]
fn a_stopped_or_traced_session_child_gives_no_evidence() {
    let stale = judge(&[], &["/logs/s"]);
    for state in [ProcState::Stopped, ProcState::Traced] {
        let sel = decide(&finished_session(state), 0, &stale);
        assert_eq!(
            reason_of(&sel, 500),
            Some(SkipReason::SessionSignalUnavailable),
            "{state:?}"
        );
        assert_eq!(sel.decisions[0].session.blind, Some(Blind::ChildStopped));
        assert!(
            sel.decisions[0]
                .session
                .signal_text()
                .ends_with(";blind=child-stopped")
        );
    }
}

#[test]
fn control_a_merely_silent_session_child_and_no_child_are_released() {
    let stale = judge(&[], &["/logs/s"]);
    let sel = decide(&finished_session(ProcState::Sleeping), 0, &stale);
    assert_eq!(reason_of(&sel, 500), None);
    let snap = with_self(leaker(500, 150, "agency", "/opt/agency"));
    assert_eq!(reason_of(&decide(&snap, 0, &stale), 500), None);
}

// A parent missing from the session map.

#[test]
fn a_parent_missing_from_the_session_map_is_unreadable_not_sessionless() {
    let snap = with_self(leaker(500, 150, "agency", "/opt/agency"));
    let table = ProcessTable::new(&snap);
    let mut sessions = HashMap::new();
    let sel = |sessions: &HashMap<i32, Session>| {
        select(
            Situation {
                table: &table,
                uid: UID,
                self_pid: 77,
                ancestry: &[],
                used: 1000,
                limit: Some(4000),
                sessions,
            },
            &policy(),
        )
    };
    let missing = sel(&sessions);
    assert_eq!(
        missing.decisions[0].reason,
        Some(SkipReason::SessionSignalUnavailable)
    );
    sessions.insert(500, Session::none());
    assert_eq!(sel(&sessions).decisions[0].reason, None, "control");
}
