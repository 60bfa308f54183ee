//! Identity-checked termination of the processes `reap` approved: SIGTERM to all of them at
//! once, one shared grace, SIGKILL only to the survivors the caller's gate still approves
//! (and only if each is the same process), and a record of which signal worked. The
//! sequence itself is `actions::escalate` (the one escalation); this module keeps reap's
//! outcome tokens, which the evidence CSV has always used (`sigterm`, `sigkill`, ...;
//! reference A.12).
//!
//! The known offender ignores SIGTERM, so escalation is required, but SIGTERM is always tried
//! first. The identity (pid + start time + uid) is re-read before each signal by
//! `ProcessControl`: the table may be a poll old, PIDs are reused within seconds, and the
//! grace period itself is the widest reuse window. An identity that differs or cannot be
//! read aborts: absence of evidence never reads as "same process".

use std::time::Duration;

use serde::Serialize;

use crate::actions::clock::Clock;
use crate::actions::escalate::{self, EscalationTiming};
use crate::core::snapshot::Identity;
use crate::platform::{ProcessControl, Signal};

/// How a termination ended. The kebab-case names are stable (JSON, evidence CSV).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[schemars(rename = "Outcome")]
pub enum TerminationOutcome {
    Sigterm,
    Sigkill,
    Survived,
    AlreadyGone,
    IdentityChanged,
    SignalFailed,
    /// SIGTERM was delivered, and at the end of the grace the selection made again on a
    /// fresh table no longer chose it (it reaped its own zombies, its session woke, the
    /// emergency relief was already reached): no SIGKILL; it is still there.
    Spared,
}

