//! The data as lines: the strip over columns at or over the limit, the limit as step lines
//! per source, and used slots and zombies through each pixel column's envelope.

use super::Frame;
use super::doc::Doc;
use super::palette::OVER;
use crate::core::chart::{Column, Envelope, Kind};

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
            Kind::Gap | Kind::Empty => {
                open = false;
                continue;
            }
            Kind::Between => continue,
            Kind::Readings => {}
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
