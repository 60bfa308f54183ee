//! The axes: the grid at round values, the value and time labels, the two titles.

use super::FONT;
use super::Frame;
use super::doc::{Anchor, Doc, Stroke};
use super::palette::{GRID, INK};
use crate::commands::evidence_time::Zone;
use crate::core::chart::Chart;
use crate::output::plural;

/// The grid, the axes' labels and their titles (the gaps' count in the time axis's).
pub(super) fn draw_axes(
    d: &mut Doc,
    c: &Chart,
    zone: &Zone,
    f: &Frame,
    y_labels: &[(u64, String)],
) {
    // The grid and the axes' labels.
    for (v, label) in y_labels {
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
}
