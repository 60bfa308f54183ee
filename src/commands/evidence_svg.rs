//! `headroom evidence --svg FILE`: the chart model (core/chart.rs) as a self-contained SVG,
//! drawn with plotters' SVG backend (no scripts, no fonts, no links: text is `<text>` in the
//! viewer's sans-serif). Used slots and zombies over time, the limit as a step line in one
//! colour per `limit_source` with its value written at each step, thresholds dashed,
//! cleanups with the slots they freed (emergency ones apart), gaps shaded, uninterpretable
//! rows marked on the time axis. An opaque white ground keeps it readable in dark viewers.

use anyhow::{Result, anyhow};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::commands::evidence_chart::{axis_clock, clock, span_text};
use crate::core::chart::{Chart, Point, freed_total};
use crate::output::thousands;
use crate::sanitize::sanitize;

pub const WIDTH: u32 = 1100;
pub const HEIGHT: u32 = 560;

// Colours chosen to stay apart for the common colour-vision deficiencies and on white.
pub const USED: RGBColor = RGBColor(0x1F, 0x5F, 0xBF);
pub const ZOMBIES: RGBColor = RGBColor(0xD9, 0x73, 0x0D);
pub const WARNING: RGBColor = RGBColor(0xB7, 0x95, 0x0B);
pub const CRITICAL: RGBColor = RGBColor(0xC0, 0x39, 0x2B);
pub const CLEANUP: RGBColor = RGBColor(0x2D, 0x7D, 0x46);
pub const EMERGENCY: RGBColor = RGBColor(0xA0, 0x1E, 0x8C);
pub const UNREAD: RGBColor = RGBColor(0xE0, 0x10, 0x10);
/// One per limit source, in order of first appearance.
pub const LIMITS: [RGBColor; 4] = [
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0x7B, 0x2C, 0xBF),
    RGBColor(0x00, 0x8B, 0x8B),
    RGBColor(0x80, 0x80, 0x80),
];
const INK: RGBColor = RGBColor(0x33, 0x33, 0x33);
const FAINT: RGBColor = RGBColor(0xE6, 0xE6, 0xE6);

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("cannot draw the evidence chart: {e}")
}

/// The SVG document of `c`.
pub fn render(c: &Chart) -> Result<String> {
    let mut svg = String::new();
    draw(c, &mut svg).map_err(err)?;
    Ok(svg)
}

/// One entry of the legend panel.
enum Key {
    Line(RGBColor, u32),
    Dashed(RGBColor),
    Band,
    Triangle(RGBColor),
    Diamond(RGBColor),
    Tick(RGBColor),
}

const TRIANGLE: [(i32, i32); 3] = [(0, -8), (7, 5), (-7, 5)];
const DIAMOND: [(i32, i32); 4] = [(0, -8), (7, 0), (0, 8), (-7, 0)];
/// Room on the right for the legend, so it never covers a reading.
const LEGEND_W: u32 = 305;

