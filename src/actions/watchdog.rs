//! `run --limit`'s watchdog (Unix): start the command, then every interval read the tree
//! (`ProcessSource::tree_sample`: only the tree, no fork, no exec), sum its footprint and
//! compare it with the pressure-aware limit. On a breach, park idle subtrees and look again
//! a second later; still over, SIGTERM the whole tree, wait the grace, SIGKILL what is
//! left. Every signal goes through `ProcessControl`, which re-checks identity first.
//!
//! The loop sleeps in `Supervisor::wait`, so a signal to headroom or the command's exit
//! wakes it at once. It never returns while a process of the tree it knows is alive
//! (unless one cannot be signalled, which it reports), and never leaves one stopped.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::actions::park::signal_each;
use crate::core::memory::{
    CpuHistory, Leaders, PARK_MIN_BYTES, TreeSpec, TreeTracker, effective_limit, idle_subtrees,
    tree_footprint,
};
use crate::core::snapshot::{Identity, ProcState, ProcessRecord};
use crate::exit;
use crate::platform::supervise::{ChildEvent, SpawnError, Supervisor, Wake};
use crate::platform::{Delivery, ProcessControl, ProcessSource, Signal, TreeQuery};

/// After parking, look again this much later.
const RELIEF_WAIT: Duration = Duration::from_secs(1);
/// Processes in the command's group but outside headroom's descendants are looked for this
/// often (a pass over the whole process table on Linux).
const GROUP_SCAN_EVERY: Duration = Duration::from_secs(2);
/// While ending the tree, look this often at most (to notice promptly that it is gone).
const ENDING_TICK: Duration = Duration::from_millis(50);
/// After SIGKILL, how long to wait for the tree to disappear before reporting survivors.
const KILL_WAIT: Duration = Duration::from_secs(5);

#[derive(Debug, Clone)]
pub struct Config {
    pub command: Vec<OsString>,
    pub limit: u64,
    pub interval: Duration,
    pub grace: Duration,
}

/// Why the tree was ended by headroom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndReason {
    /// Over the limit after parking (or with nothing to park).
    Limit,
    /// headroom was signalled and the command had not exited a grace period later.
    Signal,
    /// The command exited; these processes of its tree were still running.
    Leftovers,
}

/// Streamed while the tree runs: JSON Lines on stderr with `--json`, a few human lines
/// otherwise (see `commands::run`).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    Start {
        schema: &'static str,
        pid: i32,
        command_pid: i32,
        command: Vec<String>,
        limit_bytes: u64,
        interval_ms: u64,
        grace_ms: u64,
        subreaper: bool,
        terminal: bool,
    },
    Breach {
        footprint_bytes: u64,
        effective_limit_bytes: u64,
        free_pct: Option<f64>,
        processes: usize,
    },
    Park {
        root: i32,
        name: String,
        pids: Vec<i32>,
        footprint_bytes: u64,
        cpu_pct: f64,
    },
    ParkResult {
        relieved: bool,
        footprint_bytes: u64,
        effective_limit_bytes: u64,
    },
    Signal {
        signal: &'static str,
        reason: EndReason,
        pids: Vec<i32>,
        gone: usize,
        failed: Vec<String>,
    },
    Forward {
        signal: &'static str,
        pids: Vec<i32>,
    },
    JobControl {
        action: &'static str,
        signal: i32,
    },
    Warning {
        message: String,
    },
    Summary(Summary),
}

/// How the command itself ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CommandStatus {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

/// The one record `run` ends with.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub schema: &'static str,
    pub exit_code: u8,
    pub command_status: Option<CommandStatus>,
    pub peak_footprint_bytes: u64,
    pub peak_processes: usize,
    pub limit_bytes: u64,
    pub lowest_effective_limit_bytes: u64,
    pub breaches: u32,
    pub parked: usize,
    pub ended_by: Option<EndReason>,
    /// Processes sent SIGTERM / SIGKILL by headroom.
    pub terminated: usize,
    pub killed: usize,
    /// Signals headroom received and forwarded to the command's group.
    pub forwarded: Vec<&'static str>,
    /// Processes of the tree that could not be ended.
    pub survivors: Vec<i32>,
    pub duration_ms: u64,
    pub samples: u64,
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
    Ending {
        why: EndReason,
        kill_at: Instant,
        give_up_at: Option<Instant>,
    },
    Done,
}

