//! `headroom evidence`: summarise the evidence log (peak usage and when, lowest free slots,
//! the shortest ETA, every cleanup with its outcome), and report every row it could not
//! interpret instead of dropping it. On a terminal (or with `--chart`) a chart of used
//! slots against the limit comes first (evidence_chart.rs); `--svg FILE` writes the same as
//! an SVG (evidence_svg.rs).

use std::fmt::Write as _;

use anyhow::Result;
use serde::Serialize;

use crate::cli::EvidenceArgs;
use crate::commands::{Ctx, evidence_chart, evidence_svg};
use crate::core::chart::{Chart, anomaly_time};
use crate::exit::ExitStatus;
use crate::output::{Printer, Style, human_duration, thousands};
use crate::sanitize::sanitize;
use crate::store::evidence::{Anomaly, EvidenceLog, ReadRow, read_file};

/// The `headroom.evidence/3` report. Each row it names is printed whole: the reading's
/// fields as `probe` prints them (null where the row's file predates the column), then the
/// top zombie parent and what was done.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EvidenceReport {
    pub files: Vec<String>,
    pub rows: usize,
    /// The first and the last row's instant.
    #[serde(rename = "first_at")]
    pub first: Option<String>,
    #[serde(rename = "last_at")]
    pub last: Option<String>,
    /// The row of the highest `usage_pct`.
    pub peak_usage: Option<ReadRow>,
    /// The row of the fewest `free_slots`.
    pub lowest_free: Option<ReadRow>,
    /// The row of the shortest `eta_seconds`.
    pub shortest_eta: Option<ReadRow>,
    /// Every cleanup row: one per terminated parent (`kill:15+9`), or `cleanup` for a run
    /// that had nothing to do.
    pub cleanups: Vec<ReadRow>,
    pub anomalies: Vec<Anomaly>,
}

impl crate::schema::Document for EvidenceReport {
    const SCHEMA: &'static str = "headroom.evidence/3";
    const TYPE: Option<&'static str> = Some("evidence");
}

pub fn run(ctx: &Ctx<'_>, args: &EvidenceArgs) -> Result<ExitStatus> {
    let dir = match crate::store::paths::existing_state_dir()? {
        Some(dir) => dir,
        None => crate::store::paths::state_dir()?,
    };
    let log = EvidenceLog::new(&dir);
    let files = log.files();
    let mut rows: Vec<ReadRow> = Vec::new();
    let mut anomalies = Vec::new();
    for f in &files {
        let (r, a) = read_file(f)?;
        rows.extend(r);
        anomalies.extend(a);
    }
    let cutoff = args
        .since
        .map(|since| crate::platform::now_ms() / 1000 - since.as_secs() as i64);
    if let Some(cutoff) = cutoff {
        rows.retain(|r| r.at_secs.is_some_and(|at| at >= cutoff));
    }
    let json = ctx.printer.is_json();
    let draw = !json && !files.is_empty() && (args.chart || ctx.printer.stdout_is_terminal());
    let chart = (draw || args.svg.is_some()).then(|| {
        // An unread row older than the window stays in the summary, off the chart's axis.
        let shown: Vec<Anomaly> = anomalies
            .iter()
            .filter(|a| cutoff.is_none_or(|c| anomaly_time(a).is_none_or(|at| at >= c)))
            .cloned()
            .collect();
        let s = &ctx.settings;
        Chart::build(&rows, &shown, s.probe.warn.value, s.probe.crit.value)
    });
    if let (Some(path), Some(chart)) = (&args.svg, &chart) {
        if chart.points.is_empty() {
            anyhow::bail!(
                "nothing to draw: the evidence log in `{}` has no readings{}; `{}` was not written",
                dir.display(),
                args.since
                    .map(|d| format!(" in the last {}", humantime::format_duration(d)))
                    .unwrap_or_default(),
                path.display()
            );
        }
        crate::store::fsio::atomic_write(path, evidence_svg::render(chart)?.as_bytes())?;
    }
    let report = summarise(
        files.iter().map(|f| f.display().to_string()).collect(),
        &rows,
        anomalies,
    );
    if json {
        ctx.printer.json_value(&report)?;
    } else if files.is_empty() {
        ctx.printer.text(&format!(
            "no evidence log yet at `{}`\n",
            log.path().display()
        ))?;
    } else {
        let mut out = String::new();
        if let Some(chart) = chart.as_ref().filter(|_| draw) {
            out = if chart.points.is_empty() {
                "no readings to chart\n".to_string()
            } else {
                let ascii = args.ascii || std::env::var_os("TERM").is_some_and(|t| t == "dumb");
                evidence_chart::render(chart, chart_width(args), ascii)
            };
            out.push('\n');
        }
        out.push_str(&human(&report, ctx.printer));
        if let Some(path) = &args.svg {
            let _ = writeln!(out, "  chart written to {}", path.display());
        }
        ctx.printer.text(&out)?;
    }
    Ok(if report.anomalies.is_empty() {
        ExitStatus::Ok
    } else {
        ExitStatus::Unhappy
    })
}

