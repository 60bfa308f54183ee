//! `headroom evidence --chart`: the chart model (core/chart.rs) drawn in a terminal's
//! columns — used slots as bars of block characters (eighths of a row), the effective
//! limit and the thresholds as lines, cleanups and unread rows marked on the time axis,
//! then a legend that names every limit step with its source, so a change of the binding
//! ceiling is read in words as well as seen. Plain ASCII for TERM=dumb and `--ascii`.

use std::fmt::Write as _;

use crate::core::chart::{Bucket, Chart, Scale, freed_total};
use crate::output::{human_duration, thousands};

/// Rows of the plot area: tall enough to tell 67 % from 75 %, short enough for a report.
pub const HEIGHT: usize = 10;
/// The narrowest chart that still has room for labels and a readable plot (`--width`'s
/// lower bound, which the CLI checks).
pub use crate::cli::MIN_CHART_WIDTH as MIN_WIDTH;

#[derive(Debug, Clone, Copy)]
struct Glyphs {
    /// Bar cells by eighths filled (0 = empty).
    bar: [char; 9],
    limit: char,
    crit: char,
    warn: char,
    tick: char,
    axis: char,
    corner: char,
    gap: char,
    cleanup: char,
    emergency: char,
    unread: char,
    arrow: &'static str,
    dot: &'static str,
}

const UNICODE: Glyphs = Glyphs {
    bar: [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'],
    limit: '━',
    crit: '─',
    warn: '┄',
    tick: '┤',
    axis: '─',
    corner: '└',
    gap: '╌',
    cleanup: '▲',
    emergency: '◆',
    unread: '?',
    arrow: "→",
    dot: "·",
};

// In ASCII a cell is empty or full: a bar fills it from half a row up.
const ASCII: Glyphs = Glyphs {
    bar: [' ', ' ', ' ', ' ', '#', '#', '#', '#', '#'],
    limit: '=',
    crit: '-',
    warn: '.',
    tick: '|',
    axis: '-',
    corner: '+',
    gap: ' ',
    cleanup: '^',
    emergency: 'E',
    unread: '?',
    arrow: "->",
    dot: ";",
};

/// How much of a UTC time to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// `2026-08-29 22:42`
    Full,
    /// `08-29 22:42`
    Day,
    /// `22:42`
    Time,
}

/// Unix seconds as UTC in the `style`.
pub fn clock(t: i64, style: Clock) -> String {
    // 2026-08-29T22:42:41Z
    let s = crate::core::time::format_secs(t);
    match style {
        Clock::Full => format!("{} {}", &s[..10], &s[11..16]),
        Clock::Day => format!("{} {}", &s[5..10], &s[11..16]),
        Clock::Time => s[11..16].to_string(),
    }
}

/// The style for times on one axis: the time of day when it stays within one day.
pub fn axis_clock(c: &Chart) -> Clock {
    if c.start.div_euclid(86_400) == c.end.div_euclid(86_400) {
        Clock::Time
    } else {
        Clock::Day
    }
}

/// `start → end UTC` with the date written once.
pub fn span_text(c: &Chart, arrow: &str) -> String {
    format!(
        "{} {arrow} {} UTC",
        clock(c.start, Clock::Full),
        clock(c.end, axis_clock(c))
    )
}

/// The chart `width` columns wide (at least `MIN_WIDTH`), ending in a newline.
pub fn render(c: &Chart, width: usize, ascii: bool) -> String {
    let g = if ascii { ASCII } else { UNICODE };
    let width = width.max(MIN_WIDTH);
    let top = c.y_top();
    let label_w = thousands(top).len();
    let gutter = label_w + 2;
    let n = width - gutter;
    let buckets = c.buckets(n);
    let scale = Scale::new(top, (HEIGHT * 8) as u32);
    let short = axis_clock(c);
    let mut s = String::new();

    let per_col = human_duration(c.axis_len() / n as f64);
    let title = [
        "used slots vs effective limit,".to_string(),
        format!("{},", span_text(c, g.arrow)),
        if c.gaps.is_empty() {
            format!("{per_col} per column")
        } else {
            format!("{per_col} per column (gaps shortened)")
        },
    ];
    push_wrapped(&mut s, &title, width, " ");

    let grid: Vec<[char; HEIGHT]> = buckets.iter().map(|b| column(b, c, scale, &g)).collect();
    for row in 0..HEIGHT {
        // Labels on the top row and the middle; the axis line carries the 0.
        let label = match row {
            0 => thousands(top),
            r if r == HEIGHT / 2 => thousands(top / 2),
            _ => String::new(),
        };
        let _ = write!(s, "{label:>label_w$} {}", g.tick);
        s.extend(grid.iter().map(|col| col[row]));
        s.push('\n');
    }
    let _ = write!(s, "{:>label_w$} {}", 0, g.corner);
    s.extend(buckets.iter().map(|b| axis_mark(b, &g)));
    s.push('\n');
    s.push_str(&time_labels(c, n, gutter, short));
    s.push_str(&legend(c, &g, width, short));
    s
}

