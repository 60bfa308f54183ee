//! `headroom evidence`: summarise the evidence log (peak usage and when, lowest free slots,
//! the shortest ETA, every cleanup with its outcome, evidence_summary.rs), and report every
//! row it could not interpret instead of dropping it. On a terminal (or with `--chart`) a
//! chart of used slots against the limit comes first (evidence_chart.rs); `--svg PATH`
//! writes the same as an SVG (evidence_svg.rs) where PATH says (evidence_out.rs).
//!
//! The files are read as one consistent set (`store::evidence::EvidenceLog::open_all`) and
//! streamed: a row is looked at in place, and only what the summary and the chart keep is
//! copied (40 bytes a reading for the chart).

use anyhow::Result;

use crate::cli::EvidenceArgs;
use crate::commands::evidence_out::SvgDestination;
use crate::commands::evidence_time::Zone;
use crate::commands::{Ctx, evidence_chart, evidence_out, evidence_svg};
use crate::core::chart::{Chart, Survey, anomaly_time};
use crate::core::evidence_csv::Item;
use crate::exit::ExitStatus;
use crate::store::evidence::EvidenceLog;

use crate::commands::evidence_summary::EvidenceSummary;
pub(crate) use crate::commands::evidence_summary::human;
// Re-exported for the unit tests only (they name it by this path).
#[cfg(test)]
pub(crate) use crate::commands::evidence_summary::summarise;

pub use crate::commands::evidence_summary::EvidenceReport;

pub(crate) fn run(ctx: &Ctx<'_>, args: &EvidenceArgs) -> Result<ExitStatus> {
    let dir = match crate::store::paths::existing_state_dir()? {
        Some(dir) => dir,
        None => crate::store::paths::state_dir()?,
    };
    let json = ctx.printer.is_json();
    let target = svg_target(args, json)?;
    let svg_on_stdout = target == Some(SvgDestination::Stdout);
    let log = EvidenceLog::new(&dir);
    let files = log.open_all();
    let names: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    let cutoff = args
        .since
        .map(|since| crate::platform::now_ms() / 1000 - since.as_secs() as i64);
    let draw = !json
        && !svg_on_stdout
        && !files.is_empty()
        && (args.chart || ctx.printer.stdout_is_terminal());
    let mut survey = (draw || target.is_some()).then(Survey::new);
    let mut summary = EvidenceSummary::new();
    for f in files {
        let name = f.path.display().to_string();
        f.read(&mut |item| match item {
            Item::Row(v) => {
                if cutoff.is_some_and(|c| v.at_secs().is_none_or(|at| at < c)) {
                    return;
                }
                summary.row(&v);
                if let Some(s) = survey.as_mut() {
                    s.row(&name, &v);
                }
            }
            Item::Anomaly(a) => {
                // An unread row older than the window stays in the summary, off the axis.
                if let Some(s) = survey.as_mut() {
                    if cutoff.is_none_or(|c| anomaly_time(&a).is_none_or(|at| at >= c)) {
                        s.anomaly(&a);
                    }
                }
                summary.anomaly(a);
            }
        });
    }
    let unhappy = summary.has_anomalies();
    let zone = Zone::new(args.tz);
    let s = &ctx.settings;
    let chart = survey.map(|sv| sv.finish(s.probe.warn.value, s.probe.crit.value));
    if let (Some(t), Some(chart)) = (&target, &chart) {
        write_svg(ctx, args, &dir, t, chart, &zone)?;
    }
    let report = summary.finish(names);
    if json {
        ctx.printer.json_value(&report)?;
    } else if svg_on_stdout {
        // Standard output carries the SVG alone; what could not be read is still said.
        if unhappy {
            ctx.printer.warn(&format!(
                "{} could not be interpreted (`headroom evidence` lists them)",
                crate::output::plural(report.anomalies.len() as u64, "row")
            ));
        }
    } else if report.files.is_empty() {
        ctx.printer.text(&format!(
            "no evidence log yet at `{}`\n",
            log.path().display()
        ))?;
    } else {
        let drawn = chart.as_ref().filter(|_| draw);
        let out = human_text(ctx, args, &report, drawn, &zone, target.is_some());
        ctx.printer.text(&out)?;
    }
    Ok(if unhappy {
        ExitStatus::Unhappy
    } else {
        ExitStatus::Ok
    })
}

/// Where `--svg` writes, if given; refused (usage) where standard output is taken already.
fn svg_target(args: &EvidenceArgs, json: bool) -> Result<Option<SvgDestination>> {
    let target = args
        .svg
        .as_deref()
        .map(|p| evidence_out::target(p, crate::platform::current_uid()))
        .transpose()?;
    let svg_on_stdout = target == Some(SvgDestination::Stdout);
    if svg_on_stdout && json {
        return Err(crate::exit::usage(
            "`--svg -` writes the SVG to standard output, which `--json` needs too: give \
             `--svg` a file",
        ));
    }
    if svg_on_stdout && args.chart {
        return Err(crate::exit::usage(
            "`--svg -` writes the SVG to standard output, where `--chart` would draw too: \
             give `--svg` a file",
        ));
    }
    Ok(target)
}

