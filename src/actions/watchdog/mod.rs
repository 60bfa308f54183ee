//! `run --limit`'s watchdog (Unix): start the command, then every interval read the tree
//! (`ProcessSource::tree_sample`: only the tree, no fork, no exec), sum its footprint and
//! compare it with the pressure-aware limit. On a breach, park idle subtrees and look again
//! a second later; still over, SIGTERM the whole tree, wait the grace, SIGKILL the grace
//! survivors if they still hold the limit (`ending.rs`, on `actions::escalate`). Every
//! signal goes through `ProcessControl`, which re-checks identity first.
//!
//! The loop sleeps in `Supervisor::wait`, so a signal to headroom or the command's exit
//! wakes it at once. It never returns while a process of the tree it knows is alive
//! (unless one cannot be signalled, which it reports), and never leaves one stopped.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::time::{Duration, Instant};

mod ending;
mod notify;
pub mod report;
mod sample;
mod signals;

pub use report::{CommandStatus, EndReason, Event, JobAction, Summary, now_at};

use crate::actions::escalate::Escalation;
use crate::core::idle::{CpuSamples, Leaders, PARK_MIN_BYTES, idle_subtrees};
use crate::core::memory::{TreeSpec, TreeTracker};
use crate::core::snapshot::{Identity, ProcessRecord};
use crate::exit::ExitStatus;
use crate::platform::supervise::{ChildEvent, SpawnError, Supervisor, Wake};
use crate::platform::{ProcessControl, ProcessSource, Signal};

/// After parking, look again this much later.
const RELIEF_WAIT: Duration = Duration::from_secs(1);
/// Processes in the command's group but outside headroom's descendants are looked for this
/// often without a subreaper (macOS, where the table is read whole anyway) ...
const GROUP_SCAN_EVERY: Duration = Duration::from_secs(2);
/// ... and this often with one (Linux). There every process the tree starts stays below
/// headroom, so only an outsider that moved itself into the group can be missed, and each
/// scan is a pass over all of `/proc` (40 ms on a 4,000-process table).
const GROUP_SCAN_EVERY_SUBREAPER: Duration = Duration::from_secs(30);
/// While ending the tree, look this often at most (to notice promptly that it is gone).
const ENDING_TICK: Duration = Duration::from_millis(50);
/// After SIGKILL, how long to wait for the tree to disappear before reporting survivors.
const KILL_WAIT: Duration = Duration::from_secs(5);
/// After the memory-pressure source fired, sample at a quarter of the interval for this
/// long (the PSI trigger fires at most once per 2 s window while the stall lasts), and
/// again as long as the level still reads above normal when it runs out (`hold`).
const PRESSURE_HOLD: Duration = Duration::from_secs(5);

/// The end of the shortened interval: a new event starts (or renews) it, a level still high
/// when it ran out extends it, and it ends (the interval relaxes) once the level is normal
/// or unknown. `high` is asked only when the hold ran out.
fn hold(
    now: Instant,
    until: Option<Instant>,
    fired: bool,
    high: &dyn Fn() -> bool,
) -> Option<Instant> {
    if fired {
        return Some(now + PRESSURE_HOLD);
    }
    match until {
        Some(u) if now < u => Some(u),
        Some(_) if high() => Some(now + PRESSURE_HOLD),
        _ => None,
    }
}

/// `now + d`, saturating at a year from now: a deadline never overflows (an unbounded
/// `--interval` once aborted headroom, leaving the command running unsupervised).
pub(crate) fn after(now: Instant, d: Duration) -> Instant {
    const FAR: Duration = Duration::from_secs(365 * 86_400);
    now.checked_add(d.min(FAR)).unwrap_or(now)
}