/// `--width`, else the terminal's, else `$COLUMNS`, else 80; never below the minimum.
fn chart_width(args: &EvidenceArgs) -> usize {
    args.width
        .or_else(crate::platform::terminal_columns)
        .or_else(|| std::env::var("COLUMNS").ok()?.trim().parse().ok())
        .unwrap_or(80)
        .max(evidence_chart::MIN_WIDTH)
}

fn best<T: Copy + PartialOrd>(
    rows: &[ReadRow],
    key: impl Fn(&ReadRow) -> Option<T>,
    max: bool,
) -> Option<ReadRow> {
    let mut best: Option<(T, &ReadRow)> = None;
    for r in rows {
        if let Some(v) = key(r) {
            let better = best
                .as_ref()
                .is_none_or(|(b, _)| if max { v > *b } else { v < *b });
            if better {
                best = Some((v, r));
            }
        }
    }
    best.map(|(_, r)| r.clone())
}

pub fn summarise(files: Vec<String>, rows: &[ReadRow], anomalies: Vec<Anomaly>) -> EvidenceReport {
    EvidenceReport {
        files,
        rows: rows.len(),
        // The first and last rows with a time (a row whose time is unreadable has none).
        first: rows.iter().find_map(|r| r.reading.at.clone()),
        last: rows.iter().rev().find_map(|r| r.reading.at.clone()),
        peak_usage: best(rows, |r| r.reading.usage_pct, true),
        lowest_free: best(rows, |r| r.reading.free_slots, false),
        shortest_eta: best(rows, |r| r.reading.eta_seconds, false),
        cleanups: rows
            .iter()
            .filter(|r| r.action.starts_with("kill:") || r.action == "cleanup")
            .cloned()
            .collect(),
        anomalies,
    }
}

pub fn human(r: &EvidenceReport, p: &Printer) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {}{} ({})",
        p.paint("evidence", Style::Bold),
        crate::output::plural(r.rows as u64, "row"),
        match (&r.first, &r.last) {
            (Some(a), Some(b)) => format!(" from {a} to {b}"),
            _ => String::new(),
        },
        crate::output::plural(r.files.len() as u64, "file")
    );
    let at = |row: &ReadRow| row.reading.at.clone().unwrap_or_else(|| "?".into());
    if let Some((pct, row)) = r
        .peak_usage
        .as_ref()
        .and_then(|row| Some((row.reading.usage_pct?, row)))
    {
        let src = row
            .reading
            .limit_source
            .as_deref()
            .map(|x| format!(" ({x})"))
            .unwrap_or_default();
        let _ = writeln!(s, "  peak usage     {pct:.1} % at {}{src}", at(row));
    }
    if let Some((free, row)) = r
        .lowest_free
        .as_ref()
        .and_then(|row| Some((row.reading.free_slots?, row)))
    {
        let _ = writeln!(
            s,
            "  lowest free    {} at {}",
            crate::output::plural(free, "slot"),
            at(row)
        );
    }
    if let Some((eta, row)) = r
        .shortest_eta
        .as_ref()
        .and_then(|row| Some((row.reading.eta_seconds?, row)))
    {
        let _ = writeln!(
            s,
            "  shortest ETA   {} at {}",
            human_duration(eta as f64),
            at(row)
        );
    }
    let _ = writeln!(s, "  cleanups: {}", r.cleanups.len());
    for c in &r.cleanups {
        let parent = match (c.top_parent_pid, &c.top_parent_name) {
            (Some(pid), Some(name)) => format!(
                "{pid} {} ({})",
                sanitize(name),
                c.top_parent_zombies.map_or("?".into(), thousands)
            ),
            _ => String::new(),
        };
        let ov = c
            .override_
            .as_deref()
            .map(|o| format!("  [{o}]"))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "    {}  {:<10} {parent:<28} {}{ov}",
            at(c),
            c.action,
            c.result
        );
    }
    if !r.anomalies.is_empty() {
        let _ = writeln!(
            s,
            "  {} could not be interpreted (kept in the file, left out of the summary):",
            crate::output::plural(r.anomalies.len() as u64, "row")
        );
        for a in &r.anomalies {
            let _ = writeln!(
                s,
                "    {} line {}: {} where the header has {}: {}",
                a.file,
                a.line,
                crate::output::plural(a.fields as u64, "field"),
                a.expected,
                sanitize(&a.text.chars().take(120).collect::<String>())
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_is_that_of_the_rows_with_a_time() {
        let text = "timestamp,zombies,action,result\n\
                    yesterday,1,poll,\n\
                    2026-08-29T22:42:41Z,2,poll,\n\
                    2026-08-29T22:43:41Z,3,poll,\n\
                    ,4,poll,\n";
        let (rows, _) =
            crate::core::evidence_csv::parse(std::path::Path::new("e.csv"), text.as_bytes());
        let r = summarise(vec![], &rows, vec![]);
        assert_eq!(r.rows, 4, "every row is counted");
        assert_eq!(
            (r.first.as_deref(), r.last.as_deref()),
            (Some("2026-08-29T22:42:41Z"), Some("2026-08-29T22:43:41Z"))
        );
        let none = summarise(vec![], &rows[..1], vec![]);
        assert_eq!(
            (none.first, none.last),
            (None, None),
            "control: no time, no range"
        );
    }
}
