//! `headroom evidence --svg FILE`: the chart model (core/chart.rs) as a self-contained SVG
//! (no script, font, link or style sheet; an opaque white ground, so it reads in dark
//! viewers too), written element by element (`doc.rs`). Each series is reduced to its
//! envelope per pixel column (low, high, first, last: four points a column whatever the
//! rows), so a year of per-minute readings is a picture of a few hundred kilobytes.
//!
//! What it shows, to answer "how long until fork fails, which process leaked, what did
//! headroom do": used slots and zombies; the limit as a step line per `limit_source`
//! (colour fixed per name, `palette.rs`) with its named changes labelled; thresholds; a
//! strip over every column at or over the limit; the dashed projection from the last
//! reading to the limit with its time; cleanups as numbered markers (a diamond for an
//! emergency one) explained in the panel on the right; gaps shaded; unread rows ticked on
//! the axis. Labels never sit on a line or another label (`place.rs`). A `<title>` and a
//! `<desc>` say the same in a sentence.

mod caption;
mod doc;
mod marks;
mod palette;
mod panel;
mod place;
mod series;

use anyhow::Result;

use crate::commands::evidence_chart::footnotes;
use crate::commands::evidence_time::Zone;
use crate::core::chart::{Chart, Scale};
use crate::output::{plural, thousands};
use crate::sanitize::sanitize;
use caption::{description, headline};
use doc::{Anchor, Doc, Stroke, text_width};
use marks::{draw_cleanups, draw_projection, draw_unread};
use palette::{
    BAND, CRITICAL_LINE, GRID, INK, MUTED, USED_LINE, WARNING_LINE, WHITE, ZOMBIES_LINE, limit_line,
};
use panel::{draw_panel, panel_lines};
use place::{Box2, Occupied};
use series::{Series, draw_over, envelope_runs, step_runs};

use palette::Rgb;

pub const WIDTH: f64 = 1100.0;
/// The least height; the panel on the right may make it taller (it is never cut).
pub const MIN_HEIGHT: f64 = 580.0;
const PANEL_W: f64 = 330.0;
const PLOT_TOP: f64 = 86.0;
const PLOT_BOTTOM: f64 = 510.0;
const FONT: f64 = 13.0;

/// The plot's frame in pixels and its mapping from the model.
struct Frame {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
    scale: Scale,
}

impl Frame {
    fn x_of(&self, frac: f64) -> f64 {
        self.x0 + frac.clamp(0.0, 1.0) * (self.x1 - self.x0)
    }

    fn y(&self, v: u64) -> f64 {
        self.y1 - self.scale.frac(v) * (self.y1 - self.y0)
    }

    /// The centre of pixel column `i`.
    fn col_x(&self, i: usize) -> f64 {
        self.x0 + i as f64 + 0.5
    }
}

/// The y-axis step: 1, 2 or 5 × 10^k, at most six steps to the top.
fn y_step(top: u64) -> u64 {
    let mut step = 1u64;
    loop {
        for m in [1, 2, 5] {
            let s = step.saturating_mul(m);
            if top / s.max(1) <= 6 {
                return s.max(1);
            }
        }
        step = step.saturating_mul(10);
    }
}

