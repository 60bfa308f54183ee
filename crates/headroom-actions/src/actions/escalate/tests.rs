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
    /// Takes this long to disappear after SIGKILL (not scheduled yet, a large address space
    /// torn down).
    pub(crate) kill_delay: Option<Duration>,
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
    kill_at: Cell<Option<Duration>>,
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
                    kill_at: Cell::new(None),
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
            for (at, delay) in [
                (p.term_at.get(), p.script.term_delay),
                (p.kill_at.get(), p.script.kill_delay),
            ] {
                if let (Some(t), Some(d)) = (at, delay) {
                    if self.now.get() >= t + d {
                        p.alive.set(false);
                    }
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
            Signal::Kill if !p.script.survives_kill => {
                p.kill_at.set(Some(self.now.get()));
                if p.script.kill_delay.is_none() {
                    p.alive.set(false);
                }
            }
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

pub(super) const GRACE: Duration = Duration::from_secs(2);

pub(super) fn settings() -> EscalationTiming {
    EscalationTiming::with_grace(GRACE)
}

pub(super) fn one(script: Script) -> (World, EndedTarget) {
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
        (EscalationOutcome::ExitedAfterTerm, &[Signal::Term][..])
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
    assert_eq!(e.outcome, EscalationOutcome::Killed);
    assert_eq!(w.signals_to(4242), [Signal::Term, Signal::Kill]);
    assert!(w.elapsed() >= GRACE, "SIGKILL only after the grace period");
}

#[test]
fn slow_exit_within_grace_is_exited_after_term() {
    let (w, e) = one(Script {
        term_delay: Some(Duration::from_millis(700)),
        ..Script::default()
    });
    assert_eq!(e.outcome, EscalationOutcome::ExitedAfterTerm);
    assert!(w.elapsed() >= Duration::from_millis(700) && w.elapsed() < GRACE);
}

#[test]
fn both_ignored_is_survived_after_the_settle_time() {
    let (w, e) = one(Script {
        ignores_term: true,
        survives_kill: true,
        ..Script::default()
    });
    assert_eq!(e.outcome, EscalationOutcome::Survived);
    assert_eq!(e.signals, [Signal::Term, Signal::Kill]);
    assert!(w.elapsed() >= GRACE + KILL_SETTLE);
}

/// A SIGKILLed process that takes 3 s to disappear (longer than the 1 s settle time this
/// had, which called such a leaker on a loaded machine a survivor) is `killed`, and the wait
/// ends when it is gone, not at the settle time's end. The control: one that takes longer
/// than the settle time is `survived`.
#[test]
fn a_slow_death_after_kill_is_killed_within_the_settle_time() {
    let slow = |secs| Script {
        ignores_term: true,
        kill_delay: Some(Duration::from_secs(secs)),
        ..Script::default()
    };
    let (w, e) = one(slow(3));
    assert_eq!(e.outcome, EscalationOutcome::Killed);
    assert_eq!(e.signals, [Signal::Term, Signal::Kill]);
    assert!(w.elapsed() < GRACE + KILL_SETTLE, "{:?}", w.elapsed());
    let (w, e) = one(slow(KILL_SETTLE.as_secs() + 1));
    assert_eq!(e.outcome, EscalationOutcome::Survived);
    assert!(w.elapsed() >= GRACE + KILL_SETTLE);
}

#[test]
fn already_gone_sends_nothing() {
    let (w, e) = one(Script {
        absent: true,
        ..Script::default()
    });
    assert_eq!(e.outcome, EscalationOutcome::AlreadyGone);
    assert!(w.sent.borrow().is_empty());
}

#[test]
fn identity_changed_at_the_first_check_sends_nothing() {
    let (w, e) = one(Script {
        reused_after: Some(Duration::ZERO),
        ..Script::default()
    });
    assert_eq!(e.outcome, EscalationOutcome::IdentityChanged);
    assert!(w.sent.borrow().is_empty());
}

#[test]
fn pid_reused_during_the_grace_is_identity_changed_and_gets_no_kill() {
    let (w, e) = one(Script {
        ignores_term: true,
        reused_after: Some(Duration::from_secs(1)),
        ..Script::default()
    });
    assert_eq!(e.outcome, EscalationOutcome::IdentityChanged);
    assert_eq!(w.signals_to(4242), [Signal::Term]);
}

#[test]
fn undeliverable_term_is_signal_failed_without_escalation() {
    let (w, e) = one(Script {
        term_fails: true,
        ..Script::default()
    });
    assert_eq!(e.outcome, EscalationOutcome::SignalFailed);
    assert!(e.error.is_some());
    assert!(w.sent.borrow().is_empty());
}

#[test]
fn unreadable_identity_is_identity_changed_never_signal_failed() {
    let (w, e) = one(Script {
        unreadable_after: Some(Duration::ZERO),
        ..Script::default()
    });
    assert_eq!(e.outcome, EscalationOutcome::IdentityChanged);
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
    assert_eq!(e.outcome, EscalationOutcome::IdentityChanged);
    assert_eq!(w.signals_to(4242), [Signal::Term]);
}
