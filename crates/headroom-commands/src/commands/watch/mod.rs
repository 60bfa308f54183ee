//! `headroom watch`: the long-lived guard started at login. Each round takes a probe reading
//! (appended to the evidence log), confirms threshold crossings with hysteresis, runs `reap`
//! when the level has been critical in two consecutive readings, and notifies — never on the
//! polling path, never when free slots are at or below 1 %. The cleanup runs on a worker
//! thread (`cleanup.rs`): the rounds go on while its escalation runs.
//!
//! The polling path does not fork or exec. A transient error is reported as a `notice` and the
//! next round tries again. SIGTERM/SIGINT/SIGHUP only set a flag: an in-flight cleanup,
//! including a SIGKILL escalation, finishes first; then a summary, and exit 0 for SIGTERM, 130 for SIGINT,
//! 75 for SIGHUP (it does not reload: it exits to be started afresh, and the service
//! managers headroom registers with restart a non-zero exit, so the new guard reads the
//! config again). A closed stdout ends it the same way; a stdout nobody reads never stalls
//! a round (`output.rs`).
//!
//! One `watch` per user: it holds `watch.lock` in the state directory for its lifetime, with
//! who it is written in; a second one refuses (exit 3), or under a service manager leaves or
//! waits (`service.rs`, which also notices the guard's own program replaced by an upgrade).
//! A cleanup, here or from `reap`, holds `cleanup.lock` while it signals and verifies, so
//! the two never act on the same parent twice.

mod cleanup;
pub(crate) mod events;
mod memory;
mod park_journal;
pub(crate) mod parked;
mod persist;
pub(crate) mod pressure;
mod schedule;
pub(crate) mod service;

use std::time::{Duration, Instant};

use crate::actions::clock::{Clock, RealClock};
use crate::actions::hang_round;
use crate::actions::memory_guard;
use crate::actions::notify::{self, Notifier};
use crate::cli::WatchArgs;
use crate::commands::Ctx;
use crate::commands::watch::events::Severity;
use crate::commands::watch::events::{ReadingEvent, WatchEvent, status_line};
use crate::commands::watch::parked::ParkedTrees;
use crate::commands::watch::persist::Persisted;
use crate::core::alerts::Crossing;
use crate::core::reading::{self, Level, Reading, Thresholds, Trend};
use crate::core::reap_plan::ReapPlan;
use crate::core::snapshot::Detail;
use crate::core::time::format_ms;
use crate::exit::{ExitStatus, UsageError};
use crate::output::queue::{DRAIN_AT_EXIT, JsonNotice, Output};
use crate::output::thousands;
use crate::platform::{self, ProcessSource};
use crate::store::evidence::Row;
use anyhow::Result;