/// The SVG document of `c`, times in `zone`.
pub fn render(c: &Chart, zone: &Zone) -> Result<String> {
    let top = c.y_top();
    let step = y_step(top);
    let y_labels: Vec<(u64, String)> = (0..=top / step)
        .map(|k| (k * step, thousands(k * step)))
        .collect();
    let label_w = y_labels
        .iter()
        .map(|(_, l)| text_width(l, FONT))
        .fold(0.0, f64::max);
    let f = Frame {
        x0: (40.0 + label_w + 10.0).round(),
        x1: WIDTH - PANEL_W - 24.0,
        y0: PLOT_TOP,
        y1: PLOT_BOTTOM,
        scale: Scale::new(top, 1_000_000),
    };
    let n = (f.x1 - f.x0).floor().max(1.0) as usize;
    let cols = c.columns(n);
    let notes = footnotes(c, n);
    let panel = panel_lines(c, zone, &cols, &notes);
    let panel_h = 70.0 + panel.iter().map(|l| l.height()).sum::<f64>();
    let height = MIN_HEIGHT.max(panel_h + 20.0);
    let title = format!("headroom evidence: process slots, {}", zone.span(c, "→"));
    let mut d = Doc::new(WIDTH, height, &title, &description(c, zone, &cols));
    d.rect(0.0, 0.0, WIDTH, height, WHITE, "ground");
    d.text(24.0, 30.0, 19.0, Anchor::Start, INK, &title, false, "title");
    if let Some(h) = headline(c, zone) {
        d.text(
            24.0,
            52.0,
            FONT,
            Anchor::Start,
            MUTED,
            &h,
            false,
            "headline",
        );
    }

    let mut occ = Occupied::new(Box2 {
        x0: f.x0 + 2.0,
        y0: f.y0 + 2.0,
        x1: f.x1 - 2.0,
        y1: f.y1 - 2.0,
    });

    // The grid and the axes' labels.
    for (v, label) in &y_labels {
        let y = f.y(*v);
        d.line((f.x0, y), (f.x1, y), Stroke::solid(GRID, 1.0));
        d.text(
            f.x0 - 8.0,
            y + 4.5,
            FONT,
            Anchor::End,
            INK,
            label,
            false,
            "y-label",
        );
    }
    let ticks = zone.ticks(c, 90.0 / (f.x1 - f.x0));
    for (t, label) in &ticks {
        let x = f.x_of(t.x);
        d.line((x, f.y0), (x, f.y1), Stroke::solid(GRID, 1.0));
        d.line((x, f.y1), (x, f.y1 + 5.0), Stroke::solid(INK, 1.0));
        d.text(
            x,
            f.y1 + 20.0,
            FONT,
            Anchor::Middle,
            INK,
            label,
            false,
            "x-label",
        );
    }
    d.text(
        16.0,
        (f.y0 + f.y1) / 2.0,
        14.0,
        Anchor::Middle,
        INK,
        "process slots (processes of the uid)",
        true,
        "y-title",
    );
    let short = c.axis.shortened();
    let x_title = if short.gaps > 0 {
        format!(
            "time ({}; {} drawn shorter)",
            zone.name(c),
            plural(short.gaps as u64, "gap")
        )
    } else {
        format!("time ({})", zone.name(c))
    };
    d.text(
        (f.x0 + f.x1) / 2.0,
        f.y1 + 42.0,
        14.0,
        Anchor::Middle,
        INK,
        &x_title,
        false,
        "x-title",
    );

    // Gaps first, so everything else is drawn over them.
    let mut gap_boxes = Vec::new();
    for g in &c.axis.gaps {
        let (a, b) = (f.x_of(c.axis.x(g.from)), f.x_of(c.axis.x(g.to)));
        let (a, b) = if b - a < 3.0 {
            let m = (a + b) / 2.0;
            (m - 1.5, m + 1.5)
        } else {
            (a, b)
        };
        d.rect(a, f.y0, b - a, f.y1 - f.y0, BAND, "gap");
        gap_boxes.push((a, b, g.secs()));
    }
    draw_over(&mut d, &f, &cols);
    let limit_runs = step_runs(&f, &cols, |col| col.binding_limit());
    for (pct, line) in [(c.warn_pct, WARNING_LINE), (c.crit_pct, CRITICAL_LINE)] {
        for run in &limit_runs {
            let pts: Vec<(f64, f64)> = run
                .pts
                .iter()
                .map(|&(x, v)| (x, f.y((v as f64 * pct / 100.0).round() as u64)))
                .collect();
            d.polyline(&pts, line, "threshold");
            occ.line(&pts, 3.0);
        }
    }
    for run in &limit_runs {
        let pts: Vec<(f64, f64)> = run.pts.iter().map(|&(x, v)| (x, f.y(v))).collect();
        d.polyline(&pts, limit_line(c.source_name(run.source)), "limit");
        occ.line(&pts, 4.0);
    }
    for (line, class, get) in [
        (ZOMBIES_LINE, "zombies", Series::Zombies),
        (USED_LINE, "used", Series::Used),
    ] {
        for run in envelope_runs(&f, &cols, get) {
            if run.len() == 1 || run.iter().all(|p| (p.0 - run[0].0).abs() < 1.0) {
                // One reading (or one column of them): a dot, not a 1-px line.
                d.circle(run[0], 3.5, line.colour, &format!("{class}-dot"));
                occ.rect(Box2 {
                    x0: run[0].0 - 5.0,
                    y0: run[0].1 - 5.0,
                    x1: run[0].0 + 5.0,
                    y1: run[0].1 + 5.0,
                });
                if run.len() > 1 {
                    d.polyline(&run, line, class);
                }
            } else {
                d.polyline(&run, line, class);
                occ.line(&run, 3.0);
            }
        }
    }
    let proj = draw_projection(&mut d, &mut occ, c, &f, zone);
    let marks = draw_cleanups(&mut d, &mut occ, c, &f, &notes);
    draw_unread(&mut d, c, &f);

    // Labels last, each where it covers nothing already drawn (one with no free place is
    // left out: the panel names every change, and the projection's time).
    for ch in &c.changes {
        let name = c
            .source_name(ch.source)
            .map_or("unknown source".into(), |n| sanitize(n).into_owned());
        let label = format!("{} ({name})", thousands(ch.limit));
        let (x, y) = (f.x_of(c.axis.x(ch.at)), f.y(ch.limit));
        let colour = limit_line(c.source_name(ch.source)).colour;
        // Where the value and its source do not fit, the value alone (its colour and the
        // panel name the source).
        if !place_text(&mut d, &mut occ, x, y, &label, colour, "limit-label") {
            place_text(
                &mut d,
                &mut occ,
                x,
                y,
                &thousands(ch.limit),
                colour,
                "limit-label",
            );
        }
    }
    if let Some((x, y, label)) = proj {
        place_text(
            &mut d,
            &mut occ,
            x,
            y,
            &label,
            USED_LINE.colour,
            "projection-label",
        );
    }
    for (x, y, number) in marks {
        place_text(
            &mut d,
            &mut occ,
            x,
            y,
            &number.to_string(),
            INK,
            "cleanup-number",
        );
    }
    for (a, b, secs) in gap_boxes {
        let label = format!("no readings {}", crate::commands::evidence_time::span(secs));
        let h = text_width(&label, 12.0);
        let x = (a + b) / 2.0 + 4.0;
        let y0 = f.y1 - 10.0 - h;
        let b2 = Box2 {
            x0: x - 10.0,
            y0,
            x1: x + 2.0,
            y1: f.y1 - 10.0,
        };
        if b - a >= 16.0 && occ.free(b2) {
            occ.rect(b2);
            d.text(
                x,
                f.y1 - 10.0,
                12.0,
                Anchor::Start,
                INK,
                &label,
                true,
                "gap-label",
            );
        }
    }
    d.frame(f.x0, f.y0, f.x1 - f.x0, f.y1 - f.y0, INK);
    draw_panel(&mut d, &panel, WIDTH - PANEL_W);
    Ok(d.finish())
}

