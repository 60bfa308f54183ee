//! The one escalation: SIGTERM → grace → SIGKILL for a set of identities (one process or a
//! whole tree at once), with the identity re-read through `ProcessControl` before every
//! signal (once: by the signal path itself, just before `kill`) and every verdict, on one
//! injected clock.
//!
//! Two ways to drive it, one state machine:
//! - blocking (`run`): reap, the memory guards, hang recovery; the clock is injected so
//!   tests take no real time;
//! - step by step (`Escalation::start`, then `on_tick` whenever the caller wakes up): an
//!   event loop that must keep forwarding signals and reaping children while the grace
//!   runs (`run`'s watchdog sleeps in `Supervisor::wait`). Each call returns the next
//!   instant it wants to be called at, or the outcomes.
//!
//! Only the identities given (at `start` or `add`) are ever signalled: a process that
//! appears during the grace is not a survivor. Before SIGKILL the caller's gate is asked
//! which of the grace survivors still need it ("is the tree still over its limit?"); it
//! can only narrow the set, never widen it.
//!
//! Verdicts, per identity (the kebab-case names are stable, JSON and evidence):
//! - `already-gone`: gone (or a zombie of that identity) before anything was sent;
//! - `identity-changed`: at a check the pid named another process, or its identity could
//!   not be read (absence of evidence never reads as "same process"); nothing more sent;
//! - `signal-failed`: the kernel refused a signal (EPERM, ...); no escalation after it;
//! - `exited-after-term`: SIGTERM was delivered and it was confirmed gone before SIGKILL;
//! - `killed`: SIGKILL was delivered and it was gone within the settle time;
//! - `survived`: still there after SIGKILL and the settle time;
//! - `spared`: alive after the grace, but the gate said SIGKILL was no longer needed.
//!
//! "Gone" is what `ProcessControl::presence` confirms (on the live OS: no such pid, or a
//! zombie with the same start time); a read that fails is never "gone".

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::actions::clock::Clock;
use crate::core::snapshot::Identity;
use crate::platform::{Delivery, Presence, ProcessControl, Signal};

/// How long a SIGKILLed process may take to disappear before it is called a survivor. The
/// wait ends as soon as it is gone, so only a real survivor (a process in uninterruptible
/// sleep) waits it out. It was 1 s: on 2 cores at load 14–20 a killed leaker was still
/// there after it, several times (reported `survived`, exit 1, then gone), and tearing down
/// a large address space can alone take longer than a second.
pub(crate) const KILL_SETTLE: Duration = Duration::from_secs(5);
/// How often liveness is polled while waiting.
pub(crate) const POLL: Duration = Duration::from_millis(25);

/// How one identity's escalation ended. Stable names (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EscalationOutcome {
    ExitedAfterTerm,
    Killed,
    IdentityChanged,
    AlreadyGone,
    SignalFailed,
    Survived,
    Spared,
}

impl EscalationOutcome {
    #[cfg(test)]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::ExitedAfterTerm => "exited-after-term",
            Self::Killed => "killed",
            Self::IdentityChanged => "identity-changed",
            Self::AlreadyGone => "already-gone",
            Self::SignalFailed => "signal-failed",
            Self::Survived => "survived",
            Self::Spared => "spared",
        }
    }

    /// The process is gone (whether or not we ended it).
    pub(crate) fn gone(self) -> bool {
        matches!(
            self,
            Self::ExitedAfterTerm | Self::Killed | Self::AlreadyGone
        )
    }
}

/// The result for one identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EndedTarget {
    pub identity: Identity,
    pub outcome: EscalationOutcome,
    /// Signals actually delivered, in order (SIGCONT after SIGTERM included).
    pub signals: Vec<Signal>,
    /// What went wrong, for `signal-failed` and unreadable identities.
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EscalationTiming {
    /// Between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// After SIGKILL, before `survived`.
    pub settle: Duration,
    /// How often `on_tick` wants to be called while waiting.
    pub poll: Duration,
}

