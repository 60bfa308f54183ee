//! Ending a tree on `actions::escalate`, driven step by step from the event loop: SIGTERM to
//! every live member (and SIGCONT to the stopped ones, which act on SIGTERM only once
//! continued), the grace, then SIGKILL to the grace survivors: for a limit ending only if
//! they still hold at least the limit (caproom's "SIGKILL grace survivors from the breach
//! snapshot, if still over the limit"), for a forwarded signal or leftovers always. A
//! process born during the grace is not signalled by that escalation; if it outlives the
//! command it is a leftover and gets an ending (and a grace) of its own. Then the exit code.

use std::time::Instant;

use super::{
    CommandStatus, ENDING_TICK, EndReason, KILL_WAIT, RunEvent, RunSummary, Watchdog,
    WatchdogPhase, now_at,
};
use crate::actions::escalate::{
    EndedTarget, Escalation, EscalationOutcome, EscalationStep, EscalationTiming,
};
use crate::actions::park::signal_each;
use crate::core::snapshot::{Identity, ProcState, ProcessRecord};
use crate::exit::ExitStatus;
use crate::platform::supervise::ChildEvent;
use crate::platform::{Delivery, Signal};

impl Watchdog<'_, '_> {
    /// SIGTERM the whole tree as it is now (and SIGCONT whatever is stopped).
    pub(super) fn begin_ending(&mut self, why: EndReason) {
        // A limit or signal ending decides the exit code; leftovers after it do not.
        if !(why == EndReason::Leftovers && self.summary.ended_by.is_some()) {
            self.summary.ended_by = Some(why);
        }
        self.force_scan = true;
        let now = Instant::now();
        self.tick(now);
        let targets: Vec<Identity> = self
            .alive_members()
            .into_iter()
            .filter(|id| !self.given_up.contains(id))
            .collect();
        let stopped: Vec<Identity> = self
            .last
            .iter()
            .flat_map(|s| s.members.iter())
            .filter(|m| m.state == ProcState::Stopped)
            .filter_map(ProcessRecord::identity)
            .chain(self.parked.iter().copied())
            .collect();
        let settings = EscalationTiming {
            grace: self.cfg.grace,
            settle: KILL_WAIT,
            poll: self.cfg.interval.min(ENDING_TICK),
        };
        let mut esc = Escalation::new(&targets, settings).continue_after_term(&stopped);
        let step = esc.start(self.control, now);
        let (sent, failed) = esc.delivered(Signal::Term);
        for id in &sent {
            self.termed.insert(id.pid, *id);
        }
        self.summary.terminated += sent.len();
        self.emit_signal(Signal::Term, why, &sent, targets.len(), &failed);
        self.phase = WatchdogPhase::Ending {
            esc: Box::new(esc),
            reason: why,
            next: now,
        };
        self.after_step(step, why);
    }

    /// A second signal while ending: cut the grace short.
    pub(super) fn kill_now(&mut self) {
        let now = Instant::now();
        if let WatchdogPhase::Ending { esc, next, .. } = &mut self.phase {
            esc.cut_grace(now);
            *next = now;
        }
    }

    /// Look at the escalation in flight; past the grace, the gate decides SIGKILL.
    pub(super) fn ending_tick(&mut self, now: Instant) {
        let WatchdogPhase::Ending { esc, reason, .. } =
            std::mem::replace(&mut self.phase, WatchdogPhase::Done)
        else {
            return;
        };
        let mut esc = *esc;
        let control = self.control;
        let was_past = esc.past_grace();
        let step = esc.on_tick(control, now, &mut |survivors| {
            self.kill_gate(reason, survivors)
        });
        if !was_past && esc.past_grace() {
            let (sent, failed) = esc.delivered(Signal::Kill);
            for id in &sent {
                self.killed.insert(id.pid, *id);
            }
            if !sent.is_empty() {
                self.summary.killed += sent.len();
                self.kill_hit_live = true;
                self.emit_signal(Signal::Kill, reason, &sent, sent.len(), &failed);
            }
        }
        self.phase = WatchdogPhase::Ending {
            esc: Box::new(esc),
            reason,
            next: now,
        };
        self.after_step(step, reason);
    }

