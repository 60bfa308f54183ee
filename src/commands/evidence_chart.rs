//! `headroom evidence --chart`: the chart model (core/chart.rs) drawn in a terminal's
//! columns — used slots as bars of block characters (eighths of a row) with the zombies
//! among them shaded, the effective limit and the thresholds as lines, a `▼` over every
//! column at or over the limit, the projection to the limit dotted after the last reading,
//! cleanups (numbered, with a footnote naming what each ended), unread rows and gaps on the
//! time axis, round time ticks, then a legend that names the limit's changes, the gaps and
//! the projection in words. Plain ASCII for TERM=dumb and `--ascii`.

use std::fmt::Write as _;

use crate::commands::evidence_time::{Style, Zone, span};
use crate::core::chart::{Chart, CleanupMark, Column, Kind, Scale, freed_total, result_field};
use crate::output::{plural, thousands};
use crate::sanitize::sanitize;

/// Rows of the plot area: tall enough to tell 67 % from 75 %, short enough for a report.
pub const HEIGHT: usize = 10;
/// The narrowest chart that still has room for labels and a readable plot, and the widest
/// (`--width`'s bounds, which the CLI checks; `$COLUMNS` and the terminal are clamped to
/// them).
pub use crate::cli::{MAX_CHART_WIDTH as MAX_WIDTH, MIN_CHART_WIDTH as MIN_WIDTH};

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
pub fn render(c: &Chart, width: usize, ascii: bool, zone: &Zone) -> String {
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
    if col.kind == Kind::Empty {
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
    } else if col.kind == Kind::Gap || col.gap_inside {
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

/// Cleanups close together on the axis, under one number.
#[derive(Debug, Clone)]
pub struct Footnote<'a> {
    pub number: usize,
    /// The column its number stands under.
    pub column: usize,
    pub marks: Vec<&'a CleanupMark>,
}

/// The cleanups numbered in time order, those whose marks share a number's room merged.
pub fn footnotes(c: &Chart, n: usize) -> Vec<Footnote<'_>> {
    let mut out: Vec<Footnote<'_>> = Vec::new();
    for m in &c.cleanups {
        let col = c.column_of(m.at, n);
        match out.last_mut() {
            Some(f) if col <= f.column + f.number.to_string().len() => f.marks.push(m),
            _ => out.push(Footnote {
                number: out.len() + 1,
                column: col,
                marks: vec![m],
            }),
        }
    }
    out
}

/// What one footnote says after its number and time.
pub fn footnote_text(f: &Footnote<'_>, zone: &Zone, style: Style) -> String {
    let first = f.marks[0];
    let last = f.marks[f.marks.len() - 1];
    let when = if first.at == last.at {
        zone.clock(first.at, style)
    } else {
        format!(
            "{}–{}",
            zone.clock(first.at, style),
            zone.clock(last.at, style)
        )
    };
    let emergency = f.marks.iter().filter(|m| m.emergency).count();
    let killed: Vec<&&CleanupMark> = f.marks.iter().filter(|m| m.killed).collect();
    let parent = |m: &CleanupMark| {
        let name = m.name.as_deref().map(sanitize).unwrap_or_default();
        let z = m
            .zombies
            .map(|z| format!(" ({})", plural(z, "zombie")))
            .unwrap_or_default();
        match m.pid {
            Some(pid) => format!("pid {pid} {name}{z}"),
            None => format!("{name}{z}"),
        }
    };
    let kind = if emergency == f.marks.len() {
        "emergency cleanup"
    } else {
        "cleanup"
    };
    if f.marks.len() == 1 {
        let m = first;
        if !m.killed {
            let unreadable = result_field(&m.result, "unreadable")
                .map(|u| format!("; {} unreadable", plural(u, "session signal")))
                .unwrap_or_default();
            let top = if m.pid.is_some() {
                format!("; top parent {} spared", parent(m))
            } else {
                String::new()
            };
            return format!("{when} {kind}: no target{top}{unreadable}");
        }
        let reaped = m.reaped.map(|r| format!("; {} reaped", thousands(r)));
        let freed = m.freed.map(|f| format!(", {} freed", plural(f, "slot")));
        return format!(
            "{when} {kind}: ended {}{}{}",
            parent(m),
            reaped.unwrap_or_default(),
            freed.unwrap_or_default()
        );
    }
    let mut names: Vec<String> = killed.iter().take(2).map(|m| parent(m)).collect();
    if killed.len() > 2 {
        names.push(format!("{} more", killed.len() - 2));
    }
    let ended = if killed.is_empty() {
        "no target".to_string()
    } else {
        format!("ended {}", names.join(", "))
    };
    let em = if emergency > 0 && emergency < f.marks.len() {
        format!(" ({emergency} emergency)")
    } else {
        String::new()
    };
    format!(
        "{when}: {}{em}: {ended}; {} freed",
        plural(f.marks.len() as u64, "cleanup"),
        plural(freed_total(f.marks.iter().copied()), "slot")
    )
}

