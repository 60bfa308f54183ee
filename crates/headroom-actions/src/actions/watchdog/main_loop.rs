//! The loop of a watched run: wait for the next deadline, a signal or the command's exit,
//! then one step — sample the tree, compare with the limit, park or end it.

use std::time::{Duration, Instant};

use super::{
    ENDING_TICK, EndReason, RELIEF_WAIT, RunEvent, Watchdog, WatchdogPhase, after, hold, now_at,
};
use crate::core::idle::{Leaders, PARK_MIN_BYTES, idle_subtrees};
use crate::core::snapshot::ProcessRecord;
use crate::platform::Signal;
use crate::platform::supervise::{ChildEvent, Supervisor, Wake};

impl Watchdog<'_, '_> {
    pub(super) fn main_loop(&mut self, sup: &mut Supervisor) {
        loop {
            let now = Instant::now();
            let wait = self.next_deadline().saturating_duration_since(now);
            let mut fired = false;
            for wake in sup.wait(wait) {
                if let Wake::Signal(s) = wake {
                    self.on_signal(s);
                }
                if wake == Wake::Pressure {
                    // Sample now, and more often while it lasts.
                    fired = true;
                    self.next_tick = Instant::now();
                }
                if wake == Wake::ParentGone {
                    self.end_for(EndReason::ParentExited);
                }
            }
            self.pressure_until = hold(Instant::now(), self.pressure_until, fired, &|| {
                sup.pressure_high()
            });
            self.reap(sup);
            self.step();
            if matches!(self.phase, WatchdogPhase::Done) {
                return;
            }
        }
    }

    pub(super) fn next_deadline(&self) -> Instant {
        let phase = match &self.phase {
            WatchdogPhase::Watching | WatchdogPhase::Done => None,
            WatchdogPhase::Relief { until } => Some(*until),
            WatchdogPhase::Forwarded { deadline } => Some(*deadline),
            WatchdogPhase::Ending { next, .. } => Some(*next),
        };
        let next = phase.map_or(self.next_tick, |p| p.min(self.next_tick));
        self.deadline.map_or(next, |d| d.min(next))
    }

    /// End the tree for `why` (the timeout, the parent's exit), whatever it was doing,
    /// unless an ending is already under way (it goes on: its SIGKILL is as near) or the
    /// run is over. Once only: the deadline is spent either way.
    pub(super) fn end_for(&mut self, why: EndReason) {
        self.deadline = None;
        if matches!(
            self.phase,
            WatchdogPhase::Ending { .. } | WatchdogPhase::Done
        ) {
            return;
        }
        self.begin_ending(why);
    }

    pub(super) fn tick_every(&self) -> Duration {
        match self.phase {
            WatchdogPhase::Ending { .. } => self.cfg.interval.min(ENDING_TICK),
            _ if self.pressure_until.is_some_and(|u| Instant::now() < u) => {
                (self.cfg.interval / 4).max(Duration::from_millis(10))
            }
            _ => self.cfg.interval,
        }
    }

    pub(super) fn reap(&mut self, sup: &mut Supervisor) {
        for (pid, ev) in sup.reap() {
            if pid != self.cmd_pid {
                // A notification helper (reaped here, its pid may be reused: forgotten), or
                // an orphan of the tree, reaped here as its subreaper.
                self.notifier.forget(pid);
                continue;
            }
            match ev {
                ChildEvent::Stopped(sig) => self.on_command_stopped(sup, sig),
                done => self.on_command_exit(done),
            }
        }
    }

