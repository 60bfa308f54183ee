//! `headroom reap`: decide about every parent holding the user's zombies, terminate the
//! approved ones, re-sample, and verify that their zombies are gone. Safe enough to run
//! unattended: every decision is `core::policy`'s, every signal identity-checked.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::actions::escalate::RealClock;
use crate::actions::terminate::{Outcome, terminate};
use crate::cli::ReapArgs;
use crate::commands::Ctx;
use crate::commands::probe::{poll_row, rfc3339_ms};
use crate::commands::reap_report::{ReapReport, TargetReport, summary};
use crate::commands::sessions;
use crate::core::emergency::Emergency;
use crate::core::liveness::RECKLESS_THRESHOLD_S;
use crate::core::patterns::{AllowDeny, Patterns};
use crate::core::policy::{self, Policy, Selection, Situation, SkipReason};
use crate::core::reading::{self, Reading};
use crate::core::snapshot::{Detail, ProcessTable, Snapshot};
use crate::exit::{self, ExitStatus, UsageError};
use crate::platform::{self, ProcessSource};
use crate::store::evidence::{EvidenceLog, Row};

/// How long verification waits for the zombies of the killed parents to be reaped by
/// whoever inherits them (launchd, init, a subreaper).
pub const VERIFY_WINDOW: Duration = Duration::from_secs(1);
/// The shortest idle threshold `reap` and `watch` accept.
pub const MIN_IDLE_THRESHOLD: Duration = Duration::from_secs(60);
/// The shortest grace between SIGTERM and SIGKILL.
pub const MIN_GRACE: Duration = Duration::from_millis(100);

#[derive(Debug)]
pub struct ReapPlan {
    pub policy: Policy,
    pub grace: Duration,
    pub dry_run: bool,
    pub active_fraction: f64,
    pub warnings: Vec<String>,
}

/// `reap`'s plan: its flags (`None` for `watch`'s cleanup, which has none) over the `[reap]`,
/// `[liveness]` and `[emergency]` sections. `dry_run` decides nothing here but whether a
/// redirected process table is refused.
pub fn plan(ctx: &Ctx<'_>, flags: Option<&ReapArgs>, dry_run: bool) -> Result<ReapPlan> {
    let s = &ctx.settings;
    let mut warnings = Vec::new();
    let allow = (s.reap.allow.clone())
        .with_flag(flags.and_then(|a| (!a.allow.is_empty()).then(|| a.allow.clone())));
    // The denylist only ever grows: patterns from the command line are added to the
    // configured ones (an allowlist from the command line replaces the configured one).
    let deny = s.reap.deny.clone().with_flag(flags.and_then(|a| {
        (!a.deny.is_empty()).then(|| {
            let mut merged = s.reap.deny.value.clone();
            merged.extend(a.deny.iter().cloned());
            merged
        })
    }));
    let allow_deny = AllowDeny {
        allow: Patterns::new(&allow.value),
        deny: Patterns::new(&deny.value),
    };
    if let Some((p, why)) = allow_deny.allow.too_broad() {
        return Err(UsageError(format!("allow pattern `{p}` is refused: {why}")).into());
    }
    if allow_deny.allow.is_empty() {
        warnings.push("the allowlist is empty, so it matches nothing: no parent will be selected (fail-closed)".into());
    }
    let min = s
        .reap
        .min_zombies
        .clone()
        .with_flag(flags.and_then(|a| a.min_zombies));
    let max = s
        .reap
        .max_targets
        .clone()
        .with_flag(flags.and_then(|a| a.max_targets));
    let grace = s.reap.grace.clone().with_flag(flags.and_then(|a| a.grace));
    let idle = (s.liveness.idle_threshold.clone()).with_flag(flags.and_then(|a| a.idle_threshold));
    if idle.value < MIN_IDLE_THRESHOLD {
        return Err(UsageError(format!(
            "idle threshold `{}` is refused: reap and watch need at least 60s (a live session \
             between turns would read as finished; idle-watch, which never signals, may go lower)",
            humantime::format_duration(idle.value)
        ))
        .into());
    }
    if grace.value < MIN_GRACE {
        return Err(UsageError(format!(
            "grace `{}` is refused: at least 100ms, or SIGTERM is never given a chance",
            humantime::format_duration(grace.value)
        ))
        .into());
    }
    let idle_s = idle.value.as_secs_f64();
    if idle_s < RECKLESS_THRESHOLD_S {
        warnings.push(format!(
            "idle threshold `{}` is below 30 min: a live session between turns will read as finished",
            humantime::format_duration(idle.value)
        ));
    }
    let emergency = Emergency {
        enabled: s.emergency.enabled.value && !flags.is_some_and(|a| a.no_emergency),
        free_fraction: s.emergency.free_pct.value / 100.0,
        recovery_fraction: s.emergency.recovery_pct.value / 100.0,
    };
    if let Some(flag) = ctx.redirected().filter(|_| !dry_run) {
        return Err(UsageError(format!(
            "reap {flag} needs --dry-run: a recorded or redirected process table cannot be acted on"
        ))
        .into());
    }
    Ok(ReapPlan {
        policy: Policy {
            allow_deny,
            min_zombies: min.value,
            max_targets: usize::try_from(max.value).unwrap_or(usize::MAX),
            spare_sessions: s.reap.spare_active_sessions.value,
            idle_threshold_s: idle_s,
            emergency,
        },
        grace: grace.value,
        dry_run,
        active_fraction: sessions::active_fraction(s),
        warnings,
    })
}

