//! `headroom evidence --chart`: the chart model (core/chart.rs) drawn in a terminal's
//! columns — used slots as bars of block characters (eighths of a row) with the zombies
//! among them shaded, the effective limit and the thresholds as lines, a `▼` over every
//! column at or over the limit, the projection to the limit dotted after the last reading,
//! cleanups (numbered, with a footnote naming what each ended), unread rows and gaps on the
//! time axis, round time ticks, then a legend that names the limit's changes, the gaps and
//! the projection in words. Plain ASCII for TERM=dumb and `--ascii`.

mod footnotes;
mod legend;
mod sentences;
mod wrap;

use std::fmt::Write as _;

use crate::commands::evidence_time::{Zone, span};
use crate::core::chart::{Chart, Column, ColumnKind, Scale};
use crate::output::{plural, thousands};
use legend::legend;
use wrap::wrap;

pub(crate) use footnotes::{Footnote, footnote_text, footnotes};
pub(crate) use sentences::{format_rate, gap_sentence, projection_sentence};

/// Rows of the plot area: tall enough to tell 67 % from 75 %, short enough for a report.
pub(crate) const HEIGHT: usize = 10;
/// The narrowest chart that still has room for labels and a readable plot, and the widest
/// (`--width`'s bounds, which the CLI checks; `$COLUMNS` and the terminal are clamped to
/// them).
pub(crate) use crate::cli::{MAX_CHART_WIDTH as MAX_WIDTH, MIN_CHART_WIDTH as MIN_WIDTH};

#[derive(Debug, Clone, Copy)]
struct Glyphs {
    /// Bar cells by eighths filled (0 = empty).
    bar: [char; 9],
    /// A cell of the bar filled with zombies, and the eighths it takes to draw one.
    zombie: char,
    zombie_from: u32,
    limit: char,
    crit: char,
    warn: char,
    tick: char,
    axis: char,
    axis_tick: char,
    corner: char,
    gap: char,
    cleanup: char,
    emergency: char,
    unread: char,
    over: char,
    projection: char,
    arrow: &'static str,
    dot: &'static str,
    gap_word: &'static str,
}

const UNICODE: Glyphs = Glyphs {
    bar: [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'],
    zombie: '▒',
    zombie_from: 8,
    limit: '━',
    crit: '─',
    warn: '┄',
    tick: '┤',
    axis: '─',
    axis_tick: '┴',
    corner: '└',
    gap: '╌',
    cleanup: '▲',
    emergency: '◆',
    unread: '?',
    over: '▼',
    projection: '·',
    arrow: "→",
    dot: "·",
    gap_word: "╌",
};

// In ASCII a cell is empty or full: a bar fills it from half a row up.
const ASCII: Glyphs = Glyphs {
    bar: [' ', ' ', ' ', ' ', '#', '#', '#', '#', '#'],
    zombie: 'z',
    zombie_from: 4,
    limit: '=',
    crit: '-',
    warn: '.',
    tick: '|',
    axis: '-',
    axis_tick: '+',
    corner: '+',
    gap: ' ',
    cleanup: '^',
    emergency: 'E',
    unread: '?',
    over: 'v',
    projection: '*',
    arrow: "->",
    dot: ";",
    gap_word: "blank",
};

/// A value-axis label: grouped digits, or a short form where those would crowd the plot.
fn y_label(v: u64) -> String {
    let t = thousands(v);
    if t.len() <= 11 {
        t
    } else {
        format!("{:.2e}", v as f64)
    }
}

/// The chart `width` columns wide (`MIN_WIDTH` to `MAX_WIDTH`), ending in a newline.
pub(crate) fn render(c: &Chart, width: usize, ascii: bool, zone: &Zone) -> String {
    let g = if ascii { ASCII } else { UNICODE };
    let width = width.clamp(MIN_WIDTH, MAX_WIDTH);
    let top = c.y_top();
    let (top_label, mid_label) = (y_label(top), y_label(top / 2));
    let label_w = top_label.chars().count().max(4);
    let gutter = label_w + 2;
    let n = width - gutter;
    let cols = c.columns(n);
    let scale = Scale::new(top, (HEIGHT * 8) as u32);
    let mut s = String::new();

    let mut title = vec![
        "used slots vs effective limit,".to_string(),
        format!("{},", zone.span(c, g.arrow)),
        format!(
            "{} per column",
            span((c.axis.len() / n as f64).round() as i64)
        ),
    ];
    let short = c.axis.shortened();
    if short.gaps > 0 {
        let last = title.len() - 1;
        title[last].push(';');
        title.push(format!(
            "{} drawn shorter ({} as {})",
            plural(short.gaps as u64, "gap"),
            span(short.real_secs),
            span(short.shown_secs)
        ));
    }
    wrap(&g, &mut s, &title, width, " ");

    if cols.iter().any(|col| col.over) {
        let _ = write!(s, "{:>label_w$}  ", "over");
        s.extend(cols.iter().map(|col| if col.over { g.over } else { ' ' }));
        trim_line(&mut s);
    }
    let grid: Vec<[char; HEIGHT]> = cols.iter().map(|col| column(col, c, scale, &g)).collect();
    for row in 0..HEIGHT {
        // Labels on the top row and the middle; the axis line carries the 0.
        let label = match row {
            0 => top_label.as_str(),
            r if r == HEIGHT / 2 => mid_label.as_str(),
            _ => "",
        };
        let _ = write!(s, "{label:>label_w$} {}", g.tick);
        s.extend(grid.iter().map(|col| col[row]));
        s.push('\n');
    }
    let ticks = tick_columns(c, zone, n);
    let _ = write!(s, "{:>label_w$} {}", 0, g.corner);
    for (i, col) in cols.iter().enumerate() {
        let tick = ticks.iter().any(|t| t.0 == i);
        s.push(axis_mark(col, tick, &g));
    }
    s.push('\n');
    let notes = footnotes(c, n);
    if !notes.is_empty() {
        let mut line: Vec<char> = vec![' '; gutter + n];
        for note in &notes {
            put(
                &mut line,
                gutter + note.column,
                &note.number.to_string(),
                false,
            );
        }
        s.push_str(&line_text(line));
    }
    let mut line: Vec<char> = vec![' '; gutter + n];
    for (col, label) in &ticks {
        let at = (gutter + col).saturating_sub(label.chars().count() / 2);
        put(&mut line, at, label, true);
    }
    s.push_str(&line_text(line));
    s.push_str(&legend(c, &g, width, zone, &cols, &notes));
    if ascii { to_ascii(&s) } else { s }
}

/// `s` in plain ASCII, as `--ascii` promises: the few signs the legend writes in their ASCII
/// form, and anything else outside ASCII (a name in a log) as `?`.
fn to_ascii(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            c if c.is_ascii() => out.push(c),
            '≈' => out.push('~'),
            '–' | '—' => out.push('-'),
            '…' => out.push_str("..."),
            _ => out.push('?'),
        }
    }
    out
}