/// Try `label` at a few places about (x, y): just above and just below, to the right and
/// to the left, then a line further off.
fn place_text(
    d: &mut Doc,
    occ: &mut Occupied,
    x: f64,
    y: f64,
    label: &str,
    colour: Rgb,
    class: &str,
) -> bool {
    let w = text_width(label, FONT);
    let h = FONT + 1.0;
    let mut candidates = Vec::new();
    // Box tops: 5 px clear above the anchor, 5 px clear below, then a line further each way.
    for k in 0..4 {
        let k = f64::from(k);
        let (above, below) = (y - 5.0 - h - k * h, y + 5.0 + k * h);
        for top in [above, below] {
            for (x0, anchor) in [(x + 4.0, Anchor::Start), (x - 4.0 - w, Anchor::End)] {
                candidates.push((
                    Box2 {
                        x0,
                        y0: top,
                        x1: x0 + w,
                        y1: top + h,
                    },
                    anchor,
                ));
            }
        }
    }
    let boxes: Vec<Box2> = candidates.iter().map(|c| c.0).collect();
    let Some(b) = occ.take(&boxes) else {
        return false;
    };
    let anchor = candidates
        .iter()
        .find(|c| c.0 == b)
        .map_or(Anchor::Start, |c| c.1);
    let tx = if anchor == Anchor::Start { b.x0 } else { b.x1 };
    // The baseline sits about a fifth of the box above its bottom.
    d.text(tx, b.y1 - 3.5, FONT, anchor, colour, label, false, class);
    true
}

#[cfg(test)]
mod tests;