#[derive(Debug, Clone)]
pub struct Config {
    pub command: Vec<OsString>,
    pub limit: u64,
    pub interval: Duration,
    pub grace: Duration,
    /// Warn at this percentage of the limit (`core::memory_warn`; 100 or more: never).
    pub warn_pct: f64,
    /// Post a desktop notification at the warning (`[notifications] enabled`).
    pub notify: bool,
    /// End the tree (SIGTERM, grace, SIGKILL) once this long has passed since the start.
    pub timeout: Option<Duration>,
}

enum Phase {
    Watching,
    /// Idle subtrees were parked; look again at `until`.
    Relief {
        until: Instant,
    },
    /// headroom was signalled and passed it on; end the tree at `deadline` if still there.
    Forwarded {
        deadline: Instant,
    },
    /// SIGTERM sent to the identities `esc` holds; `next` is when it wants to be looked at.
    /// Only those are ever signalled by it: a process born during the grace waits for the
    /// next ending (as a leftover), with a grace of its own.
    Ending {
        esc: Box<Escalation>,
        reason: EndReason,
        next: Instant,
    },
    Done,
}

struct Sample {
    /// When the tree was read (ms since the epoch): a breach happened then.
    at_ms: i64,
    members: Vec<ProcessRecord>,
    footprint: u64,
    effective: u64,
    free_pct: Option<f64>,
}

/// Start `cfg.command` under `sup` and watch it until its tree is gone. `emit` receives
/// every event, the summary last.
pub fn run(
    source: &dyn ProcessSource,
    control: &dyn ProcessControl,
    sup: &mut Supervisor,
    cfg: &Config,
    emit: &mut dyn FnMut(&Event),
) -> Result<Summary, SpawnError> {
    let started = Instant::now();
    let cmd_pid = sup.spawn(&cfg.command)?;
    let self_pid = std::process::id() as i32;
    emit(&Event::Start {
        at: now_at(),
        pid: self_pid,
        command_pid: cmd_pid,
        command: cfg
            .command
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        limit_bytes: cfg.limit,
        interval_ms: cfg.interval.as_millis() as u64,
        grace_ms: cfg.grace.as_millis() as u64,
        subreaper: sup.is_subreaper(),
        terminal: sup.handed_terminal(),
    });
    let mut w = Watchdog::new(
        source,
        control,
        cfg,
        Start {
            at: started,
            self_pid,
            cmd_pid,
            subreaper: sup.is_subreaper(),
        },
        emit,
    );
    w.main_loop(sup);
    // The terminal goes back to headroom's group before the last line is written.
    sup.take_terminal();
    Ok(w.finish())
}

struct Watchdog<'a, 'e> {
    source: &'a dyn ProcessSource,
    control: &'a dyn ProcessControl,
    cfg: &'a Config,
    started: Instant,
    self_pid: i32,
    cmd_pid: i32,
    cmd_status: Option<ChildEvent>,
    /// Whether the command's exit has been acted on.
    cmd_handled: bool,
    spec: TreeSpec,
    sid: Option<i32>,
    tracker: TreeTracker,
    cpu: CpuSamples,
    phase: Phase,
    next_tick: Instant,
    last_group_scan: Option<Instant>,
    /// Scan the whole group at the next sample, whenever the last scan was.
    force_scan: bool,
    group_scan_every: Duration,
    last: Option<Sample>,
    /// Processes headroom parked (and must wake or end).
    parked: HashSet<Identity>,
    /// Processes sent SIGTERM / SIGKILL, by pid.
    termed: HashMap<i32, Identity>,
    killed: HashMap<i32, Identity>,
    /// Processes given up on (alive after SIGKILL, or a signal refused): never escalated
    /// again, reported as survivors.
    given_up: HashSet<Identity>,
    /// Processes an escalation concluded about (gone, or the pid names another process, or
    /// unreadable): never targeted again, so an ending cannot restart itself on them.
    concluded: HashSet<Identity>,
    /// Whether a SIGKILL reached a process that was still alive.
    kill_hit_live: bool,
    /// The limit's gate spared the command after its SIGTERM (`on_command_exit`).
    limit_term_pending: bool,
    /// The tree's footprint at the last breach.
    breach_footprint: u64,
    summary: Summary,
    warned: bool,
    /// Memory pressure was signalled: sample sooner until then.
    pressure_until: Option<Instant>,
    /// `--timeout`: when the tree is ended; None once it was (or without one).
    deadline: Option<Instant>,
    warn_line: crate::core::memory_warn::WarnLine,
    /// The warning's notification helpers: headroom's children, but never the tree's
    /// (`without_helpers`).
    notifier: crate::actions::notify::Notifier,
    emit: &'e mut dyn FnMut(&Event),
}