/// The `HEIGHT` cells of one column, top first.
fn column(col: &Column, c: &Chart, scale: Scale, g: &Glyphs) -> [char; HEIGHT] {
    let mut cells = [' '; HEIGHT];
    let row_of = |lvl: u32| HEIGHT - 1 - (lvl as usize / 8).min(HEIGHT - 1);
    if col.kind == ColumnKind::Empty {
        // After the last reading: the projection, if one runs through this column.
        if let Some(p) = c
            .drawn_projection()
            .filter(|p| col.from > p.from_at && col.from <= p.at)
        {
            let mid = col.from + (col.to - col.from) / 2;
            cells[row_of(scale.level(p.value_at(mid.min(p.at))))] = g.projection;
        }
        return cells;
    }
    let used = col.used_peak().map_or(0, |v| scale.level(v));
    let zombies = col.zombies_peak().map_or(0, |v| scale.level(v)).min(used);
    for (row, cell) in cells.iter_mut().enumerate() {
        let base = ((HEIGHT - 1 - row) * 8) as u32;
        *cell = if zombies >= base + g.zombie_from {
            g.zombie
        } else {
            g.bar[used.saturating_sub(base).min(8) as usize]
        };
    }
    if let Some((limit, _)) = col.binding_limit() {
        // Thresholds sit behind the bars (usage above one shows as a bar above its line).
        for (pct, ch) in [(c.warn_pct, g.warn), (c.crit_pct, g.crit)] {
            let r = row_of(scale.level_pct(limit, pct));
            if cells[r] != g.bar[8] && cells[r] != g.zombie {
                cells[r] = ch;
            }
        }
        // The limit is drawn through the bars, except where usage is at or past it: there
        // the bar breaks the line (and `▼` above says so).
        if !col.over {
            cells[row_of(scale.level(limit))] = g.limit;
        }
    }
    cells
}

fn axis_mark(col: &Column, tick: bool, g: &Glyphs) -> char {
    if col.emergency > 0 {
        g.emergency
    } else if col.cleanups > 0 {
        g.cleanup
    } else if col.unread > 0 {
        g.unread
    } else if col.kind == ColumnKind::Gap || col.gap_inside {
        g.gap
    } else if tick {
        g.axis_tick
    } else {
        g.axis
    }
}

/// Round ticks as (column, label), their labels room apart.
fn tick_columns(c: &Chart, zone: &Zone, n: usize) -> Vec<(usize, String)> {
    let mut room = 8.0;
    for _ in 0..2 {
        let ticks = zone.ticks(c, room / n as f64);
        let longest = ticks.iter().map(|t| t.1.chars().count()).max().unwrap_or(0) as f64;
        if longest + 2.0 <= room {
            return ticks
                .into_iter()
                .map(|(t, label)| (((t.x * n as f64) as usize).min(n - 1), label))
                .collect();
        }
        room = longest + 2.0;
    }
    vec![]
}

/// Write `text` at `at` on blank cells only, with a blank either side (labels never run
/// together); a label that would pass the end is moved in when `shift`, else left out.
fn put(line: &mut [char], at: usize, text: &str, shift: bool) {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() > line.len() {
        return;
    }
    let at = if shift {
        at.min(line.len() - chars.len())
    } else if at + chars.len() > line.len() {
        return;
    } else {
        at
    };
    let free =
        (at.saturating_sub(1)..(at + chars.len() + 1).min(line.len())).all(|i| line[i] == ' ');
    if free {
        line[at..at + chars.len()].copy_from_slice(&chars);
    }
}

fn line_text(line: Vec<char>) -> String {
    let mut s: String = line.into_iter().collect();
    trim_line(&mut s);
    s
}

/// Cut the trailing blanks of the last line of `s` and end it.
fn trim_line(s: &mut String) {
    s.truncate(s.trim_end_matches(' ').len());
    s.push('\n');
}

#[cfg(test)]
pub(crate) mod tests;
