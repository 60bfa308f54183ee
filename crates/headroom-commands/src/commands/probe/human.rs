//! `probe`'s block for a person: the level, the slots against the binding limit as a bar,
//! where each ceiling was read, the trend and the top parents.

use std::fmt::Write as _;

use super::ProbeReport;
use crate::core::limits::LimitSource;
use crate::core::reading::{self, Level};
use crate::core::slot_reading::SlotReading;
use crate::output::{Printer, Style, bar, human_duration, thousands};
use crate::sanitize::sanitize;

fn level_style(level: Level) -> Style {
    match level {
        Level::Normal => Style::Green,
        Level::Warning => Style::Yellow,
        Level::Critical | Level::Unknown => Style::Red,
    }
}

/// The short block a person reads at a glance.
pub(crate) fn human(rep: &ProbeReport, p: &Printer, history: bool) -> String {
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
pub(crate) fn trend_phrase(r: &SlotReading, history: bool) -> String {
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
