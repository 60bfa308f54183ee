//! The cleanups as numbered footnotes: those close together on the axis share a number,
//! and each footnote says when, what it ended and how many slots it freed.

use crate::commands::evidence_time::{TimeFormat, Zone};
use crate::core::chart::{Chart, CleanupMark, freed_total, result_field};
use crate::output::{plural, thousands};
use crate::sanitize::sanitize;

/// Cleanups close together on the axis, under one number.
#[derive(Debug, Clone)]
pub(crate) struct Footnote<'a> {
    pub number: usize,
    /// The column its number stands under.
    pub column: usize,
    pub marks: Vec<&'a CleanupMark>,
}

/// The cleanups numbered in time order, those whose marks share a number's room merged.
pub(crate) fn footnotes(c: &Chart, n: usize) -> Vec<Footnote<'_>> {
    let mut out: Vec<Footnote<'_>> = Vec::new();
    for m in &c.cleanups {
        let col = c.column_of(m.at, n);
        match out.last_mut() {
            Some(f) if col <= f.column + f.number.to_string().len() => f.marks.push(m),
            _ => out.push(Footnote {
                number: out.len() + 1,
                column: col,
                marks: vec![m],
            }),
        }
    }
    out
}

/// What one footnote says after its number and time.
pub(crate) fn footnote_text(f: &Footnote<'_>, zone: &Zone, style: TimeFormat) -> String {
    let first = f.marks[0];
    let last = f.marks[f.marks.len() - 1];
    let when = if first.at == last.at {
        zone.clock(first.at, style)
    } else {
        format!(
            "{}–{}",
            zone.clock(first.at, style),
            zone.clock(last.at, style)
        )
    };
    let emergency = f.marks.iter().filter(|m| m.emergency).count();
    let killed: Vec<&&CleanupMark> = f.marks.iter().filter(|m| m.killed).collect();
    let parent = |m: &CleanupMark| {
        let name = m.name.as_deref().map(sanitize).unwrap_or_default();
        let z = m
            .zombies
            .map(|z| format!(" ({})", plural(z, "zombie")))
            .unwrap_or_default();
        match m.pid {
            Some(pid) => format!("pid {pid} {name}{z}"),
            None => format!("{name}{z}"),
        }
    };
    let kind = if emergency == f.marks.len() {
        "emergency cleanup"
    } else {
        "cleanup"
    };
    if f.marks.len() == 1 {
        let m = first;
        if !m.killed {
            let unreadable = result_field(&m.result, "unreadable")
                .map(|u| format!("; {} unreadable", plural(u, "session signal")))
                .unwrap_or_default();
            let top = if m.pid.is_some() {
                format!("; top parent {} spared", parent(m))
            } else {
                String::new()
            };
            return format!("{when} {kind}: no target{top}{unreadable}");
        }
        let reaped = m.reaped.map(|r| format!("; {} reaped", thousands(r)));
        let freed = m.freed.map(|f| format!(", {} freed", plural(f, "slot")));
        return format!(
            "{when} {kind}: ended {}{}{}",
            parent(m),
            reaped.unwrap_or_default(),
            freed.unwrap_or_default()
        );
    }
    let mut names: Vec<String> = killed.iter().take(2).map(|m| parent(m)).collect();
    if killed.len() > 2 {
        names.push(format!("{} more", killed.len() - 2));
    }
    let ended = if killed.is_empty() {
        "no target".to_string()
    } else {
        format!("ended {}", names.join(", "))
    };
    let em = if emergency > 0 && emergency < f.marks.len() {
        format!(" ({emergency} emergency)")
    } else {
        String::new()
    };
    format!(
        "{when}: {}{em}: {ended}; {} freed",
        plural(f.marks.len() as u64, "cleanup"),
        plural(freed_total(f.marks.iter().copied()), "slot")
    )
}
