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

mod doc;
mod palette;
mod place;

use anyhow::Result;

use crate::commands::evidence_chart::{
    Footnote, footnote_text, footnotes, format_rate, gap_sentence, projection_sentence,
};
use crate::commands::evidence_time::{Style, Zone};
use crate::core::chart::{Chart, Column, Envelope, Kind, Scale, freed_total};
use crate::output::{plural, thousands};
use crate::sanitize::sanitize;
use doc::{Anchor, Doc, Stroke, text_width};
use palette::{
    BAND, CLEANUP, CRITICAL_LINE, EMERGENCY, GRID, INK, MUTED, OVER, PROJECTION_LINE, USED_LINE,
    WARNING_LINE, WHITE, ZOMBIES_LINE, limit_line,
};
use place::{Box2, Occupied};

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

/// The columns at or over the limit: a strip above the plot.
fn draw_over(d: &mut Doc, f: &Frame, cols: &[Column]) {
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
struct StepRun {
    pts: Vec<(f64, u64)>,
    source: Option<u16>,
}

/// The limit (per column, the binding one) as step lines, broken where there is no limit
/// and where its source changes (the new source's line starts with the step up or down).
fn step_runs(
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
enum Series {
    Used,
    Zombies,
}

/// A series as polylines through each column's envelope (first, low/high in the order they
/// came, last), broken at gaps; between readings of one stretch the line runs straight.
fn envelope_runs(f: &Frame, cols: &[Column], s: Series) -> Vec<Vec<(f64, f64)>> {
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

/// The dashed line from the last reading to the limit; its label's anchor and text.
fn draw_projection(
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

const TRIANGLE: [(f64, f64); 3] = [(0.0, -8.0), (7.0, 5.0), (-7.0, 5.0)];
const DIAMOND: [(f64, f64); 4] = [(0.0, -8.0), (7.0, 0.0), (0.0, 8.0), (-7.0, 0.0)];

/// A triangle per cleanup (a diamond for an emergency one: shape, not colour alone) at the
/// usage it acted on; returns where each footnote's number goes.
fn draw_cleanups(
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
fn draw_unread(d: &mut Doc, c: &Chart, f: &Frame) {
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

/// The sentence above the plot: the worst moment and where the trend is heading.
fn headline(c: &Chart, zone: &Zone) -> Option<String> {
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
fn projected_time(c: &Chart, zone: &Zone) -> String {
    let Some(p) = c.projection else {
        return String::new();
    };
    if p.at > c.axis.end {
        zone.clock(p.at, Style::Full)
    } else {
        zone.clock(p.at, zone.axis_style(c))
    }
}

/// The `<desc>`: what the picture shows, in one paragraph.
fn description(c: &Chart, zone: &Zone, cols: &[Column]) -> String {
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

/// One line of the panel on the right: a key (a sample of what it names) or plain text.
enum Line {
    Key(Key, String),
    Heading(String),
    Text(String),
}

impl Line {
    fn height(&self) -> f64 {
        match self {
            Line::Key(..) => 22.0,
            Line::Heading(_) => 26.0,
            Line::Text(_) => 18.0,
        }
    }
}

enum Key {
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

fn panel_lines(c: &Chart, zone: &Zone, cols: &[Column], notes: &[Footnote<'_>]) -> Vec<Line> {
    let style = zone.axis_style(c);
    let mut v = vec![Line::Key(Key::Stroke(USED_LINE), "used slots".into())];
    if c.points.iter().any(|p| p.zombies().is_some()) {
        v.push(Line::Key(Key::Stroke(ZOMBIES_LINE), "zombies".into()));
    }
    let mut seen: Vec<Option<u16>> = Vec::new();
    for ch in &c.changes {
        if !seen.contains(&ch.source) {
            seen.push(ch.source);
            let name = c
                .source_name(ch.source)
                .map_or("unknown source".into(), |n| sanitize(n).into_owned());
            v.push(Line::Key(
                Key::Stroke(limit_line(c.source_name(ch.source))),
                format!("limit ({name})"),
            ));
        }
    }
    if !c.changes.is_empty() {
        v.push(Line::Key(
            Key::Stroke(CRITICAL_LINE),
            format!("critical {} % of the limit", c.crit_pct),
        ));
        v.push(Line::Key(
            Key::Stroke(WARNING_LINE),
            format!("warning {} % of the limit", c.warn_pct),
        ));
    }
    if cols.iter().any(|c| c.over) {
        v.push(Line::Key(Key::Over, "at or over the limit".into()));
    }
    if c.drawn_projection().is_some() {
        v.push(Line::Key(
            Key::Stroke(PROJECTION_LINE),
            "projection to the limit".into(),
        ));
    }
    if c.cleanups.iter().any(|m| !m.emergency) {
        v.push(Line::Key(
            Key::Shape(false),
            "cleanup (numbered below)".into(),
        ));
    }
    if c.cleanups.iter().any(|m| m.emergency) {
        v.push(Line::Key(Key::Shape(true), "emergency cleanup".into()));
    }
    if !c.axis.gaps.is_empty() {
        v.push(Line::Key(Key::Band, "no readings".into()));
    }
    let placed = c.unread.iter().filter(|u| u.at.is_some()).count();
    if placed > 0 {
        v.push(Line::Key(
            Key::Tick,
            format!("row not interpreted ({placed})"),
        ));
    }
    let unplaced = c.unread.len() - placed;
    if unplaced > 0 {
        v.push(Line::Key(
            Key::Dot(WHITE),
            format!("+{unplaced} without a readable time"),
        ));
    }
    let text = |v: &mut Vec<Line>, s: &str| {
        for l in wrap(s, FONT, PANEL_TEXT_W) {
            v.push(Line::Text(l));
        }
    };
    if c.projection.is_some() {
        v.push(Line::Heading("Projection".into()));
        let s = projection_sentence(c, zone, None);
        text(&mut v, s.trim_start_matches("projection: "));
    }
    if !c.cleanups.is_empty() {
        v.push(Line::Heading("Cleanups".into()));
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
        v.push(Line::Heading("Limit".into()));
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
        v.push(Line::Heading("Gaps".into()));
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

fn draw_panel(d: &mut Doc, lines: &[Line], left: f64) {
    let x0 = left + 10.0;
    let mut y = PLOT_TOP;
    for line in lines {
        match line {
            Line::Key(key, label) => {
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
            Line::Heading(h) => {
                y += 8.0;
                d.text(x0, y + 4.5, 14.0, Anchor::Start, INK, h, false, "heading");
                y += line.height() - 8.0;
            }
            Line::Text(t) => {
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

#[cfg(test)]
mod tests;