/// The chart as SVG to `t`; nothing written (an error) when it has no readings.
fn write_svg(
    ctx: &Ctx<'_>,
    args: &EvidenceArgs,
    dir: &std::path::Path,
    t: &SvgDestination,
    chart: &Chart,
    zone: &Zone,
) -> Result<()> {
    if chart.points.is_empty() {
        anyhow::bail!(
            "nothing to draw: the evidence log in `{}` has no readings{}; `{}` was not written",
            dir.display(),
            args.since
                .map(|d| format!(" in the last {}", humantime::format_duration(d)))
                .unwrap_or_default(),
            args.svg
                .as_deref()
                .unwrap_or(std::path::Path::new("-"))
                .display()
        );
    }
    let svg = evidence_svg::render(chart, zone)?;
    if *t == SvgDestination::Stdout {
        ctx.printer.raw(&svg)?;
    } else {
        evidence_out::write(t, svg.as_bytes())?;
    }
    Ok(())
}

/// The human screen: the chart when `drawn` (or why there is none), the summary, and where
/// the SVG went when `svg_written`.
fn human_text(
    ctx: &Ctx<'_>,
    args: &EvidenceArgs,
    report: &EvidenceReport,
    drawn: Option<&Chart>,
    zone: &Zone,
    svg_written: bool,
) -> String {
    let mut out = String::new();
    if let Some(chart) = drawn {
        out = if chart.points.is_empty() {
            "no readings to chart\n".to_string()
        } else {
            let ascii = args.ascii || std::env::var_os("TERM").is_some_and(|t| t == "dumb");
            evidence_chart::render(chart, chart_width(args), ascii, zone)
        };
        out.push('\n');
    }
    out.push_str(&human(report, ctx.printer));
    if let (Some(path), true) = (&args.svg, svg_written) {
        out.push_str(&format!(
            "  chart written to {}\n",
            crate::sanitize::sanitize(&path.display().to_string())
        ));
    }
    out
}

/// `--width`, else the terminal's, else `$COLUMNS`, else 80; the last two clamped to what
/// `--width` accepts (a huge `$COLUMNS` must not make a huge chart).
fn chart_width(args: &EvidenceArgs) -> usize {
    args.width.unwrap_or_else(|| {
        crate::platform::terminal_columns()
            .or_else(|| columns_env(std::env::var("COLUMNS").ok().as_deref()))
            .unwrap_or(80)
            .clamp(evidence_chart::MIN_WIDTH, evidence_chart::MAX_WIDTH)
    })
}

/// `$COLUMNS` as a width, when it is a number.
fn columns_env(v: Option<&str>) -> Option<usize> {
    let v = v?.trim();
    match v.parse::<usize>() {
        Ok(n) => Some(n),
        // More digits than any width: as wide as allowed.
        Err(_) if !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()) => Some(usize::MAX),
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_range_is_that_of_the_rows_with_a_time_in_time_order() {
        let text = "timestamp,zombies,action,result\n\
                    yesterday,1,poll,\n\
                    2026-08-30T03:00:00Z,2,poll,\n\
                    2026-08-29T22:04:00Z,3,poll,\n\
                    2026-08-29T22:43:41Z,3,poll,\n\
                    ,4,poll,\n";
        let (rows, _) =
            crate::core::evidence_csv::parse(std::path::Path::new("e.csv"), text.as_bytes());
        let r = summarise(vec![], &rows, vec![]);
        assert_eq!(r.rows, 5, "every row is counted");
        // After a clock step the file's first timed row is the latest: the range still
        // reads forward.
        assert_eq!(
            (r.first.as_deref(), r.last.as_deref()),
            (Some("2026-08-29T22:04:00Z"), Some("2026-08-30T03:00:00Z"))
        );
        let none = summarise(vec![], &rows[..1], vec![]);
        assert_eq!(
            (none.first, none.last),
            (None, None),
            "control: no time, no range"
        );
        let ordered = summarise(vec![], &rows[2..4], vec![]);
        assert_eq!(
            (ordered.first.as_deref(), ordered.last.as_deref()),
            (Some("2026-08-29T22:04:00Z"), Some("2026-08-29T22:43:41Z")),
            "control: rows in order read the same"
        );
    }

    #[test]
    fn columns_from_the_environment_are_clamped_like_width() {
        let width = |v: &str| {
            columns_env(Some(v))
                .unwrap_or(80)
                .clamp(evidence_chart::MIN_WIDTH, evidence_chart::MAX_WIDTH)
        };
        assert_eq!(width("99999999999999999999999999"), 1000);
        assert_eq!(width("5000"), 1000);
        assert_eq!(width("3"), 30);
        assert_eq!(width("wide"), 80);
        assert_eq!(
            width("120"),
            120,
            "control: a width in range is used as it is"
        );
    }
}
