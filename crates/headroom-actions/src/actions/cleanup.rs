//! A cleanup, `reap`'s and `watch`'s: decide about every parent holding the user's zombies
//! (`core::policy`), terminate the approved ones, re-sample, and verify that their zombies
//! are gone (`reap_verify`).
//!
//! Every decision is still true at its signal. The targets are ended in one escalation:
//! SIGTERM to all of them at once, right after the decision, and one shared grace (n
//! parents that ignore SIGTERM cost one grace, not n, which is what the emergency relief
//! projection assumes: it chose them together, in the seed's order, and working through
//! them one grace at a time is what lost the race on 2026-08-30). At the end of the grace
//! the table is read again and the selection made again for the survivors alone: only
//! those it still chooses get SIGKILL (a parent that reaped its own zombies meanwhile, or
//! whose session woke, is `spared`). Only the zombies of parents headroom ended are
//! credited as reaped.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::actions::clock::{Clock, RealClock};
use crate::actions::reap_report::{ReapReport, TargetReport, evidence_rows, summary};
use crate::actions::reap_verify::verify;
use crate::actions::session_assessment::{History, assess};
use crate::actions::terminate::{Termination, TerminationOutcome, terminate_all};
use crate::core::policy::{self, Decision, Selection, Situation};
use crate::core::process_table::ProcessTable;
use crate::core::reading::{self, Reading};
use crate::core::reap_plan::ReapPlan;
use crate::core::snapshot::{Detail, Identity, Snapshot};
use crate::core::time::format_ms;
use crate::exit;
use crate::output::Printer;
use crate::output::progress::Countdown;
use crate::platform::{self, ProcessSource};
use crate::store::evidence::{EvidenceLog, Row};