/// The decision table for `snap` (indexed as `table`), assessing sessions (and recording
/// CPU readings unless replaying).
fn decide(
    ctx: &Ctx<'_>,
    source: &dyn ProcessSource,
    snap: &Snapshot,
    table: &ProcessTable<'_>,
    plan: &ReapPlan,
) -> Result<(Selection, Reading)> {
    let reading = reading::read(snap, crate::core::reading::Thresholds::default());
    let history = if ctx.replaying() {
        sessions::History::None
    } else {
        sessions::History::live(snap.uid)
    };
    if let (sessions::History::Untrusted(why), false) = (&history, plan.dry_run) {
        anyhow::bail!("{why}; nothing was signalled");
    }
    let assessment = sessions::assess(source, snap, table, plan.active_fraction, &history)?;
    for w in &assessment.warnings {
        ctx.printer.warn(w);
    }
    let ancestry = table
        .ancestry(snap.self_pid, &mut |pid| {
            source.process(pid).ok().flatten().map(|p| p.ppid)
        })
        .map_err(|pid| {
            exit::Refused(format!(
                "headroom's ancestry is unknown: pid `{pid}` in its parent chain cannot be read, \
                 so nothing above it can be protected; nothing was signalled"
            ))
        })?;
    let situation = Situation {
        table,
        uid: snap.uid,
        self_pid: snap.self_pid,
        ancestry: &ancestry,
        used: reading.usage.used,
        limit: reading.limit.limit,
        sessions: &assessment.sessions,
    };
    Ok((policy::select(situation, &plan.policy), reading))
}

pub fn run(ctx: &Ctx<'_>, args: &ReapArgs) -> Result<ExitStatus> {
    let plan = plan(ctx, Some(args), args.dry_run)?;
    for w in &plan.warnings {
        ctx.printer.warn(w);
    }
    let source = ctx.source()?;
    let snap = source
        .snapshot(Detail::Full)
        .context("cannot read the process table")?;
    let report = execute(ctx, source.as_ref(), &snap, &plan, !ctx.printer.is_json())?;
    let all_verified = report.targets.iter().all(|t| t.verified);
    finish(
        ctx,
        &report,
        if all_verified {
            ExitStatus::Ok
        } else {
            ExitStatus::Unhappy
        },
    )
}

