//! The escalation against scripted processes on a fake clock: every signal is recorded,
//! no real time passes.

use std::cell::{Cell, RefCell};

use super::*;
use crate::platform::PlatformError;

/// How one scripted process behaves.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Script {
    pub(crate) ignores_term: bool,
    pub(crate) survives_kill: bool,
    /// Dies by itself this long after SIGTERM.
    pub(crate) term_delay: Option<Duration>,
    /// The pid is taken by another process once the clock passes this.
    pub(crate) reused_after: Option<Duration>,
    pub(crate) term_fails: bool,
    /// Identity reads fail from this point on.
    pub(crate) unreadable_after: Option<Duration>,
    /// Not there at all.
    pub(crate) absent: bool,
}

#[derive(Debug)]
struct Proc {
    id: Identity,
    script: Script,
    alive: Cell<bool>,
    term_at: Cell<Option<Duration>>,
}

/// A set of scripted processes and the clock they live on.
#[derive(Debug)]
pub(crate) struct World {
    base: Instant,
    now: Cell<Duration>,
    procs: Vec<Proc>,
    pub(crate) sent: RefCell<Vec<(i32, Signal)>>,
}

pub(crate) fn id(pid: i32) -> Identity {
    Identity {
        pid,
        start_time: 7,
        uid: 501,
    }
}

impl World {
    pub(crate) fn new(procs: &[(i32, Script)]) -> Self {
        Self {
            base: Instant::now(),
            now: Cell::new(Duration::ZERO),
            procs: procs
                .iter()
                .map(|(pid, s)| Proc {
                    id: id(*pid),
                    script: *s,
                    alive: Cell::new(!s.absent),
                    term_at: Cell::new(None),
                })
                .collect(),
            sent: RefCell::new(Vec::new()),
        }
    }

    pub(crate) fn elapsed(&self) -> Duration {
        self.now.get()
    }

    fn get(&self, t: &Identity) -> &Proc {
        self.procs
            .iter()
            .find(|p| p.id.pid == t.pid)
            .unwrap_or_else(|| panic!("no scripted pid {}", t.pid))
    }

    fn tick(&self) {
        for p in &self.procs {
            if let (Some(t), Some(d)) = (p.term_at.get(), p.script.term_delay) {
                if self.now.get() >= t + d {
                    p.alive.set(false);
                }
            }
        }
    }

    fn reused(&self, p: &Proc) -> bool {
        p.script.reused_after.is_some_and(|r| self.now.get() >= r)
    }

    fn unreadable(&self, p: &Proc) -> bool {
        p.script
            .unreadable_after
            .is_some_and(|r| self.now.get() >= r)
    }

    pub(crate) fn signals_to(&self, pid: i32) -> Vec<Signal> {
        self.sent
            .borrow()
            .iter()
            .filter(|(p, _)| *p == pid)
            .map(|(_, s)| *s)
            .collect()
    }
}

impl Clock for World {
    fn now(&self) -> Instant {
        self.base + self.now.get()
    }
    fn sleep(&self, d: Duration) {
        self.now.set(self.now.get() + d);
        self.tick();
    }
}

impl ProcessControl for World {
    fn signal(&self, target: &Identity, sig: Signal) -> Result<Delivery, PlatformError> {
        assert!(target.pid > 1);
        let p = self.get(target);
        if self.unreadable(p) {
            return Err(PlatformError::PermissionDenied { pid: target.pid });
        }
        if self.reused(p) {
            return Ok(Delivery::IdentityChanged);
        }
        if !p.alive.get() {
            return Ok(Delivery::Gone);
        }
        if sig == Signal::Term && p.script.term_fails {
            return Err(PlatformError::PermissionDenied { pid: target.pid });
        }
        self.sent.borrow_mut().push((target.pid, sig));
        match sig {
            Signal::Term if !p.script.ignores_term => {
                p.term_at.set(Some(self.now.get()));
                if p.script.term_delay.is_none() {
                    p.alive.set(false);
                }
            }
            Signal::Kill if !p.script.survives_kill => p.alive.set(false),
            _ => {}
        }
        Ok(Delivery::Sent)
    }

    fn alive(&self, target: &Identity) -> Result<bool, PlatformError> {
        Ok(self.presence(target)? == Presence::Alive)
    }

    fn presence(&self, target: &Identity) -> Result<Presence, PlatformError> {
        let p = self.get(target);
        if self.unreadable(p) {
            return Err(PlatformError::PermissionDenied { pid: target.pid });
        }
        Ok(if self.reused(p) {
            Presence::Changed
        } else if p.alive.get() {
            Presence::Alive
        } else {
            Presence::Gone
        })
    }
}

const GRACE: Duration = Duration::from_secs(2);

fn settings() -> Settings {
    Settings::with_grace(GRACE)
}

fn one(script: Script) -> (World, Ended) {
    let w = World::new(&[(4242, script)]);
    let r = run(&w, &[id(4242)], settings(), &w, &mut kill_all);
    assert_eq!(r.len(), 1);
    let e = r[0].clone();
    (w, e)
}

