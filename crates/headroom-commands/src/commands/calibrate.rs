//! `headroom calibrate [--duration 30s]`: sample the user's trees for a while (a progress
//! bar on a terminal, nothing extra when piped), then print total RAM, free memory, the
//! three largest trees by peak footprint and a suggested `run --limit` (`headroom.calibrate/1`).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::Serialize;

use crate::cli::CalibrateArgs;
use crate::commands::Ctx;
use crate::core::calibrate::{Peaks, TreePeak, suggested_limit};
use crate::core::proc_tree::own_trees;
use crate::core::process_table::ProcessTable;
use crate::core::snapshot::{Detail, MemoryTotals};
use crate::exit::{self, ExitStatus, Failure};
use crate::output::{Printer, Style, human_bytes};
use crate::platform::stop_flag;
use crate::sanitize::sanitize;

/// Samples taken over the duration (at most one a second, at least one every 100 ms).
const SAMPLES: u32 = 30;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct CalibrateReport {
    pub duration_ms: u64,
    pub samples: usize,
    pub total_bytes: u64,
    /// Free memory at the last sample, and the lowest seen.
    pub free_pct: Option<f64>,
    pub min_free_pct: Option<f64>,
    pub largest_trees: Vec<TreePeak>,
    pub suggested_limit_bytes: u64,
    /// The same as a `--limit` value.
    pub suggested_limit: String,
    pub rule: &'static str,
}

impl crate::schema::Document for CalibrateReport {
    const SCHEMA: &'static str = "headroom.calibrate/1";
    const TYPE: Option<&'static str> = Some("calibrate");
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &CalibrateArgs) -> Result<ExitStatus> {
    let source = ctx.source()?;
    stop_flag::install().context("calibrate cannot handle SIGINT/SIGTERM")?;
    let every = (args.duration / SAMPLES).clamp(Duration::from_millis(100), Duration::from_secs(1));
    let bar = progress(ctx.printer, args.duration);
    let start = Instant::now();
    let mut peaks = Peaks::default();
    let mut memory: Option<MemoryTotals> = None;
    loop {
        let snap = source
            .snapshot(Detail::Full)
            .context("cannot read the process table")?;
        let table = ProcessTable::new(&snap);
        let trees = own_trees(&table, snap.uid, snap.self_pid);
        let free = snap
            .memory
            .filter(|m| m.total_bytes > 0)
            .map(|m| m.free_pct());
        peaks.add(&trees, free);
        memory = snap.memory.or(memory);
        let elapsed = start.elapsed();
        bar.set_position(elapsed.as_millis().min(args.duration.as_millis()) as u64);
        // A replayed snapshot never changes: one sample says all it can. A live one spans the
        // period with at least two samples, its start and its end, even when one read of a
        // large or busy table takes longer than the whole duration.
        // A stop request ends sampling after this sample; the suggestion is still made from
        // what was seen.
        if ctx.replaying()
            || (elapsed >= args.duration && peaks.samples >= 2)
            || stop_flag::requested().is_some()
        {
            break;
        }
        stop_flag::sleep(every.min(args.duration.saturating_sub(elapsed)));
    }
    bar.finish_and_clear();
    let total = memory
        .map(|m| m.total_bytes)
        .filter(|&t| t > 0)
        .ok_or_else(|| {
            Failure::Failed(
                "cannot read the machine's memory total, so there is nothing to calibrate against"
                    .into(),
            )
        })?;
    let suggested = suggested_limit(total);
    let round1 = |f: f64| (f * 10.0).round() / 10.0;
    let report = CalibrateReport {
        duration_ms: start.elapsed().as_millis() as u64,
        samples: peaks.samples,
        total_bytes: total,
        free_pct: peaks.last_free_pct.map(round1),
        min_free_pct: peaks.min_free_pct.map(round1),
        largest_trees: peaks.largest(3),
        suggested_limit_bytes: suggested,
        suggested_limit: format!("{}M", suggested >> 20),
        rule: "60 % of RAM, at least 4 GiB, at most 80 %",
    };
    if ctx.printer.is_json() {
        ctx.printer.json_value(&report)?;
    } else {
        ctx.printer.text(&human(&report, ctx.printer))?;
    }
    Ok(exit::after_stop(stop_flag::requested(), ExitStatus::Ok))
}

/// A bar on stderr when it is a terminal; a hidden one (nothing written) otherwise.
fn progress(p: &Printer, duration: Duration) -> ProgressBar {
    if !p.stderr_is_terminal() || p.is_quiet() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(
        Some(duration.as_millis() as u64),
        ProgressDrawTarget::stderr(),
    );
    if let Ok(style) =
        ProgressStyle::with_template("sampling memory {wide_bar} {elapsed}/{duration}")
    {
        bar.set_style(style);
    }
    bar
}

pub(crate) fn human(r: &CalibrateReport, p: &Printer) -> String {
    let mut s = String::new();
    let pct = |v: Option<f64>| v.map_or("unknown".to_string(), |f| format!("{f:.0} %"));
    let _ = writeln!(
        s,
        "{} {} over {:.0} s",
        p.paint("headroom calibrate:", Style::Bold),
        crate::output::plural(r.samples as u64, "sample"),
        r.duration_ms as f64 / 1000.0
    );
    let _ = writeln!(
        s,
        "  RAM {}, free {} (lowest {})",
        human_bytes(r.total_bytes),
        pct(r.free_pct),
        pct(r.min_free_pct)
    );
    if r.largest_trees.is_empty() {
        let _ = writeln!(s, "  no trees of yours were seen");
    } else {
        let _ = writeln!(s, "  largest trees (peak footprint):");
        for t in &r.largest_trees {
            let _ = writeln!(
                s,
                "    {:>9}  pid {:<8} {} ({} process{})",
                human_bytes(t.peak_bytes),
                t.pid,
                sanitize(&t.name),
                t.processes,
                if t.processes == 1 { "" } else { "es" }
            );
        }
    }
    let _ = writeln!(
        s,
        "  suggested: headroom run --limit {} -- CMD   ({}, {})",
        r.suggested_limit,
        human_bytes(r.suggested_limit_bytes),
        r.rule
    );
    if let Some(t) = r
        .largest_trees
        .first()
        .filter(|t| t.peak_bytes > r.suggested_limit_bytes)
    {
        let _ = writeln!(
            s,
            "  note: pid {} peaked at {}, above the suggestion; it would have been stopped",
            t.pid,
            human_bytes(t.peak_bytes)
        );
    }
    s
}
