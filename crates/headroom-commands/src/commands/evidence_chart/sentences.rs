//! The gaps and the projection in sentences, and a rate as people read it: shared by the
//! terminal chart's legend and the SVG's panel.

use crate::commands::evidence_time::{TimeFormat, Zone, span};
use crate::core::chart::Chart;
use crate::output::{plural, thousands};
use crate::sanitize::sanitize;

/// The gaps in words: each of a few with its times, or how many, how long in all and the
/// longest.
pub(crate) fn gap_sentence(c: &Chart, zone: &Zone, style: TimeFormat) -> String {
    let gaps = &c.axis.gaps;
    let drawn = |i: usize| {
        let shown = c.axis.shown_secs(i).round() as i64;
        if shown + 1 < gaps[i].secs() {
            format!(", drawn as {}", span(shown))
        } else {
            String::new()
        }
    };
    if gaps.len() <= 3 {
        let each: Vec<String> = gaps
            .iter()
            .enumerate()
            .map(|(i, g)| {
                format!(
                    "{}–{} ({}{})",
                    zone.clock(g.from, style),
                    zone.clock(g.to, style),
                    span(g.secs()),
                    drawn(i)
                )
            })
            .collect();
        return format!("no readings {}", each.join(", "));
    }
    let total: i64 = gaps.iter().map(|g| g.secs()).sum();
    let (i, longest) = gaps
        .iter()
        .enumerate()
        .max_by_key(|(_, g)| g.secs())
        .map_or((0, gaps[0]), |(i, g)| (i, *g));
    format!(
        "no readings: {}, {} in all; the longest {}–{} ({}{})",
        plural(gaps.len() as u64, "gap"),
        span(total),
        zone.clock(longest.from, TimeFormat::Day),
        zone.clock(longest.to, TimeFormat::Day),
        span(longest.secs()),
        drawn(i)
    )
}

/// "fork fails ≈ 01:30 at 94 slots/min from the last reading (01:28, 2,520 of 2,666
/// rlimit-nproc)".
/// `glyph` leads it where the line is drawn.
pub(crate) fn projection_sentence(c: &Chart, zone: &Zone, glyph: Option<char>) -> String {
    let Some(p) = c.projection else {
        return String::new();
    };
    let style = zone.axis_style(c);
    let when = if p.at > c.axis.end {
        format!(
            "{} (in {})",
            zone.clock(p.at, TimeFormat::Full),
            span(p.at - p.from_at)
        )
    } else {
        zone.clock(p.at, style)
    };
    format!(
        "{}projection: fork fails ≈ {when} at {} slots/min from the last reading ({}, {} of {} {})",
        glyph.map(|g| format!("{g} ")).unwrap_or_default(),
        format_rate(p.per_min),
        zone.clock(p.from_at, style),
        thousands(p.from_used),
        thousands(p.limit),
        c.source_name(p.source)
            .map_or("limit".into(), |n| sanitize(n).into_owned())
    )
}

/// A growth rate as people read it: "94", "2.5", "0.01".
pub(crate) fn format_rate(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}