impl TerminationOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Sigterm => "sigterm",
            Self::Sigkill => "sigkill",
            Self::Survived => "survived",
            Self::AlreadyGone => "already-gone",
            Self::IdentityChanged => "identity-changed",
            Self::SignalFailed => "signal-failed",
            Self::Spared => "spared",
        }
    }

    /// The process is gone (whether or not we ended it).
    pub fn succeeded(self) -> bool {
        matches!(self, Self::Sigterm | Self::Sigkill | Self::AlreadyGone)
    }

    /// headroom's signal ended it (not a process that went by itself).
    pub fn ended(self) -> bool {
        matches!(self, Self::Sigterm | Self::Sigkill)
    }

    fn of(o: escalate::EscalationOutcome) -> Self {
        match o {
            escalate::EscalationOutcome::ExitedAfterTerm => Self::Sigterm,
            escalate::EscalationOutcome::Killed => Self::Sigkill,
            escalate::EscalationOutcome::AlreadyGone => Self::AlreadyGone,
            escalate::EscalationOutcome::IdentityChanged => Self::IdentityChanged,
            escalate::EscalationOutcome::SignalFailed => Self::SignalFailed,
            escalate::EscalationOutcome::Survived => Self::Survived,
            escalate::EscalationOutcome::Spared => Self::Spared,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Termination {
    pub outcome: TerminationOutcome,
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
    let mut all = terminate_all(
        ctl,
        std::slice::from_ref(target),
        grace,
        clock,
        &mut escalate::kill_all,
    );
    all.pop().unwrap_or_else(no_outcome)
}

/// Terminate every one of `targets` in one escalation: each is checked and sent SIGTERM at
/// once, the grace is shared (n targets that ignore SIGTERM cost one grace, not n), and
/// when it ends `gate` says which survivors still need SIGKILL (it can only narrow the
/// set). One termination per target, in their order.
pub(crate) fn terminate_all(
    ctl: &dyn ProcessControl,
    targets: &[Identity],
    grace: Duration,
    clock: &dyn Clock,
    gate: &mut escalate::KillGate<'_>,
) -> Vec<Termination> {
    let ended = escalate::run(
        ctl,
        targets,
        EscalationTiming::with_grace(grace),
        clock,
        gate,
    );
    targets
        .iter()
        .map(|id| {
            ended
                .iter()
                .find(|e| e.identity == *id)
                .map_or_else(no_outcome, |e| Termination {
                    outcome: TerminationOutcome::of(e.outcome),
                    signals: e.signals.clone(),
                    error: e.error.clone(),
                })
        })
        .collect()
}

/// One identity in, one outcome out; were it not, nothing is known to be gone.
fn no_outcome() -> Termination {
    Termination {
        outcome: TerminationOutcome::Survived,
        signals: vec![],
        error: Some("the escalation returned no outcome".into()),
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
            (TerminationOutcome::Sigterm, "15".into())
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
            (TerminationOutcome::Sigkill, "15+9".into())
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
            (TerminationOutcome::Survived, "15+9".into())
        );
        assert!(!t.outcome.succeeded());
    }

    #[test]
    fn already_gone_sends_nothing() {
        let (w, t) = one(Script {
            absent: true,
            ..Script::default()
        });
        assert_eq!(t.outcome, TerminationOutcome::AlreadyGone);
        assert!(t.outcome.succeeded());
        assert!(w.sent.borrow().is_empty());
    }

    #[test]
    fn identity_changed_at_the_first_check_or_during_the_grace() {
        let (w, t) = one(Script {
            reused_after: Some(Duration::ZERO),
            ..Script::default()
        });
        assert_eq!(t.outcome, TerminationOutcome::IdentityChanged);
        assert!(w.sent.borrow().is_empty());
        let (w, t) = one(Script {
            ignores_term: true,
            reused_after: Some(Duration::from_secs(1)),
            ..Script::default()
        });
        assert_eq!(t.outcome, TerminationOutcome::IdentityChanged);
        assert!(!t.outcome.succeeded(), "not known to be gone");
        assert_eq!(w.signals_to(4242), [Signal::Term]);
    }

    #[test]
    fn undeliverable_term_is_signal_failed() {
        let (w, t) = one(Script {
            term_fails: true,
            ..Script::default()
        });
        assert_eq!(t.outcome, TerminationOutcome::SignalFailed);
        assert!(t.error.is_some());
        assert!(w.sent.borrow().is_empty());
    }

    #[test]
    fn unreadable_identity_is_identity_changed() {
        let (w, t) = one(Script {
            unreadable_after: Some(Duration::ZERO),
            ..Script::default()
        });
        assert_eq!(t.outcome, TerminationOutcome::IdentityChanged);
        assert!(t.error.is_some());
        assert!(w.sent.borrow().is_empty());
    }

    #[test]
    fn outcome_names_are_stable() {
        let names: Vec<&str> = [
            TerminationOutcome::Sigterm,
            TerminationOutcome::Sigkill,
            TerminationOutcome::Survived,
            TerminationOutcome::AlreadyGone,
            TerminationOutcome::IdentityChanged,
            TerminationOutcome::SignalFailed,
            TerminationOutcome::Spared,
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
                "signal-failed",
                "spared"
            ]
        );
    }

    /// Two targets that ignore SIGTERM share one grace (one escalation, not one each), and
    /// the gate decides each SIGKILL: the survivor it no longer approves is spared, with
    /// SIGTERM only; the one it approves is killed (the control).
    #[test]
    fn targets_share_one_grace_and_the_gate_spares_what_it_no_longer_approves() {
        let ignores = Script {
            ignores_term: true,
            ..Script::default()
        };
        let w = World::new(&[(4242, ignores), (4343, ignores)]);
        let mut asked = Vec::new();
        let mut gate = |s: &[Identity]| {
            asked.push(s.to_vec());
            s.iter().copied().filter(|i| i.pid == 4242).collect()
        };
        let t = terminate_all(&w, &[id(4242), id(4343)], GRACE, &w, &mut gate);
        assert_eq!(
            asked,
            vec![vec![id(4242), id(4343)]],
            "asked once, both survivors"
        );
        assert_eq!(
            (t[0].outcome, t[0].signal_list()),
            (TerminationOutcome::Sigkill, "15+9".into())
        );
        assert_eq!(
            (t[1].outcome, t[1].signal_list()),
            (TerminationOutcome::Spared, "15".into())
        );
        assert!(!t[1].outcome.succeeded(), "a spared parent is still there");
        assert!(w.elapsed() >= GRACE);
        assert!(w.elapsed() < GRACE * 2, "one grace: {:?}", w.elapsed());
    }
}
