//! `probe --format swiftbar` and `--format xbar`: the menu-bar figure as a SwiftBar or
//! xbar plugin prints it, and the plugin file that runs it (`headroom generate swiftbar`,
//! installed by the formula).
//!
//! SwiftBar's protocol (its README and `MenuLineParameters.swift`): the lines before the
//! first `---` are the menu-bar title, the rest the menu; each line is `title | key=value
//! …`, split at its first `|` (there is no escape for one in a title), a value runs to the
//! next blank unless it is quoted with `"` or `'` (no escape for the quote inside). Titles
//! turn `:name:` into an SF Symbol or an emoji unless `symbolize=false emojize=false`.
//! An `sfimage` is a template image (drawn in the menu bar's own text colour) unless
//! `sfconfig` gives it colours: base64 of `{"renderingMode": …, "colors": [hex, …]}`, one
//! colour each, not a light/dark pair; `sfcolor` colours only symbols inside the text.
//! xbar (`pkg/plugins/item_params.go`) reads the same lines but refuses the whole output at
//! a parameter it does not know (`sfimage`, `sfcolor`, `symbolize`, `tooltip`), takes one
//! colour, and unquotes titles as Go strings unless `ansi=false`: its flavour keeps to its
//! own parameters, with a glyph in the title instead of an SF Symbol.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::commands::probe::{ProbeReport, trend_phrase};
use crate::core::limits::LimitSource;
use crate::core::reading::Level;
use crate::core::slot_reading::SlotReading;
use crate::output::{human_duration, plural, thousands};
use crate::sanitize::sanitize;

/// What the menu's actions run, worked out by the caller (no process-table read).
#[derive(Debug, Clone)]
pub(crate) struct Actions {
    /// headroom's lasting path (`actions::login_item::lasting_program`), or why there is none.
    pub program: Result<PathBuf, String>,
    /// Where the chart's SVG goes, when the evidence log exists (`None`: nothing to draw).
    pub chart: Option<PathBuf>,
}

/// The glyph and colours of a level. The SF Symbol differs in shape as well as colour, so
/// the level reads in a light and a dark menu bar and without colour vision; each colour
/// is a `light,dark` pair (GitHub's Primer palette, legible on either bar). xbar has no SF
/// Symbols: its title starts with a text glyph of a shape of its own per level.
fn look(level: Level) -> (&'static str, &'static str, &'static str) {
    match level {
        Level::Normal => ("checkmark.circle", "\u{25cf}", "#1a7f37,#3fb950"),
        Level::Warning => (
            "exclamationmark.triangle.fill",
            "\u{25b2}",
            "#9a6700,#d29922",
        ),
        Level::Critical => ("xmark.octagon.fill", "\u{2716}", "#cf222e,#f85149"),
        Level::Unknown => ("questionmark.circle", "?", "#57606a,#8b949e"),
    }
}

/// Which menu-bar app reads the output, and whether its menu bar is dark: where a
/// parameter takes one colour, not a light/dark pair, the colour is picked for it
/// (SwiftBar's `OS_APPEARANCE`, xbar's `XBARDarkMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Host {
    SwiftBar { dark: bool },
    Xbar { dark: bool },
}

impl Host {
    /// The parameters every line of ours carries so that its text stays text.
    fn plain(self) -> &'static str {
        match self {
            Self::SwiftBar { .. } => "symbolize=false emojize=false",
            Self::Xbar { .. } => "emojize=false ansi=false",
        }
    }

    /// A level's own parameters: its colour (and coloured SF Symbol, for SwiftBar).
    fn level(self, level: Level) -> String {
        let (symbol, _, pair) = look(level);
        match self {
            Self::SwiftBar { dark } => format!(
                "color={pair} sfimage={symbol} sfconfig={}",
                sf_config(one_colour(pair, dark))
            ),
            Self::Xbar { dark } => format!("color={}", one_colour(pair, dark)),
        }
    }
}

