//! `enforce` and `rejudge` against a scripted process table on a fake clock: the table obeys
//! the signals it is sent (and changes at chosen reads), every signal is recorded.

use std::cell::Cell;
use std::time::Instant;

use super::*;
use crate::actions::test_double::Table;
use crate::core::memory_guard::{Rule, breaches, guarded};

use crate::core::snapshot::fixture::{MIB, member, proc, snapshot};

/// The shared scripted table, on a fake clock.
pub(super) struct World {
    pub(super) table: Table,
    base: Instant,
    now: Cell<Duration>,
}

impl std::ops::Deref for World {
    type Target = Table;
    fn deref(&self) -> &Table {
        &self.table
    }
}

impl World {
    pub(super) fn new(snap: Snapshot) -> Self {
        Self {
            table: Table::new(snap),
            base: Instant::now(),
            now: Cell::new(Duration::ZERO),
        }
    }
    pub(super) fn at_read(self, n: usize, f: impl Fn(&mut Snapshot) + 'static) -> Self {
        Self {
            table: self.table.at_read(n, f),
            ..self
        }
    }
    pub(super) fn breaches(&self, limit_mib: u64) -> Vec<Breach> {
        let snap = self.snap.borrow();
        let rules = [Rule {
            pattern: "p100".into(),
            limit_bytes: limit_mib * MIB,
        }];
        breaches(&guarded(&ProcessTable::new(&snap), &rules, None))
    }
    pub(super) fn breach(&self, limit_mib: u64) -> Breach {
        let mut b = self.breaches(limit_mib);
        assert_eq!(b.len(), 1, "{b:?}");
        b.remove(0)
    }
    /// Enforce `targets` found in the table as it is now.
    pub(super) fn enforce_all(
        &self,
        targets: Vec<BreachingTree>,
        park: bool,
    ) -> Vec<MemoryGuardReport> {
        let a = self.snap.borrow().clone();
        let opts = EnforceOptions {
            park,
            grace: Duration::from_secs(5),
        };
        enforce(&self.table, &self.table, &a, targets, self, opts).unwrap()
    }
    pub(super) fn enforce(
        &self,
        limit_mib: u64,
        park: bool,
        before: Vec<Identity>,
    ) -> MemoryGuardReport {
        let target = BreachingTree {
            breach: self.breach(limit_mib),
            parked_before: before,
        };
        let mut r = self.enforce_all(vec![target], park);
        assert_eq!(r.len(), 1);
        r.remove(0)
    }
    pub(super) fn elapsed(&self) -> Duration {
        self.now.get()
    }
}

impl Clock for World {
    fn now(&self) -> Instant {
        self.base + self.now.get()
    }
    fn sleep(&self, d: Duration) {
        self.now.set(self.now.get() + d);
    }
}

/// init 1 → guarded root 100 (`p100`, 600 MiB) → 101 (500 MiB); headroom 9000 last.
fn tree(root_mib: u64, child_mib: u64) -> Snapshot {
    snapshot(
        "linux",
        vec![
            proc(1, 0, "init"),
            member(100, 1, root_mib),
            member(101, 100, child_mib),
            proc(9000, 1, "headroom"),
        ],
    )
}

pub(super) fn pid_of(s: &mut Snapshot, pid: i32) -> &mut ProcessRecord {
    s.processes.iter_mut().find(|p| p.pid == pid).unwrap()
}

/// Every member uses a core between the two CPU samples.
fn keep_busy(s: &mut Snapshot) {
    for p in &mut s.processes {
        p.cpu_ns = Some(2_000_000_000);
    }
}

#[test]
fn a_reused_root_pid_is_not_the_guarded_tree_and_nothing_is_signalled() {
    // The guarded root exits during the idle window; its pid goes to an unrelated process
    // (same name even, 1.1 GB of its own) with a child of its own.
    let w = World::new(tree(600, 500)).at_read(1, |s| {
        s.processes.retain(|p| p.pid != 100 && p.pid != 101);
        let mut stranger = member(100, 1, 1100);
        stranger.start_time = Some(999_999);
        s.processes.insert(1, stranger);
        s.processes.insert(2, member(102, 100, 10));
    });
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::RootChanged, "{r:?}");
    assert!(w.sent().is_empty(), "signalled a stranger: {:?}", w.sent());
    assert!(r.note.as_deref().unwrap().contains("no longer the guarded"));
    // Control: the same tree, its root still itself and still over: it is ended.
    let w = World::new(tree(600, 500)).at_read(1, keep_busy);
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::Sigterm, "{r:?}");
    assert_eq!(r.terminated, vec![100, 101]);
}

