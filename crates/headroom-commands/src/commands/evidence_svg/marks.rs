//! The marks over the lines: the projection to the limit, the cleanups' triangles and
//! diamonds, and the ticks of unread rows on the time axis.

use super::Frame;
use super::caption::projected_time;
use super::doc::{Anchor, Doc, Stroke};
use super::palette::{CLEANUP, EMERGENCY, INK, PROJECTION_LINE, Rgb};
use super::place::{Box2, Occupied};
use crate::commands::evidence_chart::Footnote;
use crate::commands::evidence_time::Zone;
use crate::core::chart::Chart;

/// The dashed line from the last reading to the limit; its label's anchor and text.
pub(super) fn draw_projection(
    d: &mut Doc,
    occ: &mut Occupied,
    c: &Chart,
    f: &Frame,
    zone: &Zone,
) -> Option<(f64, f64, String)> {
    let p = c.drawn_projection()?;
    let a = (f.x_of(c.axis.x(p.from_at)), f.y(p.from_used));
    let b = (f.x_of(c.axis.x(p.at)), f.y(p.limit));
    d.polyline(&[a, b], PROJECTION_LINE, "projection");
    occ.line(&[a, b], 3.0);
    d.circle(b, 4.0, PROJECTION_LINE.colour, "projection-end");
    occ.rect(Box2 {
        x0: b.0 - 6.0,
        y0: b.1 - 6.0,
        x1: b.0 + 6.0,
        y1: b.1 + 6.0,
    });
    Some((
        b.0,
        b.1,
        format!("fork fails ≈ {}", projected_time(c, zone)),
    ))
}

pub(super) const TRIANGLE: [(f64, f64); 3] = [(0.0, -8.0), (7.0, 5.0), (-7.0, 5.0)];
pub(super) const DIAMOND: [(f64, f64); 4] = [(0.0, -8.0), (7.0, 0.0), (0.0, 8.0), (-7.0, 0.0)];

/// A triangle per cleanup (a diamond for an emergency one: shape, not colour alone) at the
/// usage it acted on; returns where each footnote's number goes.
pub(super) fn draw_cleanups(
    d: &mut Doc,
    occ: &mut Occupied,
    c: &Chart,
    f: &Frame,
    notes: &[Footnote<'_>],
) -> Vec<(f64, f64, usize)> {
    let y_of = |at: i64, used: Option<u64>| {
        let v = used
            .or_else(|| {
                let k = c.points.partition_point(|p| p.at <= at);
                k.checked_sub(1).map(|k| c.points[k].used)
            })
            .unwrap_or(0);
        f.y(v)
    };
    let mut out = Vec::new();
    for note in notes {
        for m in &note.marks {
            let (x, y) = (f.x_of(c.axis.x(m.at)), y_of(m.at, m.used));
            let (shape, fill, class): (&[(f64, f64)], Rgb, &str) = if m.emergency {
                (&DIAMOND, EMERGENCY, "emergency")
            } else {
                (&TRIANGLE, CLEANUP, "cleanup")
            };
            let pts: Vec<(f64, f64)> = shape.iter().map(|(dx, dy)| (x + dx, y + dy)).collect();
            d.polygon(&pts, fill, INK, class);
            occ.rect(Box2 {
                x0: x - 8.0,
                y0: y - 9.0,
                x1: x + 8.0,
                y1: y + 9.0,
            });
        }
        let m = note.marks[0];
        out.push((f.x_of(c.axis.x(m.at)), y_of(m.at, m.used), note.number));
    }
    out
}

/// Rows the reader could not interpret: a tick and `?` on the time axis.
pub(super) fn draw_unread(d: &mut Doc, c: &Chart, f: &Frame) {
    for at in c.unread.iter().filter_map(|u| u.at) {
        let x = f.x_of(c.axis.x(at));
        d.line((x, f.y1), (x, f.y1 - 12.0), Stroke::solid(INK, 3.0));
        d.text(
            x,
            f.y1 - 15.0,
            15.0,
            Anchor::Middle,
            INK,
            "?",
            false,
            "unread",
        );
    }
}