/// The running `watch`: what it reads with, what it keeps between rounds, and its counts.
struct Watcher<'c, 'a> {
    ctx: &'c Ctx<'a>,
    source: Box<dyn ProcessSource>,
    thresholds: Thresholds,
    reap_plan: ReapPlan,
    auto_reap: bool,
    cooldown: Duration,
    notify: bool,
    state_dir: Option<std::path::PathBuf>,
    persisted: Persisted,
    pending: Vec<Row>,
    notifier: Notifier,
    rounds: u64,
    cleanups: u64,
    errors: u64,
    status_open: bool,
    /// The state as last written, to skip rewriting it unchanged.
    saved: Option<String>,
    /// Trees a memory guard parked to relief, re-judged every round.
    parked: ParkedTrees,
    /// Their record in the state directory, which outlives this process (`park_journal.rs`).
    journal: std::cell::RefCell<park_journal::ParkJournal>,
    /// `--once`: a one-shot round does not park (its exit would wake them at once).
    once: bool,
    /// stdout, never waited for (`output.rs`).
    out: Output,
    /// This process's last cleanup with targets, on `clock`: the cooldown within one run
    /// ignores wall-clock steps.
    last_cleanup: Option<Instant>,
    /// The monotonic clock of the reap cooldown and the memory guards' grace (`RealClock`;
    /// a test's own in unit tests).
    clock: Box<dyn Clock>,
    /// The guarded trees' warning lines (`[memory] warn_pct`).
    warn_lines: crate::core::memory_warn::WarnLines,
    /// Which rounds read the whole table (`schedule.rs`).
    schedule: schedule::Schedule,
    /// Where the automatic cleanups run (`cleanup.rs`).
    cleaner: cleanup::Cleaner,
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &WatchArgs) -> Result<ExitStatus> {
    let thresholds = ctx.thresholds(&args.thresholds)?;
    let interval = ctx.settings.watch.with_interval(args.interval)?.interval;
    if ctx.replaying() && !args.once {
        return Err(UsageError(
            "watch --snapshot needs --once: a recording has one instant".into(),
        )
        .into());
    }
    // watch's cleanup is `reap` without flags. A recorded or redirected table is never
    // acted on (and never reaches the reap step); planning must not refuse it.
    let mut reap_plan = crate::config::reap_plan(
        &ctx.settings,
        None,
        ctx.redirected(),
        ctx.redirected().is_some(),
    )?;
    // One reading: the cleanup judges (and records) the level by the thresholds this watch
    // reads with, its flags included.
    reap_plan.thresholds = thresholds;
    for w in &reap_plan.warnings {
        ctx.printer.warn(w);
    }
    // Before the lock: a guard waiting for it stops on SIGTERM like one that guards.
    platform::stop_flag::install()
        .map_err(|e| anyhow::anyhow!("cannot install the SIGTERM handler: {e}"))?;
    // One guard per user: a second `watch` (a LaunchAgent and `brew services`, or a
    // `watch --once` from cron beside the service) refuses, leaves or waits rather than
    // double every action.
    let label = service::own_label();
    let _single = if ctx.replaying() {
        None
    } else {
        match service::single(ctx, args.once, label.as_deref())? {
            service::Single::Guard(lock) => lock,
            service::Single::Leave => return Ok(ExitStatus::Ok),
            service::Single::Stopped => {
                return Ok(crate::exit::after_stop(
                    platform::stop_flag::requested(),
                    ExitStatus::Ok,
                ));
            }
        }
    };
    let mut program = if args.once || ctx.replaying() {
        None
    } else {
        service::ProgramWatch::at_start()
    };
    let source = ctx.source()?;
    // Rounds repeat: the slot round may keep descriptors between them (on Linux each
    // process's `status` and pidfd, within a raised soft RLIMIT_NOFILE).
    source.keep_between_rounds();
    let mut g = Watcher {
        ctx,
        source,
        thresholds,
        reap_plan,
        auto_reap: ctx.settings.watch.auto_reap.value && !args.no_auto_reap,
        cooldown: ctx.settings.watch.reap_cooldown.value,
        notify: ctx.settings.notifications.enabled.value,
        state_dir: None,
        persisted: Persisted::default(),
        pending: Vec::new(),
        notifier: Notifier::default(),
        rounds: 0,
        cleanups: 0,
        errors: 0,
        status_open: false,
        saved: None,
        parked: ParkedTrees::default(),
        journal: Default::default(),
        once: args.once,
        out: Output::stdout(
            ctx.printer
                .is_json()
                .then_some(events::lost_lines as JsonNotice),
        ),
        last_cleanup: None,
        clock: Box::new(RealClock),
        warn_lines: Default::default(),
        schedule: schedule::Schedule::new(args.table_every),
        cleaner: cleanup::Cleaner::default(),
    };
    crate::output::queue_stderr();
    if g.auto_reap && !args.once && ctx.redirected().is_none() {
        match cleanup::Cleaner::start(ctx, &g.reap_plan) {
            Ok(c) => g.cleaner = c,
            Err(e) => g.notice(
                Severity::Warning,
                &format!("cannot start the cleanup worker ({e}); cleanups run in the round"),
            ),
        }
    }
    g.load_state();
    // Only on the live table, with the guard's lock held: nothing else can have parked them.
    if ctx.redirected().is_none() {
        g.wake_left_parked();
    }
    if let Some(flag) = ctx.redirected().filter(|f| *f != "--snapshot") {
        g.notice(
            Severity::Info,
            &format!("{flag}: not the live process table, so no cleanup or memory guard acts"),
        );
    }
    // Where the platform has no hang detection (every OS but macOS) there is no hang round:
    // building its settings every round (a `getuid`, the lists' copies) would be for nothing.
    let hangs = ctx.settings.watch.hangs.value
        && !args.no_hangs
        && !ctx.replaying()
        && platform::native_apps().is_ok();
    let mut pressure = pressure::Waiter::arm(ctx, args.once);
    if let Some(line) = pressure.announce() {
        g.notice(Severity::Info, &line);
    }
    loop {
        let started = Instant::now();
        let code = g.round();
        if hangs {
            g.hangs_round();
        }
        if args.once {
            g.finish();
            return Ok(code);
        }
        if g.out.closed() {
            // The reader went away (`watch --json | head`): nobody to guard for.
            break;
        }
        if let Some(change) = program.as_mut().and_then(|p| p.check(started)) {
            let (message, restart) = service::on_change(&change, label.as_deref());
            g.notice(Severity::Warning, &message);
            if restart {
                g.finish();
                return Ok(ExitStatus::Restart);
            }
        }
        let next = started + interval.value;
        // While a cleanup is in flight, look for its end every `CLEANUP_POLL`, so its
        // report (and the cooldown) come when it ends, not a round later.
        while g.cleaner.busy() && platform::stop_flag::requested().is_none() {
            let now = Instant::now();
            if now >= next {
                break;
            }
            pressure.sleep_until(next.min(now + cleanup::CLEANUP_POLL), &mut |f| {
                g.on_pressure(f)
            });
            g.collect_cleanup(false);
        }
        pressure.sleep_until(next, &mut |f| g.on_pressure(f));
        if let Some(sig) = platform::stop_flag::requested() {
            g.notice(Severity::Info, &format!("stopping on signal {sig}"));
            break;
        }
    }
    g.finish();
    Ok(crate::exit::after_stop(
        platform::stop_flag::requested(),
        ExitStatus::Ok,
    ))
}