/// Where a run starts from: when, headroom's pid, the command's, whether headroom is a
/// subreaper.
#[derive(Debug, Clone, Copy)]
struct Start {
    at: Instant,
    self_pid: i32,
    cmd_pid: i32,
    subreaper: bool,
}

impl<'a, 'e> Watchdog<'a, 'e> {
    fn new(
        source: &'a dyn ProcessSource,
        control: &'a dyn ProcessControl,
        cfg: &'a Config,
        start: Start,
        emit: &'e mut dyn FnMut(&Event),
    ) -> Self {
        Watchdog {
            source,
            control,
            cfg,
            started: start.at,
            self_pid: start.self_pid,
            cmd_pid: start.cmd_pid,
            cmd_status: None,
            cmd_handled: false,
            spec: TreeSpec {
                root: start.self_pid,
                pgid: Some(start.cmd_pid),
            },
            sid: None,
            tracker: TreeTracker::default(),
            cpu: CpuSamples::default(),
            phase: Phase::Watching,
            next_tick: start.at,
            last_group_scan: None,
            force_scan: false,
            group_scan_every: if start.subreaper {
                GROUP_SCAN_EVERY_SUBREAPER
            } else {
                GROUP_SCAN_EVERY
            },
            last: None,
            parked: HashSet::new(),
            termed: HashMap::new(),
            killed: HashMap::new(),
            given_up: HashSet::new(),
            concluded: HashSet::new(),
            kill_hit_live: false,
            limit_term_pending: false,
            breach_footprint: 0,
            summary: Summary {
                // Set when the run ends (`finish`).
                at: String::new(),
                exit_code: ExitStatus::RunFailed,
                command_status: None,
                peak_footprint_bytes: 0,
                peak_processes: 0,
                limit_bytes: cfg.limit,
                lowest_effective_limit_bytes: cfg.limit,
                breaches: 0,
                parked: 0,
                ended_by: None,
                terminated: 0,
                killed: 0,
                spared: Vec::new(),
                forwarded: Vec::new(),
                survivors: Vec::new(),
                duration_ms: 0,
                samples: 0,
            },
            warned: false,
            pressure_until: None,
            deadline: cfg.timeout.map(|t| after(start.at, t)),
            warn_line: Default::default(),
            notifier: Default::default(),
            emit,
        }
    }
}