#[test]
fn term_honoured_means_no_kill() {
    let (w, e) = one(Script::default());
    assert_eq!(
        (e.outcome, e.signals.as_slice()),
        (Outcome::ExitedAfterTerm, &[Signal::Term][..])
    );
    assert_eq!(w.signals_to(4242), [Signal::Term]);
    assert!(w.elapsed() < GRACE, "no need to wait out the grace");
}

#[test]
fn term_ignored_escalates_to_kill_after_the_whole_grace() {
    let (w, e) = one(Script {
        ignores_term: true,
        ..Script::default()
    });
    assert_eq!(e.outcome, Outcome::Killed);
    assert_eq!(w.signals_to(4242), [Signal::Term, Signal::Kill]);
    assert!(w.elapsed() >= GRACE, "SIGKILL only after the grace period");
}

#[test]
fn slow_exit_within_grace_is_exited_after_term() {
    let (w, e) = one(Script {
        term_delay: Some(Duration::from_millis(700)),
        ..Script::default()
    });
    assert_eq!(e.outcome, Outcome::ExitedAfterTerm);
    assert!(w.elapsed() >= Duration::from_millis(700) && w.elapsed() < GRACE);
}

#[test]
fn both_ignored_is_survived_after_the_settle_time() {
    let (w, e) = one(Script {
        ignores_term: true,
        survives_kill: true,
        ..Script::default()
    });
    assert_eq!(e.outcome, Outcome::Survived);
    assert_eq!(e.signals, [Signal::Term, Signal::Kill]);
    assert!(w.elapsed() >= GRACE + KILL_SETTLE);
}

#[test]
fn already_gone_sends_nothing() {
    let (w, e) = one(Script {
        absent: true,
        ..Script::default()
    });
    assert_eq!(e.outcome, Outcome::AlreadyGone);
    assert!(w.sent.borrow().is_empty());
}

#[test]
fn identity_changed_at_the_first_check_sends_nothing() {
    let (w, e) = one(Script {
        reused_after: Some(Duration::ZERO),
        ..Script::default()
    });
    assert_eq!(e.outcome, Outcome::IdentityChanged);
    assert!(w.sent.borrow().is_empty());
}

#[test]
fn pid_reused_during_the_grace_is_identity_changed_and_gets_no_kill() {
    let (w, e) = one(Script {
        ignores_term: true,
        reused_after: Some(Duration::from_secs(1)),
        ..Script::default()
    });
    assert_eq!(e.outcome, Outcome::IdentityChanged);
    assert_eq!(w.signals_to(4242), [Signal::Term]);
}

#[test]
fn undeliverable_term_is_signal_failed_without_escalation() {
    let (w, e) = one(Script {
        term_fails: true,
        ..Script::default()
    });
    assert_eq!(e.outcome, Outcome::SignalFailed);
    assert!(e.error.is_some());
    assert!(w.sent.borrow().is_empty());
}

#[test]
fn unreadable_identity_is_identity_changed_never_signal_failed() {
    let (w, e) = one(Script {
        unreadable_after: Some(Duration::ZERO),
        ..Script::default()
    });
    assert_eq!(e.outcome, Outcome::IdentityChanged);
    assert!(e.error.is_some(), "the read error is kept");
    assert!(w.sent.borrow().is_empty());
}

#[test]
fn identity_unreadable_during_the_grace_gets_no_kill() {
    let (w, e) = one(Script {
        ignores_term: true,
        unreadable_after: Some(Duration::from_secs(1)),
        ..Script::default()
    });
    assert_eq!(e.outcome, Outcome::IdentityChanged);
    assert_eq!(w.signals_to(4242), [Signal::Term]);
}

#[test]
fn a_tree_at_once_each_with_its_own_outcome_in_the_given_order() {
    let w = World::new(&[
        (10, Script::default()),
        (
            11,
            Script {
                ignores_term: true,
                ..Script::default()
            },
        ),
        (
            12,
            Script {
                absent: true,
                ..Script::default()
            },
        ),
        (
            13,
            Script {
                ignores_term: true,
                survives_kill: true,
                ..Script::default()
            },
        ),
    ]);
    let r = run(
        &w,
        &[id(10), id(11), id(12), id(13)],
        settings(),
        &w,
        &mut kill_all,
    );
    let got: Vec<(i32, Outcome)> = r.iter().map(|e| (e.identity.pid, e.outcome)).collect();
    assert_eq!(
        got,
        [
            (10, Outcome::ExitedAfterTerm),
            (11, Outcome::Killed),
            (12, Outcome::AlreadyGone),
            (13, Outcome::Survived)
        ]
    );
}