/// Decide about `snap`; unless it is a dry run, terminate the targets, verify, and record
/// the evidence. With `show_table` the decision table is printed before anything is signalled.
pub fn execute(
    ctx: &Ctx<'_>,
    source: &dyn ProcessSource,
    snap: &Snapshot,
    plan: &ReapPlan,
    show_table: bool,
) -> Result<ReapReport> {
    let first = ProcessTable::new(snap);
    let (mut selection, mut reading) = decide(ctx, source, snap, &first, plan)?;
    // One cleanup at a time per user: `watch` and a `reap` from cron never signal the same
    // parent twice. A cleanup that had to wait reads the table again, and the targets the
    // other one handled meanwhile are reported as such instead of being signalled.
    let mut _cleanup = None;
    let mut handled = Vec::new();
    let fresh;
    let mut snap = snap;
    if !plan.dry_run && !ctx.replaying() && selection.targets().next().is_some() {
        match cleanup_lock() {
            Ok((lock, waited)) => {
                _cleanup = Some(lock);
                if waited {
                    fresh = source
                        .snapshot(Detail::Full)
                        .context("cannot read the process table after waiting for a cleanup")?;
                    snap = &fresh;
                    let before: Vec<i32> = selection.targets().map(|d| d.pid).collect();
                    let again = ProcessTable::new(snap);
                    (selection, reading) = decide(ctx, source, snap, &again, plan)?;
                    handled = before
                        .into_iter()
                        .filter(|pid| selection.targets().all(|d| d.pid != *pid))
                        .collect();
                }
            }
            Err(e) => ctx.printer.warn(&format!(
                "{e:#}; cleaning up without the lock that keeps two cleanups apart"
            )),
        }
    }
    let table = ProcessTable::new(snap);
    let mut report = ReapReport::new(
        snap,
        &reading,
        &selection,
        plan.dry_run,
        &plan.policy,
        plan.grace,
    );
    report.already_handled = handled;
    if show_table {
        ctx.printer.text(&report.human_table(ctx.printer))?;
    }
    if plan.dry_run || selection.targets().next().is_none() {
        report.summary = summary(&report, &selection);
        if !plan.dry_run && !ctx.replaying() {
            record_evidence(&reading, &selection, &report)?;
        }
        return Ok(report);
    }
    let control = platform::native_control(source);
    let mut zombies_of: HashMap<i32, Vec<i32>> = HashMap::new();
    for d in selection.targets() {
        zombies_of.insert(
            d.pid,
            table
                .children(d.pid)
                .filter(|c| c.is_zombie())
                .map(|c| c.pid)
                .collect(),
        );
    }
    for d in selection.targets() {
        let Some(identity) = d.identity else { continue };
        let t = terminate(control.as_ref(), &identity, plan.grace, &RealClock);
        if let Some(e) = &t.error {
            ctx.printer
                .warn(&format!("pid `{}` ({}): {e}", d.pid, d.name));
        }
        report.targets.push(TargetReport::new(
            d,
            &t,
            zombies_of.get(&d.pid).map_or(0, Vec::len) as u64,
        ));
    }
    let used_before = table.usage(snap.uid).processes;
    verify(source, used_before, &zombies_of, &mut report)?;
    report.summary = summary(&report, &selection);
    record_evidence(&reading, &selection, &report)?;
    Ok(report)
}

/// The per-user cleanup lock (`cleanup.lock` in the state directory) and whether another
/// cleanup held it, so that this one waited.
fn cleanup_lock() -> Result<(crate::store::fsio::Lock, bool)> {
    let path = crate::store::paths::ensure_state_dir()?.join("cleanup");
    if let Some(l) = crate::store::fsio::Lock::try_acquire(&path)? {
        return Ok((l, false));
    }
    Ok((crate::store::fsio::Lock::acquire(&path)?, true))
}

fn finish(ctx: &Ctx<'_>, report: &ReapReport, status: ExitStatus) -> Result<ExitStatus> {
    if ctx.printer.is_json() {
        ctx.printer.json_value(report)?;
    } else {
        ctx.printer.text(&report.human_results())?;
    }
    Ok(status)
}

/// Re-sample until every killed parent's zombies are gone or the window closes. A zombie
/// counts as reaped when its pid no longer holds a zombie (whoever inherited it waited).
fn verify(
    source: &dyn ProcessSource,
    used_before: u64,
    zombies_of: &HashMap<i32, Vec<i32>>,
    report: &mut ReapReport,
) -> Result<()> {
    let start = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let after = source
            .snapshot(Detail::Slots)
            .context("cannot re-sample the process table to verify")?;
        let zombies_now: std::collections::HashSet<i32> = after
            .processes
            .iter()
            .filter(|p| p.is_zombie())
            .map(|p| p.pid)
            .collect();
        let alive_now: std::collections::HashSet<i32> = after
            .processes
            .iter()
            .filter(|p| !p.is_zombie())
            .map(|p| p.pid)
            .collect();
        let mut all_clear = true;
        for t in report.targets.iter_mut() {
            let pids = zombies_of.get(&t.pid).map(Vec::as_slice).unwrap_or(&[]);
            let remaining = pids.iter().filter(|z| zombies_now.contains(z)).count() as u64;
            t.zombies_reaped = t.zombies_before.saturating_sub(remaining);
            let parent_gone = t.outcome.succeeded() || !alive_now.contains(&t.pid);
            t.verified = parent_gone && t.outcome.succeeded() && remaining == 0;
            all_clear &= remaining == 0 || !t.outcome.succeeded();
        }
        let used_after = ProcessTable::new(&after).usage(after.uid).processes;
        report.slots_freed = used_before.saturating_sub(used_after);
        if all_clear || start.elapsed() >= VERIFY_WINDOW {
            return Ok(());
        }
    }
}

