//! `headroom watch`: the long-lived guard started at login. Each round takes a probe reading
//! (appended to the evidence log), confirms threshold crossings with hysteresis, runs `reap`
//! when the level has been critical in two consecutive readings, and notifies — never on the
//! polling path, never when free slots are at or below 1 %.
//!
//! The polling path does not fork or exec. A transient error is reported as a `notice` and the
//! next round tries again. SIGTERM/SIGINT/SIGHUP only set a flag: an in-flight cleanup,
//! including a SIGKILL escalation, finishes first; then a summary, and exit 0 (SIGHUP does
//! not reload: the service manager restarts the guard, which reads the config afresh). A
//! closed stdout ends it the same way; a stdout nobody reads never stalls a round
//! (watch_output).
//!
//! One `watch` per user: it holds `watch.lock` in the state directory for its lifetime and a
//! second one refuses (exit 3). A cleanup, here or from `reap`, holds `cleanup.lock` while
//! it signals and verifies, so the two never act on the same parent twice.

use std::time::{Duration, Instant};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::actions::escalate::RealClock;
use crate::actions::memory_guard::{self, Rejudge};
use crate::actions::notify::{self, Notifier};
use crate::cli::{ReapArgs, WatchArgs};
use crate::commands::Ctx;
use crate::commands::probe::{poll_row, resolve_thresholds, rfc3339_ms};
use crate::commands::reap::{self, ReapPlan};
use crate::commands::watch_events::{Event, ReadingEvent, status_line};
use crate::commands::watch_output::{DRAIN_AT_EXIT, Output};
use crate::core::alerts::{AlertState, Crossing};
use crate::core::evidence::{EvidenceLog, Row};
use crate::core::memory_guard::breaches;
use crate::core::reading::{self, Level, Reading, Thresholds, Trend};
use crate::core::snapshot::Detail;
use crate::core::state::{self, Loaded, load_json, save_json};
use crate::exit::UsageError;
use crate::output::thousands;
use crate::platform::{self, ProcessSource};

const STATE_FILE: &str = "watch-state.json";
/// Evidence rows kept in memory while the state directory cannot be written (a full disk),
/// written out in order as soon as it can be: a week of readings at the default 60 s
/// interval, about 4 MB. Past it the oldest are dropped, and a notice says how many.
pub const MAX_PENDING_ROWS: usize = 10_000;

/// What survives between rounds, and between `watch --once` runs from cron.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Persisted {
    alerts: AlertState,
    /// Unix ms of the last cleanup that had targets (the cooldown).
    last_cleanup_ms: Option<i64>,
}

struct Guard<'c, 'a> {
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
    parked: Vec<memory_guard::ParkedTree>,
    /// `--once`: a one-shot round does not park (its exit would wake them at once).
    once: bool,
    /// stdout, never waited for (watch_output).
    out: Output,
    /// This process's last cleanup with targets, on the monotonic clock: the cooldown within
    /// one run ignores wall-clock steps.
    last_cleanup: Option<Instant>,
    /// The guarded trees' warning lines (`[memory] warn_pct`).
    warn_lines: crate::core::memory_warn::WarnLines,
}