    /// Who of the grace survivors gets SIGKILL. A limit ending: all of them if together they
    /// still hold at least the effective limit, as sampled now; else none (spared).
    fn kill_gate(&mut self, reason: EndReason, survivors: &[Identity]) -> Vec<Identity> {
        if reason != EndReason::Limit {
            return survivors.to_vec();
        }
        self.force_scan = true;
        self.tick(Instant::now());
        let Some(s) = self.last.as_ref() else {
            return survivors.to_vec(); // unreadable: the limit ending stands
        };
        let held: u64 = s
            .members
            .iter()
            .filter(|m| m.identity().is_some_and(|id| survivors.contains(&id)))
            .filter_map(|m| m.footprint_bytes)
            .sum();
        if held >= s.effective {
            survivors.to_vec()
        } else {
            Vec::new()
        }
    }

    /// The command's exit, reaped. A command spared by the limit's gate that then dies of
    /// the SIGTERM that ending sent was ended by the limit after all.
    pub(super) fn on_command_exit(&mut self, status: ChildEvent) {
        if self.limit_term_pending
            && status == ChildEvent::Signaled(Signal::Term.number())
            && self.summary.ended_by.is_none()
        {
            self.summary.ended_by = Some(EndReason::Limit);
        }
        self.limit_term_pending = false;
        self.cmd_status = Some(status);
    }

    fn after_step(&mut self, step: EscalationStep, reason: EndReason) {
        match step {
            EscalationStep::Pending(at) => {
                if let WatchdogPhase::Ending { next, .. } = &mut self.phase {
                    *next = at;
                }
            }
            EscalationStep::Done(ended) => self.ending_done(reason, &ended),
        }
    }

    /// The escalation is over: record it, then watch on, end what is left, or finish.
    fn ending_done(&mut self, reason: EndReason, ended: &[EndedTarget]) {
        let mut spared = Vec::new();
        for e in ended {
            // An identity that could not be read is not known to be gone: a survivor.
            let unreadable = e.outcome == EscalationOutcome::IdentityChanged && e.error.is_some();
            match e.outcome {
                _ if unreadable => {
                    self.given_up.insert(e.identity);
                    if !self.summary.survivors.contains(&e.identity.pid) {
                        self.summary.survivors.push(e.identity.pid);
                    }
                }
                EscalationOutcome::Survived | EscalationOutcome::SignalFailed => {
                    self.given_up.insert(e.identity);
                    if !self.summary.survivors.contains(&e.identity.pid) {
                        self.summary.survivors.push(e.identity.pid);
                    }
                }
                EscalationOutcome::Spared => spared.push(e.identity.pid),
                _ => {
                    self.concluded.insert(e.identity);
                }
            }
        }
        if !spared.is_empty() {
            self.summary.spared.extend(&spared);
            (self.emit)(&RunEvent::Spared {
                at: now_at(),
                reason,
                pids: spared,
            });
        }
        self.phase = WatchdogPhase::Watching;
        if !self.given_up.is_empty() {
            // Something could not be ended: say so and stop (it cannot be helped by waiting).
            self.phase = WatchdogPhase::Done;
            return;
        }
        // The command itself went on our SIGTERM: the limit ended the run, even while its
        // exit is not reaped yet and what is left of the tree is spared.
        let command_ended = ended
            .iter()
            .any(|e| e.identity.pid == self.cmd_pid && e.outcome.gone());
        if self.cmd_status.is_none() && reason == EndReason::Limit && !command_ended {
            // Spared and still running: the tree was not ended, the command decides the code,
            // unless the SIGTERM it was sent is what it dies of (`on_command_exit`): a
            // command slow to die frees memory on its way out, so the gate can see it
            // under the limit while it is already going.
            self.summary.ended_by = None;
            self.limit_term_pending = self.termed.contains_key(&self.cmd_pid);
        }
        if self.cmd_status.is_some() {
            self.tick(Instant::now());
            let left: Vec<Identity> = self.alive_members();
            if left.is_empty() {
                self.phase = WatchdogPhase::Done;
            } else {
                self.begin_ending(EndReason::Leftovers);
            }
        }
    }

