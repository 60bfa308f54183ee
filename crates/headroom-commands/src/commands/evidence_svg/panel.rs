//! The panel right of the plot: a key for every mark the chart draws, then the projection,
//! the numbered cleanups, the limit's changes and the gaps in words, wrapped to its width.

use super::doc::{Anchor, Doc, Stroke, text_width};
use super::marks::{DIAMOND, TRIANGLE};
use super::palette::{
    BAND, CLEANUP, CRITICAL_LINE, EMERGENCY, INK, OVER, PROJECTION_LINE, Rgb, USED_LINE,
    WARNING_LINE, WHITE, ZOMBIES_LINE, limit_line,
};
use super::{FONT, PANEL_W, PLOT_TOP};
use crate::commands::evidence_chart::{Footnote, footnote_text, gap_sentence, projection_sentence};
use crate::commands::evidence_time::Zone;
use crate::core::chart::{Chart, Column};
use crate::output::{plural, thousands};
use crate::sanitize::sanitize;

/// One line of the panel on the right: a key (a sample of what it names) or plain text.
pub(super) enum PanelLine {
    Key(Key, String),
    Heading(String),
    Text(String),
}

impl PanelLine {
    pub(super) fn height(&self) -> f64 {
        match self {
            PanelLine::Key(..) => 22.0,
            PanelLine::Heading(_) => 26.0,
            PanelLine::Text(_) => 18.0,
        }
    }
}

pub(super) enum Key {
    Stroke(Stroke),
    Band,
    Over,
    Shape(bool),
    Tick,
    Dot(Rgb),
}

/// Room for a line of panel text, in pixels.
const PANEL_TEXT_W: f64 = PANEL_W - 30.0;

/// `text` wrapped to the panel's width, between words.
fn wrap(text: &str, px: f64, width: f64) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let candidate = if line.is_empty() {
            word.to_string()
        } else {
            format!("{line} {word}")
        };
        if !line.is_empty() && text_width(&candidate, px) > width {
            out.push(std::mem::take(&mut line));
            line = word.to_string();
        } else {
            line = candidate;
        }
    }
    if !line.is_empty() {
        out.push(line);
    }
    out
}

