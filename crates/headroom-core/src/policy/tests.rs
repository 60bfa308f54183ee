//! Selection tests: every rule and its boundary, the reference replays (ReaperSafety,
//! LivenessProtection, EmergencyOverride E1–E19, SessionIdle I9/I10). The property test with
//! its own oracle is in `policy/props.rs`.

use std::collections::HashMap;

use super::*;
use crate::emergency::Emergency;
use crate::liveness::Session;
use crate::patterns::{AllowDeny, Patterns};
use crate::process_table::ProcessTable;
use crate::snapshot::ProcessRecord;
use crate::snapshot::fixture::{OTHER_UID, UID, proc, snapshot, zombie};

pub(super) const WRAPPER: &str = "/Users/x/.config/agency/CurrentVersion/agency";

pub(super) fn policy() -> Policy {
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

/// A world: processes, sessions, who headroom is, and slot usage against the limit.
pub(super) struct World {
    pub(super) procs: Vec<ProcessRecord>,
    pub(super) sessions: HashMap<i32, Session>,
    pub(super) self_pid: i32,
    pub(super) used: u64,
    pub(super) limit: Option<u64>,
}

impl World {
    /// 1000 of 4000 used: room.
    pub(super) fn room() -> Self {
        Self {
            procs: vec![proc(1, 0, "launchd"), proc(77, 1, "headroom")],
            sessions: HashMap::new(),
            self_pid: 77,
            used: 1000,
            limit: Some(4000),
        }
    }

    /// 2666 of 2666: the wall.
    pub(super) fn wall() -> Self {
        Self {
            used: 2666,
            limit: Some(2666),
            ..Self::room()
        }
    }

    pub(super) fn parent(mut self, pid: i32, zombies: u64) -> Self {
        let mut p = proc(pid, 1, "agency");
        p.exe = Some(WRAPPER.into());
        self.procs.push(p);
        for i in 0..zombies {
            self.procs.push(zombie(pid * 1000 + i as i32, pid));
        }
        self
    }

    pub(super) fn named(mut self, pid: i32, zombies: u64, name: &str, exe: Option<&str>) -> Self {
        self = self.parent(pid, zombies);
        let p = self
            .procs
            .iter_mut()
            .find(|p| p.pid == pid)
            .unwrap_or_else(|| unreachable!());
        p.name = name.into();
        p.exe = exe.map(str::to_string);
        self
    }

    /// A session child with both signals read.
    pub(super) fn busy(self, pid: i32, log_age: f64, cpu_idle: f64) -> Self {
        self.session(pid, Some(cpu_idle), Some(log_age))
    }

    pub(super) fn session(mut self, pid: i32, cpu: Option<f64>, log: Option<f64>) -> Self {
        self.sessions.insert(
            pid,
            Session {
                children: vec![pid + 1],
                cpu_idle_s: cpu,
                log_age_s: log,
                blind: None,
            },
        );
        self
    }

    pub(super) fn select(&self, p: &Policy) -> Selection {
        let snap = snapshot("macos", self.procs.clone());
        let table = ProcessTable::new(&snap);
        // As `liveness::assess` would: a parent given no session has no session child.
        let mut sessions = self.sessions.clone();
        for zp in table.zombie_parents(UID) {
            sessions.entry(zp.pid).or_insert_with(Session::none);
        }
        let s = Situation {
            table: &table,
            uid: UID,
            self_pid: self.self_pid,
            ancestry: &[],
            used: self.used,
            limit: self.limit,
            sessions: &sessions,
        };
        select(s, p)
    }
}

pub(super) fn targets(s: &Selection) -> Vec<i32> {
    s.targets().map(|d| d.pid).collect()
}

pub(super) fn overrides(s: &Selection) -> Vec<i32> {
    s.decisions
        .iter()
        .filter(|d| d.override_.is_some())
        .map(|d| d.pid)
        .collect()
}

pub(super) fn reasons(s: &Selection) -> Vec<SkipReason> {
    s.decisions.iter().filter_map(|d| d.reason).collect()
}

pub(super) fn reason_of(s: &Selection, pid: i32) -> Option<SkipReason> {
    s.decisions
        .iter()
        .find(|d| d.pid == pid)
        .and_then(|d| d.reason)
}

// ----- the unconditional rules --------------------------------------------------------

#[test]
fn never_pid_1_or_0() {
    let mut w = World::room();
    for i in 0..500 {
        w.procs.push(zombie(500_000 + i, 1));
    }
    let s = w.select(&policy());
    assert_eq!(reason_of(&s, 1), Some(SkipReason::InitProcess));
    assert!(targets(&s).is_empty());
    let mut w0 = World::room();
    w0.procs.push(zombie(600_000, 0));
    assert_eq!(
        reason_of(&w0.select(&policy()), 0),
        Some(SkipReason::InitProcess)
    );
}

#[test]
fn never_a_foreign_uid_even_with_an_allowed_name() {
    let mut w = World::room().parent(4242, 900);
    w.procs
        .iter_mut()
        .find(|p| p.pid == 4242)
        .unwrap_or_else(|| unreachable!())
        .uid = OTHER_UID;
    assert_eq!(
        reason_of(&w.select(&policy()), 4242),
        Some(SkipReason::ForeignUid)
    );
}

#[test]
fn the_seed_near_miss_ancestor_chain_is_protected() {
    // bash(90000) → copilot(87594) → agency copilot(87537, 600 zombies) → Copilot.app(4264):
    // headroom runs at the bottom of the user's own session.
    let mut w = World::room().parent(87537, 600).parent(55555, 300);
    w.procs.push(proc(4264, 1, "GitHub Copilot"));
    w.procs
        .iter_mut()
        .find(|p| p.pid == 87537)
        .unwrap_or_else(|| unreachable!())
        .ppid = 4264;
    w.procs.push(proc(87594, 87537, "copilot"));
    w.procs.push(proc(90000, 87594, "headroom"));
    w.self_pid = 90000;
    let s = w.select(&policy());
    assert_eq!(reason_of(&s, 87537), Some(SkipReason::ProtectedAncestor));
    assert_eq!(targets(&s), vec![55555]);
}

#[test]
fn a_former_ancestor_drops_out_once_reparented() {
    let mut w = World::room().parent(87537, 600);
    w.procs.push(proc(90000, 1, "headroom"));
    w.self_pid = 90000;
    assert_eq!(targets(&w.select(&policy())), vec![87537]);
}

#[test]
fn a_zombie_parent_is_skipped() {
    let mut w = World::room().parent(700, 150);
    let p = w
        .procs
        .iter_mut()
        .find(|p| p.pid == 700)
        .unwrap_or_else(|| unreachable!());
    p.state = crate::snapshot::ProcState::Zombie;
    assert_eq!(
        reason_of(&w.select(&policy()), 700),
        Some(SkipReason::ParentIsZombie)
    );
}

#[test]
fn zombies_are_never_targets_only_parents() {
    let s = World::room().parent(600, 600).select(&policy());
    assert_eq!(targets(&s), vec![600]);
    assert_eq!(s.decisions.len(), 1);
}

#[test]
fn a_parent_without_identity_or_record_is_skipped() {
    let mut w = World::room().parent(700, 150);
    w.procs
        .iter_mut()
        .find(|p| p.pid == 700)
        .unwrap_or_else(|| unreachable!())
        .start_time = None;
    w.procs.push(zombie(900_001, 4243));
    let s = w.select(&policy());
    assert_eq!(reason_of(&s, 700), Some(SkipReason::ParentUnreadable));
    assert_eq!(reason_of(&s, 4243), Some(SkipReason::ParentUnreadable));
}

// ----- tunables ------------------------------------------------------------------------

#[test]
fn threshold_is_strictly_less_than_skips() {
    let s = World::room()
        .parent(10, 150)
        .parent(11, 100)
        .parent(12, 99)
        .parent(13, 1)
        .select(&policy());
    assert_eq!(targets(&s), vec![10, 11]);
    assert_eq!(reason_of(&s, 12), Some(SkipReason::BelowZombieThreshold));
    assert_eq!(reason_of(&s, 13), Some(SkipReason::BelowZombieThreshold));
}

#[test]
fn deny_beats_allow_and_xcode_is_not_an_agency() {
    let mut p = policy();
    p.allow_deny.deny = Patterns::new(["CurrentVersion"]);
    assert_eq!(
        reason_of(&World::room().parent(10, 150).select(&p), 10),
        Some(SkipReason::NotPermittedByPolicy)
    );
    let x = World::room().named(
        20,
        900,
        "Xcode",
        Some("/Applications/Xcode.app/Contents/MacOS/Xcode"),
    );
    assert_eq!(
        reason_of(&x.select(&policy()), 20),
        Some(SkipReason::NotPermittedByPolicy)
    );
}

#[test]
fn empty_allowlist_selects_nothing() {
    let mut p = policy();
    p.allow_deny.allow = Patterns::new([""]);
    let s = World::room().parent(10, 600).select(&p);
    assert!(targets(&s).is_empty());
    assert_eq!(reasons(&s), vec![SkipReason::NotPermittedByPolicy]);
}

#[test]
fn slash_pattern_matches_the_path() {
    let mut p = policy();
    p.allow_deny.allow = Patterns::new([".config/AGENCY"]);
    assert_eq!(targets(&World::room().parent(10, 150).select(&p)), vec![10]);
}

#[test]
fn run_limit_takes_the_biggest_first() {
    let mut p = policy();
    p.max_targets = 2;
    let s = World::room()
        .parent(10, 150)
        .parent(11, 500)
        .parent(12, 300)
        .parent(13, 200)
        .parent(14, 120)
        .select(&p);
    assert_eq!(targets(&s), vec![11, 12]);
    assert_eq!(s.skipped_for(SkipReason::RunLimitReached), 3);
}

#[test]
fn order_is_biggest_offender_first_then_pid() {
    let s = World::room()
        .parent(30, 150)
        .parent(20, 500)
        .parent(10, 150)
        .select(&policy());
    assert_eq!(targets(&s), vec![20, 10, 30]);
}

// ----- session guard -------------------------------------------------------------------

#[test]
fn launchd_deployment_wrapper_with_a_working_session_is_spared() {
    let s = World::room()
        .parent(1332, 400)
        .busy(1332, 5.0, 0.0)
        .select(&policy());
    assert_eq!(reason_of(&s, 1332), Some(SkipReason::HasActiveSession));
}

#[test]
fn i7_unreadable_signals_are_their_own_reason() {
    let s = World::room()
        .parent(1332, 400)
        .session(1332, None, Some(9000.0))
        .select(&policy());
    assert_eq!(
        reason_of(&s, 1332),
        Some(SkipReason::SessionSignalUnavailable)
    );
}

#[test]
fn s2_a_session_idle_by_both_signals_is_a_target() {
    let s = World::room()
        .parent(86183, 1019)
        .busy(86183, 9.0 * 3600.0, 27_534.0)
        .select(&policy());
    assert_eq!(targets(&s), vec![86183]);
    assert_eq!(s.decisions[0].session_verdict, SessionVerdict::Idle);
}

#[test]
fn the_2026_08_29_case_cpu_idle_but_log_fresh_is_active() {
    let s = World::room()
        .parent(86183, 1019)
        .busy(86183, 4.0, 27_534.0)
        .select(&policy());
    assert_eq!(reason_of(&s, 86183), Some(SkipReason::HasActiveSession));
}

#[test]
fn protected_ancestor_is_reported_before_the_session_reason() {
    let mut w = World::room().parent(87537, 600).busy(87537, 5.0, 0.0);
    w.procs.push(proc(90000, 87537, "headroom"));
    w.self_pid = 90000;
    assert_eq!(
        reason_of(&w.select(&policy()), 87537),
        Some(SkipReason::ProtectedAncestor)
    );
}

#[test]
fn guard_off_unlocks_sessions_but_nothing_unconditional() {
    let mut p = policy();
    p.spare_sessions = false;
    let mut w = World::room()
        .parent(1332, 900)
        .busy(1332, 5.0, 0.0)
        .parent(86183, 150)
        .busy(86183, 9000.0, 9000.0);
    let s = w.select(&p);
    // Idle-first order holds with the guard off: the busy one comes second.
    assert_eq!(targets(&s), vec![86183, 1332]);
    w.procs
        .iter_mut()
        .find(|x| x.pid == 1332)
        .unwrap_or_else(|| unreachable!())
        .uid = OTHER_UID;
    assert_eq!(reason_of(&w.select(&p), 1332), Some(SkipReason::ForeignUid));
}

#[test]
fn i9_i10_idle_for_ten_hours_unlocks_no_other_rule() {
    let idle = |w: World, pid: i32| w.busy(pid, 36_000.0, 36_000.0);
    let mut w = idle(
        idle(World::room().parent(87537, 600), 87537).parent(4242, 900),
        4242,
    );
    w.procs
        .iter_mut()
        .find(|x| x.pid == 4242)
        .unwrap_or_else(|| unreachable!())
        .uid = OTHER_UID;
    w.procs.push(proc(90000, 87537, "headroom"));
    w.self_pid = 90000;
    w = idle(w.named(30, 4, "agency", Some(WRAPPER)), 30);
    w = idle(
        w.named(
            31,
            500,
            "Safari",
            Some("/Applications/Safari.app/Contents/MacOS/Safari"),
        ),
        31,
    );
    let s = w.select(&policy());
    assert!(targets(&s).is_empty());
    assert_eq!(reason_of(&s, 87537), Some(SkipReason::ProtectedAncestor));
    assert_eq!(reason_of(&s, 4242), Some(SkipReason::ForeignUid));
    assert_eq!(reason_of(&s, 30), Some(SkipReason::BelowZombieThreshold));
    assert_eq!(reason_of(&s, 31), Some(SkipReason::NotPermittedByPolicy));
}
