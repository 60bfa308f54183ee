//! The escalation of several processes at once on the scripted world of `tests.rs`: each
//! member's own outcome, the survivor gate, stopped members, stepping and newcomers, and
//! the stable names of the outcomes.

use std::time::Duration;

use super::tests::*;
use super::*;
use crate::actions::clock::RealClock;

/// Outlives SIGTERM (SIGKILL ends it).
fn stubborn() -> Script {
    Script {
        ignores_term: true,
        ..Script::default()
    }
}

/// Outlives SIGTERM and SIGKILL.
fn unkillable() -> Script {
    Script {
        ignores_term: true,
        survives_kill: true,
        ..Script::default()
    }
}

/// Exits 100 ms after SIGTERM.
fn slow() -> Script {
    Script {
        term_delay: Some(Duration::from_millis(100)),
        ..Script::default()
    }
}

/// Not there at all.
fn absent() -> Script {
    Script {
        absent: true,
        ..Script::default()
    }
}

/// SIGTERM to it is refused.
fn refuses_term() -> Script {
    Script {
        term_fails: true,
        ..Script::default()
    }
}

/// Its identity cannot be read from the start.
fn unreadable() -> Script {
    Script {
        unreadable_after: Some(Duration::ZERO),
        ..Script::default()
    }
}

#[test]
fn a_tree_at_once_each_with_its_own_outcome_in_the_given_order() {
    let w = World::new(&[
        (10, Script::default()),
        (11, stubborn()),
        (12, absent()),
        (13, unkillable()),
    ]);
    let r = run(
        &w,
        &[id(10), id(11), id(12), id(13)],
        settings(),
        &w,
        &mut kill_all,
    );
    let got: Vec<(i32, EscalationOutcome)> =
        r.iter().map(|e| (e.identity.pid, e.outcome)).collect();
    assert_eq!(
        got,
        [
            (10, EscalationOutcome::ExitedAfterTerm),
            (11, EscalationOutcome::Killed),
            (12, EscalationOutcome::AlreadyGone),
            (13, EscalationOutcome::Survived)
        ]
    );
}

#[test]
fn the_gate_sees_only_grace_survivors_and_can_only_narrow() {
    let w = World::new(&[(10, Script::default()), (11, stubborn()), (12, stubborn())]);
    let mut asked = Vec::new();
    let mut gate = |s: &[Identity]| {
        asked = s.to_vec();
        // Ask for 11 and for a newcomer that was never given: only 11 is killed.
        vec![id(11), id(99)]
    };
    let r = run(&w, &[id(10), id(11), id(12)], settings(), &w, &mut gate);
    assert_eq!(asked, [id(11), id(12)], "10 exited during the grace");
    let got: Vec<EscalationOutcome> = r.iter().map(|e| e.outcome).collect();
    assert_eq!(
        got,
        [
            EscalationOutcome::ExitedAfterTerm,
            EscalationOutcome::Killed,
            EscalationOutcome::Spared
        ]
    );
    assert_eq!(w.signals_to(12), [Signal::Term]);
    assert!(w.signals_to(99).is_empty());
}

#[test]
fn a_gate_that_says_no_longer_needed_sends_no_kill() {
    let w = World::new(&[(10, stubborn())]);
    let r = run(&w, &[id(10)], settings(), &w, &mut |_: &[Identity]| vec![]);
    assert_eq!(r[0].outcome, EscalationOutcome::Spared);
    assert_eq!(w.signals_to(10), [Signal::Term]);
}

#[test]
fn the_gate_is_not_asked_when_nothing_survived_the_grace() {
    let w = World::new(&[(10, Script::default())]);
    let mut asked = false;
    let r = run(&w, &[id(10)], settings(), &w, &mut |s: &[Identity]| {
        asked = true;
        s.to_vec()
    });
    assert_eq!(r[0].outcome, EscalationOutcome::ExitedAfterTerm);
    assert!(!asked);
}

#[test]
fn stopped_members_are_continued_after_their_term() {
    let w = World::new(&[(10, slow()), (11, slow())]);
    let esc = Escalation::new(&[id(10), id(11)], settings()).continue_after_term(&[id(11)]);
    let r = run_escalation(&w, esc, &w, &mut kill_all);
    assert_eq!(w.signals_to(10), [Signal::Term], "only the stopped one");
    assert_eq!(w.signals_to(11), [Signal::Term, Signal::Cont]);
    assert_eq!(r[1].signals, [Signal::Term, Signal::Cont]);
    assert_eq!(r[1].outcome, EscalationOutcome::ExitedAfterTerm);
}