/// The decision table for `snap` (indexed as `table`), assessing sessions (and recording
/// CPU readings unless replaying); with `only`, about those parents alone (the gate before
/// SIGKILL). With `warn`, the assessment's warnings are printed.
fn decide(
    printer: &Printer,
    replaying: bool,
    source: &dyn ProcessSource,
    (snap, table): (&Snapshot, &ProcessTable<'_>),
    plan: &ReapPlan,
    only: Option<&[Identity]>,
    warn: bool,
) -> Result<(Selection, Reading)> {
    let reading = reading::read(snap, plan.thresholds);
    let history = if replaying {
        History::None
    } else {
        History::live(snap.uid)
    };
    if let (History::Untrusted(why), false) = (&history, plan.dry_run) {
        anyhow::bail!("{why}; nothing was signalled");
    }
    let assessment = assess(source, snap, table, plan.active_fraction, &history)?;
    for w in assessment.warnings.iter().filter(|_| warn) {
        printer.warn(w);
    }
    let ancestry = table
        .ancestry(snap.self_pid, &mut |pid| {
            source.process(pid).ok().flatten().map(|p| p.ppid)
        })
        .map_err(|pid| {
            exit::RefusedError(format!(
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
    Ok((policy::select_among(situation, &plan.policy, only), reading))
}

/// What a cleanup did, and its evidence rows, not yet written (`reap` writes them; `watch`
/// keeps them with its own rows while they cannot be written). No rows for a dry run or a
/// replay.
#[derive(Debug)]
pub struct Cleanup {
    pub report: ReapReport,
    pub rows: Vec<Row>,
}

/// Append `rows` to the evidence log (nothing to do for none).
pub fn record(rows: &[Row]) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let dir = crate::store::paths::ensure_state_dir()?;
    EvidenceLog::new(&dir).append(rows)
}

/// Decide about `snap`; unless it is a dry run, terminate the targets in one escalation and
/// verify. With `show_table` the decision table is printed before anything is signalled.
/// Past the first signal nothing fails the call: what went wrong is a warning and the report
/// says what is known.
pub fn execute(
    printer: &Printer,
    replaying: bool,
    source: &dyn ProcessSource,
    snap: &Snapshot,
    plan: &ReapPlan,
    show_table: bool,
) -> Result<Cleanup> {
    let first = ProcessTable::new(snap);
    let (mut selection, mut reading) =
        decide(printer, replaying, source, (snap, &first), plan, None, true)?;
    // One cleanup at a time per user: `watch` and a `reap` from cron never signal the same
    // parent twice. A cleanup that had to wait reads the table again and decides again; the
    // targets of its first reading that are no longer targets are reported, not signalled.
    let mut _cleanup = None;
    let mut handled = Vec::new();
    let fresh;
    let mut snap = snap;
    if !plan.dry_run && !replaying && selection.targets().next().is_some() {
        match cleanup_lock(printer) {
            Ok((lock, waited)) => {
                _cleanup = Some(lock);
                if waited {
                    fresh = source
                        .snapshot(Detail::Full)
                        .context("cannot read the process table after waiting for a cleanup")?;
                    snap = &fresh;
                    (selection, reading, handled) =
                        decide_again(printer, replaying, source, snap, plan, &selection)?;
                }
            }
            Err(e) => printer.warn(&format!(
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
        printer.text(&report.human_table(printer))?;
    }
    let stamp = || format_ms(platform::now_ms());
    if plan.dry_run || selection.targets().next().is_none() {
        report.summary = summary(&report, &selection);
        let rows = if plan.dry_run || replaying {
            Vec::new()
        } else {
            evidence_rows(&reading, &selection, &report, stamp())
        };
        return Ok(Cleanup { report, rows });
    }
    let targets: Vec<_> = selection
        .targets()
        .filter_map(|d| Some((d, d.identity?)))
        .collect();
    let ids: Vec<Identity> = targets.iter().map(|(_, id)| *id).collect();
    let mut zombies_of: ZombiesOf = ids
        .iter()
        .map(|i| (i.pid, zombie_pids(&table, i.pid)))
        .collect();
    let (ended, unread_at_gate) =
        end_targets(printer, replaying, source, plan, &ids, &mut zombies_of);
    report_ended(
        printer,
        &targets,
        ended,
        unread_at_gate.as_deref(),
        &zombies_of,
        &mut report,
    );
    let used_before = table.usage(snap.uid).processes;
    if let Err(e) = verify(source, used_before, &zombies_of, &mut report) {
        printer.warn(&format!(
            "{}; the cleanup is reported as far as it was verified",
            crate::said_once(&e)
        ));
    }
    report.summary = summary(&report, &selection);
    let rows = evidence_rows(&reading, &selection, &report, stamp());
    Ok(Cleanup { report, rows })
}

/// After waiting for another cleanup's lock: decide again on `snap`, the table read since.
/// Also the pids `before` chose that are no longer targets (the other cleanup handled them).
fn decide_again(
    printer: &Printer,
    replaying: bool,
    source: &dyn ProcessSource,
    snap: &Snapshot,
    plan: &ReapPlan,
    before: &Selection,
) -> Result<(Selection, Reading, Vec<i32>)> {
    let before: Vec<i32> = before.targets().map(|d| d.pid).collect();
    let again = ProcessTable::new(snap);
    let (selection, reading) = decide(
        printer,
        replaying,
        source,
        (snap, &again),
        plan,
        None,
        false,
    )?;
    let handled = before
        .into_iter()
        .filter(|pid| selection.targets().all(|d| d.pid != *pid))
        .collect();
    Ok((selection, reading, handled))
}

/// End `ids` in one escalation: SIGTERM to all, one grace (with a countdown), then SIGKILL
/// to those the gate (`still_targets`) still chooses, adding their zombies now to
/// `zombies_of`. Also why the gate sent no SIGKILL, when it could not read the table.
fn end_targets(
    printer: &Printer,
    replaying: bool,
    source: &dyn ProcessSource,
    plan: &ReapPlan,
    ids: &[Identity],
    zombies_of: &mut ZombiesOf,
) -> (Vec<Termination>, Option<String>) {
    let control = platform::native_control(source);
    let mut unread_at_gate = None;
    let mut gate =
        |survivors: &[Identity]| match still_targets(printer, replaying, source, plan, survivors) {
            Ok((still, zombies)) => {
                zombies_of.extend(zombies);
                still
            }
            Err(e) => {
                unread_at_gate = Some(e);
                Vec::new()
            }
        };
    // The grace is waited out on a terminal with a countdown, not in silence.
    let countdown = Countdown::new(printer, plan.grace, "SIGTERM sent; SIGKILL to what is left");
    let ended = terminate_all(
        control.as_ref(),
        ids,
        plan.grace,
        &CountdownClock(&countdown),
        &mut gate,
    );
    countdown.clear();
    // A gate that could not read the table sent no SIGKILL (absence of evidence protects);
    // those survivors are not "no longer targets": each carries the reason, and the exit
    // says the cleanup is not done.
    let unread_at_gate = unread_at_gate.map(|e| {
        format!(
            "{}: the selection could not be made again at the end of the grace, so no SIGKILL",
            crate::said_once(&e)
        )
    });
    (ended, unread_at_gate)
}

/// Each target's termination into `report`, its error (and, for one spared because the gate
/// could not read the table, `unread_at_gate`) warned.
fn report_ended(
    printer: &Printer,
    targets: &[(&Decision, Identity)],
    mut ended: Vec<Termination>,
    unread_at_gate: Option<&str>,
    zombies_of: &ZombiesOf,
    report: &mut ReapReport,
) {
    for t in ended
        .iter_mut()
        .filter(|t| t.outcome == TerminationOutcome::Spared)
    {
        if let Some(why) = unread_at_gate {
            t.error = Some(why.to_string());
        }
    }
    for ((d, _), t) in targets.iter().zip(&ended) {
        if let Some(e) = &t.error {
            printer.warn(&format!("pid `{}` ({}): {e}", d.pid, d.name));
        }
        let before = zombies_of.get(&d.pid).map_or(0, Vec::len) as u64;
        report.targets.push(TargetReport::new(d, t, before));
    }
}

/// The pids of `parent`'s zombie children in `table`.
fn zombie_pids(table: &ProcessTable<'_>, parent: i32) -> Vec<i32> {
    table
        .children(parent)
        .filter(|c| c.is_zombie())
        .map(|c| c.pid)
        .collect()
}

/// Each parent's zombie pids.
type ZombiesOf = HashMap<i32, Vec<i32>>;

/// The gate before SIGKILL: read the table again and make the selection again for the
/// grace `survivors` alone; the ones it still chooses, and their zombies now.
fn still_targets(
    printer: &Printer,
    replaying: bool,
    source: &dyn ProcessSource,
    plan: &ReapPlan,
    survivors: &[Identity],
) -> Result<(Vec<Identity>, ZombiesOf)> {
    let snap = source
        .snapshot(Detail::Full)
        .context("cannot read the process table again at the end of the grace")?;
    let table = ProcessTable::new(&snap);
    let (selection, _) = decide(
        printer,
        replaying,
        source,
        (&snap, &table),
        plan,
        Some(survivors),
        false,
    )?;
    let still: Vec<Identity> = selection
        .targets()
        .filter_map(|d| d.identity)
        .filter(|i| survivors.contains(i))
        .collect();
    let zombies = still
        .iter()
        .map(|i| (i.pid, zombie_pids(&table, i.pid)))
        .collect();
    Ok((still, zombies))
}

/// The per-user cleanup lock (`cleanup.lock` in the state directory) and whether another
/// cleanup held it, so that this one waited (and said so).
fn cleanup_lock(printer: &Printer) -> Result<(crate::store::fsio::Lock, bool)> {
    let path = crate::store::paths::ensure_state_dir()?.join("cleanup");
    if let Some(l) = crate::store::fsio::Lock::try_acquire(&path)? {
        return Ok((l, false));
    }
    printer.warn(&format!(
        "another cleanup holds `{}.lock`; waiting for it, then deciding again",
        path.display()
    ));
    Ok((crate::store::fsio::Lock::acquire(&path)?, true))
}

/// The real clock, whose sleeps draw `reap`'s grace countdown.
struct CountdownClock<'a>(&'a Countdown);

impl Clock for CountdownClock<'_> {
    fn now(&self) -> std::time::Instant {
        RealClock.now()
    }
    fn sleep(&self, d: Duration) {
        self.0.sleep(d);
    }
}