#[test]
fn a_root_that_no_longer_matches_the_pattern_is_left_alone() {
    // Same pid and start time, but it exec'd into something else.
    let w = World::new(tree(600, 500)).at_read(1, |s| {
        let root = pid_of(s, 100);
        root.name = "vim".into();
        root.exe = Some("/usr/bin/vim".into());
    });
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::RootChanged);
    assert!(
        r.note.as_deref().unwrap().contains("pattern `p100`"),
        "{r:?}"
    );
    assert!(w.sent().is_empty());
}

#[test]
fn a_spike_that_has_passed_is_not_ended_and_the_true_footprint_is_reported() {
    let w = World::new(tree(600, 500)).at_read(1, |s| {
        pid_of(s, 100).footprint_bytes = Some(3 * MIB);
        pid_of(s, 101).footprint_bytes = Some(MIB);
    });
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::UnderLimit, "{r:?}");
    assert!(w.sent().is_empty(), "{:?}", w.sent());
    assert_eq!(r.acted_footprint_bytes, Some(4 * MIB));
    assert_eq!(r.breach.footprint_bytes, 1100 * MIB, "the breach as seen");
    // Control: still over when re-read: ended, and the footprint acted on is reported.
    let w = World::new(tree(600, 500)).at_read(1, |s| {
        keep_busy(s);
        pid_of(s, 101).footprint_bytes = Some(700 * MIB);
    });
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::Sigterm);
    assert_eq!(r.acted_footprint_bytes, Some(1300 * MIB));
}

/// The signals `pid` was sent, in order.
pub(super) fn to(w: &World, pid: i32) -> Vec<Signal> {
    w.sent()
        .into_iter()
        .filter(|(p, _)| *p == pid)
        .map(|(_, s)| s)
        .collect()
}

#[test]
fn grace_survivors_are_killed_only_while_still_over_the_limit() {
    // 101 ignores SIGTERM and holds 1.1 GB on its own: SIGKILL.
    let mut w = World::new(tree(10, 1100)).at_read(1, keep_busy);
    w.table.survives = vec![101];
    let before = crate::platform::now_ms().div_euclid(1000) * 1000;
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::Sigkill, "{r:?}");
    assert_eq!(r.killed, vec![101]);
    // The shared table's survivors outlive SIGINT too: what reached 101 is checked, so a
    // guard that sent SIGINT for SIGTERM cannot pass here.
    assert_eq!(to(&w, 101), [Signal::Term, Signal::Kill]);
    // Dated by the enforcement itself (the SIGKILL was its last step), to the second.
    let at = crate::core::time::parse_ms(&r.at).unwrap();
    assert!((before..=crate::platform::now_ms()).contains(&at), "{r:?}");
    // It ignores SIGTERM but is small once the root has gone: spared, and said so.
    let mut w = World::new(tree(600, 500)).at_read(1, keep_busy);
    w.table.survives = vec![101];
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::Spared, "{r:?}");
    assert_eq!((r.spared.clone(), r.killed.clone()), (vec![101], vec![]));
    assert_eq!(to(&w, 101), [Signal::Term], "SIGTERM, and no SIGKILL");
    assert!(r.note.as_deref().unwrap().contains("not SIGKILLed"));
}

/// root 100 (10 MiB) → 101 (600 MiB, idle) and → 102 (500 MiB, busy).
pub(super) fn idle_tree() -> Snapshot {
    snapshot(
        "linux",
        vec![
            proc(1, 0, "init"),
            member(100, 1, 10),
            member(101, 100, 600),
            member(102, 100, 500),
            proc(9000, 1, "headroom"),
        ],
    )
}

pub(super) fn second_sample(s: &mut Snapshot) {
    pid_of(s, 102).cpu_ns = Some(2_000_000_000);
}

/// Two guarded trees, both over 1000 MiB: root 100 → 101 (600 MiB, idle) and → 102 (500
/// MiB, busy); root 200 → 201 (idle) and → 202 (busy), the same sizes.
fn two_trees() -> Snapshot {
    snapshot(
        "linux",
        vec![
            proc(1, 0, "init"),
            member(100, 1, 10),
            member(101, 100, 600),
            member(102, 100, 500),
            member(200, 1, 10),
            member(201, 200, 600),
            member(202, 200, 500),
            proc(9000, 1, "headroom"),
        ],
    )
}

