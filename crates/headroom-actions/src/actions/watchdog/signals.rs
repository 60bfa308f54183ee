//! Signals around the tree: headroom's own SIGINT/SIGTERM/SIGHUP, passed on to the
//! command's process group (and the tree ended if that does not end it), and job control
//! when the terminal stops the command's group (Ctrl-Z).

use std::time::Instant;

use super::{EndReason, JobAction, RunEvent, Watchdog, WatchdogPhase, now_at};
use crate::actions::park::signal_each;
use crate::core::snapshot::{Identity, ProcessRecord};
use crate::platform::Signal;
use crate::platform::supervise::Supervisor;

impl Watchdog<'_, '_> {
    /// Ctrl-Z (or a background read/write) stopped the command's group: stop headroom too,
    /// so the shell sees the job stopped; when continued, continue the group.
    pub(super) fn on_command_stopped(&mut self, sup: &mut Supervisor, sig: i32) {
        if !crate::platform::supervise::is_terminal_stop(sig)
            || matches!(
                self.phase,
                WatchdogPhase::Ending { .. } | WatchdogPhase::Done
            )
        {
            return; // SIGSTOP from `headroom park` or the like: the user's choice.
        }
        (self.emit)(&RunEvent::JobControl {
            at: now_at(),
            action: JobAction::Stopped,
            signal: sig,
        });
        sup.suspend_with(self.cmd_pid);
        // The whole group, as a shell's `fg` does, whatever state each member shows now: the
        // terminal's stop signal may not have reached every member yet, and a SIGCONT sent
        // after it discards it even while still pending. Processes headroom parked stay so.
        let group: Vec<Identity> = self
            .sample()
            .map(|s| {
                s.members
                    .iter()
                    .filter(|m| m.pgid == Some(self.cmd_pid) && !m.is_zombie())
                    .filter_map(ProcessRecord::identity)
                    .filter(|id| !self.parked.contains(id))
                    .collect()
            })
            .unwrap_or_default();
        signal_each(self.control, &group, Signal::Cont);
        (self.emit)(&RunEvent::JobControl {
            at: now_at(),
            action: JobAction::Continued,
            signal: Signal::Cont.number(),
        });
    }

    pub(super) fn on_signal(&mut self, sig: Signal) {
        match self.phase {
            WatchdogPhase::Watching | WatchdogPhase::Relief { .. } if !self.cmd_handled => {
                self.summary.forwarded.push(sig);
                // The group as it is now, not as last sampled: a child forked since then
                // must get the signal too.
                self.force_scan = true;
                self.tick(Instant::now());
                let targets: Vec<Identity> = self.group_members();
                let pids = self.deliver(&targets, sig).0;
                (self.emit)(&RunEvent::Forward {
                    at: now_at(),
                    signal: sig,
                    pids,
                });
                self.phase = WatchdogPhase::Forwarded {
                    deadline: super::after(Instant::now(), self.cfg.grace),
                };
            }
            // A second signal: the user insists.
            WatchdogPhase::Forwarded { .. } => {
                self.summary.forwarded.push(sig);
                self.begin_ending(EndReason::Signal);
            }
            WatchdogPhase::Ending { ref esc, .. } if !esc.past_grace() => {
                self.summary.forwarded.push(sig);
                self.kill_now();
            }
            _ => {}
        }
    }

    /// The command's group as last seen (the command first), or the command alone.
    fn group_members(&self) -> Vec<Identity> {
        let mut v: Vec<Identity> = self
            .last
            .iter()
            .flat_map(|s| s.members.iter())
            .filter(|m| m.pgid == Some(self.cmd_pid) && !m.is_zombie())
            .filter_map(ProcessRecord::identity)
            .collect();
        v.sort_by_key(|id| id.pid != self.cmd_pid);
        if v.is_empty() {
            if let Ok(Some(id)) = self
                .source
                .process(self.cmd_pid)
                .map(|p| p.and_then(|p| p.identity()))
            {
                v.push(id);
            }
        }
        v
    }
}
