//! The legend under the terminal chart: a key for every glyph drawn, the numbered cleanups,
//! the limit's changes, the gaps and the projection, wrapped to the chart's width.

use super::wrap::wrap;
use super::{Footnote, Glyphs, footnote_text, gap_sentence, projection_sentence};
use crate::commands::evidence_time::{TimeFormat, Zone};
use crate::core::chart::{Chart, Column};
use crate::output::{plural, thousands};
use crate::sanitize::sanitize;

/// A legend entry: the glyph, then what it draws.
fn key(glyph: impl std::fmt::Display, what: &str) -> String {
    format!("{glyph} {what}")
}

/// The most footnotes written out; the summary below lists every cleanup.
const MAX_NOTES: usize = 9;
/// The most limit changes named in a row before the middle ones are counted only.
const MAX_CHANGES_NAMED: usize = 6;

pub(super) fn legend(
    c: &Chart,
    g: &Glyphs,
    width: usize,
    zone: &Zone,
    cols: &[Column],
    notes: &[Footnote<'_>],
) -> String {
    let style = zone.axis_style(c);
    let items = key_items(c, g, cols);
    let mut s = String::new();
    wrap(g, &mut s, &items, width, "  ");

    let steps = limit_changes(c, zone, style);
    if !steps.is_empty() {
        wrap(g, &mut s, &steps, width, &format!(" {} ", g.dot));
    }
    if let Some(w) = c.worst.filter(|w| w.used >= w.limit) {
        wrap(
            g,
            &mut s,
            &[format!(
                "at or over the limit: peak {} of {} ({}), {:.1} %, at {}",
                thousands(w.used),
                thousands(w.limit),
                limit_name(c, w.source),
                w.pct(),
                zone.clock(w.at, style)
            )],
            width,
            "",
        );
    }
    if !c.axis.gaps.is_empty() {
        wrap(g, &mut s, &[gap_sentence(c, zone, style)], width, "");
    }
    for f in notes.iter().take(MAX_NOTES) {
        wrap(
            g,
            &mut s,
            &[format!("{} {}", f.number, footnote_text(f, zone, style))],
            width,
            "",
        );
    }
    if notes.len() > MAX_NOTES {
        let rest: usize = notes[MAX_NOTES..].iter().map(|f| f.marks.len()).sum();
        wrap(
            g,
            &mut s,
            &[format!(
                "… {} (each is listed below)",
                plural(rest as u64, "more cleanup")
            )],
            width,
            "",
        );
    }
    if c.projection.is_some() {
        wrap(
            g,
            &mut s,
            &[projection_sentence(
                c,
                zone,
                c.drawn_projection().map(|_| g.projection),
            )],
            width,
            "",
        );
    }
    let placed = c.unread.iter().filter(|u| u.at.is_some()).count();
    let unplaced = c.unread.len() - placed;
    if unplaced > 0 {
        wrap(
            g,
            &mut s,
            &[format!(
                "{} without a readable time {} not on the axis",
                plural(unplaced as u64, "row"),
                if unplaced == 1 { "is" } else { "are" }
            )],
            width,
            "",
        );
    }
    s
}

/// The limit's changes worth naming, in words: the binding ceiling changing is the story.
/// The first says `limit:`; past `MAX_CHANGES_NAMED` the middle ones are counted only.
fn limit_changes(c: &Chart, zone: &Zone, style: TimeFormat) -> Vec<String> {
    let top = c.y_top();
    let mut steps: Vec<String> = c
        .changes
        .iter()
        .map(|ch| {
            let off = if ch.limit > top {
                " (off the scale)"
            } else {
                ""
            };
            format!(
                "{} {}{off} from {}",
                limit_name(c, ch.source),
                thousands(ch.limit),
                zone.clock(ch.at, style)
            )
        })
        .collect();
    let hidden = c.changes_left_out + steps.len().saturating_sub(MAX_CHANGES_NAMED);
    if steps.len() > MAX_CHANGES_NAMED {
        let tail = steps.split_off(steps.len() - 2);
        steps.truncate(MAX_CHANGES_NAMED - 2);
        steps.push(format!("… {} …", plural(hidden as u64, "more change")));
        steps.extend(tail);
    } else if hidden > 0 {
        steps.push(format!("… {}", plural(hidden as u64, "more change")));
    }
    if !steps.is_empty() {
        steps[0] = format!("limit: {}", steps[0]);
    }
    steps
}

/// The name of the limit from source `i` (`limit` when it has none).
fn limit_name(c: &Chart, i: Option<u16>) -> String {
    c.source_name(i)
        .map_or("limit".into(), |n| sanitize(n).into_owned())
}

/// The legend's first lines: a key for each glyph the chart draws.
fn key_items(c: &Chart, g: &Glyphs, cols: &[Column]) -> Vec<String> {
    let mut items = vec![format!("{} used slots (peak per column)", g.bar[8])];
    if c.points.iter().any(|p| p.zombies().is_some()) {
        // A series' name beside its glyph, not a count.
        items.push(key(g.zombie, "zombies"));
    }
    if !c.changes.is_empty() {
        items.push(format!("{} limit", g.limit));
        items.push(format!("{} critical {} %", g.crit, c.crit_pct));
        items.push(format!("{} warning {} %", g.warn, c.warn_pct));
    }
    if cols.iter().any(|col| col.over) {
        items.push(format!("{} at or over the limit", g.over));
    }
    if c.cleanups.iter().any(|m| !m.emergency) {
        items.push(format!("{} cleanup", g.cleanup));
    }
    if c.cleanups.iter().any(|m| m.emergency) {
        items.push(format!("{} emergency cleanup", g.emergency));
    }
    let placed = c.unread.iter().filter(|u| u.at.is_some()).count();
    if placed > 0 {
        items.push(format!("{} row not interpreted ({placed})", g.unread));
    }
    if !c.axis.gaps.is_empty() {
        items.push(format!("{} no readings", g.gap_word));
    }
    if c.drawn_projection().is_some() {
        items.push(format!("{} projection", g.projection));
    }
    items
}