struct Sample {
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
        schema: "headroom.run/1",
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
    let mut w = Watch {
        source,
        control,
        cfg,
        started,
        self_pid,
        cmd_pid,
        cmd_status: None,
        cmd_handled: false,
        spec: TreeSpec {
            root: self_pid,
            pgid: Some(cmd_pid),
        },
        sid: None,
        tracker: TreeTracker::default(),
        cpu: CpuHistory::default(),
        phase: Phase::Watching,
        next_tick: started,
        last_group_scan: None,
        force_scan: false,
        last: None,
        parked: HashSet::new(),
        termed: HashMap::new(),
        killed: HashMap::new(),
        kill_hit_live: false,
        breach_footprint: 0,
        summary: Summary {
            schema: "headroom.run/1",
            exit_code: exit::RUN_FAILED,
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
            forwarded: Vec::new(),
            survivors: Vec::new(),
            duration_ms: 0,
            samples: 0,
        },
        warned: false,
        emit,
    };
    w.main_loop(sup);
    // The terminal goes back to headroom's group before the last line is written.
    sup.take_terminal();
    Ok(w.finish())
}

struct Watch<'a, 'e> {
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
    cpu: CpuHistory,
    phase: Phase,
    next_tick: Instant,
    last_group_scan: Option<Instant>,
    /// Scan the whole group at the next sample, whenever the last scan was.
    force_scan: bool,
    last: Option<Sample>,
    /// Processes headroom parked (and must wake or end).
    parked: HashSet<Identity>,
    /// Processes sent SIGTERM / SIGKILL, by pid.
    termed: HashMap<i32, Identity>,
    killed: HashMap<i32, Identity>,
    /// Whether a SIGKILL reached a process that was still alive.
    kill_hit_live: bool,
    /// The tree's footprint at the last breach.
    breach_footprint: u64,
    summary: Summary,
    warned: bool,
    emit: &'e mut dyn FnMut(&Event),
}

impl Watch<'_, '_> {
    fn main_loop(&mut self, sup: &mut Supervisor) {
        loop {
            let now = Instant::now();
            let wait = self.next_deadline().saturating_duration_since(now);
            for wake in sup.wait(wait) {
                if let Wake::Signal(s) = wake {
                    self.on_signal(s);
                }
            }
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
            Phase::Ending {
                kill_at,
                give_up_at,
                ..
            } => Some(give_up_at.unwrap_or(*kill_at)),
        };
        phase.map_or(self.next_tick, |p| p.min(self.next_tick))
    }

    fn tick_every(&self) -> Duration {
        match self.phase {
            Phase::Ending { .. } => self.cfg.interval.min(ENDING_TICK),
            _ => self.cfg.interval,
        }
    }

    fn reap(&mut self, sup: &mut Supervisor) {
        for (pid, ev) in sup.reap() {
            if pid != self.cmd_pid {
                continue; // an orphan of the tree, reaped here as its subreaper
            }
            match ev {
                ChildEvent::Stopped(sig) => self.on_command_stopped(sup, sig),
                done => self.cmd_status = Some(done),
            }
        }
    }