#[test]
fn the_gate_sees_only_grace_survivors_and_can_only_narrow() {
    let stubborn = Script {
        ignores_term: true,
        ..Script::default()
    };
    let w = World::new(&[(10, Script::default()), (11, stubborn), (12, stubborn)]);
    let mut asked = Vec::new();
    let mut gate = |s: &[Identity]| {
        asked = s.to_vec();
        // Ask for 11 and for a newcomer that was never given: only 11 is killed.
        vec![id(11), id(99)]
    };
    let r = run(&w, &[id(10), id(11), id(12)], settings(), &w, &mut gate);
    assert_eq!(asked, [id(11), id(12)], "10 exited during the grace");
    let got: Vec<Outcome> = r.iter().map(|e| e.outcome).collect();
    assert_eq!(
        got,
        [Outcome::ExitedAfterTerm, Outcome::Killed, Outcome::Spared]
    );
    assert_eq!(w.signals_to(12), [Signal::Term]);
    assert!(w.signals_to(99).is_empty());
}

#[test]
fn a_gate_that_says_no_longer_needed_sends_no_kill() {
    let w = World::new(&[(
        10,
        Script {
            ignores_term: true,
            ..Script::default()
        },
    )]);
    let r = run(&w, &[id(10)], settings(), &w, &mut |_: &[Identity]| vec![]);
    assert_eq!(r[0].outcome, Outcome::Spared);
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
    assert_eq!(r[0].outcome, Outcome::ExitedAfterTerm);
    assert!(!asked);
}

#[test]
fn stopped_members_are_continued_after_their_term() {
    let slow = Script {
        term_delay: Some(Duration::from_millis(100)),
        ..Script::default()
    };
    let w = World::new(&[(10, slow), (11, slow)]);
    let esc = Escalation::new(&[id(10), id(11)], settings()).continue_after_term(&[id(11)]);
    let r = run_escalation(&w, esc, &w, &mut kill_all);
    assert_eq!(w.signals_to(10), [Signal::Term], "only the stopped one");
    assert_eq!(w.signals_to(11), [Signal::Term, Signal::Cont]);
    assert_eq!(r[1].signals, [Signal::Term, Signal::Cont]);
    assert_eq!(r[1].outcome, Outcome::ExitedAfterTerm);
}

#[test]
fn step_by_step_never_blocks_and_keeps_the_deadline() {
    let w = World::new(&[(
        10,
        Script {
            ignores_term: true,
            ..Script::default()
        },
    )]);
    let mut esc = Escalation::new(&[id(10)], settings());
    let t0 = w.now();
    let mut step = esc.start(&w, t0);
    let mut ticks = 0;
    let mut killed_at = None;
    while let Step::Pending(at) = step {
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
    let Step::Done(r) = step else { unreachable!() };
    assert_eq!(r[0].outcome, Outcome::Killed);
}

#[test]
fn newcomers_added_during_the_grace_share_the_deadline_and_none_after_kill() {
    let stubborn = Script {
        ignores_term: true,
        ..Script::default()
    };
    let w = World::new(&[(10, stubborn), (11, stubborn), (12, stubborn)]);
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
    let w = World::new(&[(
        10,
        Script {
            ignores_term: true,
            ..Script::default()
        },
    )]);
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
        Outcome::ExitedAfterTerm,
        Outcome::Killed,
        Outcome::IdentityChanged,
        Outcome::AlreadyGone,
        Outcome::SignalFailed,
        Outcome::Survived,
        Outcome::Spared,
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
    for o in [Outcome::ExitedAfterTerm, Outcome::Killed, Outcome::Spared] {
        let json = serde_json::to_string(&o).unwrap_or_default();
        assert_eq!(json, format!("\"{}\"", o.as_str()));
    }
}

#[test]
fn gone_is_exactly_the_outcomes_where_the_process_no_longer_exists() {
    use Outcome::*;
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
    let slow = Script {
        term_delay: Some(Duration::from_millis(100)),
        ..Script::default()
    };
    let w = World::new(&[(10, slow), (11, slow), (12, slow), (13, slow)]);
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
        (
            10,
            Script {
                ignores_term: true,
                ..Script::default()
            },
        ),
        (
            11,
            Script {
                term_fails: true,
                ..Script::default()
            },
        ),
        // Unreadable: identity-changed with an error, which is not a refused signal.
        (
            12,
            Script {
                unreadable_after: Some(Duration::ZERO),
                ..Script::default()
            },
        ),
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
    let w = World::new(&[(
        10,
        Script {
            ignores_term: true,
            ..Script::default()
        },
    )]);
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
    let w = World::new(&[(
        10,
        Script {
            ignores_term: true,
            ..Script::default()
        },
    )]);
    let mut esc = Escalation::new(&[id(10)], Settings::with_grace(Duration::MAX));
    let step = esc.start(&w, w.now());
    assert!(matches!(step, Step::Pending(_)), "{step:?}");
    w.sleep(Duration::from_secs(300 * 86_400));
    let step = esc.on_tick(&w, w.now(), &mut kill_all);
    assert!(matches!(step, Step::Pending(_)), "{step:?}");
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
