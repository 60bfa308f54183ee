//! `headroom watch`: the long-lived guard started at login. Each round takes a probe reading
//! (appended to the evidence log), confirms threshold crossings with hysteresis, runs `reap`
//! when the level has been critical in two consecutive readings, and notifies — never on the
//! polling path, never when free slots are at or below 1 %.
//!
//! The polling path does not fork or exec. A transient error is reported as a `notice` and the
//! next round tries again. SIGTERM/SIGINT only set a flag: an in-flight cleanup, including a
//! SIGKILL escalation, finishes first; then a summary, and exit 0.

use std::time::{Duration, Instant};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::actions::memory_guard::{self, GuardOutcome};
use crate::actions::notify::{self, Notifier};
use crate::actions::terminate::RealSleeper;
use crate::cli::{ReapArgs, WatchArgs};
use crate::commands::Ctx;
use crate::commands::probe::{poll_row, resolve_thresholds, rfc3339_ms};
use crate::commands::reap::{self, ReapPlan};
use crate::commands::watch_events::{Event, ReadingEvent, status_line};
use crate::core::alerts::{AlertState, Crossing};
use crate::core::evidence::{EvidenceLog, Row};
use crate::core::memory::effective_limit;
use crate::core::memory_guard::breaches;
use crate::core::reading::{self, Level, Reading, Thresholds, Trend};
use crate::core::snapshot::Detail;
use crate::core::snapshot::Identity;
use crate::core::state::{self, Loaded, load_json, save_json};
use crate::exit::UsageError;
use crate::output::thousands;
use crate::platform::{self, ProcessSource};

const STATE_FILE: &str = "watch-state.json";
/// Evidence rows kept in memory while the state directory cannot be written (a full disk);
/// written out as soon as it can be.
const MAX_PENDING_ROWS: usize = 100_000;

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
    /// Subtrees a memory guard parked to relief: (tree root, its rule's limit, the parked).
    parked: Vec<(i32, u64, Vec<Identity>)>,
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
    };
    let reap_plan = reap::plan(ctx, &reap_args)?;
    for w in &reap_plan.warnings {
        ctx.printer.warn(w);
    }
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
    };
    g.load_state();
    if let Some(flag) = ctx.redirected().filter(|f| *f != "--snapshot") {
        g.notice(
            "info",
            &format!("{flag}: not the live process table, so no cleanup or memory guard acts"),
        );
    }
    let hangs = ctx.settings.watch_hangs.value && !args.no_hangs && !ctx.replaying();
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
        platform::stop_flag::sleep(interval.value.saturating_sub(started.elapsed()));
        if let Some(sig) = platform::stop_flag::requested() {
            g.notice("info", &format!("stopping on signal {sig}"));
            break;
        }
    }
    g.finish();
    Ok(crate::exit::OK)
}

impl Guard<'_, '_> {
    fn emit(&mut self, e: &Event) {
        let p = self.ctx.printer;
        if p.is_json() {
            let _ = p.json_value(e);
            return;
        }
        match e {
            Event::Reading(r) => {
                let line = status_line(r);
                if p.stdout_is_terminal() {
                    let _ = p.text(&format!("\r\x1b[2K{line}"));
                    self.status_open = true;
                } else {
                    let _ = p.text(&format!("{line}\n"));
                }
            }
            other => {
                let prefix = if self.status_open { "\n" } else { "" };
                self.status_open = false;
                let _ = p.text(&format!("{prefix}{}\n", other.human()));
            }
        }
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
        self.saved = now;
        if let Err(e) = save_json(&dir.join(STATE_FILE), &self.persisted) {
            self.notice("error", &format!("{e:#}"));
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
        match EvidenceLog::new(&dir).append(&self.pending) {
            Ok(()) => self.pending.clear(),
            Err(e) => {
                let m = format!(
                    "{e:#}; {} evidence rows kept in memory and retried next round",
                    self.pending.len()
                );
                self.notice("error", &m);
            }
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
        if let Some(last) = self.persisted.last_cleanup_ms {
            if now - last < self.cooldown.as_millis() as i64 {
                return;
            }
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
                    self.cleanups += 1;
                    if self.notify && notify::allowed(report.usage.free_slots, report.usage.limit) {
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
        let grace = self.ctx.settings.memory_grace.value;
        let mut events = Vec::new();
        let mut errors = Vec::new();
        {
            let control = platform::native_control(self.source.as_ref());
            let mut still = Vec::new();
            for (root, limit, ids) in std::mem::take(&mut self.parked) {
                let tree = crate::core::top::tree_at(&table, root, snap.uid, snap.self_pid);
                let relieved = tree.is_none_or(|t| {
                    (t.footprint_bytes as f64) < 0.9 * effective_limit(limit, free) as f64
                });
                if relieved {
                    memory_guard::wake(control.as_ref(), &ids);
                } else {
                    still.push((root, limit, ids));
                }
            }
            for breach in breaches(&table, rules, free) {
                if still.iter().any(|(r, _, _)| *r == breach.root) {
                    continue; // parked this episode already; ended next time if still over
                }
                let limit = breach.limit_bytes;
                match memory_guard::enforce(
                    self.source.as_ref(),
                    control.as_ref(),
                    snap,
                    breach,
                    grace,
                    &RealSleeper,
                ) {
                    Ok(r) => {
                        if r.outcome == GuardOutcome::Parked {
                            still.push((r.breach.root, limit, r.parked_ids.clone()));
                        }
                        events.push(Event::Memory(Box::new(r)));
                    }
                    Err(e) => errors.push(format!("memory guard failed: {e:#}")),
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
        if !self.notify || !notify::allowed(r.free_slots, r.limit.limit) {
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
            for (_, _, ids) in std::mem::take(&mut self.parked) {
                memory_guard::wake(control.as_ref(), &ids);
            }
        }
        self.emit(&Event::Summary {
            rounds: self.rounds,
            cleanups: self.cleanups,
            errors: self.errors,
            pending_rows: self.pending.len(),
        });
    }
}