    /// Ctrl-Z (or a background read/write) stopped the command's group: stop headroom too,
    /// so the shell sees the job stopped; when continued, continue the group.
    fn on_command_stopped(&mut self, sup: &mut Supervisor, sig: i32) {
        let job_control = [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU].contains(&sig);
        if !job_control || matches!(self.phase, Phase::Ending { .. } | Phase::Done) {
            return; // SIGSTOP from `headroom park` or the like: the user's choice.
        }
        (self.emit)(&Event::JobControl {
            action: "stopped",
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
        (self.emit)(&Event::JobControl {
            action: "continued",
            signal: libc::SIGCONT,
        });
    }

    fn on_signal(&mut self, sig: Signal) {
        match self.phase {
            Phase::Watching | Phase::Relief { .. } if !self.cmd_handled => {
                self.summary.forwarded.push(sig.name());
                // The group as it is now, not as last sampled: a child forked since then
                // must get the signal too.
                self.force_scan = true;
                self.tick(Instant::now());
                let targets: Vec<Identity> = self.group_members();
                let pids = self.deliver(&targets, sig).0;
                (self.emit)(&Event::Forward {
                    signal: sig.name(),
                    pids,
                });
                self.phase = Phase::Forwarded {
                    deadline: Instant::now() + self.cfg.grace,
                };
            }
            // A second signal: the user insists.
            Phase::Forwarded { .. } => {
                self.summary.forwarded.push(sig.name());
                self.begin_ending(EndReason::Signal);
            }
            Phase::Ending {
                give_up_at: None, ..
            } => {
                self.summary.forwarded.push(sig.name());
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

    fn step(&mut self) {
        let now = Instant::now();
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
            Phase::Ending {
                kill_at,
                give_up_at,
                ..
            } => {
                let left = self.alive_members();
                if left.is_empty() && self.cmd_status.is_some() {
                    self.phase = Phase::Done;
                } else if let Some(g) = give_up_at {
                    if now >= g {
                        self.summary.survivors = left.iter().map(|id| id.pid).collect();
                        self.phase = Phase::Done;
                    } else {
                        self.signal_new(&left, Signal::Kill);
                    }
                } else if now >= kill_at {
                    self.kill_now();
                } else {
                    self.signal_new(&left, Signal::Term);
                }
            }
            _ => {}
        }
    }

    /// Read the tree once: members, footprint, effective limit, CPU history, peak.
    fn tick(&mut self, now: Instant) {
        self.next_tick = now + self.tick_every();
        if let Some(s) = self.sample() {
            self.summary.samples += 1;
            if s.footprint >= self.summary.peak_footprint_bytes {
                self.summary.peak_footprint_bytes = s.footprint;
                self.summary.peak_processes = s.members.len();
            }
            self.summary.lowest_effective_limit_bytes =
                self.summary.lowest_effective_limit_bytes.min(s.effective);
            self.last = Some(s);
        }
    }

    fn sample(&mut self) -> Option<Sample> {
        let now = Instant::now();
        let scan_group = self.spec.pgid.is_some()
            && (std::mem::take(&mut self.force_scan)
                || self
                    .last_group_scan
                    .is_none_or(|t| now.duration_since(t) >= GROUP_SCAN_EVERY));
        let known = self.tracker.known_pids();
        let query = TreeQuery {
            roots: &[self.self_pid],
            pgid: if scan_group { self.spec.pgid } else { None },
            extra: &known,
        };
        let records = match self.source.tree_sample(&query) {
            Ok(r) => r,
            Err(e) => {
                self.warn_once(format!("cannot read the process tree: {e}"));
                return None;
            }
        };
        if scan_group {
            self.last_group_scan = Some(now);
        }
        let members: Vec<ProcessRecord> = self
            .tracker
            .update(&records, &self.spec)
            .into_iter()
            .cloned()
            .collect();
        if let Some(cmd) = members.iter().find(|m| m.pid == self.cmd_pid) {
            self.sid = cmd.sid.or(self.sid);
        }
        let refs: Vec<&ProcessRecord> = members.iter().collect();
        let (footprint, _unknown) = tree_footprint(&refs);
        let at_ms = now.duration_since(self.started).as_millis() as u64;
        self.cpu.record(at_ms, &refs);
        let free_pct = match self.source.memory() {
            Ok(m) if m.total_bytes > 0 => Some(m.free_pct()),
            Ok(_) => None,
            Err(e) => {
                self.warn_once(format!(
                    "cannot read free memory: {e}; the limit is not lowered under pressure"
                ));
                None
            }
        };
        Some(Sample {
            effective: effective_limit(self.cfg.limit, free_pct),
            members,
            footprint,
            free_pct,
        })
    }

    fn warn_once(&mut self, message: String) {
        if !self.warned {
            self.warned = true;
            (self.emit)(&Event::Warning { message });
        }
    }

    fn on_breach(&mut self) {
        let Some(s) = self.last.as_ref() else {
            return;
        };
        self.summary.breaches += 1;
        self.breach_footprint = s.footprint;
        (self.emit)(&Event::Breach {
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
                root: sub.root,
                name: sub.name.clone(),
                pids,
                footprint_bytes: sub.footprint_bytes,
                cpu_pct: (sub.cpu_fraction * 1000.0).round() / 10.0,
            });
        }
        if any {
            self.phase = Phase::Relief {
                until: Instant::now() + RELIEF_WAIT,
            };
        } else {
            self.begin_ending(EndReason::Limit);
        }
    }

    /// SIGTERM the whole tree (and SIGCONT whatever is stopped, so it can act on it).
    fn begin_ending(&mut self, why: EndReason) {
        self.summary.ended_by = Some(why);
        self.phase = Phase::Ending {
            why,
            kill_at: Instant::now() + self.cfg.grace,
            give_up_at: None,
        };
        self.force_scan = true;
        self.tick(Instant::now());
        let left = self.alive_members();
        self.signal_new(&left, Signal::Term);
    }

    fn kill_now(&mut self) {
        if let Phase::Ending { why, kill_at, .. } = self.phase {
            self.phase = Phase::Ending {
                why,
                kill_at,
                give_up_at: Some(Instant::now() + KILL_WAIT),
            };
        }
        self.force_scan = true;
        self.tick(Instant::now());
        let left = self.alive_members();
        self.signal_new(&left, Signal::Kill);
    }

    /// Every process of the tree that is still alive: the latest sample's live members and
    /// anything signalled before, each re-read (a sample may be stale if it failed).
    fn alive_members(&self) -> Vec<Identity> {
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
    fn signal_new(&mut self, targets: &[Identity], sig: Signal) {
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
        let reason = match self.phase {
            Phase::Ending { why, .. } => why,
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
    fn deliver(&self, targets: &[Identity], sig: Signal) -> (Vec<i32>, usize, Vec<String>) {
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

    fn finish(mut self) -> Summary {
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
