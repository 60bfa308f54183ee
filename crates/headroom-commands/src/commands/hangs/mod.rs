//! `headroom hangs`: detect and recover apps that macOS marks "not responding".
//!
//! A round reads the running GUI apps (macOS `AppSource`, or one recorded round), lets
//! `core::hangs` decide, has an `Actor` carry out (or only plan) the restarts and the
//! notifications the core decided, logs events and keeps the monitor state. Reading comes
//! first and never execs; acting comes after, off the polling path.
//!
//! Modes: one live round (default); `--watch` (rounds until SIGINT/SIGTERM); `--dry-run`
//! (decides, plans, touches nothing: no signal, exec, notification, state or event);
//! `--observations FILE` (recorded rounds on any OS, a fresh in-memory monitor, actions
//! planned not performed, events written marked `replayed`); `--events` (the history).
//! The round itself (decide → act → events → state), which `watch` runs too, is
//! `actions::hang_round`.

pub mod report;

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::actions::hang_round::report::{ActorMode, RoundReport};
use crate::actions::hang_round::{
    Actor, LiveActor, Planner, persisted_round, process_round, refuse_redirected, with_identities,
};
use crate::actions::recover;
use crate::cli::HangsArgs;
use crate::commands::hangs::report::{
    EventsReport, HangsSummary, human_events, human_round, human_summary,
};
use crate::commands::{Ctx, hang_round_settings};
use crate::core::hangs::{MAX_ROUND_GAP_MS, MonitorConfig, MonitorState};
use crate::core::time::format_ms;
use crate::exit::{self, ExitStatus, usage};
use crate::platform::{self, stop_flag};
use crate::store::{self, hang_events};

const DEFAULT_EVERY: Duration = Duration::from_secs(15);
const MIN_EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, PartialEq, Eq)]
enum HangsMode {
    Live,
    Replay(std::path::PathBuf),
    Events(Option<Duration>),
}

/// `hangs` args resolved against the config.
#[derive(Debug, Clone)]
struct HangsPlan {
    mode: HangsMode,
    dry_run: bool,
    /// `--record-events`: a replay appends its events to the live history (else it writes
    /// nothing, so replaying twice does not duplicate history).
    record_events: bool,
    watch: bool,
    every: Duration,
    monitor: MonitorConfig,
    recovery: recover::RecoverySettings,
}

fn resolve(ctx: &Ctx<'_>, a: &HangsArgs) -> Result<HangsPlan> {
    refuse_redirected(ctx.redirected())?;
    if ctx.global.snapshot.is_some() {
        return Err(usage(
            "`hangs` reads GUI apps, not the process table: replay recorded rounds with \
             `--observations FILE` instead of `--snapshot`",
        ));
    }
    if a.events {
        for (set, flag) in [
            (a.dry_run, "--dry-run"),
            (a.watch, "--watch"),
            (a.every.is_some(), "--interval"),
            (a.observations.is_some(), "--observations"),
        ] {
            if set {
                return Err(usage(format!(
                    "`--events` lists the history; it cannot be combined with `{flag}`"
                )));
            }
        }
    } else if a.since.is_some() {
        return Err(usage("`--since` only applies to `--events`"));
    }
    if a.record_events && (a.observations.is_none() || a.dry_run) {
        return Err(usage(
            "`--record-events` applies to an `--observations` replay without `--dry-run`",
        ));
    }
    if a.every.is_some() && !a.watch {
        return Err(usage("`--interval` only applies to `--watch`"));
    }
    if a.watch && a.observations.is_some() {
        return Err(usage(
            "`--observations` replays a file once; it cannot be combined with `--watch`",
        ));
    }
    let every = a.every.unwrap_or(DEFAULT_EVERY);
    let max_every = Duration::from_millis(MAX_ROUND_GAP_MS as u64);
    if every < MIN_EVERY || every > max_every {
        return Err(usage(format!(
            "--interval `{}` must be between 1s and 10m (rounds further apart are not consecutive)",
            humantime::format_duration(every)
        )));
    }
    let (monitor, recovery) = hang_round_settings(&ctx.settings.hangs);
    Ok(HangsPlan {
        mode: match (&a.observations, a.events) {
            (_, true) => HangsMode::Events(a.since),
            (Some(p), false) => HangsMode::Replay(p.clone()),
            (None, false) => HangsMode::Live,
        },
        dry_run: a.dry_run,
        record_events: a.record_events,
        watch: a.watch,
        every,
        monitor,
        recovery,
    })
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &HangsArgs) -> Result<ExitStatus> {
    let plan = resolve(ctx, args)?;
    match &plan.mode {
        HangsMode::Events(since) => events(ctx, *since),
        HangsMode::Replay(path) => replay(ctx, &plan, path),
        HangsMode::Live => live(ctx, &plan),
    }
}

// --- Modes ----------------------------------------------------------------------------

fn print_round(ctx: &Ctx<'_>, r: &RoundReport) -> Result<()> {
    let p = ctx.printer;
    if p.is_json() {
        p.json_value(r)?;
    } else {
        p.text(&human_round(r, p))?;
    }
    Ok(())
}