/// The light or the dark colour of a `light,dark` pair.
fn one_colour(pair: &str, dark: bool) -> &str {
    let (light, dark_colour) = pair.split_once(',').unwrap_or((pair, pair));
    if dark { dark_colour } else { light }
}

/// SwiftBar's `sfconfig` for a symbol in one colour: hierarchical rendering keeps the
/// symbol's inner marks (the `!` of the triangle) visible, where a palette of one colour
/// would fill them in.
fn sf_config(colour: &str) -> String {
    base64(format!(r#"{{"renderingMode":"Hierarchical","colors":["{colour}"]}}"#).as_bytes())
}

/// Standard base64 with padding (RFC 4648 section 4), as Foundation's
/// `Data(base64Encoded:)` reads it.
fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ABC[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Text we did not write (a process name), safe in a SwiftBar title: control and bidi
/// characters escaped by the sanitizer, and `|`, which would end the title, escaped the
/// same visible way.
pub(crate) fn title_text(s: &str) -> String {
    sanitize(s).replace('|', "\\u{7c}")
}

/// A parameter value as SwiftBar reads it back: bare when it has no blank or quote, else
/// quoted with a quote it does not contain. `None` when it cannot be written at all (a
/// line break, a backslash, both quotes).
pub(crate) fn param_value(v: &str) -> Option<String> {
    if v.is_empty() || v.contains(['\n', '\r', '\\']) {
        return None;
    }
    let plain = !v.contains([' ', '\t', '"', '\'']);
    if plain {
        Some(v.to_string())
    } else if !v.contains('"') {
        Some(format!("\"{v}\""))
    } else if !v.contains('\'') {
        Some(format!("'{v}'"))
    } else {
        None
    }
}

/// A menu line: our own text (no `|`, no `:name:` turned into a symbol), then parameters.
fn item(s: &mut String, host: Host, title: &str, params: &str) {
    let sep = if params.is_empty() { "" } else { " " };
    let _ = writeln!(s, "{title} | {}{sep}{params}", host.plain());
}

/// The whole plugin output: the figure, `---`, the reading, `---`, the actions.
pub(crate) fn swiftbar(rep: &ProbeReport, history: bool, actions: &Actions, host: Host) -> String {
    let mut s = String::new();
    figure_line(&mut s, &rep.reading, host);
    s.push_str("---\n");
    reading_items(&mut s, rep, history, host);
    s.push_str("---\n");
    action_items(&mut s, actions, host);
    item(&mut s, host, "Refresh", "refresh=true");
    s
}

/// What the menu bar shows: the figure (with xbar, the level's glyph before it), and with
/// SwiftBar a tooltip saying the level and the slots used.
fn figure_line(s: &mut String, r: &SlotReading, host: Host) {
    let glyph = look(r.level).1;
    let level = r.level.as_str();
    let figure = match r.usage_pct {
        Some(pct) => format!("{pct:.0}%"),
        None => "?".to_string(),
    };
    let unit = slot_unit(r);
    let tip = match r.limit {
        Some(limit) => format!(
            "headroom: {level}, {} of {} {unit} used",
            thousands(r.used),
            thousands(limit)
        ),
        None => format!("headroom: {level}, no ceiling could be read"),
    };
    let _ = match host {
        Host::SwiftBar { .. } => writeln!(
            s,
            "{figure} | {} {} tooltip=\"{tip}\"",
            host.level(r.level),
            host.plain()
        ),
        Host::Xbar { .. } => writeln!(
            s,
            "{glyph} {figure} | {} {}",
            host.level(r.level),
            host.plain()
        ),
    };
}

/// The menu's reading: the level against the binding limit, the slots used, the ETA, the
/// zombies and who holds most, and whether the reading is partial.
fn reading_items(s: &mut String, rep: &ProbeReport, history: bool, host: Host) {
    let r = &rep.reading;
    let level = r.level.as_str();
    let unit = slot_unit(r);
    let capital = {
        let mut c = level.chars();
        c.next()
            .map(|f| f.to_uppercase().chain(c).collect::<String>())
            .unwrap_or_default()
    };
    match (r.limit, r.usage_pct) {
        (Some(limit), Some(pct)) => {
            let source = r.limit_source.map_or("?", LimitSource::as_str);
            item(
                s,
                host,
                &format!("{capital}: {pct:.1} % of the binding limit ({source})"),
                &host.level(r.level),
            );
            item(
                s,
                host,
                &format!(
                    "{} of {} {unit} used, {} free",
                    thousands(r.used),
                    thousands(limit),
                    thousands(r.free_slots.unwrap_or(0))
                ),
                "",
            );
        }
        _ => {
            item(
                s,
                host,
                &format!("{capital}: no ceiling could be read (see headroom limits)"),
                &host.level(r.level),
            );
            item(s, host, &format!("{} {unit} used", thousands(r.used)), "");
        }
    }
    let eta = match (history, r.eta_seconds, r.growth_per_min) {
        (true, Some(eta), Some(g)) if g > 0.0 => format!(
            "ETA {} to the wall ({g:+.1} slots/min)",
            human_duration(eta as f64)
        ),
        _ => format!("No ETA: trend {}", trend_phrase(r, history)),
    };
    item(s, host, &eta, "");
    match rep.top_parents.first() {
        Some(top) => item(
            s,
            host,
            &format!(
                "{}; most held by {} (pid {}, {})",
                plural(r.zombies, "zombie"),
                title_text(&top.name),
                top.pid,
                plural(top.zombies, "zombie")
            ),
            "",
        ),
        None => item(s, host, &plural(r.zombies, "zombie"), ""),
    }
    if rep.unreadable > 0 || r.partial {
        item(
            s,
            host,
            &format!(
                "{} could not be read: a partial reading",
                plural(rep.unreadable, "process")
            ),
            "",
        );
    }
}

/// What the reading counts: task slots when it counts tasks (threads), else process slots.
fn slot_unit(r: &SlotReading) -> &'static str {
    if r.tasks.is_some() {
        "task slots"
    } else {
        "process slots"
    }
}

/// The menu's actions, each running headroom by its lasting path.
fn action_items(s: &mut String, actions: &Actions, host: Host) {
    let program = match &actions.program {
        Ok(p) => match p.to_str().and_then(param_value) {
            Some(v) => v,
            None => {
                item(
                    s,
                    host,
                    &format!(
                        "No actions: headroom's path {} cannot be a SwiftBar parameter",
                        title_text(&p.to_string_lossy())
                    ),
                    "",
                );
                return;
            }
        },
        Err(why) => {
            item(s, host, &format!("No actions: {}", title_text(why)), "");
            return;
        }
    };
    item(
        s,
        host,
        "Reap dry run in Terminal (what reap would do)",
        &format!("bash={program} param1=reap param2=--dry-run terminal=true"),
    );
    item(
        s,
        host,
        "Full reading in Terminal",
        &format!("bash={program} param1=probe terminal=true"),
    );
    match actions
        .chart
        .as_deref()
        .map(|svg| svg.to_str().and_then(param_value))
    {
        Some(Some(svg)) => item(
            s,
            host,
            "Open the evidence chart",
            &format!(
                "bash=/bin/sh param1=-c param2='{CHART_SCRIPT}' param3={program} param4={svg} terminal=false"
            ),
        ),
        Some(None) => item(
            s,
            host,
            "No chart: the state directory's path cannot be a SwiftBar parameter",
            "",
        ),
        None => item(
            s,
            host,
            "No evidence log yet (probe from cron, or watch, writes it)",
            "",
        ),
    }
}

/// `sh -c`'s script for the chart: headroom is `$0`, the SVG `$1`. It holds no `'`, so
/// it is quoted with one.
const CHART_SCRIPT: &str = r#""$0" evidence --svg "$1" >/dev/null && exec open "$1""#;

#[cfg(test)]
mod tests;