/// One row per terminated parent, or one `cleanup,no-targets` row.
fn record_evidence(reading: &Reading, selection: &Selection, report: &ReapReport) -> Result<()> {
    let dir = crate::store::paths::ensure_state_dir()?;
    // The reading's columns, stamped with the time of the cleanup (no forecast: the
    // pre-cleanup curve says nothing about after it).
    let mut base = poll_row(reading, None);
    base.reading.at = rfc3339_ms(platform::now_ms());
    let rows: Vec<Row> = if report.targets.is_empty() {
        let unreadable = selection.skipped_for(SkipReason::SessionSignalUnavailable);
        let result = if unreadable > 0 {
            format!("no-targets;unreadable={unreadable}")
        } else {
            "no-targets".into()
        };
        let top = selection.decisions.first();
        vec![Row {
            action: "cleanup".into(),
            result,
            top_parent: top.map(|d| (d.pid, d.name.clone(), d.zombies)),
            session_signal: top.map(|d| d.session.signal_text()).unwrap_or_default(),
            ..base
        }]
    } else {
        report
            .targets
            .iter()
            .map(|t| Row {
                action: format!("kill:{}", t.signal_list),
                result: format!(
                    "{};reaped={};freed={};verified={}",
                    t.outcome.as_str(),
                    t.zombies_reaped,
                    t.zombies_reaped
                        + u64::from(t.outcome == Outcome::Sigterm || t.outcome == Outcome::Sigkill),
                    t.verified
                ),
                top_parent: Some((t.pid, t.name.clone(), t.zombies_before)),
                session_signal: t.session_signal.clone(),
                override_: t.override_.map(str::to_string).unwrap_or_default(),
                ..base.clone()
            })
            .collect()
    };
    EvidenceLog::new(&dir).append(&rows)
}

#[cfg(test)]
mod plan_tests {
    use super::*;

    fn reap_args(argv: &[&str]) -> ReapArgs {
        use clap::Parser;
        let mut full = vec!["headroom", "reap"];
        full.extend_from_slice(argv);
        match crate::cli::Cli::try_parse_from(full).map(|c| c.command) {
            Ok(crate::cli::Command::Reap(a)) => a,
            other => panic!("not reap args: {other:?}"),
        }
    }

    /// `watch`'s cleanup (no flags) is planned exactly as `reap` without flags, from the same
    /// sections; a flag changes only what it names (the deny flag adds to the file's list).
    #[test]
    fn watch_without_flags_plans_what_reap_without_flags_plans() {
        let printer = crate::output::Printer::new(false, false, crate::output::ColorChoice::Never);
        let global = crate::cli::GlobalArgs::plain();
        let file = "[reap]\nallow = [\"agency\", \"claude\"]\ndeny = [\"keep\"]\nmin_zombies = 40\n\
                    max_targets = 3\ngrace = \"4s\"\nspare_active_sessions = false\n\
                    [liveness]\nidle_threshold = \"3h\"\ncpu_active_pct = 2\n\
                    [emergency]\nenabled = false\nfree_pct = 7\n";
        let ctx = Ctx {
            printer: &printer,
            global: &global,
            settings: crate::config::Settings::parse(file, std::path::Path::new("c.toml")).unwrap(),
        };
        let watch = plan(&ctx, None, false).unwrap();
        let reap = plan(&ctx, Some(&reap_args(&[])), false).unwrap();
        assert_eq!(format!("{watch:?}"), format!("{reap:?}"));
        assert_eq!(watch.policy.min_zombies, 40);
        assert_eq!(watch.grace, Duration::from_secs(4));
        assert!(!watch.policy.spare_sessions && !watch.policy.emergency.enabled);
        assert!((watch.active_fraction - 0.02).abs() < 1e-12);
        // Control: flags reach reap's plan, and only the ones given.
        let flagged = plan(
            &ctx,
            Some(&reap_args(&["--min-zombies", "7", "--deny", "also"])),
            false,
        )
        .unwrap();
        assert_eq!(flagged.policy.min_zombies, 7);
        assert_eq!(flagged.policy.max_targets, 3);
        assert_eq!(
            format!("{:?}", flagged.policy.allow_deny.deny),
            format!(
                "{:?}",
                Patterns::new(&["keep".to_string(), "also".to_string()])
            )
        );
    }
}
