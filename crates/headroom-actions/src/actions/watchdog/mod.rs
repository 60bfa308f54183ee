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
mod main_loop;
mod notify;
pub(crate) mod report;
mod sample;
mod signals;

pub use report::{CommandStatus, EndReason, JobAction, RunEvent, RunSummary, now_at};

use crate::actions::escalate::Escalation;
use crate::core::idle::CpuSamples;
use crate::core::memory::{TreeSpec, TreeTracker};
use crate::core::snapshot::{Identity, ProcessRecord};
use crate::exit::ExitStatus;
use crate::platform::supervise::{ChildEvent, SpawnError, Supervisor};
use crate::platform::{ProcessControl, ProcessSource};

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
pub struct WatchdogConfig {
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

enum WatchdogPhase {
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

struct WatchdogSample {
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
    cfg: &WatchdogConfig,
    emit: &mut dyn FnMut(&RunEvent),
) -> Result<RunSummary, SpawnError> {
    let started = Instant::now();
    let cmd_pid = sup.spawn(&cfg.command)?;
    let self_pid = std::process::id() as i32;
    emit(&RunEvent::Start {
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
    cfg: &'a WatchdogConfig,
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
    phase: WatchdogPhase,
    next_tick: Instant,
    last_group_scan: Option<Instant>,
    /// Scan the whole group at the next sample, whenever the last scan was.
    force_scan: bool,
    group_scan_every: Duration,
    last: Option<WatchdogSample>,
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
    summary: RunSummary,
    warned: bool,
    /// Memory pressure was signalled: sample sooner until then.
    pressure_until: Option<Instant>,
    /// `--timeout`: when the tree is ended; None once it was (or without one).
    deadline: Option<Instant>,
    warn_line: crate::core::memory_warn::WarnLine,
    /// The warning's notification helpers: headroom's children, but never the tree's
    /// (`without_helpers`).
    notifier: crate::actions::notify::Notifier,
    emit: &'e mut dyn FnMut(&RunEvent),
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
        cfg: &'a WatchdogConfig,
        start: Start,
        emit: &'e mut dyn FnMut(&RunEvent),
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
            phase: WatchdogPhase::Watching,
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
            summary: RunSummary {
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

#[cfg(test)]
mod tests;

#[cfg(test)]
mod after_tests;
