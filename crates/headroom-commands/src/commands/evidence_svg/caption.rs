//! The chart in words: the headline above the plot and the `<desc>` paragraph.

use crate::commands::evidence_chart::format_rate;
use crate::commands::evidence_time::{TimeFormat, Zone};
use crate::core::chart::{Chart, Column, freed_total};
use crate::output::{plural, thousands};
use crate::sanitize::sanitize;

/// The sentence above the plot: the worst moment and where the trend is heading.
pub(super) fn headline(c: &Chart, zone: &Zone) -> Option<String> {
    let style = zone.axis_style(c);
    let mut parts = Vec::new();
    if let Some(w) = c.worst {
        parts.push(format!(
            "peak {} of {} {} at {} ({:.1} %)",
            thousands(w.used),
            thousands(w.limit),
            c.source_name(w.source)
                .map_or("limit".into(), |n| sanitize(n).into_owned()),
            zone.clock(w.at, style),
            w.pct()
        ));
    }
    if let Some(p) = c.projection {
        let when = projected_time(c, zone);
        parts.push(format!(
            "fork fails ≈ {when} at {} slots/min",
            format_rate(p.per_min)
        ));
    }
    if !c.cleanups.is_empty() {
        let em = c.cleanups.iter().filter(|m| m.emergency).count();
        parts.push(format!(
            "{}{}, {} freed",
            plural(c.cleanups.len() as u64, "cleanup"),
            if em > 0 {
                format!(" ({em} emergency)")
            } else {
                String::new()
            },
            plural(freed_total(&c.cleanups), "slot")
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The projected time as labels write it.
pub(super) fn projected_time(c: &Chart, zone: &Zone) -> String {
    let Some(p) = c.projection else {
        return String::new();
    };
    if p.at > c.axis.end {
        zone.clock(p.at, TimeFormat::Full)
    } else {
        zone.clock(p.at, zone.axis_style(c))
    }
}

/// The `<desc>`: what the picture shows, in one paragraph.
pub(super) fn description(c: &Chart, zone: &Zone, cols: &[Column]) -> String {
    let mut s = format!(
        "Used process slots of the uid against the effective limit, {}.",
        zone.span(c, "to")
    );
    if let Some(h) = headline(c, zone) {
        s.push(' ');
        s.push_str(&h);
        s.push('.');
    }
    let over = cols.iter().filter(|c| c.over).count();
    if over > 0 {
        s.push_str(" At or over the limit in part of the record (the strip above the plot).");
    }
    if !c.axis.gaps.is_empty() {
        s.push(' ');
        s.push_str(&plural(c.axis.gaps.len() as u64, "gap"));
        s.push_str(" without readings.");
    }
    s
}