/// The `HEIGHT` cells of one column, top first.
fn column(b: &Bucket, c: &Chart, scale: Scale, g: &Glyphs) -> [char; HEIGHT] {
    let mut cells = [' '; HEIGHT];
    if b.gap {
        return cells;
    }
    let level = b.value().map_or(0, |v| scale.level(v)) as usize;
    for (row, cell) in cells.iter_mut().enumerate() {
        let base = (HEIGHT - 1 - row) * 8;
        *cell = g.bar[level.saturating_sub(base).min(8)];
    }
    let row_of = |lvl: u32| HEIGHT - 1 - (lvl as usize / 8).min(HEIGHT - 1);
    if let Some(limit) = b.limit {
        // Thresholds sit behind the bars (usage above one shows as a bar above its line);
        // the limit is drawn through them, so usage past the limit is seen crossing it.
        for (pct, ch) in [(c.warn_pct, g.warn), (c.crit_pct, g.crit)] {
            let r = row_of(scale.level_pct(limit, pct));
            if cells[r] != g.bar[8] {
                cells[r] = ch;
            }
        }
        cells[row_of(scale.level(limit))] = g.limit;
    }
    cells
}

fn axis_mark(b: &Bucket, g: &Glyphs) -> char {
    if b.emergency > 0 {
        g.emergency
    } else if b.cleanups > 0 {
        g.cleanup
    } else if b.unread > 0 {
        g.unread
    } else if b.gap {
        g.gap
    } else {
        g.axis
    }
}

/// Start and end under the axis, and times between them where they fit.
fn time_labels(c: &Chart, n: usize, gutter: usize, short: Clock) -> String {
    let mut line: Vec<char> = vec![' '; gutter + n];
    let put = |line: &mut Vec<char>, at: usize, text: &str| {
        let chars: Vec<char> = text.chars().collect();
        let at = at.min(line.len().saturating_sub(chars.len()));
        // Only on blank cells with a space either side: labels never run together.
        let free =
            (at.saturating_sub(1)..(at + chars.len() + 1).min(line.len())).all(|i| line[i] == ' ');
        if free {
            line[at..at + chars.len()].copy_from_slice(&chars);
        }
    };
    let label = |t: i64| clock(t, short);
    put(&mut line, gutter, &label(c.start));
    let end = label(c.end);
    put(&mut line, gutter + n - end.chars().count(), &end);
    let step = (end.chars().count() + 4).max(1);
    let mut col = step * 2;
    while col + step < n {
        let t = c.time_at(col as f64 / n as f64);
        let text = label(t);
        put(&mut line, gutter + col - text.chars().count() / 2, &text);
        col += step * 2;
    }
    let mut s: String = line.into_iter().collect();
    s.truncate(s.trim_end().len());
    s.push('\n');
    s
}

fn legend(c: &Chart, g: &Glyphs, width: usize, short: Clock) -> String {
    let mut items = vec![
        format!("{} used slots (peak per column)", g.bar[8]),
        format!("{} limit", g.limit),
        format!("{} critical {} %", g.crit, c.crit_pct),
        format!("{} warning {} %", g.warn, c.warn_pct),
    ];
    let ordinary: Vec<_> = c.cleanups.iter().filter(|m| !m.emergency).collect();
    let emergency: Vec<_> = c.cleanups.iter().filter(|m| m.emergency).collect();
    let freed = |v: &[&crate::core::chart::CleanupMark]| freed_total(v.iter().copied());
    if !ordinary.is_empty() {
        items.push(format!(
            "{} cleanup ({}, {} freed)",
            g.cleanup,
            ordinary.len(),
            crate::output::plural(freed(&ordinary), "slot")
        ));
    }
    if !emergency.is_empty() {
        items.push(format!(
            "{} emergency cleanup ({}, {} freed)",
            g.emergency,
            emergency.len(),
            crate::output::plural(freed(&emergency), "slot")
        ));
    }
    let placed = c.unread.iter().filter(|u| u.at.is_some()).count();
    if placed > 0 {
        items.push(format!("{} row not interpreted ({placed})", g.unread));
    }
    if !c.gaps.is_empty() {
        let gap = if g.gap == ' ' { "blank" } else { "╌" };
        let n = c.gaps.len();
        items.push(format!(
            "{gap} no readings ({n} {}, shortened)",
            if n == 1 { "gap" } else { "gaps" }
        ));
    }
    let mut s = String::new();
    push_wrapped(&mut s, &items, width, "  ");
    // Every step of the limit in words: the binding ceiling changing is the story.
    let mut steps: Vec<String> = Vec::new();
    for (i, st) in c.limits.iter().enumerate() {
        // A step resumed after a gap with the same value is not news.
        let repeat =
            i > 0 && c.limits[i - 1].limit == st.limit && c.limits[i - 1].source == st.source;
        if !repeat {
            steps.push(format!(
                "{} {} from {}",
                st.source.as_deref().unwrap_or("limit"),
                thousands(st.limit),
                clock(st.from, short)
            ));
        }
    }
    if !steps.is_empty() {
        steps[0] = format!("limit: {}", steps[0]);
        push_wrapped(&mut s, &steps, width, &format!(" {} ", g.dot));
    }
    let unplaced = c.unread.len() - placed;
    if unplaced > 0 {
        push_wrapped(
            &mut s,
            &[format!(
                "{} without a readable time {} not on the axis",
                crate::output::plural(unplaced as u64, "row"),
                if unplaced == 1 { "is" } else { "are" }
            )],
            width,
            "",
        );
    }
    s
}

/// `items` joined by `sep`, a new line before an item that would pass `width`; an item
/// longer than the width alone is cut.
fn push_wrapped(s: &mut String, items: &[String], width: usize, sep: &str) {
    let mut line = String::new();
    for item in items {
        let item: String = item.chars().take(width).collect();
        let len = line.chars().count();
        if len > 0 && len + sep.chars().count() + item.chars().count() > width {
            s.push_str(&line);
            s.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push_str(sep);
        }
        line.push_str(&item);
    }
    if !line.is_empty() {
        s.push_str(&line);
        s.push('\n');
    }
}

#[cfg(test)]
mod tests;