fn draw(c: &Chart, svg: &mut String) -> Result<(), Box<dyn std::error::Error>> {
    let root = SVGBackend::with_string(svg, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    let (plot, side) = root.split_horizontally(WIDTH - LEGEND_W);
    let style = axis_clock(c);
    let top = c.y_top() as i64;
    let font = |px: u32, colour: &RGBColor| text_font(px).color(colour);
    let mut chart = ChartBuilder::on(&plot)
        .caption(
            format!("headroom evidence: process slots, {}", span_text(c, "→")),
            font(20, &INK),
        )
        .margin(14)
        .margin_top(22)
        .x_label_area_size(44)
        .y_label_area_size(72)
        .build_cartesian_2d(0f64..1f64, 0i64..top)?;
    chart
        .configure_mesh()
        .light_line_style(FAINT)
        .bold_line_style(FAINT)
        .axis_style(INK)
        .label_style(font(13, &INK))
        .axis_desc_style(font(14, &INK))
        .x_desc(if c.gaps.is_empty() {
            "time (UTC)"
        } else {
            "time (UTC; gaps without readings shortened)"
        })
        .y_desc("process slots (processes of the uid)")
        .x_labels(7)
        .y_labels(6)
        .x_label_formatter(&|x| clock(c.time_at(*x), style))
        .y_label_formatter(&|v| thousands(*v as u64))
        .draw()?;
    let x = |t: i64| c.x(t);
    let mut keys: Vec<(Key, String)> = Vec::new();

    // Gaps first, so everything else is drawn over them.
    for g in &c.gaps {
        chart.draw_series(std::iter::once(Rectangle::new(
            [(x(g.from), 0), (x(g.to), top)],
            BAND.filled(),
        )))?;
        chart.draw_series(std::iter::once(Text::new(
            format!(
                "no readings for {}",
                crate::output::human_duration((g.to - g.from) as f64)
            ),
            // Low in the band: limit lines and their labels sit higher.
            ((x(g.from) + x(g.to)) / 2.0, top / 5),
            font(12, &INK)
                .transform(FontTransform::Rotate270)
                .pos(Pos::new(HPos::Center, VPos::Center)),
        )))?;
    }
    if !c.gaps.is_empty() {
        keys.push((Key::Band, "no readings (shortened)".into()));
    }

    // Thresholds follow the limit, step by step.
    for (pct, colour, name) in [
        (c.warn_pct, WARNING, "warning"),
        (c.crit_pct, CRITICAL, "critical"),
    ] {
        for st in &c.limits {
            let y = (st.limit as f64 * pct / 100.0).round() as i64;
            chart.draw_series(DashedLineSeries::new(
                [(x(st.from), y), (x(st.to).max(x(st.from) + 0.002), y)],
                6,
                4,
                colour.stroke_width(2),
            ))?;
        }
        if !c.limits.is_empty() {
            keys.push((Key::Dashed(colour), format!("{name} {pct} % of the limit")));
        }
    }

    // The limit: one colour per source, steps joined where one follows the other, each
    // new value written at its start.
    let mut sources: Vec<Option<String>> = Vec::new();
    for (i, st) in c.limits.iter().enumerate() {
        let k = match sources.iter().position(|s| *s == st.source) {
            Some(k) => k,
            None => {
                sources.push(st.source.clone());
                sources.len() - 1
            }
        };
        let colour = LIMITS[k % LIMITS.len()];
        let y = st.limit as i64;
        let mut pts = vec![(x(st.from), y), (x(st.to).max(x(st.from) + 0.002), y)];
        if let Some(next) = c.limits.get(i + 1).filter(|n| n.from == st.to) {
            pts.push((x(st.to), next.limit as i64));
        }
        chart.draw_series(LineSeries::new(pts, colour.stroke_width(3)))?;
        let name = st
            .source
            .as_deref()
            .map_or("unknown source".into(), sanitize);
        let repeat =
            i > 0 && c.limits[i - 1].limit == st.limit && c.limits[i - 1].source == st.source;
        if !repeat {
            // Late in the axis the label ends at the step instead of running off the plot.
            let h = if x(st.from) > 0.7 {
                HPos::Right
            } else {
                HPos::Left
            };
            chart.draw_series(std::iter::once(Text::new(
                format!("limit {} ({name})", thousands(st.limit)),
                (x(st.from), y + top / 80),
                font(14, &colour).pos(Pos::new(h, VPos::Bottom)),
            )))?;
        }
        if k == sources.len() - 1 && !c.limits[..i].iter().any(|p| p.source == st.source) {
            keys.push((Key::Line(colour, 3), format!("limit ({name})")));
        }
    }

    // Used slots and zombies, broken at every gap.
    type Pick = fn(&Point) -> Option<u64>;
    let series: [(RGBColor, &str, Pick); 2] = [
        (USED, "used slots", |p| Some(p.used)),
        (ZOMBIES, "zombies", |p| p.zombies),
    ];
    for (colour, name, pick) in series {
        let mut any = false;
        for run in runs(c) {
            let pts: Vec<(f64, i64)> = run
                .iter()
                .filter_map(|p| pick(p).map(|v| (x(p.at), v as i64)))
                .collect();
            match pts.len() {
                0 => continue,
                1 => {
                    chart.draw_series(std::iter::once(Circle::new(pts[0], 3, colour.filled())))?;
                }
                _ => {
                    chart.draw_series(LineSeries::new(pts, colour.stroke_width(2)))?;
                }
            }
            any = true;
        }
        if any {
            keys.push((Key::Line(colour, 2), name.into()));
        }
    }

    // Cleanups: a triangle (a diamond for an emergency one: shape, not colour alone) at the
    // usage the cleanup acted on, and what it freed beside it.
    let y_of = |at: i64, used: Option<u64>| {
        used.or_else(|| c.points.iter().rev().find(|p| p.at <= at).map(|p| p.used))
            .unwrap_or(0) as i64
    };
    for (emergency, colour, name) in [
        (false, CLEANUP, "cleanup"),
        (true, EMERGENCY, "emergency cleanup"),
    ] {
        let marks: Vec<_> = c
            .cleanups
            .iter()
            .filter(|m| m.emergency == emergency)
            .collect();
        if marks.is_empty() {
            continue;
        }
        let outline: Vec<(i32, i32)> = if emergency {
            DIAMOND.to_vec()
        } else {
            TRIANGLE.to_vec()
        };
        chart.draw_series(marks.iter().map(|m| {
            EmptyElement::at((x(m.at), y_of(m.at, m.used)))
                + Polygon::new(outline.clone(), colour.filled())
        }))?;
        chart.draw_series(marks.iter().map(|m| {
            let label = match (m.freed, m.no_targets) {
                (Some(f), _) => format!("{} freed", thousands(f)),
                (None, true) => "no targets".to_string(),
                (None, false) => "nothing freed".to_string(),
            };
            Text::new(
                label,
                (x(m.at), y_of(m.at, m.used) - top / 40),
                font(13, &colour).pos(Pos::new(HPos::Right, VPos::Top)),
            )
        }))?;
        let freed = freed_total(marks.iter().copied());
        keys.push((
            if emergency {
                Key::Diamond(colour)
            } else {
                Key::Triangle(colour)
            },
            format!("{name} ({}, freed {})", marks.len(), thousands(freed)),
        ));
    }

    // Rows the reader could not interpret: a red tick and `?` on the time axis.
    let placed: Vec<i64> = c.unread.iter().filter_map(|u| u.at).collect();
    if !placed.is_empty() {
        chart.draw_series(placed.iter().map(|&at| {
            PathElement::new([(x(at), 0), (x(at), top / 25)], UNREAD.stroke_width(3))
        }))?;
        chart.draw_series(placed.iter().map(|&at| {
            Text::new(
                "?",
                (x(at), top / 25),
                font(15, &UNREAD).pos(Pos::new(HPos::Center, VPos::Bottom)),
            )
        }))?;
        keys.push((
            Key::Tick(UNREAD),
            format!("row not interpreted ({})", placed.len()),
        ));
    }
    let unplaced = c.unread.len() - placed.len();
    if unplaced > 0 {
        keys.push((
            Key::Tick(WHITE),
            format!("+{unplaced} without a readable time"),
        ));
    }

    draw_legend(&side, &keys)?;
    root.present()?;
    Ok(())
}

/// Sans-serif at `px` pixels (plotters writes a font size of its size / 1.24).
fn text_font(px: u32) -> FontDesc<'static> {
    ("sans-serif", f64::from(px) * 1.24).into_font()
}

