//! The labels, drawn after everything else, each where it covers nothing already drawn
//! (`place.rs` keeps what is taken); one with no free place is left out, as the panel says
//! the same.

use super::doc::{Anchor, Doc, text_width};
use super::palette::{INK, Rgb, USED_LINE, limit_line};
use super::place::{Box2, Occupied};
use super::{FONT, Frame};
use crate::core::chart::Chart;
use crate::output::thousands;
use crate::sanitize::sanitize;

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

/// The labels, drawn last: the limit's changes, the projection's time, the cleanups'
/// numbers and the gaps' lengths.
pub(super) fn draw_labels(
    d: &mut Doc,
    occ: &mut Occupied,
    c: &Chart,
    f: &Frame,
    proj: Option<(f64, f64, String)>,
    marks: Vec<(f64, f64, usize)>,
    gap_boxes: Vec<(f64, f64, i64)>,
) {
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
        if !place_text(d, occ, x, y, &label, colour, "limit-label") {
            place_text(d, occ, x, y, &thousands(ch.limit), colour, "limit-label");
        }
    }
    if let Some((x, y, label)) = proj {
        place_text(d, occ, x, y, &label, USED_LINE.colour, "projection-label");
    }
    for (x, y, number) in marks {
        place_text(d, occ, x, y, &number.to_string(), INK, "cleanup-number");
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
}