fn both(w: &World) -> Vec<BreachingTree> {
    let snap = w.snap.borrow();
    let rules = [
        Rule {
            pattern: "p100".into(),
            limit_bytes: 1000 * MIB,
        },
        Rule {
            pattern: "p200".into(),
            limit_bytes: 1000 * MIB,
        },
    ];
    let b = breaches(&guarded(&ProcessTable::new(&snap), &rules, None));
    assert_eq!(b.len(), 2, "{b:?}");
    b.into_iter()
        .map(|breach| BreachingTree {
            breach,
            parked_before: vec![],
        })
        .collect()
}

#[test]
fn one_pass_for_every_breach_one_read_per_wait_one_identity_read_per_signal() {
    let w = World::new(two_trees())
        .at_read(1, |s| {
            pid_of(s, 102).cpu_ns = Some(2_000_000_000);
            pid_of(s, 202).cpu_ns = Some(2_000_000_000);
        })
        // Parking brought the first tree under its limit; the second is still over.
        .at_read(2, |s| pid_of(s, 101).footprint_bytes = Some(100 * MIB));
    let r = w.enforce_all(both(&w), true);
    assert_eq!(
        r.iter().map(|r| r.outcome).collect::<Vec<_>>(),
        vec![GuardOutcome::Parked, GuardOutcome::Sigterm]
    );
    assert_eq!(r[1].terminated, vec![200, 201, 202]);
    assert_eq!(
        w.sent(),
        vec![
            (101, Signal::Stop),
            (201, Signal::Stop),
            (200, Signal::Term),
            (201, Signal::Term),
            (202, Signal::Term),
        ]
    );
    // One read after the idle window and one after the relief wait, for both trees (one
    // pass per tree read four times: each tree its own idle window and relief wait).
    assert_eq!(w.reads(), 2);
    assert!(
        w.elapsed() < Duration::from_millis(2 * IDLE_WINDOW_MS) + RELIEF_WAIT,
        "one idle window for both trees: {:?}",
        w.elapsed()
    );
    // Six signal calls (two SIGSTOPs, three SIGTERMs, the SIGCONT after the parked 201's
    // SIGTERM), each identity-checked once by the signal path, and the one poll after the
    // SIGTERMs reading each of the three once: no identity read before a signal.
    assert_eq!(w.identity_reads(), 6 + 3);
}

#[test]
fn a_one_shot_round_acts_on_the_rounds_own_table() {
    let w = World::new(two_trees());
    let r = w.enforce_all(both(&w), false);
    assert!(
        r.iter().all(|r| r.outcome == GuardOutcome::Sigterm),
        "{r:?}"
    );
    assert_eq!(
        w.reads(),
        0,
        "no re-read: nothing waited since the round's read"
    );
    // Six SIGTERMs, one check each, and one poll confirming each gone.
    assert_eq!(w.identity_reads(), 6 + 6);
}

#[test]
fn a_shell_at_its_prompt_inside_the_tree_is_neither_counted_parked_nor_ended() {
    // 101 is an interactive bash at its prompt: it leads the terminal's foreground group.
    let shell = |s: &mut Snapshot| {
        let p = pid_of(s, 101);
        p.name = "bash".into();
        (p.pgid, p.tpgid) = (Some(101), Some(101));
    };
    let mut snap = idle_tree();
    shell(&mut snap);
    let w = World::new(snap).at_read(1, |s| {
        second_sample(s);
        let p = pid_of(s, 101);
        p.name = "bash".into();
        (p.pgid, p.tpgid) = (Some(101), Some(101));
    });
    let r = w.enforce(400, true, vec![]);
    assert_eq!(
        (r.outcome, r.terminated.clone()),
        (GuardOutcome::Sigterm, vec![100, 102])
    );
    assert!(to(&w, 101).is_empty(), "{:?}", w.sent());
    // Control: the same bash running a job (the terminal's foreground is the job's group)
    // is held: counted and ended with the tree (not parked: it leads its group, which
    // parking never stops).
    let mut snap = idle_tree();
    shell(&mut snap);
    pid_of(&mut snap, 101).tpgid = Some(555);
    let w = World::new(snap).at_read(1, |s| {
        second_sample(s);
        let p = pid_of(s, 101);
        p.name = "bash".into();
        (p.pgid, p.tpgid) = (Some(101), Some(555));
    });
    assert_eq!(w.breach(400).footprint_bytes, 1110 * MIB, "counted");
    let r = w.enforce(400, true, vec![]);
    assert_eq!(r.terminated, vec![100, 101, 102], "{r:?}");
}

