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

mod axes;
mod caption;
mod doc;
mod labels;
mod marks;
mod palette;
mod panel;
mod place;
mod series;

use anyhow::Result;

use crate::commands::evidence_chart::footnotes;
use crate::commands::evidence_time::Zone;
use crate::core::chart::{Chart, Scale};
use crate::output::thousands;
use axes::draw_axes;
use caption::{description, headline};
use doc::{Anchor, Doc, text_width};
use labels::draw_labels;
use marks::{draw_cleanups, draw_projection, draw_unread};
use palette::{INK, MUTED, WHITE};
use panel::{draw_panel, panel_lines};
use place::{Box2, Occupied};
use series::{draw_gaps, draw_lines};

pub(crate) const WIDTH: f64 = 1100.0;
/// The least height; the panel on the right may make it taller (it is never cut).
pub(crate) const MIN_HEIGHT: f64 = 580.0;
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
pub(crate) fn render(c: &Chart, zone: &Zone) -> Result<String> {
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

    draw_axes(&mut d, c, zone, &f, &y_labels);
    let gap_boxes = draw_gaps(&mut d, c, &f);
    draw_lines(&mut d, &mut occ, c, &f, &cols);
    let proj = draw_projection(&mut d, &mut occ, c, &f, zone);
    let marks = draw_cleanups(&mut d, &mut occ, c, &f, &notes);
    draw_unread(&mut d, c, &f);

    draw_labels(&mut d, &mut occ, c, &f, proj, marks, gap_boxes);
    d.frame(f.x0, f.y0, f.x1 - f.x0, f.y1 - f.y0, INK);
    draw_panel(&mut d, &panel, WIDTH - PANEL_W);
    Ok(d.finish())
}

#[cfg(test)]
mod tests;
