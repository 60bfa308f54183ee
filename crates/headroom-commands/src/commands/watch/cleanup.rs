//! `watch`'s automatic cleanup: `reap` when the level has been critical in two consecutive
//! readings, at most once per cooldown, on a worker thread so that the rounds (the slot
//! reading, the memory guards) go on while its escalation waits out the grace and its
//! verification waits for the zombies to be reaped.
//!
//! The worker is started with the guard, never when a cleanup is due: on Linux a thread
//! takes a slot of RLIMIT_NPROC like a process, so one started at the wall could fail
//! exactly then. Without it (`--once`, or it could not be started) the cleanup runs inside
//! the round, as before. One cleanup at a time: none starts while one is in flight.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::actions::cleanup::{Cleanup, execute};
use crate::actions::clock::Clock;
use crate::cli::GlobalArgs;
use crate::commands::Ctx;
use crate::commands::watch::Watcher;
use crate::commands::watch::events::Severity;
use crate::commands::watch::events::WatchEvent;
use crate::config::Settings;
use crate::core::reap_plan::ReapPlan;
use crate::core::snapshot::Detail;
use crate::output::Printer;
use crate::platform;

/// How often the sleep between rounds looks for a finished cleanup while one is in flight.
pub(super) const CLEANUP_POLL: Duration = Duration::from_millis(100);

/// Where the cleanups run, and the one in flight (the wall time it started, for the
/// cooldown).
#[derive(Debug, Default)]
pub(super) struct Cleaner {
    worker: Option<Worker>,
    in_flight: Option<i64>,
}

#[derive(Debug)]
struct Worker {
    jobs: mpsc::Sender<()>,
    done: mpsc::Receiver<Result<Cleanup>>,
    thread: std::thread::JoinHandle<()>,
}

impl Cleaner {
    /// A worker with its own copy of the settings, flags and plan; `Err` when no thread
    /// could be started (the cleanups then run in the round).
    pub(super) fn start(ctx: &Ctx<'_>, plan: &ReapPlan) -> std::io::Result<Self> {
        let (jobs, todo) = mpsc::channel::<()>();
        let (report, done) = mpsc::channel();
        let (printer, global, settings, plan) = (
            ctx.printer.clone(),
            ctx.global.clone(),
            ctx.settings.clone(),
            plan.clone(),
        );
        let thread = std::thread::Builder::new()
            .name("headroom-cleanup".into())
            .spawn(move || {
                while todo.recv().is_ok() {
                    let r = cleanup(&printer, &global, settings.clone(), &plan);
                    if report.send(r).is_err() {
                        return;
                    }
                }
            })?;
        Ok(Self {
            worker: Some(Worker { jobs, done, thread }),
            in_flight: None,
        })
    }

    /// A cleanup is in flight on the worker.
    pub(super) fn busy(&self) -> bool {
        self.in_flight.is_some()
    }
}

/// One cleanup, decided on a table read now.
fn cleanup(
    printer: &Printer,
    global: &GlobalArgs,
    settings: Settings,
    plan: &ReapPlan,
) -> Result<Cleanup> {
    let ctx = Ctx {
        printer,
        global,
        settings,
    };
    let source = ctx.source()?;
    let snap = source
        .snapshot(Detail::Full)
        .map_err(|e| anyhow::anyhow!("cannot read the process table for cleanup: {e}"))?;
    execute(
        ctx.printer,
        ctx.replaying(),
        source.as_ref(),
        &snap,
        plan,
        false,
    )
}