    pub(super) fn step(&mut self) {
        let now = Instant::now();
        // A command that has exited by itself decides its own code, timeout or not.
        if self.deadline.is_some_and(|d| now >= d) && self.cmd_status.is_none() {
            self.end_for(EndReason::Timeout);
        }
        if self.cmd_status.is_some() && !self.cmd_handled {
            self.cmd_handled = true;
            // Once reaped, the command's group id may be reused by strangers.
            self.spec.pgid = None;
            if !matches!(self.phase, WatchdogPhase::Ending { .. }) {
                self.tick(now);
                let left = self.alive_members();
                if left.is_empty() {
                    self.phase = WatchdogPhase::Done;
                } else {
                    self.begin_ending(EndReason::Leftovers);
                }
                return;
            }
        }
        let deadline_passed = match self.phase {
            WatchdogPhase::Relief { until } => now >= until,
            WatchdogPhase::Forwarded { deadline } => now >= deadline,
            _ => false,
        };
        let due = now >= self.next_tick || deadline_passed;
        let ending = matches!(self.phase, WatchdogPhase::Ending { .. });
        if due || ending {
            self.tick(now);
        }
        let over = due
            && self
                .last
                .as_ref()
                .is_some_and(|s| s.footprint >= s.effective);
        match self.phase {
            WatchdogPhase::Watching if over => self.on_breach(),
            // Still growing while parked subtrees were meant to relieve it: the growth is
            // elsewhere, and waiting out the second would only let it grow.
            WatchdogPhase::Relief { .. }
                if over
                    && self.last.as_ref().is_some_and(|s| {
                        s.footprint > self.breach_footprint.saturating_add(self.cfg.limit / 100)
                    }) =>
            {
                self.begin_ending(EndReason::Limit);
            }
            // A forwarded signal does not suspend the limit.
            WatchdogPhase::Forwarded { .. } if over => self.begin_ending(EndReason::Limit),
            WatchdogPhase::Relief { until } if now >= until => {
                let (footprint, effective) = self
                    .last
                    .as_ref()
                    .map_or((0, self.cfg.limit), |s| (s.footprint, s.effective));
                let relieved = footprint < effective;
                (self.emit)(&RunEvent::ParkResult {
                    at: now_at(),
                    relieved,
                    footprint_bytes: footprint,
                    effective_limit_bytes: effective,
                });
                if relieved {
                    self.phase = WatchdogPhase::Watching;
                } else {
                    self.begin_ending(EndReason::Limit);
                }
            }
            WatchdogPhase::Forwarded { deadline } if now >= deadline => {
                self.begin_ending(EndReason::Signal);
            }
            WatchdogPhase::Ending { .. } => self.ending_tick(now),
            _ => {}
        }
    }

    pub(super) fn on_breach(&mut self) {
        let Some(s) = self.last.as_ref() else {
            return;
        };
        self.summary.breaches += 1;
        self.breach_footprint = s.footprint;
        (self.emit)(&RunEvent::Breach {
            at: crate::core::time::format_ms(s.at_ms),
            footprint_bytes: s.footprint,
            effective_limit_bytes: s.effective,
            free_pct: s.free_pct.map(|f| (f * 10.0).round() / 10.0),
            processes: s.members.len(),
        });
        let refs: Vec<&ProcessRecord> = s.members.iter().collect();
        let leaders = Leaders {
            pgid: self.cmd_pid,
            sid: self.sid,
        };
        let idle = idle_subtrees(&refs, &leaders, &self.cpu, PARK_MIN_BYTES);
        let mut any = false;
        for sub in idle {
            let (pids, _, _) = self.deliver(&sub.targets, Signal::Stop);
            if pids.is_empty() {
                continue;
            }
            any = true;
            self.summary.parked += pids.len();
            self.parked.extend(sub.targets.iter().copied());
            (self.emit)(&RunEvent::Park {
                at: now_at(),
                root: sub.root,
                name: sub.name.clone(),
                pids,
                footprint_bytes: sub.footprint_bytes,
                cpu_pct: (sub.cpu_fraction * 1000.0).round() / 10.0,
            });
        }
        if any {
            self.phase = WatchdogPhase::Relief {
                until: after(Instant::now(), RELIEF_WAIT),
            };
        } else {
            self.begin_ending(EndReason::Limit);
        }
    }
}