fn replay(ctx: &Ctx<'_>, plan: &HangsPlan, path: &Path) -> Result<ExitStatus> {
    let rounds = store::observations::load(path).map_err(exit::Failure::Failed)?;
    let dir = if plan.record_events {
        Some(crate::store::paths::ensure_state_dir()?)
    } else {
        None
    };
    let mut actor = Planner::new(if plan.dry_run {
        ActorMode::DryRun
    } else {
        ActorMode::Replay
    });
    // A replay has its own monitor: it must neither read nor change the live one's state.
    let mut state = MonitorState::default();
    let mut unresolved = false;
    let mut failure = None;
    for round in &rounds {
        let (report, events) =
            process_round(&mut state, round, &plan.monitor, &plan.recovery, &mut actor);
        if let Some(dir) = &dir {
            // Retention is measured on the recording's own clock, so replaying an old
            // recording does not prune its own events as they are written.
            match hang_events::append_events(dir, &events, round.at_ms) {
                Ok(w) => w.iter().for_each(|w| ctx.printer.warn(w)),
                Err(e) => failure = Some(e.context("hang events were not logged")),
            }
        }
        unresolved |= report.unresolved();
        print_round(ctx, &report)?;
    }
    if let Some(e) = failure {
        return Err(exit::Failure::Failed(format!("{e:#}")).into());
    }
    // A dry run decides and reports: what it found is in the output, as for `reap --dry-run`.
    Ok(if unresolved && !plan.dry_run {
        ExitStatus::Unhappy
    } else {
        ExitStatus::Ok
    })
}

fn live(ctx: &Ctx<'_>, plan: &HangsPlan) -> Result<ExitStatus> {
    let Ok(apps) = platform::native_apps() else {
        return Err(exit::Failure::Failed(format!(
            "hangs: unsupported on {} (needs the macOS WindowServer)",
            std::env::consts::OS
        ))
        .into());
    };
    let source = platform::native();
    let control = platform::native_control(&*source);
    let dir = if plan.dry_run {
        crate::store::paths::state_dir()?
    } else {
        crate::store::paths::ensure_state_dir()?
    };
    let mut live_actor = LiveActor::new(&*source, &*control, plan.recovery);
    let mut planner = Planner::new(ActorMode::DryRun);
    let actor: &mut dyn Actor = if plan.dry_run {
        &mut planner
    } else {
        &mut live_actor
    };
    if plan.watch {
        stop_flag::install().context("--watch cannot handle SIGINT/SIGTERM")?;
    }
    let mut summary = HangsSummary::default();
    loop {
        // Read (no exec), then decide and act.
        let round = with_identities(apps.scan(), &*source, platform::now_ms());
        let (report, warnings, failure) = persisted_round(
            &dir,
            plan.dry_run,
            &round,
            &plan.monitor,
            &plan.recovery,
            actor,
        )?;
        print_round(ctx, &report)?;
        warnings.iter().for_each(|w| ctx.printer.warn(w));
        summary.add(&report);
        if !plan.watch {
            if let Some(e) = failure {
                return Err(exit::Failure::Failed(format!("{e:#}")).into());
            }
            if let Some(reason) = &report.unavailable_reason {
                return Err(exit::Failure::Failed(format!(
                    "hangs: interface unavailable ({reason})"
                ))
                .into());
            }
            return Ok(if report.unresolved() && !plan.dry_run {
                ExitStatus::Unhappy
            } else {
                ExitStatus::Ok
            });
        }
        if let Some(e) = failure {
            ctx.printer.warn(&format!("{e:#}"));
        }
        stop_flag::sleep(plan.every);
        if stop_flag::requested().is_some() {
            break;
        }
    }
    let sig = stop_flag::requested();
    summary.at = crate::core::time::format_ms(crate::platform::now_ms());
    summary.stopped_by = sig.map(|s| {
        if stop_flag::is_interrupt(s) {
            "SIGINT".to_string()
        } else {
            "SIGTERM".to_string()
        }
    });
    if ctx.printer.is_json() {
        ctx.printer.json_value(&summary)?;
    } else {
        ctx.printer.stderr_line(&human_summary(&summary));
    }
    Ok(exit::after_stop(sig, ExitStatus::Ok))
}

fn events(ctx: &Ctx<'_>, since: Option<Duration>) -> Result<ExitStatus> {
    let dir = crate::store::paths::state_dir()?;
    let since_ms = since.map(|d| {
        platform::now_ms().saturating_sub(i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
    });
    let (events, skipped) = hang_events::read_events(&dir, since_ms)?;
    if skipped > 0 {
        ctx.printer.warn(&format!(
            "{skipped} unreadable line(s) in `{}` were skipped",
            dir.join(hang_events::EVENTS_FILE).display()
        ));
    }
    let report = EventsReport {
        since_at: since_ms.map(format_ms),
        skipped_lines: skipped,
        events,
    };
    if ctx.printer.is_json() {
        ctx.printer.json_value(&report)?;
    } else {
        ctx.printer.text(&human_events(&report))?;
    }
    Ok(ExitStatus::Ok)
}

#[cfg(test)]
mod run_tests;
#[cfg(test)]
mod tests;