/// Whether a cleanup is still inside its cooldown, and the persisted wall time to keep.
/// Within one run the monotonic `since_own` decides, so a wall clock stepped forwards by
/// hours cannot end the cooldown early. Across runs (`watch --once` from cron) only the
/// persisted wall time exists: a last cleanup "in the future" means the clock was set back,
/// and the cooldown restarts from now rather than lasting until the clock catches up (hours
/// with no cleanup) or being skipped (a second cleanup at once).
pub(super) fn in_cooldown(
    now_ms: i64,
    last_ms: Option<i64>,
    since_own: Option<Duration>,
    cooldown: Duration,
) -> (bool, Option<i64>) {
    if let Some(d) = since_own {
        return (d < cooldown, last_ms);
    }
    match last_ms {
        None => (false, None),
        Some(last) if last > now_ms => (true, Some(now_ms)),
        Some(last) => (now_ms - last < cooldown.as_millis() as i64, Some(last)),
    }
}

/// [`in_cooldown`] at this instant of `clock`, the watcher's monotonic clock: the time since
/// this run's own last cleanup (`own`) is measured on it.
pub(super) fn cooling_now(
    clock: &dyn Clock,
    now_ms: i64,
    last_ms: Option<i64>,
    own: Option<Instant>,
    cooldown: Duration,
) -> (bool, Option<i64>) {
    let since_own = own.map(|t| clock.now().saturating_duration_since(t));
    in_cooldown(now_ms, last_ms, since_own, cooldown)
}

impl Watcher<'_, '_> {
    pub(super) fn maybe_reap(&mut self) {
        if self.cleaner.busy() {
            return;
        }
        let now = platform::now_ms();
        let (cooling, last) = cooling_now(
            self.clock.as_ref(),
            now,
            self.persisted.last_cleanup_ms,
            self.last_cleanup,
            self.cooldown,
        );
        self.persisted.last_cleanup_ms = last;
        if cooling {
            return;
        }
        if let Some(w) = &self.cleaner.worker {
            if w.jobs.send(()).is_ok() {
                self.cleaner.in_flight = Some(now);
                return;
            }
            self.lost_worker();
        }
        let Some(snap) = self.full_snapshot("cleanup") else {
            return;
        };
        let r = execute(
            self.ctx.printer,
            self.ctx.replaying(),
            self.source.as_ref(),
            &snap,
            &self.reap_plan,
            false,
        );
        self.cleaned(now, r);
    }

    /// Take the result of the cleanup in flight, if it is done (with `wait`, once it is).
    pub(super) fn collect_cleanup(&mut self, wait: bool) {
        let (Some(started), Some(w)) = (self.cleaner.in_flight, &self.cleaner.worker) else {
            return;
        };
        let got = if wait {
            w.done.recv().map_err(|_| mpsc::TryRecvError::Disconnected)
        } else {
            w.done.try_recv()
        };
        match got {
            Ok(r) => {
                self.cleaner.in_flight = None;
                self.cleaned(started, r);
            }
            Err(mpsc::TryRecvError::Empty) => {}
            Err(mpsc::TryRecvError::Disconnected) => {
                self.cleaner.in_flight = None;
                self.lost_worker();
            }
        }
    }

    /// The worker is gone (it panicked): said once, and the cleanups run in the round.
    fn lost_worker(&mut self) {
        if let Some(w) = self.cleaner.worker.take() {
            drop(w.jobs);
            let _ = w.thread.join();
            self.notice(
                Severity::Error,
                "the cleanup worker ended; cleanups run in the round from now on",
            );
        }
    }

    /// End the worker at exit, after the cleanup in flight (its escalation included).
    pub(super) fn stop_cleaner(&mut self) {
        self.collect_cleanup(true);
        if let Some(w) = self.cleaner.worker.take() {
            drop(w.jobs);
            let _ = w.thread.join();
        }
    }

