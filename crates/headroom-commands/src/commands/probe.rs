//! `headroom probe`: one reading of the current user's process slots.

use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::cli::{ProbeArgs, ProbeFormat};
use crate::commands::Ctx;
use crate::core::reading::{self, Reading, Thresholds, Trend};
use crate::core::slot_reading::SlotReading;
use crate::core::snapshot::Detail;
use crate::core::snapshot::Snapshot;
use crate::exit::{ExitStatus, UsageError};
use crate::store::evidence::{EvidenceLog, Row};
use crate::store::fsio::atomic_write;
use crate::store::state;

mod human;
mod prometheus;
pub(crate) mod swiftbar;
pub(crate) mod tmux;

pub(crate) use human::{human, trend_phrase};
pub(crate) use prometheus::prometheus;

/// Probe args resolved against config and environment.
#[derive(Debug)]
struct ProbePlan {
    thresholds: Thresholds,
    history: bool,
    format: ProbeFormat,
    output: Option<PathBuf>,
    record: Option<PathBuf>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TopParent {
    pub pid: i32,
    pub name: String,
    pub zombies: u64,
}

/// The `headroom.probe/2` report. Fields are added, never renamed, within a version.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ProbeReport {
    /// The reading, as `watch`, `reap` and the evidence log print it too.
    #[serde(flatten)]
    pub reading: SlotReading,
    pub os: String,
    pub warn_pct: f64,
    pub crit_pct: f64,
    pub top_parents: Vec<TopParent>,
    /// Whether the trend history was kept and consulted (off with `--no-history`, a replay).
    pub history: bool,
    /// Table entries listed but not readable (not counted above; they may hide a session
    /// child or an ancestor, so `reap` treats the sessions as unreadable).
    pub unreadable: u64,
    /// `/proc` hides other users' processes (`hidepid=2`): not counted, and not seen.
    pub others_hidden: bool,
}

impl crate::schema::Document for ProbeReport {
    const SCHEMA: &'static str = "headroom.probe/2";
    const TYPE: Option<&'static str> = Some("probe");
}

/// Two decimals, as every report that repeats probe's percentages and rates shows them.
#[cfg(test)]
pub(crate) use crate::core::slot_reading::round2;

impl ProbeReport {
    pub(crate) fn new(snap: &Snapshot, r: &Reading, t: Thresholds, trend: Option<&Trend>) -> Self {
        Self {
            reading: SlotReading::new(r, trend),
            os: snap.os.clone(),
            warn_pct: t.warn_pct,
            crit_pct: t.crit_pct,
            top_parents: r
                .top_parents
                .iter()
                .map(|p| TopParent {
                    pid: p.pid,
                    name: p.name.clone(),
                    zombies: p.zombies,
                })
                .collect(),
            history: trend.is_some(),
            unreadable: snap.unreadable,
            others_hidden: snap.others_hidden,
        }
    }
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &ProbeArgs) -> Result<ExitStatus> {
    let plan = plan(ctx, args)?;
    let source = ctx.source()?;
    let snap = source
        .snapshot(Detail::Slots)
        .context("cannot read the process table")?;
    let reading = reading::read(&snap, plan.thresholds);

    let (trend, failure) = keep_history(ctx, &plan, &reading);
    // The snapshot is evidence of the reading, not the reading: failing to keep it is said,
    // and the exit stays the reading's level.
    let record_failure = match plan.record.as_ref() {
        Some(path) => crate::output::snapshot_file::to_json(&snap)
            .context("cannot serialise the snapshot")
            .and_then(|bytes| atomic_write(path, &bytes))
            .err()
            .map(|e| (path, e)),
        None => None,
    };

    let report = ProbeReport::new(&snap, &reading, plan.thresholds, trend.as_ref());
    let text = render(ctx, &plan, &report)?;
    // The reading was taken: a file that cannot be written is an I/O error (exit 2), not "no
    // reading" (3), and the reading goes to stdout so that it is not lost.
    let write_failure = match &plan.output {
        Some(path) => atomic_write(path, text.as_bytes()).err().map(|e| (path, e)),
        None => None,
    };
    match (&plan.output, &write_failure) {
        (Some(_), None) => {}
        // The same bytes as `text`, handed over typed (`headroom mcp` reads the report).
        _ if plan.format == ProbeFormat::Json => ctx.printer.json_value(&report)?,
        _ if plan.format == ProbeFormat::Human => ctx.printer.text(&text)?,
        _ => ctx.printer.raw(&text)?,
    }
    if let Some(e) = failure {
        // The reading was printed and its level is the answer cron asked for; the history
        // (the ETA's input) and the evidence row were not kept, which is worth a warning,
        // not an exit code that would hide the level (a full disk is when it matters).
        ctx.printer.warn(&format!(
            "{}; this reading is not in the history or the evidence log",
            crate::exit::said_once(&e)
        ));
    }
    if let Some((path, e)) = record_failure {
        ctx.printer.warn(&format!(
            "{}; the snapshot was not recorded to `{}`",
            crate::exit::said_once(&e),
            path.display()
        ));
    }
    if let Some((_, e)) = write_failure {
        let msg = format!(
            "{}; the reading ({}) was taken and is printed on stdout instead",
            crate::exit::said_once(&e),
            reading.level.as_str().to_uppercase(),
        );
        // stdout already holds the report, the one document `--json` promises: the failure
        // is said on stderr alone, not as a second (`headroom.error/1`) document after it.
        if plan.format == ProbeFormat::Json && ctx.printer.is_json() {
            ctx.printer.error(&msg);
            return Ok(ExitStatus::Error);
        }
        return Err(crate::exit::Failure::Failed(msg).into());
    }
    if plan.format.is_figure() {
        return Ok(ExitStatus::Ok);
    }
    Ok(reading.level.into())
}

