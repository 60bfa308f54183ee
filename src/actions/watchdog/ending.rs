//! Ending a tree: SIGTERM to every live member (and SIGCONT to the stopped ones, which act
//! on SIGTERM only once continued), the grace, SIGKILL to what is left, and the exit code.

use std::time::Instant;

use super::{CommandStatus, EndReason, Event, KILL_WAIT, Phase, Summary, Watch};
use crate::actions::park::signal_each;
use crate::core::snapshot::{Identity, ProcState, ProcessRecord};
use crate::exit;
use crate::platform::supervise::ChildEvent;
use crate::platform::{Delivery, Signal};

impl Watch<'_, '_> {
    /// SIGTERM the whole tree (and SIGCONT whatever is stopped, so it can act on it).
    pub(super) fn begin_ending(&mut self, why: EndReason) {
        self.summary.ended_by = Some(why);
        self.phase = Phase::Ending {
            kill_at: super::after(Instant::now(), self.cfg.grace),
            give_up_at: None,
        };
        self.force_scan = true;
        self.tick(Instant::now());
        let left = self.alive_members();
        self.signal_new(&left, Signal::Term);
    }

    pub(super) fn kill_now(&mut self) {
        if let Phase::Ending { give_up_at, .. } = &mut self.phase {
            *give_up_at = Some(super::after(Instant::now(), KILL_WAIT));
        }
        self.force_scan = true;
        self.tick(Instant::now());
        let left = self.alive_members();
        self.signal_new(&left, Signal::Kill);
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
            .collect();
        out.sort_by_key(|id| (id.pid, id.start_time));
        out.dedup();
        out.retain(|id| self.control.alive(id).unwrap_or(true));
        out
    }

    /// Send `sig` to those of `targets` not yet sent it; SIGCONT after SIGTERM to any that
    /// are stopped (a stopped process acts on SIGTERM only once continued).
    pub(super) fn signal_new(&mut self, targets: &[Identity], sig: Signal) {
        let done = if sig == Signal::Kill {
            &self.killed
        } else {
            &self.termed
        };
        let fresh: Vec<Identity> = targets
            .iter()
            .filter(|id| done.get(&id.pid) != Some(id))
            .copied()
            .collect();
        if fresh.is_empty() {
            return;
        }
        let (pids, gone, failed) = self.deliver(&fresh, sig);
        if sig == Signal::Term {
            let stopped: Vec<Identity> = self
                .last
                .iter()
                .flat_map(|s| s.members.iter())
                .filter(|m| m.state == ProcState::Stopped)
                .filter_map(ProcessRecord::identity)
                .chain(self.parked.iter().copied())
                .filter(|id| fresh.contains(id))
                .collect();
            signal_each(self.control, &stopped, Signal::Cont);
        }
        for id in &fresh {
            if sig == Signal::Kill {
                self.killed.insert(id.pid, *id);
            } else {
                self.termed.insert(id.pid, *id);
            }
        }
        if sig == Signal::Kill {
            self.summary.killed += pids.len();
            self.kill_hit_live |= !pids.is_empty();
        } else {
            self.summary.terminated += pids.len();
        }
        let reason = match (&self.phase, self.summary.ended_by) {
            (Phase::Ending { .. }, Some(why)) => why,
            _ => EndReason::Limit,
        };
        (self.emit)(&Event::Signal {
            signal: sig.name(),
            reason,
            pids,
            gone,
            failed,
        });
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

    pub(super) fn finish(mut self) -> Summary {
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
        let own = status.map_or(exit::RUN_FAILED, |s| match (s.exit_code, s.signal) {
            (Some(c), _) => c.clamp(0, 255) as u8,
            (_, Some(sig)) => (128 + sig).clamp(0, 255) as u8,
            _ => exit::RUN_FAILED,
        });
        self.summary.exit_code = if !self.summary.survivors.is_empty() {
            exit::RUN_FAILED
        } else {
            match self.summary.ended_by {
                Some(EndReason::Limit | EndReason::Signal) if self.kill_hit_live => 137,
                Some(EndReason::Limit | EndReason::Signal) => 143,
                _ => own,
            }
        };
        self.summary.duration_ms = self.started.elapsed().as_millis() as u64;
        let summary = self.summary.clone();
        (self.emit)(&Event::Summary(summary.clone()));
        summary
    }
}