impl Watcher<'_, '_> {
    fn emit(&mut self, e: &WatchEvent) {
        let p = self.ctx.printer;
        let line = if p.is_json() {
            match crate::schema::to_line(e) {
                Ok(s) => s + "\n",
                Err(_) => return,
            }
        } else if p.is_quiet() {
            return;
        } else {
            match e {
                WatchEvent::Reading(r) => {
                    let line = status_line(r);
                    // Rewriting the line is terminal control: only with colour on (not
                    // --color never, NO_COLOR, TERM=dumb) and not for a single round.
                    if p.stdout_is_terminal() && p.is_color() && !self.once {
                        self.status_open = true;
                        format!("\r\x1b[2K{line}")
                    } else {
                        format!("{line}\n")
                    }
                }
                other => {
                    let prefix = if self.status_open { "\n" } else { "" };
                    self.status_open = false;
                    format!("{prefix}{}\n", other.human())
                }
            }
        };
        self.out.send(line);
    }

    fn notice(&mut self, severity: Severity, message: &str) {
        if severity == Severity::Error {
            self.errors += 1;
        }
        self.emit(&WatchEvent::Notice {
            at: format_ms(platform::now_ms()),
            severity,
            message: message.to_string(),
        });
    }

    /// One round; returns probe's exit code for its reading.
    fn round(&mut self) -> ExitStatus {
        self.notifier.collect();
        // The wall is far: nothing to read, report or record (`schedule.rs`).
        if self.quiet_round() {
            return Level::Normal.into();
        }
        self.rounds += 1;
        let snap = match self.source.snapshot(Detail::Slots) {
            Ok(s) => s,
            Err(e) => {
                self.read_the_table(Level::Unknown);
                self.notice(
                    Severity::Error,
                    &format!("cannot read the process table: {e}; trying again next round"),
                );
                return Level::Unknown.into();
            }
        };
        let r = reading::read(&snap, self.thresholds);
        self.read_the_table(r.level);
        let trend = self.record(&r);
        let crossing = self
            .persisted
            .alerts
            .observe(r.level, r.usage_pct, self.thresholds);
        let event = ReadingEvent::new(&r, &trend, self.persisted.alerts.confirmed);
        self.emit(&WatchEvent::Reading(event));
        if let Some(c) = crossing {
            self.notify_crossing(c, &r, &trend);
        }
        // Cleanups and guards act only on the live table (`Ctx::redirected`).
        let live = self.ctx.redirected().is_none();
        if live {
            self.memory_guards();
        }
        self.collect_cleanup(false);
        if self.persisted.alerts.confirmed == Level::Critical && self.auto_reap && live {
            self.maybe_reap();
        }
        self.save_state();
        let level = r.level;
        self.source.recycle(snap);
        level.into()
    }