impl EscalationTiming {
    pub(crate) fn with_grace(grace: Duration) -> Self {
        Self {
            grace,
            settle: KILL_SETTLE,
            poll: POLL,
        }
    }
}

/// What the caller does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EscalationStep {
    /// Call `on_tick` again at (or after) this instant.
    Pending(Instant),
    /// Every identity has its outcome, in the order they were given.
    Done(Vec<EndedTarget>),
}

/// The gate before SIGKILL: given the grace survivors, which of them still need it. Only
/// identities in the argument can be killed whatever it returns.
pub(crate) type KillGate<'a> = dyn FnMut(&[Identity]) -> Vec<Identity> + 'a;

/// A gate that kills every survivor (reap, hang recovery).
pub fn kill_all(survivors: &[Identity]) -> Vec<Identity> {
    survivors.to_vec()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TargetState {
    /// Given, nothing sent yet.
    Fresh,
    /// SIGTERM delivered; waiting for it to go.
    Termed,
    /// SIGKILL delivered; waiting for it to go.
    Killed,
    Done(EscalationOutcome),
}

#[derive(Debug, Clone)]
struct EscalationTarget {
    id: Identity,
    state: TargetState,
    signals: Vec<Signal>,
    error: Option<String>,
    /// Send SIGCONT after SIGTERM (it is stopped and acts on SIGTERM only once continued).
    cont: bool,
}

impl EscalationTarget {
    fn finish(&mut self, o: EscalationOutcome) {
        self.state = TargetState::Done(o);
    }
    fn fail(&mut self, o: EscalationOutcome, e: impl std::fmt::Display) {
        self.error = Some(e.to_string());
        self.state = TargetState::Done(o);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EscalationPhase {
    NotStarted,
    /// Until the grace deadline.
    Grace(Instant),
    /// Until the settle deadline.
    Settle(Instant),
}

/// One escalation over a set of identities.
#[derive(Debug, Clone)]
pub struct Escalation {
    entries: Vec<EscalationTarget>,
    settings: EscalationTiming,
    phase: EscalationPhase,
}

impl Escalation {
    pub fn new(targets: &[Identity], settings: EscalationTiming) -> Self {
        let mut e = Self {
            entries: Vec::new(),
            settings,
            phase: EscalationPhase::NotStarted,
        };
        e.push(targets);
        e
    }

    /// These identities get SIGCONT right after their SIGTERM (parked or stopped members).
    pub(crate) fn continue_after_term(mut self, stopped: &[Identity]) -> Self {
        for e in &mut self.entries {
            e.cont |= stopped.contains(&e.id);
        }
        self
    }

    fn push(&mut self, ids: &[Identity]) {
        for id in ids {
            if !self.entries.iter().any(|e| e.id == *id) {
                self.entries.push(EscalationTarget {
                    id: *id,
                    state: TargetState::Fresh,
                    signals: Vec::new(),
                    error: None,
                    cont: false,
                });
            }
        }
    }

    /// Check each identity and SIGTERM it; the grace starts `now`.
    pub fn start(&mut self, ctl: &dyn ProcessControl, now: Instant) -> EscalationStep {
        if self.phase == EscalationPhase::NotStarted {
            self.phase = EscalationPhase::Grace(later(now, self.settings.grace));
        }
        for e in &mut self.entries {
            if e.state == TargetState::Fresh {
                send_term(ctl, e);
            }
        }
        self.next(now)
    }

    /// Add identities during the grace (a newcomer of the tree): they are checked and
    /// SIGTERMed now and share the running deadline. Ignored once SIGKILL was sent: an
    /// escalation never widens after its survivors were decided.
    #[cfg(test)]
    pub(crate) fn add(&mut self, ctl: &dyn ProcessControl, ids: &[Identity], stopped: &[Identity]) {
        if matches!(self.phase, EscalationPhase::Settle(_)) {
            return;
        }
        self.push(ids);
        for e in &mut self.entries {
            if e.state == TargetState::Fresh {
                e.cont |= stopped.contains(&e.id);
                if self.phase != EscalationPhase::NotStarted {
                    send_term(ctl, e);
                }
            }
        }
    }

    /// End the grace now (a second interrupt): the next `on_tick` goes to SIGKILL.
    pub(crate) fn cut_grace(&mut self, now: Instant) {
        if let EscalationPhase::Grace(d) = &mut self.phase {
            *d = (*d).min(now);
        }
    }

    /// The identities `sig` was delivered to so far, and each failure so far (identity,
    /// error): what an event loop reports while the escalation is still in flight.
    pub fn delivered(&self, sig: Signal) -> (Vec<Identity>, Vec<(Identity, String)>) {
        let sent = self
            .entries
            .iter()
            .filter(|e| e.signals.contains(&sig))
            .map(|e| e.id)
            .collect();
        let failed = self
            .entries
            .iter()
            .filter(|e| e.state == TargetState::Done(EscalationOutcome::SignalFailed))
            .filter_map(|e| Some((e.id, e.error.clone()?)))
            .collect();
        (sent, failed)
    }

    /// Whether SIGKILL's turn has come (the gate was asked, or nothing was left to ask).
    pub fn past_grace(&self) -> bool {
        matches!(self.phase, EscalationPhase::Settle(_))
    }

    /// The identities SIGTERMed and not yet confirmed gone.
    pub(crate) fn survivors(&self) -> Vec<Identity> {
        self.entries
            .iter()
            .filter(|e| e.state == TargetState::Termed)
            .map(|e| e.id)
            .collect()
    }

    /// Look at everything in flight; past the grace, ask `gate` and SIGKILL; past the
    /// settle time, call what is left survivors.
    pub fn on_tick(
        &mut self,
        ctl: &dyn ProcessControl,
        now: Instant,
        gate: &mut KillGate<'_>,
    ) -> EscalationStep {
        match self.phase {
            EscalationPhase::NotStarted => return self.start(ctl, now),
            EscalationPhase::Grace(deadline) => {
                for e in self
                    .entries
                    .iter_mut()
                    .filter(|e| e.state == TargetState::Termed)
                {
                    match ctl.presence(&e.id) {
                        Ok(Presence::Alive) => {}
                        Ok(Presence::Gone) => e.finish(EscalationOutcome::ExitedAfterTerm),
                        Ok(Presence::Changed) => e.finish(EscalationOutcome::IdentityChanged),
                        Err(err) => e.fail(EscalationOutcome::IdentityChanged, err),
                    }
                }
                if now >= deadline {
                    let survivors = self.survivors();
                    let wanted = if survivors.is_empty() {
                        Vec::new()
                    } else {
                        gate(&survivors)
                    };
                    for e in self
                        .entries
                        .iter_mut()
                        .filter(|e| e.state == TargetState::Termed)
                    {
                        if wanted.contains(&e.id) {
                            send_kill(ctl, e);
                        } else {
                            e.finish(EscalationOutcome::Spared);
                        }
                    }
                    self.phase = EscalationPhase::Settle(later(now, self.settings.settle));
                }
            }
            EscalationPhase::Settle(deadline) => {
                for e in self
                    .entries
                    .iter_mut()
                    .filter(|e| e.state == TargetState::Killed)
                {
                    // After SIGKILL, a pid that names another process means ours is gone.
                    if let Ok(Presence::Gone | Presence::Changed) = ctl.presence(&e.id) {
                        e.finish(EscalationOutcome::Killed);
                    }
                }
                if now >= deadline {
                    for e in self
                        .entries
                        .iter_mut()
                        .filter(|e| e.state == TargetState::Killed)
                    {
                        e.finish(EscalationOutcome::Survived);
                    }
                }
            }
        }
        self.next(now)
    }

    fn next(&self, now: Instant) -> EscalationStep {
        let waiting = |s: TargetState| self.entries.iter().any(|e| e.state == s);
        let deadline = match self.phase {
            EscalationPhase::Grace(d) if waiting(TargetState::Termed) => Some(d),
            EscalationPhase::Settle(d) if waiting(TargetState::Killed) => Some(d),
            _ => None,
        };
        match deadline {
            Some(d) => EscalationStep::Pending(d.min(later(now, self.settings.poll)).max(now)),
            None => EscalationStep::Done(
                self.entries
                    .iter()
                    .map(|e| EndedTarget {
                        identity: e.id,
                        outcome: match e.state {
                            TargetState::Done(o) => o,
                            // Unreachable by `next`'s condition; the safe reading.
                            _ => EscalationOutcome::Survived,
                        },
                        signals: e.signals.clone(),
                        error: e.error.clone(),
                    })
                    .collect(),
            ),
        }
    }
}

/// `now + d` without overflow (a deadline past what `Instant` holds is "never" in practice).
fn later(now: Instant, d: Duration) -> Instant {
    now.checked_add(d)
        .or_else(|| now.checked_add(Duration::from_secs(365 * 86_400)))
        .unwrap_or(now)
}

/// SIGTERM (and SIGCONT if asked). The signal path re-reads the identity just before the
/// signal (`ProcessControl::signal`): that one read is the check, none is made before it.
fn send_term(ctl: &dyn ProcessControl, e: &mut EscalationTarget) {
    match ctl.signal(&e.id, Signal::Term) {
        Ok(Delivery::Sent) => {
            e.signals.push(Signal::Term);
            e.state = TargetState::Termed;
            if e.cont && matches!(ctl.signal(&e.id, Signal::Cont), Ok(Delivery::Sent)) {
                e.signals.push(Signal::Cont);
            }
        }
        Ok(Delivery::Gone) => e.finish(EscalationOutcome::AlreadyGone),
        Ok(Delivery::IdentityChanged) => e.finish(EscalationOutcome::IdentityChanged),
        Err(err) => failed(ctl, e, err),
    }
}

/// SIGKILL, identity re-read by the signal path (the grace is the widest reuse window).
fn send_kill(ctl: &dyn ProcessControl, e: &mut EscalationTarget) {
    match ctl.signal(&e.id, Signal::Kill) {
        Ok(Delivery::Sent) => {
            e.signals.push(Signal::Kill);
            e.state = TargetState::Killed;
        }
        // It went at the very end of the grace period: SIGTERM did it.
        Ok(Delivery::Gone) => e.finish(EscalationOutcome::ExitedAfterTerm),
        Ok(Delivery::IdentityChanged) => e.finish(EscalationOutcome::IdentityChanged),
        Err(err) => failed(ctl, e, err),
    }
}

/// A signal that errored: the kernel refused it (`signal-failed`), or the identity could not
/// be read to check it (`identity-changed`: absence of evidence never reads as "same
/// process"). Only this rare path reads the identity a second time, to tell the two apart.
fn failed(ctl: &dyn ProcessControl, e: &mut EscalationTarget, err: crate::platform::PlatformError) {
    match ctl.presence(&e.id) {
        Ok(_) => e.fail(EscalationOutcome::SignalFailed, err),
        Err(_) => e.fail(EscalationOutcome::IdentityChanged, err),
    }
}

/// Drive an escalation to the end on `clock`, blocking.
pub(crate) fn run(
    ctl: &dyn ProcessControl,
    targets: &[Identity],
    settings: EscalationTiming,
    clock: &dyn Clock,
    gate: &mut KillGate<'_>,
) -> Vec<EndedTarget> {
    run_escalation(ctl, Escalation::new(targets, settings), clock, gate)
}

/// Drive a prepared escalation (e.g. with `continue_after_term`) to the end, blocking.
pub(crate) fn run_escalation(
    ctl: &dyn ProcessControl,
    mut esc: Escalation,
    clock: &dyn Clock,
    gate: &mut KillGate<'_>,
) -> Vec<EndedTarget> {
    let mut step = esc.start(ctl, clock.now());
    loop {
        match step {
            EscalationStep::Done(v) => return v,
            EscalationStep::Pending(at) => {
                let now = clock.now();
                if at > now {
                    clock.sleep(at - now);
                }
                step = esc.on_tick(ctl, clock.now(), gate);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod tree_tests;