    fn emit_signal(
        &mut self,
        sig: Signal,
        reason: EndReason,
        sent: &[Identity],
        asked: usize,
        failed: &[(Identity, String)],
    ) {
        (self.emit)(&RunEvent::Signal {
            at: now_at(),
            signal: sig,
            reason,
            pids: sent.iter().map(|id| id.pid).collect(),
            gone: asked.saturating_sub(sent.len() + failed.len()),
            failed: failed
                .iter()
                .map(|(id, e)| format!("{} to pid `{}`: {e}", sig.name(), id.pid))
                .collect(),
        });
    }

    /// Every process of the tree that is still alive: the latest sample's live members and
    /// anything signalled before, each re-read (a sample may be stale if it failed).
    pub(super) fn alive_members(&self) -> Vec<Identity> {
        let mut out: Vec<Identity> = self
            .last
            .iter()
            .flat_map(|s| s.members.iter())
            .filter(|m| !m.is_zombie())
            .filter_map(ProcessRecord::identity)
            .chain(self.termed.values().copied())
            .chain(self.killed.values().copied())
            .filter(|id| !self.given_up.contains(id) && !self.concluded.contains(id))
            .collect();
        out.sort_by_key(|id| (id.pid, id.start_time));
        out.dedup();
        out.retain(|id| self.control.alive(id).unwrap_or(true));
        out
    }

    /// Signal each target; the pids it reached, how many were gone, what failed.
    pub(super) fn deliver(
        &self,
        targets: &[Identity],
        sig: Signal,
    ) -> (Vec<i32>, usize, Vec<String>) {
        let mut pids = Vec::new();
        let mut gone = 0;
        let mut failed = Vec::new();
        for (id, r) in signal_each(self.control, targets, sig) {
            match r {
                Ok(Delivery::Sent) => pids.push(id.pid),
                Ok(Delivery::Gone | Delivery::IdentityChanged) => gone += 1,
                Err(e) => failed.push(format!("{} to pid `{}`: {e}", sig.name(), id.pid)),
            }
        }
        (pids, gone, failed)
    }

    pub(super) fn finish(mut self) -> RunSummary {
        // Parked processes are woken or ended, never left stopped: by now every member is
        // gone, unless it could not be signalled; wake those that are still parked.
        let still: Vec<Identity> = self
            .parked
            .iter()
            .filter(|id| self.control.alive(id).unwrap_or(false))
            .copied()
            .collect();
        signal_each(self.control, &still, Signal::Cont);

        let status = match self.cmd_status {
            Some(ChildEvent::Exited(c)) => Some(CommandStatus {
                exit_code: Some(c),
                signal: None,
            }),
            Some(ChildEvent::Signaled(s)) => Some(CommandStatus {
                exit_code: None,
                signal: Some(s),
            }),
            _ => None,
        };
        self.summary.command_status = status;
        let own = status.map_or(ExitStatus::RunFailed, |s| match (s.exit_code, s.signal) {
            (Some(c), _) => ExitStatus::Child(c.clamp(0, 255) as u8),
            (_, Some(sig)) => ExitStatus::Signalled(sig),
            _ => ExitStatus::RunFailed,
        });
        self.summary.exit_code = if !self.summary.survivors.is_empty() {
            ExitStatus::RunFailed
        } else {
            match self.summary.ended_by {
                Some(EndReason::Leftovers) | None => own,
                Some(_) if self.kill_hit_live => ExitStatus::Signalled(Signal::Kill.number()),
                Some(_) => ExitStatus::Signalled(Signal::Term.number()),
            }
        };
        self.summary.duration_ms = self.started.elapsed().as_millis() as u64;
        self.summary.at = super::now_at();
        let summary = self.summary.clone();
        (self.emit)(&RunEvent::Summary(summary.clone()));
        summary
    }
}
