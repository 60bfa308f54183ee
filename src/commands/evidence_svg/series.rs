//! The data as lines: the strip over columns at or over the limit, the limit as step lines
//! per source, and used slots and zombies through each pixel column's envelope.

use super::Frame;
use super::doc::Doc;
use super::palette::{
    BAND, CRITICAL_LINE, OVER, USED_LINE, WARNING_LINE, ZOMBIES_LINE, limit_line,
};
use super::place::{Box2, Occupied};
use crate::core::chart::{Chart, Column, ColumnKind, Envelope};

/// The columns at or over the limit: a strip above the plot.
pub(super) fn draw_over(d: &mut Doc, f: &Frame, cols: &[Column]) {
    let mut i = 0;
    while i < cols.len() {
        if !cols[i].over {
            i += 1;
            continue;
        }
        let start = i;
        while i < cols.len() && cols[i].over {
            i += 1;
        }
        let w = ((i - start) as f64).max(3.0);
        d.rect(f.x0 + start as f64, f.y0 - 10.0, w, 7.0, OVER, "over");
    }
}

/// A step line's run: the points (x, value) and the source it is drawn for.
pub(super) struct StepRun {
    pub(super) pts: Vec<(f64, u64)>,
    pub(super) source: Option<u16>,
}

/// The limit (per column, the binding one) as step lines, broken where there is no limit
/// and where its source changes (the new source's line starts with the step up or down).
pub(super) fn step_runs(
    f: &Frame,
    cols: &[Column],
    get: impl Fn(&Column) -> Option<(u64, Option<u16>)>,
) -> Vec<StepRun> {
    let mut runs: Vec<StepRun> = Vec::new();
    let mut open = false;
    for (i, col) in cols.iter().enumerate() {
        let Some((v, source)) = get(col) else {
            open = false;
            continue;
        };
        let (xl, xr) = (f.x0 + i as f64, f.x0 + i as f64 + 1.0);
        match runs.last_mut() {
            Some(r) if open && r.source == source => {
                let last = r.pts[r.pts.len() - 1];
                if last.1 == v {
                    let k = r.pts.len() - 1;
                    r.pts[k].0 = xr;
                } else {
                    r.pts.push((xl, v));
                    r.pts.push((xr, v));
                }
            }
            Some(r) if open => {
                // Another source takes over: its line begins at the old value's end.
                let from = r.pts[r.pts.len() - 1];
                runs.push(StepRun {
                    pts: vec![(xl, from.1), (xl, v), (xr, v)],
                    source,
                });
            }
            _ => runs.push(StepRun {
                pts: vec![(xl, v), (xr, v)],
                source,
            }),
        }
        open = true;
    }
    // A step of one reading is drawn 8 px long, not 1.
    for r in &mut runs {
        let (a, b) = (r.pts[0].0, r.pts[r.pts.len() - 1].0);
        if b - a < 8.0 {
            let m = (a + b) / 2.0;
            let v = r.pts[r.pts.len() - 1].1;
            r.pts = vec![(m - 4.0, v), (m + 4.0, v)];
        }
    }
    runs
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Series {
    Used,
    Zombies,
}

/// A series as polylines through each column's envelope (first, low/high in the order they
/// came, last), broken at gaps; between readings of one stretch the line runs straight.
pub(super) fn envelope_runs(f: &Frame, cols: &[Column], s: Series) -> Vec<Vec<(f64, f64)>> {
    let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut open = false;
    let mut last_stretch = None;
    for (i, col) in cols.iter().enumerate() {
        match col.kind {
            ColumnKind::Gap | ColumnKind::Empty => {
                open = false;
                continue;
            }
            ColumnKind::Between => continue,
            ColumnKind::Readings => {}
        }
        let e: Option<Envelope> = match s {
            Series::Used => col.used,
            Series::Zombies => col.zombies,
        };
        let Some(e) = e else {
            open = false;
            continue;
        };
        if last_stretch.is_some_and(|l| l != col.first_stretch) {
            open = false;
        }
        last_stretch = Some(col.last_stretch);
        let x = f.col_x(i);
        let (lo, hi) = (f.y(e.min), f.y(e.max));
        let mut pts = vec![(x, f.y(e.first))];
        if e.min_first {
            pts.extend([(x, lo), (x, hi)]);
        } else {
            pts.extend([(x, hi), (x, lo)]);
        }
        pts.push((x, f.y(e.last)));
        pts.dedup();
        if !open {
            runs.push(Vec::new());
            open = true;
        }
        if let Some(r) = runs.last_mut() {
            for p in pts {
                if r.last() != Some(&p) {
                    r.push(p);
                }
            }
        }
    }
    runs
}

/// The gaps as bands (a narrow one widened to 3 px); returns each band's left, right and
/// length in seconds, for its label.
pub(super) fn draw_gaps(d: &mut Doc, c: &Chart, f: &Frame) -> Vec<(f64, f64, i64)> {
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
    gap_boxes
}

/// The data: the over strip, the thresholds and the limit as step lines, then zombies and
/// used slots through their envelopes (a dot for a single reading).
pub(super) fn draw_lines(d: &mut Doc, occ: &mut Occupied, c: &Chart, f: &Frame, cols: &[Column]) {
    draw_over(d, f, cols);
    let limit_runs = step_runs(f, cols, |col| col.binding_limit());
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
        for run in envelope_runs(f, cols, get) {
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
}