#[test]
fn step_by_step_never_blocks_and_keeps_the_deadline() {
    let w = World::new(&[(10, stubborn())]);
    let mut esc = Escalation::new(&[id(10)], settings());
    let t0 = w.now();
    let mut step = esc.start(&w, t0);
    let mut ticks = 0;
    let mut killed_at = None;
    while let EscalationStep::Pending(at) = step {
        assert!(at >= w.now(), "never asks to be called in the past");
        assert!(at - w.now() <= POLL, "wakes at least every poll");
        w.sleep(at - w.now());
        ticks += 1;
        step = esc.on_tick(&w, w.now(), &mut kill_all);
        if killed_at.is_none() && w.signals_to(10).len() == 2 {
            killed_at = Some(w.now() - t0);
        }
    }
    assert!(ticks > 2, "driven by the caller, not a blocking wait");
    assert_eq!(
        killed_at,
        Some(GRACE),
        "SIGKILL exactly at the end of the grace"
    );
    let EscalationStep::Done(r) = step else {
        unreachable!()
    };
    assert_eq!(r[0].outcome, EscalationOutcome::Killed);
}

#[test]
fn newcomers_added_during_the_grace_share_the_deadline_and_none_after_kill() {
    let w = World::new(&[(10, stubborn()), (11, stubborn()), (12, stubborn())]);
    let mut esc = Escalation::new(&[id(10)], settings());
    let t0 = w.now();
    let _ = esc.start(&w, t0);
    w.sleep(Duration::from_secs(1));
    esc.add(&w, &[id(11)], &[]);
    assert_eq!(w.signals_to(11), [Signal::Term]);
    w.sleep(Duration::from_secs(1));
    let _ = esc.on_tick(&w, w.now(), &mut kill_all);
    assert_eq!(
        w.signals_to(11),
        [Signal::Term, Signal::Kill],
        "same deadline"
    );
    esc.add(&w, &[id(12)], &[]);
    assert!(w.signals_to(12).is_empty(), "never widened after SIGKILL");
}

#[test]
fn cut_grace_goes_to_kill_at_the_next_tick() {
    let w = World::new(&[(10, stubborn())]);
    let mut esc = Escalation::new(&[id(10)], settings());
    let _ = esc.start(&w, w.now());
    esc.cut_grace(w.now());
    let _ = esc.on_tick(&w, w.now(), &mut kill_all);
    assert_eq!(w.signals_to(10), [Signal::Term, Signal::Kill]);
    assert_eq!(w.elapsed(), Duration::ZERO);
}

#[test]
fn outcome_names_are_stable() {
    let names: Vec<&str> = [
        EscalationOutcome::ExitedAfterTerm,
        EscalationOutcome::Killed,
        EscalationOutcome::IdentityChanged,
        EscalationOutcome::AlreadyGone,
        EscalationOutcome::SignalFailed,
        EscalationOutcome::Survived,
        EscalationOutcome::Spared,
    ]
    .iter()
    .map(|o| o.as_str())
    .collect();
    assert_eq!(
        names,
        [
            "exited-after-term",
            "killed",
            "identity-changed",
            "already-gone",
            "signal-failed",
            "survived",
            "spared"
        ]
    );
    for o in [
        EscalationOutcome::ExitedAfterTerm,
        EscalationOutcome::Killed,
        EscalationOutcome::Spared,
    ] {
        let json = serde_json::to_string(&o).unwrap_or_default();
        assert_eq!(json, format!("\"{}\"", o.as_str()));
    }
}

#[test]
fn gone_is_exactly_the_outcomes_where_the_process_no_longer_exists() {
    use EscalationOutcome::*;
    for (o, gone) in [
        (ExitedAfterTerm, true),
        (Killed, true),
        (AlreadyGone, true),
        (IdentityChanged, false),
        (SignalFailed, false),
        (Survived, false),
        (Spared, false),
    ] {
        assert_eq!(o.gone(), gone, "{o:?}");
    }
}

#[test]
fn the_real_clock_sleeps_at_least_as_long_as_asked() {
    let c = RealClock;
    let t = c.now();
    c.sleep(Duration::from_millis(20));
    assert!(c.now() - t >= Duration::from_millis(20));
}