const BAND: RGBColor = RGBColor(0xE4, 0xE4, 0xE4);

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    keys: &[(Key, String)],
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let row = 24;
    let (x0, y0) = (10, 60);
    area.draw(&Rectangle::new(
        [
            (x0 - 8, y0 - 18),
            (LEGEND_W as i32 - 10, y0 + row * keys.len() as i32 - 6),
        ],
        INK.stroke_width(1),
    ))?;
    for (i, (key, label)) in keys.iter().enumerate() {
        let y = y0 + row * i as i32;
        let (a, b) = ((x0, y), (x0 + 24, y));
        match key {
            Key::Line(colour, w) => {
                area.draw(&PathElement::new([a, b], colour.stroke_width(*w)))?
            }
            Key::Dashed(colour) => {
                for k in 0..3 {
                    let s = x0 + k * 9;
                    area.draw(&PathElement::new(
                        [(s, y), (s + 6, y)],
                        colour.stroke_width(2),
                    ))?;
                }
            }
            Key::Band => area.draw(&Rectangle::new(
                [(x0, y - 7), (x0 + 24, y + 7)],
                BAND.filled(),
            ))?,
            Key::Triangle(colour) => area.draw(
                &(EmptyElement::at((x0 + 12, y))
                    + Polygon::new(TRIANGLE.to_vec(), colour.filled())),
            )?,
            Key::Diamond(colour) => area.draw(
                &(EmptyElement::at((x0 + 12, y)) + Polygon::new(DIAMOND.to_vec(), colour.filled())),
            )?,
            Key::Tick(colour) => area.draw(&PathElement::new(
                [(x0 + 12, y - 8), (x0 + 12, y + 8)],
                colour.stroke_width(3),
            ))?,
        }
        area.draw(&Text::new(
            label.clone(),
            (x0 + 34, y),
            text_font(14)
                .color(&INK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

/// The readings in runs between gaps.
fn runs(c: &Chart) -> Vec<&[Point]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=c.points.len() {
        let broken = i == c.points.len()
            || c.gaps
                .iter()
                .any(|g| g.from == c.points[i - 1].at && g.to == c.points[i].at);
        if broken {
            out.push(&c.points[start..i]);
            start = i;
        }
    }
    out
}