/// Whether a cleanup is still inside its cooldown, and the persisted wall time to keep.
/// Within one run the monotonic `since_own` decides, so a wall clock stepped forwards by
/// hours cannot end the cooldown early. Across runs (`watch --once` from cron) only the
/// persisted wall time exists: a last cleanup "in the future" means the clock was set back,
/// and the cooldown restarts from now rather than lasting until the clock catches up (hours
/// with no cleanup) or being skipped (a second cleanup at once).
fn in_cooldown(
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

pub fn run(ctx: &Ctx<'_>, args: &WatchArgs) -> Result<u8> {
    let thresholds = resolve_thresholds(ctx, &args.thresholds)?;
    let mut interval = ctx.settings.watch_interval.clone();
    interval.flag(args.interval);
    crate::config::check_interval(interval.value)
        .map_err(|m| UsageError(format!("--interval {m}")))?;
    if ctx.replaying() && !args.once {
        return Err(UsageError(
            "watch --snapshot needs --once: a recording has one instant".into(),
        )
        .into());
    }
    let reap_args = ReapArgs {
        // A recorded or redirected table is never acted on (and never reaches the reap
        // step); planning must not refuse it.
        dry_run: ctx.redirected().is_some(),
        allow: vec![],
        deny: vec![],
        min_zombies: None,
        grace: None,
        max_targets: None,
        idle_threshold: None,
        no_emergency: false,
        replay: crate::cli::SnapshotArg { snapshot: None },
    };
    let reap_plan = reap::plan(ctx, &reap_args)?;
    for w in &reap_plan.warnings {
        ctx.printer.warn(w);
    }
    // One guard per user: a second `watch` (a LaunchAgent and `brew services`, or a
    // `watch --once` from cron beside the service) refuses rather than double every action.
    let _single = if ctx.replaying() {
        None
    } else {
        single_watch()?
    };
    // The slot round keeps every process's `status` open between rounds (a quarter of its
    // cost was opening and closing them); the usual soft limit of 1,024 would leave no room.
    #[cfg(target_os = "linux")]
    platform::linux::slots::raise_nofile();
    let source = ctx.source()?;
    platform::stop_flag::install()
        .map_err(|e| anyhow::anyhow!("cannot install the SIGTERM handler: {e}"))?;
    let mut g = Guard {
        ctx,
        source,
        thresholds,
        reap_plan,
        auto_reap: ctx.settings.auto_reap.value && !args.no_auto_reap,
        cooldown: ctx.settings.reap_cooldown.value,
        notify: ctx.settings.notifications.value,
        state_dir: None,
        persisted: Persisted::default(),
        pending: Vec::new(),
        notifier: Notifier::default(),
        rounds: 0,
        cleanups: 0,
        errors: 0,
        status_open: false,
        saved: None,
        parked: Vec::new(),
        once: args.once,
        out: Output::stdout(ctx.printer.is_json()),
        last_cleanup: None,
        warn_lines: Default::default(),
    };
    crate::output::queue_stderr();
    g.load_state();
    if let Some(flag) = ctx.redirected().filter(|f| *f != "--snapshot") {
        g.notice(
            "info",
            &format!("{flag}: not the live process table, so no cleanup or memory guard acts"),
        );
    }
    let hangs = ctx.settings.watch_hangs.value && !args.no_hangs && !ctx.replaying();
    let mut pressure = super::watch_pressure::Waiter::arm(ctx, args.once);
    if let Some(line) = pressure.announce() {
        g.notice("info", &line);
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
        pressure.sleep_until(started + interval.value, &mut |f| g.on_pressure(f));
        if let Some(sig) = platform::stop_flag::requested() {
            g.notice("info", &format!("stopping on signal {sig}"));
            break;
        }
    }
    g.finish();
    Ok(crate::exit::after_stop(
        platform::stop_flag::requested(),
        crate::exit::OK,
    ))
}

/// `watch.lock` in the state directory, held for the life of the process; a refusal naming
/// it when another `watch` holds it. A state directory that cannot be made is no reason not
/// to guard: that is reported by the first round, and the guard runs unlocked.
fn single_watch() -> Result<Option<crate::fsio::Lock>> {
    let Ok(dir) = crate::paths::ensure_state_dir() else {
        return Ok(None);
    };
    let path = dir.join("watch");
    match crate::fsio::Lock::try_acquire(&path) {
        Ok(Some(l)) => Ok(Some(l)),
        Ok(None) => Err(crate::exit::Refused(format!(
            "another `headroom watch` is running for this user (it holds `{}.lock`); one guard \
             at a time: stop it, or run `headroom probe`/`reap` for a one-off",
            path.display()
        ))
        .into()),
        Err(_) => Ok(None),
    }
}

impl Guard<'_, '_> {
    fn emit(&mut self, e: &Event) {
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
                Event::Reading(r) => {
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

    fn notice(&mut self, severity: &'static str, message: &str) {
        if severity == "error" {
            self.errors += 1;
        }
        self.emit(&Event::Notice {
            at: rfc3339_ms(platform::now_ms()),
            severity,
            message: message.to_string(),
        });
    }

    fn load_state(&mut self) {
        if self.ctx.replaying() {
            return;
        }
        let dir = match crate::paths::ensure_state_dir() {
            Ok(d) => self.state_dir.insert(d),
            Err(e) => {
                self.notice(
                    "error",
                    &format!("{e:#}; readings are kept in memory until it can be written"),
                );
                return;
            }
        };
        match load_json::<Persisted>(&dir.join(STATE_FILE)) {
            Ok(Loaded::Ok(p)) => self.persisted = p,
            Ok(Loaded::Missing) => {}
            Ok(Loaded::Corrupt { aside, error }) => {
                let m = format!(
                    "watch state was corrupt ({error}); kept it as `{}` and started fresh",
                    aside.display()
                );
                self.notice("warning", &m);
            }
            Err(e) => self.notice("error", &format!("{e:#}")),
        }
    }

    fn save_state(&mut self) {
        let Some(dir) = self.state_dir.clone() else {
            return;
        };
        // Unchanged state (most rounds) is not rewritten.
        let now = serde_json::to_string(&self.persisted).ok();
        if now.is_some() && now == self.saved {
            return;
        }
        // Remembered only once written: a failed write (a full disk) is retried next round.
        match save_json(&dir.join(STATE_FILE), &self.persisted) {
            Ok(()) => self.saved = now,
            Err(e) => self.notice("error", &format!("{e:#}")),
        }
    }

    /// One round; returns probe's exit code for its reading.
    fn round(&mut self) -> u8 {
        self.rounds += 1;
        self.notifier.collect();
        let snap = match self.source.snapshot(Detail::Slots) {
            Ok(s) => s,
            Err(e) => {
                self.notice(
                    "error",
                    &format!("cannot read the process table: {e}; trying again next round"),
                );
                return Level::Unknown.exit_code();
            }
        };
        let r = reading::read(&snap, self.thresholds);
        let trend = self.record(&r);
        let crossing = self
            .persisted
            .alerts
            .observe(r.level, r.usage_pct, self.thresholds);
        let event = ReadingEvent::new(&r, &trend, self.persisted.alerts.confirmed);
        self.emit(&Event::Reading(event));
        if let Some(c) = crossing {
            self.notify_crossing(c, &r, &trend);
        }
        // Cleanups and guards act only on the live table (`Ctx::redirected`).
        let live = self.ctx.redirected().is_none();
        if live {
            self.memory_guards();
        }
        if self.persisted.alerts.confirmed == Level::Critical && self.auto_reap && live {
            self.maybe_reap();
        }
        self.save_state();
        r.level.exit_code()
    }

    /// History and the evidence row; rows that cannot be written wait in memory.
    fn record(&mut self, r: &Reading) -> Trend {
        let none = Trend::none(0);
        if self.state_dir.is_none() && !self.ctx.replaying() {
            self.state_dir = crate::paths::ensure_state_dir().ok();
        }
        let Some(dir) = self.state_dir.clone() else {
            return none;
        };
        if !dir.is_dir() {
            // Removed while we run (a cleanup script, `rm -rf ~/.local/state`): made again.
            if let Err(e) = crate::paths::create_private_dir(&dir) {
                self.notice("error", &format!("{e:#}"));
            }
        }
        let trend = match state::record_reading(&dir, r.uid, r.sample()) {
            Ok(h) => reading::trend(&h.samples, r.limit.limit),
            Err(e) => {
                self.notice("error", &format!("{e:#}"));
                none
            }
        };
        self.pending.push(poll_row(r, &trend));
        if self.pending.len() > MAX_PENDING_ROWS {
            let drop = self.pending.len() - MAX_PENDING_ROWS;
            self.pending.drain(..drop);
            self.notice(
                "error",
                &format!(
                    "{drop} evidence rows dropped: the state directory has been unwritable too long"
                ),
            );
        }
        // Rows written before a failure are not offered again (no duplicates); the rest
        // stay, in order.
        let done = EvidenceLog::new(&dir).append_some(&self.pending);
        self.pending.drain(..done.written);
        if let Some(e) = done.error {
            let m = format!(
                "{e:#}; {} evidence rows kept in memory (at most {MAX_PENDING_ROWS}) and retried next round",
                self.pending.len()
            );
            self.notice("error", &m);
        }
        trend
    }

    /// A full snapshot for `what`, or a notice and `None`.
    fn full_snapshot(&mut self, what: &str) -> Option<crate::core::snapshot::Snapshot> {
        match self.source.snapshot(Detail::Full) {
            Ok(s) => Some(s),
            Err(e) => {
                self.notice(
                    "error",
                    &format!("cannot read the process table for {what}: {e}"),
                );
                None
            }
        }
    }

    fn maybe_reap(&mut self) {
        let now = platform::now_ms();
        let (cooling, last) = in_cooldown(
            now,
            self.persisted.last_cleanup_ms,
            self.last_cleanup.map(|t| t.elapsed()),
            self.cooldown,
        );
        self.persisted.last_cleanup_ms = last;
        if cooling {
            return;
        }
        let Some(snap) = self.full_snapshot("cleanup") else {
            return;
        };
        match reap::execute(
            self.ctx,
            self.source.as_ref(),
            &snap,
            &self.reap_plan,
            false,
        ) {
            Ok(report) => {
                if !report.targets.is_empty() {
                    // The cooldown is spent only when something was done.
                    self.persisted.last_cleanup_ms = Some(now);
                    self.last_cleanup = Some(Instant::now());
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
                self.emit(&Event::Cleanup(Box::new(report)));
            }
            Err(e) => self.notice("error", &format!("cleanup failed: {e:#}")),
        }
    }

    /// The configured memory guards: wake what was parked once its tree is well under its
    /// limit again, then enforce every breaching tree (like `run --limit`).
    /// The warning step before a guard acts: one `approaching-limit` event and notification
    /// per crossing of `[memory] warn_pct` (`core::memory_warn`).
    fn guard_warnings(
        &mut self,
        table: &crate::core::snapshot::ProcessTable<'_>,
        rules: &[crate::core::memory_guard::Rule],
        free: Option<f64>,
    ) {
        let trees = crate::core::memory_warn::guarded(table, rules, free);
        let lines: Vec<(i32, u64, u64)> = trees
            .iter()
            .map(|t| (t.root, t.footprint_bytes, t.effective_bytes))
            .collect();
        let warn_pct = self.ctx.settings.memory_warn_pct.value;
        for (root, a) in self.warn_lines.round(&lines, warn_pct) {
            let Some(t) = trees.iter().find(|t| t.root == root) else {
                continue;
            };
            let e = Event::ApproachingLimit {
                at: rfc3339_ms(platform::now_ms()),
                root,
                name: t.name.clone(),
                pattern: t.pattern.clone(),
                footprint_bytes: a.footprint_bytes,
                limit_bytes: a.limit_bytes,
                pct: a.pct,
                warn_pct: a.warn_pct,
            };
            let body = e.human();
            self.emit(&e);
            if self.notify {
                if let Err(err) = self.notifier.post("headroom: memory limit near", &body) {
                    self.notice("info", &format!("notification not posted: {err}"));
                }
            }
        }
    }

    /// The pressure source fired (or went away) between rounds.
    fn on_pressure(&mut self, fired: super::watch_pressure::Fired) {
        use super::watch_pressure::Fired;
        match fired {
            Fired::Pressure => {
                self.notice("info", "memory pressure: running the memory guards now");
                self.memory_guards();
            }
            Fired::Gone(what) => {
                self.notice("warning", &format!("memory pressure source lost: {what}"));
            }
        }
    }

    fn memory_guards(&mut self) {
        // The settings outlive `self`'s borrow: no copy of the rules each round.
        let ctx = self.ctx;
        let rules = &ctx.settings.memory_guards.value;
        if rules.is_empty() && self.parked.is_empty() {
            return;
        }
        // Full detail: footprints (macOS reads them only then) and identities.
        let Some(snap) = self.full_snapshot("the memory guards") else {
            return;
        };
        let snap = &snap;
        let table = crate::core::snapshot::ProcessTable::new(snap);
        let free = snap.memory.map(|m| m.free_pct());
        self.guard_warnings(&table, rules, free);
        let grace = self.ctx.settings.memory_grace.value;
        let mut events = Vec::new();
        let mut errors = Vec::new();
        {
            let control = platform::native_control(self.source.as_ref());
            // Parked trees are re-judged every round: woken when under (or gone), kept
            // between 90 % and the limit, ended when over (they are among the breaches).
            let mut still = Vec::new();
            for p in std::mem::take(&mut self.parked) {
                match memory_guard::rejudge(snap, &p) {
                    Rejudge::Wake => memory_guard::wake(control.as_ref(), &p.ids),
                    Rejudge::Keep | Rejudge::Enforce => still.push(p),
                }
            }
            for breach in breaches(&table, rules, free) {
                let before = still
                    .iter()
                    .position(|p| Some(p.root) == breach.identity)
                    .map(|i| still.swap_remove(i));
                let opts = memory_guard::Options {
                    park: !self.once,
                    parked_before: before.as_ref().map(|p| p.ids.clone()).unwrap_or_default(),
                };
                match memory_guard::enforce(
                    self.source.as_ref(),
                    control.as_ref(),
                    snap,
                    breach,
                    grace,
                    &RealClock,
                    &opts,
                ) {
                    Ok(r) => {
                        if let (false, Some(root)) = (r.parked_ids.is_empty(), r.breach.identity) {
                            still.push(memory_guard::ParkedTree {
                                root,
                                pattern: r.breach.pattern.clone(),
                                limit_bytes: r.breach.limit_bytes,
                                ids: r.parked_ids.clone(),
                            });
                        }
                        events.push(Event::Memory(Box::new(r)));
                    }
                    Err(e) => {
                        // Not acted on: what was parked stays tracked.
                        still.extend(before);
                        errors.push(format!("memory guard failed: {e:#}"));
                    }
                }
            }
            self.parked = still;
        }
        for e in events {
            self.emit(&e);
        }
        for e in errors {
            self.notice("error", &e);
        }
    }

    /// A `hangs` round (macOS only; elsewhere there is no WindowServer and nothing to do).
    fn hangs_round(&mut self) {
        match crate::commands::hangs::watch_round(self.ctx) {
            Ok(None) => {}
            Ok(Some((report, warnings))) => {
                for w in warnings {
                    self.notice("warning", &w);
                }
                if !report.apps.is_empty() || !report.available() {
                    self.emit(&Event::Hang(Box::new(report)));
                }
            }
            Err(e) => self.notice("error", &format!("hangs round failed: {e:#}")),
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
            _ => format!("{} slots", thousands(r.usage.used)),
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
            "{limit}; {} zombies{eta}{top}. See `headroom reap --dry-run`.",
            thousands(r.usage.zombies)
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
            "warning",
            &format!(
                "notification withheld: {free} of {limit} slots free (≤ 1 %), and posting it \
                 needs a new process"
            ),
        );
        false
    }

    fn post(&mut self, title: &str, body: &str) {
        if let Err(e) = self.notifier.post(title, body) {
            self.notice("info", &format!("notification not posted: {e}"));
        }
    }

    fn finish(&mut self) {
        self.notifier.finish();
        // Never leave anything stopped behind.
        if !self.parked.is_empty() {
            let control = platform::native_control(self.source.as_ref());
            for p in std::mem::take(&mut self.parked) {
                memory_guard::wake(control.as_ref(), &p.ids);
            }
        }
        self.emit(&Event::Summary {
            rounds: self.rounds,
            cleanups: self.cleanups,
            errors: self.errors,
            pending_rows: self.pending.len(),
            stderr_dropped: crate::output::stderr_lost(),
        });
        self.out.finish(DRAIN_AT_EXIT);
        crate::output::finish_stderr(DRAIN_AT_EXIT);
    }
}

#[cfg(test)]
mod tests {
    use super::in_cooldown;
    use std::time::Duration;

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