    /// A cleanup that started at `started` (wall ms) ended with `result`. Its evidence rows
    /// join the round's (kept in memory while they cannot be written); a cleanup with
    /// targets starts the cooldown whether or not its rows could be written.
    fn cleaned(&mut self, started: i64, result: Result<Cleanup>) {
        let Cleanup { report, rows } = match result {
            Ok(c) => c,
            Err(e) => {
                self.notice(Severity::Error, &format!("cleanup failed: {e:#}"));
                return;
            }
        };
        self.pending.extend(rows);
        if let Some(dir) = self.state_dir.clone() {
            self.write_pending(&dir);
        }
        if !report.targets.is_empty() {
            // The cooldown is spent only when something was done.
            self.persisted.last_cleanup_ms = Some(started);
            self.last_cleanup = Some(self.clock.now());
            self.cleanups += 1;
            if self.may_notify(report.usage.free_slots, report.usage.limit) {
                let limit = report
                    .usage
                    .limit_source
                    .map_or("unknown".into(), |s| s.to_string());
                let body = format!("{} (binding limit: {limit})", report.summary);
                self.post("headroom: cleanup", &body);
            }
        }
        self.emit(&WatchEvent::Cleanup(Box::new(report)));
    }
}

#[cfg(test)]
mod tests {
    use super::{cooling_now, in_cooldown};
    use crate::actions::clock::Clock;
    use std::cell::Cell;
    use std::time::{Duration, Instant};

    /// A monotonic clock that moves only when slept on, by exactly that long.
    struct Steps(Cell<Instant>);

    impl Clock for Steps {
        fn now(&self) -> Instant {
            self.0.get()
        }
        fn sleep(&self, d: Duration) {
            self.0.set(self.0.get() + d);
        }
    }

    #[test]
    fn the_watchers_clock_times_its_own_cooldown_whatever_the_wall_clock_says() {
        let clock = Steps(Cell::new(Instant::now()));
        let t0 = 10 * H;
        let own = Some(clock.now());
        clock.sleep(Duration::from_secs(119));
        // The wall clock stepped forwards 5 h: the run's own clock still says 119 s.
        assert!(cooling_now(&clock, t0 + 5 * H, Some(t0), own, COOL).0);
        clock.sleep(Duration::from_secs(1));
        // Control: 120 s on the clock end it, though the wall clock went back 5 h.
        let (cooling, kept) = cooling_now(&clock, t0 - 5 * H, Some(t0), own, COOL);
        assert!(!cooling);
        assert_eq!(kept, Some(t0));
        // No cleanup in this run: the persisted wall time decides (clock unused).
        assert!(cooling_now(&clock, t0 + 60_000, Some(t0), None, COOL).0);
        assert!(!cooling_now(&clock, t0 + 120_000, Some(t0), None, COOL).0);
    }

    const H: i64 = 3_600_000;
    const COOL: Duration = Duration::from_secs(120);

    #[test]
    fn wall_clock_steps_neither_end_nor_stretch_the_cooldown() {
        let t0 = 10 * H;
        // Within one run: the monotonic clock decides, whatever the wall clock did.
        let own = Some(Duration::from_secs(30));
        assert!(
            in_cooldown(t0 + 5 * H, Some(t0), own, COOL).0,
            "stepped forwards 5 h"
        );
        assert!(
            in_cooldown(t0 - 5 * H, Some(t0), own, COOL).0,
            "stepped back 5 h"
        );
        let own = Some(Duration::from_secs(121));
        assert!(
            !in_cooldown(t0 - 5 * H, Some(t0), own, COOL).0,
            "no 5 h freeze"
        );
        // Across runs: a last cleanup in the future (clock set back) restarts the cooldown
        // from now, and it ends 120 s later, not when the clock catches up.
        let (cooling, kept) = in_cooldown(t0 - 5 * H, Some(t0), None, COOL);
        assert!(cooling);
        assert_eq!(kept, Some(t0 - 5 * H));
        assert!(in_cooldown(t0 - 5 * H + 60_000, kept, None, COOL).0);
        assert!(!in_cooldown(t0 - 5 * H + 121_000, kept, None, COOL).0);
        // The control: an ordinary cooldown, and none before any cleanup.
        assert!(in_cooldown(t0 + 60_000, Some(t0), None, COOL).0);
        assert!(!in_cooldown(t0 + 121_000, Some(t0), None, COOL).0);
        assert_eq!(in_cooldown(t0, None, None, COOL), (false, None));
    }
}