/// The panel: a key for every mark drawn, then the projection, cleanups, limit and gaps
/// in words.
pub(super) fn panel_lines(
    c: &Chart,
    zone: &Zone,
    cols: &[Column],
    notes: &[Footnote<'_>],
) -> Vec<PanelLine> {
    let mut v = key_lines(c, cols);
    v.extend(word_lines(c, zone, notes));
    v
}

/// A key (a sample of the mark, then its name) for each kind of mark the chart draws.
fn key_lines(c: &Chart, cols: &[Column]) -> Vec<PanelLine> {
    let mut v = vec![PanelLine::Key(Key::Stroke(USED_LINE), "used slots".into())];
    if c.points.iter().any(|p| p.zombies().is_some()) {
        v.push(PanelLine::Key(Key::Stroke(ZOMBIES_LINE), "zombies".into()));
    }
    let mut seen: Vec<Option<u16>> = Vec::new();
    for ch in &c.changes {
        if !seen.contains(&ch.source) {
            seen.push(ch.source);
            let name = c
                .source_name(ch.source)
                .map_or("unknown source".into(), |n| sanitize(n).into_owned());
            v.push(PanelLine::Key(
                Key::Stroke(limit_line(c.source_name(ch.source))),
                format!("limit ({name})"),
            ));
        }
    }
    if !c.changes.is_empty() {
        v.push(PanelLine::Key(
            Key::Stroke(CRITICAL_LINE),
            format!("critical {} % of the limit", c.crit_pct),
        ));
        v.push(PanelLine::Key(
            Key::Stroke(WARNING_LINE),
            format!("warning {} % of the limit", c.warn_pct),
        ));
    }
    if cols.iter().any(|c| c.over) {
        v.push(PanelLine::Key(Key::Over, "at or over the limit".into()));
    }
    if c.drawn_projection().is_some() {
        v.push(PanelLine::Key(
            Key::Stroke(PROJECTION_LINE),
            "projection to the limit".into(),
        ));
    }
    if c.cleanups.iter().any(|m| !m.emergency) {
        v.push(PanelLine::Key(
            Key::Shape(false),
            "cleanup (numbered below)".into(),
        ));
    }
    if c.cleanups.iter().any(|m| m.emergency) {
        v.push(PanelLine::Key(Key::Shape(true), "emergency cleanup".into()));
    }
    if !c.axis.gaps.is_empty() {
        v.push(PanelLine::Key(Key::Band, "no readings".into()));
    }
    let placed = c.unread.iter().filter(|u| u.at.is_some()).count();
    if placed > 0 {
        v.push(PanelLine::Key(
            Key::Tick,
            format!("row not interpreted ({placed})"),
        ));
    }
    let unplaced = c.unread.len() - placed;
    if unplaced > 0 {
        v.push(PanelLine::Key(
            Key::Dot(WHITE),
            format!("+{unplaced} without a readable time"),
        ));
    }
    v
}

/// The sections in words, each under its heading, wrapped to the panel's width.
fn word_lines(c: &Chart, zone: &Zone, notes: &[Footnote<'_>]) -> Vec<PanelLine> {
    let style = zone.axis_style(c);
    let mut v = Vec::new();
    let text = |v: &mut Vec<PanelLine>, s: &str| {
        for l in wrap(s, FONT, PANEL_TEXT_W) {
            v.push(PanelLine::Text(l));
        }
    };
    if c.projection.is_some() {
        v.push(PanelLine::Heading("Projection".into()));
        let s = projection_sentence(c, zone, None);
        text(&mut v, s.trim_start_matches("projection: "));
    }
    if !c.cleanups.is_empty() {
        v.push(PanelLine::Heading("Cleanups".into()));
        for note in notes.iter().take(12) {
            text(
                &mut v,
                &format!("{} {}", note.number, footnote_text(note, zone, style)),
            );
        }
        if notes.len() > 12 {
            let rest: usize = notes[12..].iter().map(|f| f.marks.len()).sum();
            text(
                &mut v,
                &format!(
                    "… {} (`headroom evidence` lists them)",
                    plural(rest as u64, "more cleanup")
                ),
            );
        }
    }
    if !c.changes.is_empty() {
        v.push(PanelLine::Heading("Limit".into()));
        let named: Vec<String> = c
            .changes
            .iter()
            .map(|ch| {
                format!(
                    "{} {} from {}",
                    c.source_name(ch.source)
                        .map_or("limit".into(), |n| sanitize(n).into_owned()),
                    thousands(ch.limit),
                    zone.clock(ch.at, style)
                )
            })
            .collect();
        let more = c.changes_left_out + named.len().saturating_sub(8);
        for s in named.iter().take(if more > 0 { 6 } else { 8 }) {
            text(&mut v, s);
        }
        if more > 0 {
            text(&mut v, &format!("… {}", plural(more as u64, "more change")));
        }
    }
    if !c.axis.gaps.is_empty() {
        v.push(PanelLine::Heading("Gaps".into()));
        text(&mut v, &gap_sentence(c, zone, style));
        let s = c.axis.shortened();
        // With a few gaps the sentence above says how each is drawn.
        if s.gaps > 0 && c.axis.gaps.len() > 3 {
            text(
                &mut v,
                &format!(
                    "{} drawn shorter: {} as {}",
                    plural(s.gaps as u64, "gap"),
                    crate::commands::evidence_time::span(s.real_secs),
                    crate::commands::evidence_time::span(s.shown_secs)
                ),
            );
        }
    }
    v
}

pub(super) fn draw_panel(d: &mut Doc, lines: &[PanelLine], left: f64) {
    let x0 = left + 10.0;
    let mut y = PLOT_TOP;
    for line in lines {
        match line {
            PanelLine::Key(key, label) => {
                let (a, b) = ((x0, y), (x0 + 26.0, y));
                match key {
                    Key::Stroke(s) => d.line(a, b, *s),
                    Key::Band => d.rect(x0, y - 7.0, 26.0, 14.0, BAND, "key"),
                    Key::Over => d.rect(x0, y - 4.0, 26.0, 7.0, OVER, "key"),
                    Key::Shape(emergency) => {
                        let (shape, fill): (&[(f64, f64)], Rgb) = if *emergency {
                            (&DIAMOND, EMERGENCY)
                        } else {
                            (&TRIANGLE, CLEANUP)
                        };
                        let pts: Vec<(f64, f64)> = shape
                            .iter()
                            .map(|(dx, dy)| (x0 + 13.0 + dx, y + dy))
                            .collect();
                        d.polygon(&pts, fill, INK, "key");
                    }
                    Key::Tick => d.line(
                        (x0 + 13.0, y - 8.0),
                        (x0 + 13.0, y + 6.0),
                        Stroke::solid(INK, 3.0),
                    ),
                    Key::Dot(c) => d.circle((x0 + 13.0, y), 3.0, *c, "key"),
                }
                d.text(
                    x0 + 36.0,
                    y + 4.5,
                    FONT,
                    Anchor::Start,
                    INK,
                    label,
                    false,
                    "key-label",
                );
                y += line.height();
            }
            PanelLine::Heading(h) => {
                y += 8.0;
                d.text(x0, y + 4.5, 14.0, Anchor::Start, INK, h, false, "heading");
                y += line.height() - 8.0;
            }
            PanelLine::Text(t) => {
                d.text(
                    x0,
                    y + 4.5,
                    FONT,
                    Anchor::Start,
                    INK,
                    t,
                    false,
                    "panel-text",
                );
                y += line.height();
            }
        }
    }
}