    /// A full snapshot for `what`, or a notice and `None`.
    fn full_snapshot(&mut self, what: &str) -> Option<crate::core::snapshot::Snapshot> {
        match self.source.snapshot(Detail::Full) {
            Ok(s) => Some(s),
            Err(e) => {
                self.notice(
                    Severity::Error,
                    &format!("cannot read the process table for {what}: {e}"),
                );
                None
            }
        }
    }

    /// A `hangs` round (macOS only; elsewhere there is no WindowServer and nothing to do).
    fn hangs_round(&mut self) {
        let (monitor, recovery) = crate::commands::hang_round_settings(&self.ctx.settings.hangs);
        match hang_round::watch_round(self.ctx.redirected(), &monitor, recovery) {
            Ok(None) => {}
            Ok(Some((report, warnings))) => {
                for w in warnings {
                    self.notice(Severity::Warning, &w);
                }
                if !report.apps.is_empty() || !report.available() {
                    self.emit(&WatchEvent::Hang(Box::new(report)));
                }
            }
            Err(e) => self.notice(Severity::Error, &format!("hangs round failed: {e:#}")),
        }
    }

    fn notify_crossing(&mut self, c: Crossing, r: &Reading, trend: &Trend) {
        if !self.may_notify(r.free_slots, r.limit.limit) {
            return;
        }
        let title = match c {
            Crossing::Critical => "headroom: process limit nearly reached",
            Crossing::Warning => "headroom: process slots filling up",
        };
        let limit = match (r.limit.limit, r.limit.source) {
            (Some(l), Some(src)) => format!(
                "{} of {} slots ({:.1} %), binding limit {src}",
                thousands(r.usage.used),
                thousands(l),
                r.usage_pct.unwrap_or(0.0)
            ),
            _ => crate::output::plural(r.usage.used, "slot"),
        };
        let eta = trend
            .eta_seconds
            .map(|e| format!(", wall in {}", crate::output::human_duration(e)))
            .unwrap_or_default();
        let top = r
            .top_parents
            .first()
            .map(|p| format!("; top zombie parent {} {} ({})", p.pid, p.name, p.zombies))
            .unwrap_or_default();
        let body = format!(
            "{limit}; {}{eta}{top}. See `headroom reap --dry-run`.",
            crate::output::plural(r.usage.zombies, "zombie")
        );
        self.post(title, &body);
    }

    /// Whether a notification may be posted now. At or below 1 % free it is not (starting
    /// the helper needs the very fork that is failing), and a notice says so.
    fn may_notify(&mut self, free: Option<u64>, limit: Option<u64>) -> bool {
        if !self.notify {
            return false;
        }
        if notify::allowed(free, limit) {
            return true;
        }
        let (free, limit) = (free.unwrap_or(0), limit.unwrap_or(0));
        self.notice(
            Severity::Warning,
            &format!(
                "notification withheld: {free} of {limit} slots free (≤ 1 %), and posting it \
                 needs a new process"
            ),
        );
        false
    }

    fn post(&mut self, title: &str, body: &str) {
        if let Err(e) = self.notifier.post(title, body) {
            self.notice(Severity::Info, &format!("notification not posted: {e}"));
        }
    }

    fn finish(&mut self) {
        // The cleanup in flight ends first (its SIGKILL escalation included), and its report
        // is emitted before the summary.
        self.stop_cleaner();
        self.save_state();
        self.notifier.finish();
        // Never leave anything stopped behind.
        if !self.parked.is_empty() {
            {
                let control = platform::native_control(self.source.as_ref());
                for p in self.parked.take_all() {
                    memory_guard::wake(control.as_ref(), &p.ids);
                }
            }
            self.sync_parked();
        }
        self.emit(&WatchEvent::Summary {
            at: format_ms(platform::now_ms()),
            rounds: self.rounds,
            quiet_rounds: self.schedule.quiet,
            cleanups: self.cleanups,
            errors: self.errors,
            pending_rows: self.pending.len(),
            stderr_dropped: crate::output::stderr_lost(),
            history_writes_lost: crate::actions::session_assessment::lost_history_writes(),
        });
        self.out.finish(DRAIN_AT_EXIT);
        crate::output::finish_stderr(DRAIN_AT_EXIT);
    }
}