#[test]
fn a_root_that_is_headroom_s_ancestor_or_became_a_session_leader_is_never_signalled() {
    // headroom runs inside the tree: the root is its ancestor. A breach for it (the round
    // never makes one) is refused at the first look, nothing signalled.
    let mut snap = idle_tree();
    let me = snap.processes.len() - 1;
    snap.processes[me].ppid = 101;
    let root = snap.processes[1].clone();
    let w = World::new(snap);
    let breach = Breach {
        root: 100,
        identity: root.identity(),
        name: root.name.clone(),
        pattern: "p100".into(),
        footprint_bytes: 1110 * MIB,
        limit_bytes: 1000 * MIB,
        effective_bytes: 1000 * MIB,
    };
    let target = || BreachingTree {
        breach: breach.clone(),
        parked_before: vec![],
    };
    let r = w.enforce_all(vec![target()], true).remove(0);
    assert_eq!(r.outcome, GuardOutcome::RootChanged, "{r:?}");
    assert!(
        r.note.as_deref().unwrap().contains("ancestor of headroom"),
        "{r:?}"
    );
    assert!(w.sent().is_empty(), "{:?}", w.sent());
    // The root calls setsid() during the idle window: it leads a session now.
    let w = World::new(idle_tree()).at_read(1, |s| pid_of(s, 100).sid = Some(100));
    let r = w.enforce_all(vec![target()], true).remove(0);
    assert!(
        r.note.as_deref().unwrap().contains("leads its session"),
        "{r:?}"
    );
    assert!(w.sent().is_empty(), "{:?}", w.sent());
    // Control: the same breach, headroom elsewhere, the root as it was: ended.
    let w = World::new(idle_tree()).at_read(1, keep_busy);
    let r = w.enforce_all(vec![target()], true).remove(0);
    assert_eq!(r.outcome, GuardOutcome::Sigterm, "{r:?}");
}

#[test]
fn a_tree_exactly_at_its_limit_when_re_read_is_still_over_it() {
    // At the limit is over it (as a breach and `rejudge` count it): 600 + 400 = 1000 MiB
    // re-read after the idle window is ended, not let off as "under its limit".
    let at = |child_mib: u64| {
        move |s: &mut Snapshot| {
            keep_busy(s);
            pid_of(s, 101).footprint_bytes = Some(child_mib * MIB);
        }
    };
    let w = World::new(tree(600, 500)).at_read(1, at(400));
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::Sigterm, "{r:?}");
    assert_eq!(r.acted_footprint_bytes, Some(1000 * MIB));
    // Control: one MiB less is under it: nothing signalled.
    let w = World::new(tree(600, 500)).at_read(1, at(399));
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::UnderLimit, "{r:?}");
    assert!(w.sent().is_empty(), "{:?}", w.sent());
}

#[test]
fn parking_that_leaves_the_tree_exactly_at_its_limit_has_not_relieved_it() {
    // 101 is parked; the relief read finds 10 + 490 + 500 = 1000 MiB: at the limit, so the
    // tree is ended (101 continued with its SIGTERM), not reported as parked to relief.
    let relief =
        |mib: u64| move |s: &mut Snapshot| pid_of(s, 101).footprint_bytes = Some(mib * MIB);
    let w = World::new(idle_tree())
        .at_read(1, second_sample)
        .at_read(2, relief(490));
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::Sigterm, "{r:?}");
    assert_eq!(r.parked, vec![101]);
    assert_eq!(r.terminated, vec![100, 101, 102]);
    assert!(r.parked_ids.is_empty(), "{r:?}");
    // Control: one MiB less is relief: parked, nothing ended.
    let w = World::new(idle_tree())
        .at_read(1, second_sample)
        .at_read(2, relief(489));
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::Parked, "{r:?}");
    assert_eq!(w.sent(), vec![(101, Signal::Stop)]);
}