/// The arguments resolved: the format (`--json` is `--format json`, and refused beside
/// another), the thresholds, and whether the history is kept.
fn plan(ctx: &Ctx<'_>, args: &ProbeArgs) -> Result<ProbePlan> {
    let format = match (args.format, ctx.printer.is_json()) {
        (Some(f), true) if f != ProbeFormat::Json => {
            return Err(UsageError(format!(
                "--json cannot be used with --format {}: --json is --format json; give one",
                clap::ValueEnum::to_possible_value(&f)
                    .map_or("?".into(), |v| v.get_name().to_string())
            ))
            .into());
        }
        (Some(f), _) => f,
        (None, true) => ProbeFormat::Json,
        (None, false) => ProbeFormat::Human,
    };
    Ok(ProbePlan {
        thresholds: ctx.thresholds(&args.thresholds)?,
        // A replay has no "now" to add to a live history.
        history: !args.no_history && !ctx.replaying(),
        format,
        output: args.output.clone(),
        record: args.record.clone(),
    })
}

/// With the history on, the reading kept (`record_history`) and the trend it gives, its
/// warning said; or why it could not be kept, said after the reading.
fn keep_history(
    ctx: &Ctx<'_>,
    plan: &ProbePlan,
    reading: &Reading,
) -> (Option<Trend>, Option<anyhow::Error>) {
    if !plan.history {
        return (None, None);
    }
    match record_history(reading) {
        Ok((t, warning)) => {
            if let Some(w) = warning {
                ctx.printer.warn(&w);
            }
            (Some(t), None)
        }
        Err(e) => (None, Some(e)),
    }
}

/// The report in the plan's format.
fn render(ctx: &Ctx<'_>, plan: &ProbePlan, report: &ProbeReport) -> Result<String> {
    Ok(match plan.format {
        ProbeFormat::Json => {
            crate::schema::to_line(report).context("cannot serialise report")? + "\n"
        }
        ProbeFormat::Prometheus => prometheus(report),
        ProbeFormat::Human => human(report, ctx.printer, plan.history),
        ProbeFormat::Swiftbar => {
            // What SwiftBar says of the appearance in every plugin run's environment.
            let dark = std::env::var("OS_APPEARANCE").is_ok_and(|v| v == "Dark");
            let host = swiftbar::Host::SwiftBar { dark };
            swiftbar::swiftbar(report, plan.history, &figure_actions(), host)
        }
        ProbeFormat::Xbar => {
            // xbar's own variable for the menu bar's appearance, set for every plugin run.
            let dark = std::env::var("XBARDarkMode").is_ok_and(|v| v == "true");
            let host = swiftbar::Host::Xbar { dark };
            swiftbar::swiftbar(report, plan.history, &figure_actions(), host)
        }
        ProbeFormat::Tmux => tmux::tmux(report, plan.history),
    })
}

/// What the menu's actions run: headroom by a path that outlives an upgrade, and the chart
/// when there is an evidence log to draw. A few `stat`s and a directory listing, no
/// process-table read; nothing is created (a fresh state directory stays absent).
fn figure_actions() -> swiftbar::Actions {
    let program = crate::actions::login_item::lasting_program()
        .map(|c| c.path)
        .map_err(|e| crate::exit::said_once(&e));
    let chart = crate::store::paths::state_dir()
        .ok()
        // Any layout's file: another version's log is drawn too.
        .filter(|dir| !EvidenceLog::new(dir).files().is_empty())
        .map(|dir| dir.join("evidence.svg"));
    swiftbar::Actions { program, chart }
}

/// Keep the reading: in the trend history, and as a `poll` row of the evidence log.
fn record_history(r: &Reading) -> Result<(Trend, Option<String>)> {
    let dir = crate::store::paths::ensure_state_dir()?;
    let h = state::record_reading(&dir, r.uid, r.sample())?;
    let trend = reading::trend(&h.samples, r.limit.limit);
    EvidenceLog::new(&dir).append(&[Row::poll(r, Some(&trend))])?;
    Ok((trend, h.warning))
}

#[cfg(test)]
mod tests;
