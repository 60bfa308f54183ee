//! Identity-checked termination of one approved process: SIGTERM, a grace period, SIGKILL
//! only if the same process is still there, and a record of which signal worked.
//!
//! The known offender ignores SIGTERM, so escalation is required, but SIGTERM is always tried
//! first. The identity (pid + start time + uid) is re-read before each signal by
//! `ProcessControl`: the table may be a poll old, PIDs are reused within seconds, and the
//! grace period itself is the widest reuse window. An identity that differs or cannot be
//! read aborts: absence of evidence never reads as "same process".

use std::time::Duration;

use serde::Serialize;

use crate::core::snapshot::Identity;
use crate::platform::{Delivery, ProcessControl, Signal};

/// How long to wait for a SIGKILLed process to disappear before calling it a survivor.
pub const KILL_SETTLE: Duration = Duration::from_secs(1);
/// How often liveness is polled while waiting.
pub const POLL: Duration = Duration::from_millis(25);

/// How a termination ended. The kebab-case names are stable (JSON, evidence CSV).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Sigterm,
    Sigkill,
    Survived,
    AlreadyGone,
    IdentityChanged,
    SignalFailed,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sigterm => "sigterm",
            Self::Sigkill => "sigkill",
            Self::Survived => "survived",
            Self::AlreadyGone => "already-gone",
            Self::IdentityChanged => "identity-changed",
            Self::SignalFailed => "signal-failed",
        }
    }

    /// The process is gone (whether or not we ended it).
    pub fn succeeded(self) -> bool {
        matches!(self, Self::Sigterm | Self::Sigkill | Self::AlreadyGone)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Termination {
    pub outcome: Outcome,
    /// Signals actually delivered, in order.
    pub signals: Vec<Signal>,
    /// What went wrong, for `signal-failed` and unreadable identities.
    pub error: Option<String>,
}

impl Termination {
    fn done(outcome: Outcome, signals: Vec<Signal>) -> Self {
        Self {
            outcome,
            signals,
            error: None,
        }
    }

    fn failed(outcome: Outcome, signals: Vec<Signal>, e: impl std::fmt::Display) -> Self {
        Self {
            outcome,
            signals,
            error: Some(e.to_string()),
        }
    }

    /// `15+9`: the signal numbers as the evidence log records them.
    pub fn signal_list(&self) -> String {
        self.signals
            .iter()
            .map(|s| s.number().to_string())
            .collect::<Vec<_>>()
            .join("+")
    }
}

/// Time, injectable so the sequence is tested without waiting.
pub trait Sleeper {
    fn sleep(&self, d: Duration);
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealSleeper;

impl Sleeper for RealSleeper {
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// Wait up to `limit` for `target` to stop being alive. An unreadable state counts as
/// alive (keep waiting; the next signal re-checks identity anyway).
fn wait_gone(
    ctl: &dyn ProcessControl,
    target: &Identity,
    limit: Duration,
    clock: &dyn Sleeper,
) -> bool {
    let mut waited = Duration::ZERO;
    loop {
        if matches!(ctl.alive(target), Ok(false)) {
            return true;
        }
        if waited >= limit {
            return false;
        }
        let step = POLL.min(limit - waited);
        clock.sleep(step);
        waited += step;
    }
}

/// Terminate `target`: SIGTERM, wait up to `grace`, SIGKILL if the same process is still
/// there, wait for it to go.
pub fn terminate(
    ctl: &dyn ProcessControl,
    target: &Identity,
    grace: Duration,
    clock: &dyn Sleeper,
) -> Termination {
    match ctl.alive(target) {
        Ok(true) => {}
        Ok(false) => return Termination::done(Outcome::AlreadyGone, vec![]),
        Err(e) => return Termination::failed(Outcome::IdentityChanged, vec![], e),
    }
    let mut sent = Vec::new();
    match ctl.signal(target, Signal::Term) {
        Ok(Delivery::Sent) => sent.push(Signal::Term),
        Ok(Delivery::Gone) => return Termination::done(Outcome::AlreadyGone, sent),
        Ok(Delivery::IdentityChanged) => return Termination::done(Outcome::IdentityChanged, sent),
        Err(e) => return Termination::failed(Outcome::SignalFailed, sent, e),
    }
    if wait_gone(ctl, target, grace, clock) {
        return Termination::done(Outcome::Sigterm, sent);
    }
    match ctl.signal(target, Signal::Kill) {
        Ok(Delivery::Sent) => sent.push(Signal::Kill),
        // It went at the very end of the grace period: SIGTERM did it.
        Ok(Delivery::Gone) => return Termination::done(Outcome::Sigterm, sent),
        Ok(Delivery::IdentityChanged) => return Termination::done(Outcome::IdentityChanged, sent),
        Err(e) => return Termination::failed(Outcome::SignalFailed, sent, e),
    }
    if wait_gone(ctl, target, KILL_SETTLE, clock) {
        Termination::done(Outcome::Sigkill, sent)
    } else {
        Termination::done(Outcome::Survived, sent)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::{Cell, RefCell};

    use super::*;
    use crate::platform::PlatformError;

    /// A process that reacts to signals as scripted, on a fake clock; records every signal.
    #[derive(Default)]
    pub(crate) struct Fake {
        pub(crate) alive: Cell<bool>,
        pub(crate) ignores_term: bool,
        pub(crate) survives_kill: bool,
        /// Dies by itself this long after SIGTERM.
        pub(crate) term_delay: Option<Duration>,
        /// The pid is taken by another process once the clock passes this.
        pub(crate) reused_after: Option<Duration>,
        pub(crate) term_fails: bool,
        pub(crate) unreadable: bool,
        pub(crate) now: Cell<Duration>,
        pub(crate) term_at: Cell<Option<Duration>>,
        pub(crate) sent: RefCell<Vec<Signal>>,
    }

    impl Fake {
        pub(crate) fn live() -> Self {
            Self {
                alive: Cell::new(true),
                ..Self::default()
            }
        }

        fn tick(&self) {
            if let (Some(t), Some(d)) = (self.term_at.get(), self.term_delay) {
                if self.now.get() >= t + d {
                    self.alive.set(false);
                }
            }
        }

        fn reused(&self) -> bool {
            self.reused_after.is_some_and(|r| self.now.get() >= r)
        }
    }

    impl Sleeper for Fake {
        fn sleep(&self, d: Duration) {
            self.now.set(self.now.get() + d);
            self.tick();
        }
    }

    impl ProcessControl for Fake {
        fn signal(&self, target: &Identity, sig: Signal) -> Result<Delivery, PlatformError> {
            assert!(target.pid > 1);
            if self.unreadable {
                return Err(PlatformError::PermissionDenied { pid: target.pid });
            }
            if self.reused() {
                return Ok(Delivery::IdentityChanged);
            }
            if !self.alive.get() {
                return Ok(Delivery::Gone);
            }
            if sig == Signal::Term && self.term_fails {
                return Err(PlatformError::PermissionDenied { pid: target.pid });
            }
            self.sent.borrow_mut().push(sig);
            match sig {
                Signal::Term if !self.ignores_term => {
                    self.term_at.set(Some(self.now.get()));
                    if self.term_delay.is_none() {
                        self.alive.set(false);
                    }
                }
                Signal::Kill if !self.survives_kill => self.alive.set(false),
                _ => {}
            }
            Ok(Delivery::Sent)
        }

        fn alive(&self, _target: &Identity) -> Result<bool, PlatformError> {
            if self.unreadable {
                return Err(PlatformError::PermissionDenied { pid: 4242 });
            }
            Ok(self.alive.get() && !self.reused())
        }
    }

    const T: Identity = Identity {
        pid: 4242,
        start_time: 7,
        uid: 501,
    };
    const GRACE: Duration = Duration::from_secs(2);

    #[test]
    fn term_honoured_means_no_kill() {
        let f = Fake::live();
        let r = terminate(&f, &T, GRACE, &f);
        assert_eq!(
            (r.outcome, r.signals.clone()),
            (Outcome::Sigterm, vec![Signal::Term])
        );
        assert_eq!(r.signal_list(), "15");
        assert_eq!(*f.sent.borrow(), vec![Signal::Term]);
    }

    #[test]
    fn term_ignored_escalates_to_kill_after_the_whole_grace() {
        let f = Fake {
            ignores_term: true,
            ..Fake::live()
        };
        let r = terminate(&f, &T, GRACE, &f);
        assert_eq!(
            (r.outcome, r.signal_list()),
            (Outcome::Sigkill, "15+9".to_string())
        );
        assert!(f.now.get() >= GRACE, "SIGKILL only after the grace period");
    }

    #[test]
    fn slow_exit_within_grace_is_sigterm() {
        let f = Fake {
            term_delay: Some(Duration::from_millis(700)),
            ..Fake::live()
        };
        let r = terminate(&f, &T, GRACE, &f);
        assert_eq!(r.outcome, Outcome::Sigterm);
        assert!(f.now.get() < GRACE);
    }

    #[test]
    fn both_ignored_is_survived() {
        let f = Fake {
            ignores_term: true,
            survives_kill: true,
            ..Fake::live()
        };
        let r = terminate(&f, &T, GRACE, &f);
        assert_eq!(
            (r.outcome, r.signal_list()),
            (Outcome::Survived, "15+9".to_string())
        );
    }

    #[test]
    fn already_gone_sends_nothing() {
        let f = Fake::default();
        let r = terminate(&f, &T, GRACE, &f);
        assert_eq!(r.outcome, Outcome::AlreadyGone);
        assert!(f.sent.borrow().is_empty());
    }

    #[test]
    fn identity_changed_between_selection_and_signal_sends_nothing() {
        let f = Fake {
            reused_after: Some(Duration::ZERO),
            ..Fake::live()
        };
        let r = terminate(&f, &T, GRACE, &f);
        assert_eq!(
            r.outcome,
            Outcome::AlreadyGone,
            "the approved process no longer exists"
        );
        assert!(f.sent.borrow().is_empty());
    }

    #[test]
    fn pid_reused_during_the_grace_gets_no_sigkill() {
        let f = Fake {
            ignores_term: true,
            reused_after: Some(Duration::from_secs(1)),
            ..Fake::live()
        };
        let r = terminate(&f, &T, GRACE, &f);
        assert_eq!(f.sent.borrow().as_slice(), &[Signal::Term]);
        assert!(
            matches!(r.outcome, Outcome::Sigterm | Outcome::IdentityChanged),
            "{:?}",
            r.outcome
        );
    }

    #[test]
    fn undeliverable_term_is_signal_failed_without_escalation() {
        let f = Fake {
            term_fails: true,
            ..Fake::live()
        };
        let r = terminate(&f, &T, GRACE, &f);
        assert_eq!(r.outcome, Outcome::SignalFailed);
        assert!(r.error.is_some());
        assert!(f.sent.borrow().is_empty());
    }

    #[test]
    fn unreadable_identity_is_never_treated_as_unchanged() {
        let f = Fake {
            unreadable: true,
            ..Fake::live()
        };
        let r = terminate(&f, &T, GRACE, &f);
        assert_eq!(r.outcome, Outcome::IdentityChanged);
        assert!(f.sent.borrow().is_empty());
    }

    #[test]
    fn outcome_names_are_stable() {
        let names: Vec<&str> = [
            Outcome::Sigterm,
            Outcome::Sigkill,
            Outcome::Survived,
            Outcome::AlreadyGone,
            Outcome::IdentityChanged,
            Outcome::SignalFailed,
        ]
        .iter()
        .map(|o| o.as_str())
        .collect();
        assert_eq!(
            names,
            [
                "sigterm",
                "sigkill",
                "survived",
                "already-gone",
                "identity-changed",
                "signal-failed"
            ]
        );
    }
}
