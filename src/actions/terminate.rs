//! Identity-checked termination of one approved process for `reap`: SIGTERM, a grace
//! period, SIGKILL only if the same process is still there, and a record of which signal
//! worked. The sequence itself is `actions::escalate` (the one escalation); this module
//! keeps reap's outcome tokens, which the evidence CSV has always used (`sigterm`,
//! `sigkill`, ...; reference A.12).
//!
//! The known offender ignores SIGTERM, so escalation is required, but SIGTERM is always tried
//! first. The identity (pid + start time + uid) is re-read before each signal by
//! `ProcessControl`: the table may be a poll old, PIDs are reused within seconds, and the
//! grace period itself is the widest reuse window. An identity that differs or cannot be
//! read aborts: absence of evidence never reads as "same process".

use std::time::Duration;

use serde::Serialize;

use crate::actions::escalate::{self, Clock, Settings};
pub use crate::actions::escalate::{KILL_SETTLE, POLL};
use crate::core::snapshot::Identity;
use crate::platform::{ProcessControl, Signal};

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

    fn of(o: escalate::Outcome) -> Self {
        match o {
            escalate::Outcome::ExitedAfterTerm => Self::Sigterm,
            escalate::Outcome::Killed => Self::Sigkill,
            escalate::Outcome::AlreadyGone => Self::AlreadyGone,
            escalate::Outcome::IdentityChanged => Self::IdentityChanged,
            escalate::Outcome::SignalFailed => Self::SignalFailed,
            // reap's gate kills every survivor, so nothing is spared; were it, the
            // process is still there after the escalation, which is what `survived` says.
            escalate::Outcome::Survived | escalate::Outcome::Spared => Self::Survived,
        }
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
    /// `15+9`: the signal numbers as the evidence log records them.
    pub fn signal_list(&self) -> String {
        self.signals
            .iter()
            .map(|s| s.number().to_string())
            .collect::<Vec<_>>()
            .join("+")
    }
}

/// Terminate `target`: SIGTERM, wait up to `grace`, SIGKILL if the same process is still
/// there, wait for it to go.
pub fn terminate(
    ctl: &dyn ProcessControl,
    target: &Identity,
    grace: Duration,
    clock: &dyn Clock,
) -> Termination {
    let ended = escalate::run(
        ctl,
        std::slice::from_ref(target),
        Settings::with_grace(grace),
        clock,
        &mut escalate::kill_all,
    );
    match ended.into_iter().next() {
        Some(e) => Termination {
            outcome: Outcome::of(e.outcome),
            signals: e.signals,
            error: e.error,
        },
        // One identity in, one outcome out; were it not, nothing is known to be gone.
        None => Termination {
            outcome: Outcome::Survived,
            signals: vec![],
            error: Some("the escalation returned no outcome".into()),
        },
    }
}

#[cfg(test)]
mod tests {
    //! reap's tokens over the escalation (whose sequence `escalate::tests` pins).
    use std::time::Duration;

    use super::*;
    use crate::actions::escalate::tests::{Script, World, id};

    const GRACE: Duration = Duration::from_secs(2);

    fn one(script: Script) -> (World, Termination) {
        let w = World::new(&[(4242, script)]);
        let t = terminate(&w, &id(4242), GRACE, &w);
        (w, t)
    }

    #[test]
    fn term_honoured_is_sigterm() {
        let (_, t) = one(Script::default());
        assert_eq!(
            (t.outcome, t.signal_list()),
            (Outcome::Sigterm, "15".into())
        );
    }

    #[test]
    fn term_ignored_is_sigkill_after_the_grace() {
        let (w, t) = one(Script {
            ignores_term: true,
            ..Script::default()
        });
        assert_eq!(
            (t.outcome, t.signal_list()),
            (Outcome::Sigkill, "15+9".into())
        );
        assert!(w.elapsed() >= GRACE);
    }

    #[test]
    fn both_ignored_is_survived() {
        let (_, t) = one(Script {
            ignores_term: true,
            survives_kill: true,
            ..Script::default()
        });
        assert_eq!(
            (t.outcome, t.signal_list()),
            (Outcome::Survived, "15+9".into())
        );
        assert!(!t.outcome.succeeded());
    }

    #[test]
    fn already_gone_sends_nothing() {
        let (w, t) = one(Script {
            absent: true,
            ..Script::default()
        });
        assert_eq!(t.outcome, Outcome::AlreadyGone);
        assert!(t.outcome.succeeded());
        assert!(w.sent.borrow().is_empty());
    }

    #[test]
    fn identity_changed_at_the_first_check_or_during_the_grace() {
        let (w, t) = one(Script {
            reused_after: Some(Duration::ZERO),
            ..Script::default()
        });
        assert_eq!(t.outcome, Outcome::IdentityChanged);
        assert!(w.sent.borrow().is_empty());
        let (w, t) = one(Script {
            ignores_term: true,
            reused_after: Some(Duration::from_secs(1)),
            ..Script::default()
        });
        assert_eq!(t.outcome, Outcome::IdentityChanged);
        assert!(!t.outcome.succeeded(), "not known to be gone");
        assert_eq!(w.signals_to(4242), [Signal::Term]);
    }

    #[test]
    fn undeliverable_term_is_signal_failed() {
        let (w, t) = one(Script {
            term_fails: true,
            ..Script::default()
        });
        assert_eq!(t.outcome, Outcome::SignalFailed);
        assert!(t.error.is_some());
        assert!(w.sent.borrow().is_empty());
    }

    #[test]
    fn unreadable_identity_is_identity_changed() {
        let (w, t) = one(Script {
            unreadable_after: Some(Duration::ZERO),
            ..Script::default()
        });
        assert_eq!(t.outcome, Outcome::IdentityChanged);
        assert!(t.error.is_some());
        assert!(w.sent.borrow().is_empty());
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
