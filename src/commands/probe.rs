//! `headroom probe`: one reading of the current user's process slots.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::cli::{ProbeArgs, ProbeFormat};
use crate::commands::Ctx;
use crate::core::limits::LimitSource;
use crate::core::reading::{self, Level, Reading, Thresholds, Trend};
use crate::core::slot_reading::SlotReading;
use crate::core::snapshot::Detail;
use crate::core::snapshot::Snapshot;
use crate::exit::{ExitStatus, UsageError};
use crate::output::{Printer, Style, bar, human_duration, thousands};
use crate::sanitize::sanitize;
use crate::store::evidence::{EvidenceLog, Row};
use crate::store::fsio::atomic_write;
use crate::store::state;

pub mod swiftbar;
pub mod tmux;

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
pub use crate::core::slot_reading::round2;

impl ProbeReport {
    pub fn new(snap: &Snapshot, r: &Reading, t: Thresholds, trend: Option<&Trend>) -> Self {
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

pub fn run(ctx: &Ctx<'_>, args: &ProbeArgs) -> Result<ExitStatus> {
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
    let plan = ProbePlan {
        thresholds: ctx.thresholds(&args.thresholds)?,
        // A replay has no "now" to add to a live history.
        history: !args.no_history && !ctx.replaying(),
        format,
        output: args.output.clone(),
        record: args.record.clone(),
    };
    let source = ctx.source()?;
    let snap = source
        .snapshot(Detail::Slots)
        .context("cannot read the process table")?;
    let reading = reading::read(&snap, plan.thresholds);

    let mut failure: Option<anyhow::Error> = None;
    let trend = if plan.history {
        match record_history(&reading) {
            Ok((t, warning)) => {
                if let Some(w) = warning {
                    ctx.printer.warn(&w);
                }
                Some(t)
            }
            Err(e) => {
                failure = Some(e);
                None
            }
        }
    } else {
        None
    };
    // The snapshot is evidence of the reading, not the reading: failing to keep it is said,
    // and the exit stays the reading's level.
    let record_failure = match plan.record.as_ref() {
        Some(path) => crate::commands::snapshot::to_json(&snap)
            .context("cannot serialise the snapshot")
            .and_then(|bytes| atomic_write(path, &bytes))
            .err()
            .map(|e| (path, e)),
        None => None,
    };

    let report = ProbeReport::new(&snap, &reading, plan.thresholds, trend.as_ref());
    let text = match plan.format {
        ProbeFormat::Json => {
            crate::schema::to_line(&report).context("cannot serialise report")? + "\n"
        }
        ProbeFormat::Prometheus => prometheus(&report),
        ProbeFormat::Human => human(&report, ctx.printer, plan.history),
        ProbeFormat::Swiftbar => {
            // What SwiftBar says of the appearance in every plugin run's environment.
            let dark = std::env::var("OS_APPEARANCE").is_ok_and(|v| v == "Dark");
            let host = swiftbar::Host::SwiftBar { dark };
            swiftbar::swiftbar(&report, plan.history, &figure_actions(), host)
        }
        ProbeFormat::Xbar => {
            // xbar's own variable for the menu bar's appearance, set for every plugin run.
            let dark = std::env::var("XBARDarkMode").is_ok_and(|v| v == "true");
            let host = swiftbar::Host::Xbar { dark };
            swiftbar::swiftbar(&report, plan.history, &figure_actions(), host)
        }
        ProbeFormat::Tmux => tmux::tmux(&report, plan.history),
    };
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

/// What the menu's actions run: headroom by a path that outlives an upgrade, and the chart
/// when there is an evidence log to draw. A few `stat`s and a directory listing, no
/// process-table read; nothing is created (a fresh state directory stays absent).
fn figure_actions() -> swiftbar::Actions {
    let program = crate::commands::login_item::lasting_program()
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

fn level_style(level: Level) -> Style {
    match level {
        Level::Normal => Style::Green,
        Level::Warning => Style::Yellow,
        Level::Critical | Level::Unknown => Style::Red,
    }
}

/// The short block a person reads at a glance.
pub fn human(rep: &ProbeReport, p: &Printer, history: bool) -> String {
    let r = &rep.reading;
    let mut s = String::new();
    let unit = if r.tasks.is_some() {
        "task slots"
    } else {
        "process slots"
    };
    let _ = writeln!(
        s,
        "{} for uid {} ({})",
        p.paint("headroom probe", Style::Bold),
        r.uid,
        rep.os
    );
    let level = p.paint(&r.level.as_str().to_uppercase(), level_style(r.level));
    match (r.limit, r.usage_pct) {
        (Some(limit), Some(pct)) => {
            let _ = writeln!(s, "  {} {pct:5.1} %  {level}", bar(pct, 30));
            let source = r.limit_source.map_or("?", LimitSource::as_str);
            let _ = writeln!(
                s,
                "  {} of {} {unit} used, {} free; the binding limit is {source}",
                thousands(r.used),
                thousands(limit),
                thousands(r.free_slots.unwrap_or(0)),
            );
        }
        _ => {
            let _ = writeln!(
                s,
                "  {level}: no ceiling could be read, so the limit is unknown (see `headroom limits`)"
            );
            let _ = writeln!(s, "  {} {unit} used", thousands(r.used));
        }
    }
    let tasks = r
        .tasks
        .map(|t| format!(", {}", crate::output::plural(t, "task")))
        .unwrap_or_default();
    let mut unreadable = match rep.unreadable {
        0 => String::new(),
        n => format!("; {} could not be read", thousands(n)),
    };
    if rep.others_hidden {
        unreadable.push_str("; other users' processes hidden (/proc hidepid)");
    }
    if r.partial {
        unreadable.push_str(": partial, nothing is selected on it");
    }
    let _ = writeln!(
        s,
        "  processes {} ({}){tasks}{unreadable}",
        thousands(r.processes),
        crate::output::plural(r.zombies, "zombie")
    );
    let trend = trend_phrase(r, history);
    let _ = writeln!(s, "  trend     {trend}");
    if rep.top_parents.is_empty() {
        let _ = writeln!(s, "  no zombie parents");
    } else {
        let _ = writeln!(s, "  zombie parents:");
        for tp in &rep.top_parents {
            let _ = writeln!(
                s,
                "    {:>8}  {:>15}  {}",
                tp.pid,
                crate::output::plural(tp.zombies, "zombie"),
                sanitize(&tp.name)
            );
        }
    }
    s
}

/// The trend as a person reads it: off, gathering, rising (with the ETA), falling, stable.
pub fn trend_phrase(r: &SlotReading, history: bool) -> String {
    if !history {
        return "off (--no-history or --snapshot)".to_string();
    }
    match (r.growth_per_min, r.eta_seconds) {
        (None, _) => format!(
            "gathering readings ({} of {} in the last 10 min)",
            r.trend_samples,
            reading::TREND_MIN_SAMPLES
        ),
        (Some(g), Some(eta)) if g > 0.0 => format!(
            "{g:+.1} slots/min, the wall in about {}",
            human_duration(eta as f64)
        ),
        (Some(g), _) if g > 0.0 => format!("{g:+.1} slots/min"),
        (Some(g), _) if g < 0.0 => format!("falling ({g:+.1} slots/min)"),
        (Some(_), _) => "stable".to_string(),
    }
}

/// node_exporter textfile format (no timestamps; unknown values are left out).
pub fn prometheus(rep: &ProbeReport) -> String {
    let r = &rep.reading;
    let mut s = String::new();
    let uid = format!("uid=\"{}\"", r.uid);
    let src = r.limit_source.map_or("unknown", LimitSource::as_str);
    let with_src = format!("{uid},limit_source=\"{src}\"");
    let mut gauge = |name: &str, help: &str, labels: &str, value: Option<f64>| {
        let _ = writeln!(s, "# HELP headroom_{name} {help}");
        let _ = writeln!(s, "# TYPE headroom_{name} gauge");
        if let Some(v) = value {
            let _ = writeln!(s, "headroom_{name}{{{labels}}} {v}");
        }
    };
    gauge(
        "processes",
        "Processes owned by the user's real uid, zombies included.",
        &uid,
        Some(r.processes as f64),
    );
    gauge(
        "tasks",
        "Tasks (threads) of those processes; what RLIMIT_NPROC counts on Linux.",
        &uid,
        r.tasks.map(|t| t as f64),
    );
    gauge(
        "zombies",
        "Zombie processes of the user.",
        &uid,
        Some(r.zombies as f64),
    );
    gauge(
        "limit",
        "Effective slot limit: the lowest readable ceiling.",
        &with_src,
        r.limit.map(|l| l as f64),
    );
    gauge(
        "free_slots",
        "Slots left before fork() fails.",
        &with_src,
        r.free_slots.map(|f| f as f64),
    );
    gauge(
        "usage_ratio",
        "Used slots divided by the effective limit.",
        &with_src,
        r.usage_pct.map(|p| p / 100.0),
    );
    gauge(
        "level",
        "0 normal, 1 warning, 2 critical, 3 unknown.",
        &uid,
        Some(f64::from(ExitStatus::from(r.level).code())),
    );
    gauge(
        "growth_per_minute",
        "Slot growth over the last 10 minutes (least squares).",
        &uid,
        r.growth_per_min,
    );
    gauge(
        "eta_seconds",
        "Seconds until the limit at the current growth.",
        &uid,
        r.eta_seconds.map(|e| e as f64),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first incident's report at `level` (the usage to match), its top parent named
    /// `name`: the figures' tests take each level with a hostile name and a plain one.
    pub(super) fn at(level: Level, name: &str) -> ProbeReport {
        let mut r = report();
        r.top_parents[0].name = name.into();
        r.reading.level = level;
        let (used, eta) = match level {
            Level::Normal => (400, None),
            Level::Warning => (1500, Some(786)),
            Level::Critical => (2744, Some(0)),
            Level::Unknown => (2744, None),
        };
        r.reading.used = used;
        r.reading.processes = used;
        r.reading.eta_seconds = eta;
        r.reading.growth_per_min = eta.map(|_| 10.0);
        if level == Level::Unknown {
            r.reading.limit = None;
            r.reading.limit_source = None;
            r.reading.usage_pct = None;
            r.reading.free_slots = None;
        } else {
            r.reading.usage_pct = Some(round2(used as f64 * 100.0 / 2666.0));
            r.reading.free_slots = Some(2666u64.saturating_sub(used));
        }
        r
    }

    fn report() -> ProbeReport {
        ProbeReport {
            reading: SlotReading {
                at: "2026-08-29T22:42:41Z".into(),
                uid: 501,
                processes: 2744,
                tasks: None,
                zombies: 2038,
                used: 2744,
                limit: Some(2666),
                limit_source: Some(LimitSource::RlimitNproc),
                usage_pct: Some(102.93),
                free_slots: Some(0),
                level: Level::Critical,
                growth_per_min: Some(10.0),
                eta_seconds: Some(0),
                trend_samples: 4,
                partial: true,
            },
            os: "macos".into(),
            warn_pct: 50.0,
            crit_pct: 75.0,
            top_parents: vec![TopParent {
                pid: 28979,
                name: "agency\x1b[2J".into(),
                zombies: 526,
            }],
            history: true,
            unreadable: 3,
            others_hidden: false,
        }
    }

    #[test]
    fn human_block_names_the_binding_limit_and_escapes_names() {
        let p = Printer::new(false, false, crate::output::ColorChoice::Never);
        let h = human(&report(), &p, true);
        assert!(h.contains("102.9 %  CRITICAL"), "{h}");
        assert!(
            h.contains(
                "2,744 of 2,666 process slots used, 0 free; the binding limit is rlimit-nproc"
            ),
            "{h}"
        );
        assert!(h.contains("agency\\u{1b}[2J"), "{h}");
        assert!(h.contains("2,038 zombies); 3 could not be read"), "{h}");
        assert!(!h.contains('\x1b'));
    }

    #[test]
    fn prometheus_text_has_every_gauge_and_omits_unknowns() {
        let mut r = report();
        let t = prometheus(&r);
        assert!(
            t.contains("headroom_limit{uid=\"501\",limit_source=\"rlimit-nproc\"} 2666\n"),
            "{t}"
        );
        assert!(
            t.contains("headroom_usage_ratio{uid=\"501\",limit_source=\"rlimit-nproc\"} 1.0293"),
            "{t}"
        );
        assert!(t.contains("headroom_level{uid=\"501\"} 2\n"));
        assert!(
            t.contains("# TYPE headroom_eta_seconds gauge\nheadroom_eta_seconds{uid=\"501\"} 0\n")
        );
        assert!(!t.contains("headroom_tasks{"));
        r.reading.limit = None;
        r.reading.limit_source = None;
        r.reading.eta_seconds = None;
        let t = prometheus(&r);
        assert!(!t.contains("headroom_limit{") && !t.contains("headroom_eta_seconds{"));
        assert!(t.ends_with('\n'));
    }
}
