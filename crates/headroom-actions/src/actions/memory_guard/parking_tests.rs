//! `enforce` and `rejudge` parking idle subtrees: relief read back, a session leader left
//! alone, a parked tree over again ended, parked trees re-judged and woken. The scripted
//! world and its trees are `tests.rs`'s.

use super::tests::{World, idle_tree, pid_of, second_sample, to};
use super::*;
use crate::core::snapshot::ProcState;
use crate::core::snapshot::fixture::MIB;

#[test]
fn idle_subtrees_are_parked_and_relief_is_read_back() {
    let w = World::new(idle_tree())
        .at_read(1, second_sample)
        .at_read(2, |s| pid_of(s, 101).footprint_bytes = Some(100 * MIB));
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::Parked, "{r:?}");
    assert_eq!(w.sent(), vec![(101, Signal::Stop)]);
    assert_eq!(r.parked_ids.len(), 1);
    // A one-shot round (`watch --once`) parks nothing: it goes straight to SIGTERM.
    let w = World::new(idle_tree()).at_read(1, second_sample);
    let r = w.enforce(1000, false, vec![]);
    assert!(
        !w.sent().iter().any(|(_, s)| *s == Signal::Stop),
        "{:?}",
        w.sent()
    );
    assert_eq!(r.outcome, GuardOutcome::Sigterm);
}

#[test]
fn a_session_leader_inside_the_tree_is_neither_counted_parked_nor_ended() {
    // 101 is an interactive shell (it leads its session): not held at all, so the tree is
    // 10 + 500 MiB, under its limit, and nothing is signalled.
    let w = World::new(idle_tree()).at_read(1, |s| {
        second_sample(s);
        pid_of(s, 101).sid = Some(101);
    });
    w.snap.borrow_mut().processes[2].sid = Some(101);
    assert!(w.breaches(1000).is_empty(), "510 MiB held");
    // Over a lower limit, the rest of the tree is ended, never the session leader.
    let r = w.enforce(400, true, vec![]);
    assert!(r.parked.is_empty(), "{r:?}");
    assert_eq!(
        (r.outcome, r.terminated.clone()),
        (GuardOutcome::Sigterm, vec![100, 102])
    );
    assert!(to(&w, 101).is_empty(), "{:?}", w.sent());
    // The root leads no group and the whole tree is idle (1.1 GB): the root is not parked.
    let w = World::new(idle_tree()).at_read(1, |s| pid_of(s, 100).pgid = Some(7));
    let r = w.enforce(1000, true, vec![]);
    assert!(!r.parked.contains(&100), "{r:?}");
    // Control: 101 and 102 lead nothing and are idle: they are parked.
    assert_eq!(r.parked, vec![101]);
}

#[test]
fn a_parked_tree_over_its_limit_again_is_ended_and_its_parked_continued() {
    let snap = idle_tree();
    let parked = snap.processes[2].identity().unwrap();
    let mut w = World::new(snap).at_read(1, second_sample);
    w.snap.borrow_mut().processes[2].state = ProcState::Stopped;
    // Stopped, it cannot act on SIGTERM until continued; here it does not act at all.
    w.table.survives = vec![101];
    let r = w.enforce(1000, true, vec![parked]);
    assert!(r.parked.is_empty(), "not parked twice: {r:?}");
    assert_eq!(
        to(&w, 101),
        vec![Signal::Term, Signal::Cont],
        "continued with its SIGTERM"
    );
    // 600 MiB left, under the limit: spared, and running, not stopped.
    assert_eq!(r.outcome, GuardOutcome::Spared, "{r:?}");
    assert_eq!(
        pid_of(&mut w.snap.borrow_mut(), 101).state,
        ProcState::Sleeping
    );
    assert!(r.parked_ids.is_empty());
}

#[test]
fn parked_trees_are_rejudged_woken_under_kept_near_ended_over() {
    let snap = idle_tree();
    let root = snap.processes[1].identity().unwrap();
    let p = ParkedTree {
        root,
        pattern: "p100".into(),
        limit_bytes: 1000 * MIB,
        ids: vec![snap.processes[2].identity().unwrap()],
    };
    let with = |mib: u64| {
        let mut s = idle_tree();
        pid_of(&mut s, 101).footprint_bytes = Some(mib * MIB);
        s
    };
    // 10 + 600 + 500 = 1110 MiB: over, enforced again (it used to be skipped for good).
    assert_eq!(rejudge(&with(600), &p), Rejudge::Enforce);
    assert_eq!(rejudge(&with(440), &p), Rejudge::Keep, "950 MiB: 95 %");
    // Exactly 90 % is not under it: kept (woken only below the line), and one MiB less wakes.
    assert_eq!(rejudge(&with(390), &p), Rejudge::Keep, "900 MiB: 90 %");
    assert_eq!(rejudge(&with(389), &p), Rejudge::Wake, "899 MiB");
    assert_eq!(
        rejudge(&with(300), &p),
        Rejudge::Wake,
        "810 MiB: under 90 %"
    );
    let mut reused = with(600);
    pid_of(&mut reused, 100).start_time = Some(1);
    assert_eq!(rejudge(&reused, &p), Rejudge::Wake, "not the guarded root");
}

#[test]
fn a_root_changing_after_parking_wakes_what_was_parked() {
    let w = World::new(idle_tree())
        .at_read(1, second_sample)
        .at_read(2, |s| pid_of(s, 100).start_time = Some(1));
    let r = w.enforce(1000, true, vec![]);
    assert_eq!(r.outcome, GuardOutcome::RootChanged);
    assert_eq!(w.sent(), vec![(101, Signal::Stop), (101, Signal::Cont)]);
    assert!(r.parked_ids.is_empty());
}