#[test]
fn a_stopped_newcomer_is_continued_and_an_earlier_stopped_mark_is_kept() {
    let w = World::new(&[(10, slow()), (11, slow()), (12, slow()), (13, slow())]);
    // 10 is marked stopped, then 11 is added before the start: 10 keeps its mark.
    let mut esc = Escalation::new(&[id(10)], settings()).continue_after_term(&[id(10)]);
    esc.add(&w, &[id(11)], &[]);
    let _ = esc.start(&w, w.now());
    assert_eq!(w.signals_to(10), [Signal::Term, Signal::Cont]);
    assert_eq!(
        w.signals_to(11),
        [Signal::Term],
        "control: 11 was not stopped"
    );
    // During the grace: a stopped newcomer is continued, a running one is not.
    esc.add(&w, &[id(12), id(13)], &[id(12)]);
    assert_eq!(w.signals_to(12), [Signal::Term, Signal::Cont]);
    assert_eq!(w.signals_to(13), [Signal::Term]);
}

#[test]
fn delivered_names_each_signal_and_only_the_refused_ones_as_failed() {
    let w = World::new(&[
        (10, stubborn()),
        (11, refuses_term()),
        // Unreadable: identity-changed with an error, which is not a refused signal.
        (12, unreadable()),
    ]);
    let mut esc = Escalation::new(&[id(10), id(11), id(12)], settings());
    let t0 = w.now();
    let _ = esc.start(&w, t0);
    let pids = |v: &[(Identity, String)]| v.iter().map(|(i, _)| i.pid).collect::<Vec<_>>();
    let (sent, failed) = esc.delivered(Signal::Term);
    assert_eq!(sent, [id(10)]);
    assert_eq!(pids(&failed), [11]);
    assert!(failed.iter().all(|(_, e)| !e.is_empty()), "{failed:?}");
    assert!(esc.delivered(Signal::Kill).0.is_empty(), "not yet");
    w.sleep(GRACE);
    let _ = esc.on_tick(&w, w.now(), &mut kill_all);
    let (sent, failed) = esc.delivered(Signal::Kill);
    assert_eq!(sent, [id(10)]);
    assert_eq!(pids(&failed), [11]);
}

#[test]
fn past_grace_only_once_the_kill_was_decided() {
    let w = World::new(&[(10, stubborn())]);
    let mut esc = Escalation::new(&[id(10)], settings());
    assert!(!esc.past_grace(), "not started");
    let _ = esc.start(&w, w.now());
    assert!(!esc.past_grace(), "SIGTERM sent");
    w.sleep(GRACE - POLL);
    let _ = esc.on_tick(&w, w.now(), &mut kill_all);
    assert!(!esc.past_grace(), "still in the grace");
    w.sleep(POLL);
    let _ = esc.on_tick(&w, w.now(), &mut kill_all);
    assert_eq!(w.signals_to(10), [Signal::Term, Signal::Kill]);
    assert!(esc.past_grace(), "SIGKILL sent");
}

#[test]
fn a_grace_too_long_for_the_clock_is_never_cut_short() {
    // `now + Duration::MAX` overflows `Instant`: the deadline falls back to a year away,
    // never to `now` (which would SIGKILL at the first tick) nor to anything sooner.
    let w = World::new(&[(10, stubborn())]);
    let mut esc = Escalation::new(&[id(10)], EscalationTiming::with_grace(Duration::MAX));
    let step = esc.start(&w, w.now());
    assert!(matches!(step, EscalationStep::Pending(_)), "{step:?}");
    w.sleep(Duration::from_secs(300 * 86_400));
    let step = esc.on_tick(&w, w.now(), &mut kill_all);
    assert!(matches!(step, EscalationStep::Pending(_)), "{step:?}");
    assert_eq!(
        w.signals_to(10),
        [Signal::Term],
        "no SIGKILL within 300 days"
    );
    assert!(!esc.past_grace());
    // Control: the same process with an ordinary grace is killed by then.
    let mut esc = Escalation::new(&[id(10)], settings());
    let _ = esc.start(&w, w.now());
    w.sleep(GRACE);
    let _ = esc.on_tick(&w, w.now(), &mut kill_all);
    assert_eq!(w.signals_to(10), [Signal::Term, Signal::Term, Signal::Kill]);
}