/// A legend entry: the glyph, then what it draws.
fn key(glyph: impl std::fmt::Display, what: &str) -> String {
    format!("{glyph} {what}")
}

/// The most footnotes written out; the summary below lists every cleanup.
const MAX_NOTES: usize = 9;
/// The most limit changes named in a row before the middle ones are counted only.
const MAX_CHANGES_NAMED: usize = 6;

fn legend(
    c: &Chart,
    g: &Glyphs,
    width: usize,
    zone: &Zone,
    cols: &[Column],
    notes: &[Footnote<'_>],
) -> String {
    let style = zone.axis_style(c);
    let mut items = vec![format!("{} used slots (peak per column)", g.bar[8])];
    if c.points.iter().any(|p| p.zombies().is_some()) {
        // A series' name beside its glyph, not a count.
        items.push(key(g.zombie, "zombies"));
    }
    if !c.changes.is_empty() {
        items.push(format!("{} limit", g.limit));
        items.push(format!("{} critical {} %", g.crit, c.crit_pct));
        items.push(format!("{} warning {} %", g.warn, c.warn_pct));
    }
    if cols.iter().any(|col| col.over) {
        items.push(format!("{} at or over the limit", g.over));
    }
    if c.cleanups.iter().any(|m| !m.emergency) {
        items.push(format!("{} cleanup", g.cleanup));
    }
    if c.cleanups.iter().any(|m| m.emergency) {
        items.push(format!("{} emergency cleanup", g.emergency));
    }
    let placed = c.unread.iter().filter(|u| u.at.is_some()).count();
    if placed > 0 {
        items.push(format!("{} row not interpreted ({placed})", g.unread));
    }
    if !c.axis.gaps.is_empty() {
        items.push(format!("{} no readings", g.gap_word));
    }
    if c.drawn_projection().is_some() {
        items.push(format!("{} projection", g.projection));
    }
    let mut s = String::new();
    wrap(g, &mut s, &items, width, "  ");

    // The limit's changes worth naming, in words: the binding ceiling changing is the story.
    let top = c.y_top();
    let name = |i: Option<u16>| {
        c.source_name(i)
            .map_or("limit".into(), |n| sanitize(n).into_owned())
    };
    let mut steps: Vec<String> = c
        .changes
        .iter()
        .map(|ch| {
            let off = if ch.limit > top {
                " (off the scale)"
            } else {
                ""
            };
            format!(
                "{} {}{off} from {}",
                name(ch.source),
                thousands(ch.limit),
                zone.clock(ch.at, style)
            )
        })
        .collect();
    let hidden = c.changes_left_out + steps.len().saturating_sub(MAX_CHANGES_NAMED);
    if steps.len() > MAX_CHANGES_NAMED {
        let tail = steps.split_off(steps.len() - 2);
        steps.truncate(MAX_CHANGES_NAMED - 2);
        steps.push(format!("… {} …", plural(hidden as u64, "more change")));
        steps.extend(tail);
    } else if hidden > 0 {
        steps.push(format!("… {}", plural(hidden as u64, "more change")));
    }
    if !steps.is_empty() {
        steps[0] = format!("limit: {}", steps[0]);
        wrap(g, &mut s, &steps, width, &format!(" {} ", g.dot));
    }
    if let Some(w) = c.worst.filter(|w| w.used >= w.limit) {
        wrap(
            g,
            &mut s,
            &[format!(
                "at or over the limit: peak {} of {} ({}), {:.1} %, at {}",
                thousands(w.used),
                thousands(w.limit),
                name(w.source),
                w.pct(),
                zone.clock(w.at, style)
            )],
            width,
            "",
        );
    }
    if !c.axis.gaps.is_empty() {
        wrap(g, &mut s, &[gap_sentence(c, zone, style)], width, "");
    }
    for f in notes.iter().take(MAX_NOTES) {
        wrap(
            g,
            &mut s,
            &[format!("{} {}", f.number, footnote_text(f, zone, style))],
            width,
            "",
        );
    }
    if notes.len() > MAX_NOTES {
        let rest: usize = notes[MAX_NOTES..].iter().map(|f| f.marks.len()).sum();
        wrap(
            g,
            &mut s,
            &[format!(
                "… {} (each is listed below)",
                plural(rest as u64, "more cleanup")
            )],
            width,
            "",
        );
    }
    if c.projection.is_some() {
        wrap(
            g,
            &mut s,
            &[projection_sentence(
                c,
                zone,
                c.drawn_projection().map(|_| g.projection),
            )],
            width,
            "",
        );
    }
    let unplaced = c.unread.len() - placed;
    if unplaced > 0 {
        wrap(
            g,
            &mut s,
            &[format!(
                "{} without a readable time {} not on the axis",
                plural(unplaced as u64, "row"),
                if unplaced == 1 { "is" } else { "are" }
            )],
            width,
            "",
        );
    }
    s
}

/// The gaps in words: each of a few with its times, or how many, how long in all and the
/// longest.
pub fn gap_sentence(c: &Chart, zone: &Zone, style: Style) -> String {
    let gaps = &c.axis.gaps;
    let drawn = |i: usize| {
        let shown = c.axis.shown_secs(i).round() as i64;
        if shown + 1 < gaps[i].secs() {
            format!(", drawn as {}", span(shown))
        } else {
            String::new()
        }
    };
    if gaps.len() <= 3 {
        let each: Vec<String> = gaps
            .iter()
            .enumerate()
            .map(|(i, g)| {
                format!(
                    "{}–{} ({}{})",
                    zone.clock(g.from, style),
                    zone.clock(g.to, style),
                    span(g.secs()),
                    drawn(i)
                )
            })
            .collect();
        return format!("no readings {}", each.join(", "));
    }
    let total: i64 = gaps.iter().map(|g| g.secs()).sum();
    let (i, longest) = gaps
        .iter()
        .enumerate()
        .max_by_key(|(_, g)| g.secs())
        .map_or((0, gaps[0]), |(i, g)| (i, *g));
    format!(
        "no readings: {}, {} in all; the longest {}–{} ({}{})",
        plural(gaps.len() as u64, "gap"),
        span(total),
        zone.clock(longest.from, Style::Day),
        zone.clock(longest.to, Style::Day),
        span(longest.secs()),
        drawn(i)
    )
}

/// "fork fails ≈ 01:30 at 94 slots/min from the last reading (01:28, 2,520 of 2,666
/// rlimit-nproc)".
/// `glyph` leads it where the line is drawn.
pub fn projection_sentence(c: &Chart, zone: &Zone, glyph: Option<char>) -> String {
    let Some(p) = c.projection else {
        return String::new();
    };
    let style = zone.axis_style(c);
    let when = if p.at > c.axis.end {
        format!(
            "{} (in {})",
            zone.clock(p.at, Style::Full),
            span(p.at - p.from_at)
        )
    } else {
        zone.clock(p.at, style)
    };
    format!(
        "{}projection: fork fails ≈ {when} at {} slots/min from the last reading ({}, {} of {} {})",
        glyph.map(|g| format!("{g} ")).unwrap_or_default(),
        format_rate(p.per_min),
        zone.clock(p.from_at, style),
        thousands(p.from_used),
        thousands(p.limit),
        c.source_name(p.source)
            .map_or("limit".into(), |n| sanitize(n).into_owned())
    )
}

/// A growth rate as people read it: "94", "2.5", "0.01".
pub fn format_rate(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `push_wrapped` of `items` as the glyphs write text (plain ASCII with `--ascii`, before
/// the widths are measured).
fn wrap(g: &Glyphs, s: &mut String, items: &[String], width: usize, sep: &str) {
    if g.arrow == ASCII.arrow {
        let items: Vec<String> = items.iter().map(|i| to_ascii(i)).collect();
        push_wrapped(s, &items, width, sep);
    } else {
        push_wrapped(s, items, width, sep);
    }
}

/// `items` joined by `sep`, a new line before an item that would pass `width`; an item
/// longer than the width alone is wrapped between words (a word longer than the width is
/// cut, as there is nothing else to do with it).
fn push_wrapped(s: &mut String, items: &[String], width: usize, sep: &str) {
    let mut line = String::new();
    let flush = |s: &mut String, line: &mut String| {
        if !line.is_empty() {
            s.push_str(line.trim_end());
            s.push('\n');
            line.clear();
        }
    };
    for item in items {
        let len = line.chars().count();
        let item_len = item.chars().count();
        if len > 0 && len + sep.chars().count() + item_len > width {
            flush(s, &mut line);
        }
        if !line.is_empty() {
            line.push_str(sep);
        }
        if line.chars().count() + item_len <= width {
            line.push_str(item);
            continue;
        }
        // Longer than a line: word by word.
        for word in item.split(' ') {
            let word: String = word.chars().take(width).collect();
            let len = line.chars().count();
            if len > 0 && len + 1 + word.chars().count() > width {
                flush(s, &mut line);
            }
            if !line.is_empty() && !line.ends_with(' ') {
                line.push(' ');
            }
            line.push_str(&word);
        }
    }
    flush(s, &mut line);
}

#[cfg(test)]
pub(crate) mod tests;