impl Watchdog<'_, '_> {
    fn main_loop(&mut self, sup: &mut Supervisor) {
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
            if matches!(self.phase, Phase::Done) {
                return;
            }
        }
    }

    fn next_deadline(&self) -> Instant {
        let phase = match &self.phase {
            Phase::Watching | Phase::Done => None,
            Phase::Relief { until } => Some(*until),
            Phase::Forwarded { deadline } => Some(*deadline),
            Phase::Ending { next, .. } => Some(*next),
        };
        let next = phase.map_or(self.next_tick, |p| p.min(self.next_tick));
        self.deadline.map_or(next, |d| d.min(next))
    }

    /// End the tree for `why` (the timeout, the parent's exit), whatever it was doing,
    /// unless an ending is already under way (it goes on: its SIGKILL is as near) or the
    /// run is over. Once only: the deadline is spent either way.
    pub(super) fn end_for(&mut self, why: EndReason) {
        self.deadline = None;
        if matches!(self.phase, Phase::Ending { .. } | Phase::Done) {
            return;
        }
        self.begin_ending(why);
    }

    fn tick_every(&self) -> Duration {
        match self.phase {
            Phase::Ending { .. } => self.cfg.interval.min(ENDING_TICK),
            _ if self.pressure_until.is_some_and(|u| Instant::now() < u) => {
                (self.cfg.interval / 4).max(Duration::from_millis(10))
            }
            _ => self.cfg.interval,
        }
    }

    fn reap(&mut self, sup: &mut Supervisor) {
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

    fn step(&mut self) {
        let now = Instant::now();
        // A command that has exited by itself decides its own code, timeout or not.
        if self.deadline.is_some_and(|d| now >= d) && self.cmd_status.is_none() {
            self.end_for(EndReason::Timeout);
        }
        if self.cmd_status.is_some() && !self.cmd_handled {
            self.cmd_handled = true;
            // Once reaped, the command's group id may be reused by strangers.
            self.spec.pgid = None;
            if !matches!(self.phase, Phase::Ending { .. }) {
                self.tick(now);
                let left = self.alive_members();
                if left.is_empty() {
                    self.phase = Phase::Done;
                } else {
                    self.begin_ending(EndReason::Leftovers);
                }
                return;
            }
        }
        let deadline_passed = match self.phase {
            Phase::Relief { until } => now >= until,
            Phase::Forwarded { deadline } => now >= deadline,
            _ => false,
        };
        let due = now >= self.next_tick || deadline_passed;
        let ending = matches!(self.phase, Phase::Ending { .. });
        if due || ending {
            self.tick(now);
        }
        let over = due
            && self
                .last
                .as_ref()
                .is_some_and(|s| s.footprint >= s.effective);
        match self.phase {
            Phase::Watching if over => self.on_breach(),
            // Still growing while parked subtrees were meant to relieve it: the growth is
            // elsewhere, and waiting out the second would only let it grow.
            Phase::Relief { .. }
                if over
                    && self.last.as_ref().is_some_and(|s| {
                        s.footprint > self.breach_footprint.saturating_add(self.cfg.limit / 100)
                    }) =>
            {
                self.begin_ending(EndReason::Limit);
            }
            // A forwarded signal does not suspend the limit.
            Phase::Forwarded { .. } if over => self.begin_ending(EndReason::Limit),
            Phase::Relief { until } if now >= until => {
                let (footprint, effective) = self
                    .last
                    .as_ref()
                    .map_or((0, self.cfg.limit), |s| (s.footprint, s.effective));
                let relieved = footprint < effective;
                (self.emit)(&Event::ParkResult {
                    at: now_at(),
                    relieved,
                    footprint_bytes: footprint,
                    effective_limit_bytes: effective,
                });
                if relieved {
                    self.phase = Phase::Watching;
                } else {
                    self.begin_ending(EndReason::Limit);
                }
            }
            Phase::Forwarded { deadline } if now >= deadline => {
                self.begin_ending(EndReason::Signal);
            }
            Phase::Ending { .. } => self.ending_tick(now),
            _ => {}
        }
    }

    fn on_breach(&mut self) {
        let Some(s) = self.last.as_ref() else {
            return;
        };
        self.summary.breaches += 1;
        self.breach_footprint = s.footprint;
        (self.emit)(&Event::Breach {
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
            (self.emit)(&Event::Park {
                at: now_at(),
                root: sub.root,
                name: sub.name.clone(),
                pids,
                footprint_bytes: sub.footprint_bytes,
                cpu_pct: (sub.cpu_fraction * 1000.0).round() / 10.0,
            });
        }
        if any {
            self.phase = Phase::Relief {
                until: after(Instant::now(), RELIEF_WAIT),
            };
        } else {
            self.begin_ending(EndReason::Limit);
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod after_tests;
