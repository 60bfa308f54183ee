//! `probe --format swiftbar`: the menu-bar figure as a SwiftBar plugin prints it, and the
//! plugin file that runs it (`headroom generate swiftbar`, installed by the formula).
//!
//! SwiftBar's protocol (its README and `MenuLineParameters.swift`): the lines before the
//! first `---` are the menu-bar title, the rest the menu; each line is `title | key=value
//! …`, split at its first `|` (there is no escape for one in a title), a value runs to the
//! next blank unless it is quoted with `"` or `'` (no escape for the quote inside). Titles
//! turn `:name:` into an SF Symbol or an emoji unless `symbolize=false emojize=false`.

use std::fmt::Write as _;
use std::path::PathBuf;

use crate::commands::probe::{ProbeReport, trend_phrase};
use crate::core::limits::LimitSource;
use crate::core::reading::Level;
use crate::output::{human_duration, plural, thousands};
use crate::sanitize::sanitize;

/// The plugin's file name: SwiftBar reads the refresh interval from it (`name.30s.ext`).
pub const PLUGIN_FILE: &str = "headroom.30s.sh";

/// What the menu's actions run, worked out by the caller (no process-table read).
#[derive(Debug, Clone)]
pub struct Actions {
    /// headroom's lasting path (`login_item::lasting_program`), or why there is none.
    pub program: Result<PathBuf, String>,
    /// Where the chart's SVG goes, when the evidence log exists (`None`: nothing to draw).
    pub chart: Option<PathBuf>,
}

/// The glyph and colours of a level. The SF Symbol differs in shape as well as colour, so
/// the level reads in a light and a dark menu bar and without colour vision; each colour
/// is a `light,dark` pair (GitHub's Primer palette, legible on either bar).
fn look(level: Level) -> (&'static str, &'static str) {
    match level {
        Level::Normal => ("checkmark.circle", "#1a7f37,#3fb950"),
        Level::Warning => ("exclamationmark.triangle.fill", "#9a6700,#d29922"),
        Level::Critical => ("xmark.octagon.fill", "#cf222e,#f85149"),
        Level::Unknown => ("questionmark.circle", "#57606a,#8b949e"),
    }
}

/// Text we did not write (a process name), safe in a SwiftBar title: control and bidi
/// characters escaped by the sanitizer, and `|`, which would end the title, escaped the
/// same visible way.
pub fn title_text(s: &str) -> String {
    sanitize(s).replace('|', "\\u{7c}")
}

/// A parameter value as SwiftBar reads it back: bare when it has no blank or quote, else
/// quoted with a quote it does not contain. `None` when it cannot be written at all (a
/// line break, a backslash, both quotes).
pub fn param_value(v: &str) -> Option<String> {
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
fn item(s: &mut String, title: &str, params: &str) {
    let sep = if params.is_empty() { "" } else { " " };
    let _ = writeln!(s, "{title} | symbolize=false emojize=false{sep}{params}");
}

/// The whole plugin output: the figure, `---`, the reading, `---`, the actions.
pub fn swiftbar(rep: &ProbeReport, history: bool, actions: &Actions) -> String {
    let r = &rep.reading;
    let (symbol, colour) = look(r.level);
    let level = r.level.as_str();
    let mut s = String::new();
    let figure = match r.usage_pct {
        Some(pct) => format!("{pct:.0}%"),
        None => "?".to_string(),
    };
    let unit = if r.tasks.is_some() {
        "task slots"
    } else {
        "process slots"
    };
    let tip = match r.limit {
        Some(limit) => format!(
            "headroom: {level}, {} of {} {unit} used",
            thousands(r.used),
            thousands(limit)
        ),
        None => format!("headroom: {level}, no ceiling could be read"),
    };
    let _ = writeln!(
        s,
        "{figure} | sfimage={symbol} sfcolor={colour} color={colour} symbolize=false emojize=false tooltip=\"{tip}\""
    );
    s.push_str("---\n");
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
                &mut s,
                &format!("{capital}: {pct:.1} % of the binding limit ({source})"),
                &format!("color={colour} sfimage={symbol} sfcolor={colour}"),
            );
            item(
                &mut s,
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
                &mut s,
                &format!("{capital}: no ceiling could be read (see headroom limits)"),
                &format!("color={colour} sfimage={symbol} sfcolor={colour}"),
            );
            item(&mut s, &format!("{} {unit} used", thousands(r.used)), "");
        }
    }
    let eta = match (history, r.eta_seconds, r.growth_per_min) {
        (true, Some(eta), Some(g)) if g > 0.0 => format!(
            "ETA {} to the wall ({g:+.1} slots/min)",
            human_duration(eta as f64)
        ),
        _ => format!("No ETA: trend {}", trend_phrase(r, history)),
    };
    item(&mut s, &eta, "");
    match rep.top_parents.first() {
        Some(top) => item(
            &mut s,
            &format!(
                "{}; most held by {} (pid {}, {})",
                plural(r.zombies, "zombie"),
                title_text(&top.name),
                top.pid,
                plural(top.zombies, "zombie")
            ),
            "",
        ),
        None => item(&mut s, &plural(r.zombies, "zombie"), ""),
    }
    if rep.unreadable > 0 || r.partial {
        item(
            &mut s,
            &format!(
                "{} could not be read: a partial reading",
                plural(rep.unreadable, "process")
            ),
            "",
        );
    }
    s.push_str("---\n");
    action_items(&mut s, actions);
    let _ = writeln!(s, "Refresh | refresh=true");
    s
}

/// The menu's actions, each running headroom by its lasting path.
fn action_items(s: &mut String, actions: &Actions) {
    let program = match &actions.program {
        Ok(p) => match p.to_str().and_then(param_value) {
            Some(v) => v,
            None => {
                item(
                    s,
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
            item(s, &format!("No actions: {}", title_text(why)), "");
            return;
        }
    };
    item(
        s,
        "Reap dry run in Terminal (what reap would do)",
        &format!("bash={program} param1=reap param2=--dry-run terminal=true"),
    );
    item(
        s,
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
            "Open the evidence chart",
            &format!(
                "bash=/bin/sh param1=-c param2='{CHART_SCRIPT}' param3={program} param4={svg} terminal=false"
            ),
        ),
        Some(None) => item(
            s,
            "No chart: the state directory's path cannot be a SwiftBar parameter",
            "",
        ),
        None => item(
            s,
            "No evidence log yet (probe from cron, or watch, writes it)",
            "",
        ),
    }
}

/// `sh -c`'s script for the chart: headroom is `$0`, the SVG `$1`. It holds no `'`, so
/// it is quoted with one.
const CHART_SCRIPT: &str = r#""$0" evidence --svg "$1" >/dev/null && exec open "$1""#;

/// The plugin file: headroom on `$PATH` (SwiftBar runs plugins in a login shell), else
/// where Homebrew and cargo put it. It prints `probe --format swiftbar`, which exits 0
/// once the figure is printed; without headroom it says so in the menu bar.
pub const PLUGIN: &str = r#"#!/bin/sh
# <xbar.title>headroom</xbar.title>
# <xbar.desc>Process slots against the binding limit, the ETA to the wall and the top zombie parent, from headroom probe.</xbar.desc>
# <xbar.dependencies>headroom</xbar.dependencies>
# <xbar.abouturl>https://github.com/headroom-cli/headroom</xbar.abouturl>
# <swiftbar.hideRunInTerminal>true</swiftbar.hideRunInTerminal>
# <swiftbar.hideLastUpdated>false</swiftbar.hideLastUpdated>
#
# Written by `headroom generate swiftbar`; Homebrew installs it as
# $(brew --prefix)/share/headroom/swiftbar/headroom.30s.sh. Link it into SwiftBar's plugin
# folder; the 30s in the name is how often SwiftBar runs it. Each run is one probe.
for h in "$(command -v headroom 2>/dev/null)" /opt/homebrew/bin/headroom /usr/local/bin/headroom "$HOME/.cargo/bin/headroom"; do
  if [ -n "$h" ] && [ -x "$h" ]; then
    exec "$h" probe --format swiftbar
  fi
done
echo "headroom? | sfimage=questionmark.circle"
echo "---"
echo "headroom is not on PATH, in /opt/homebrew/bin, /usr/local/bin or ~/.cargo/bin"
echo "How to install headroom | href=https://github.com/headroom-cli/headroom#install"
"#;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::commands::probe::tests::at;

    /// One line as SwiftBar reads it (`MenuLineParameters.init(line:)`, `getParams`): the
    /// title up to the first `|`; then `key=value`, a value bare to the next blank or
    /// quoted by `"`/`'` to the same quote (a backslash kept with the character after it).
    fn parse(line: &str) -> (String, BTreeMap<String, String>) {
        let Some((title, rest)) = line.split_once('|') else {
            return (line.to_string(), BTreeMap::new());
        };
        let chars: Vec<char> = rest.trim().chars().collect();
        let mut params = BTreeMap::new();
        let mut i = 0;
        loop {
            while i < chars.len() && matches!(chars[i], ' ' | '\t') {
                i += 1;
            }
            let start = i;
            while i < chars.len() && chars[i] != '=' {
                i += 1;
            }
            if i >= chars.len() {
                break;
            }
            let key: String = chars[start..i]
                .iter()
                .collect::<String>()
                .trim()
                .to_lowercase();
            i += 1;
            let mut value = String::new();
            if i < chars.len() && matches!(chars[i], '"' | '\'') {
                let q = chars[i];
                i += 1;
                let mut escaped = false;
                while i < chars.len() {
                    let c = chars[i];
                    i += 1;
                    if escaped {
                        value.push('\\');
                        value.push(c);
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == q {
                        break;
                    } else {
                        value.push(c);
                    }
                }
            } else {
                while i < chars.len() && !matches!(chars[i], ' ' | '\t') {
                    value.push(chars[i]);
                    i += 1;
                }
            }
            params.insert(key, value);
        }
        (title.trim_end().to_string(), params)
    }

    /// The parameters SwiftBar documents (its README's tables) that this output may use.
    const KNOWN: &[&str] = &[
        "sfimage",
        "sfcolor",
        "color",
        "symbolize",
        "emojize",
        "tooltip",
        "bash",
        "param1",
        "param2",
        "param3",
        "param4",
        "terminal",
        "refresh",
    ];

    fn actions() -> Actions {
        Actions {
            program: Ok(PathBuf::from("/opt/homebrew/opt/headroom/bin/headroom")),
            chart: Some(PathBuf::from(
                "/Users/a/Library/Application Support/headroom/evidence.svg",
            )),
        }
    }

    const HOSTILE: &str = "ag|ency\n---\nx | bash=/bin/rm param1=-rf #[fg=red]\x1b[2J:fire:";

    fn lines(out: &str) -> Vec<(String, BTreeMap<String, String>)> {
        assert!(out.ends_with('\n'), "{out}");
        out.lines().map(parse).collect()
    }

    #[test]
    fn each_level_has_its_own_glyph_shape_and_colour_in_the_single_title_line() {
        let mut seen = Vec::new();
        for level in [
            Level::Normal,
            Level::Warning,
            Level::Critical,
            Level::Unknown,
        ] {
            let out = swiftbar(&at(level, "agency"), true, &actions());
            let ls = lines(&out);
            // The header is everything before the first `---`: one line, the figure.
            assert_eq!(ls[1].0, "---", "{out}");
            let (title, p) = &ls[0];
            assert_eq!(p["sfimage"], look(level).0);
            assert_eq!(p["sfcolor"], look(level).1);
            assert_eq!(p["color"], look(level).1);
            // A light and a dark colour, both hex as SwiftBar's webColor reads them.
            let pair: Vec<&str> = p["color"].split(',').collect();
            assert_eq!(pair.len(), 2, "{}", p["color"]);
            assert!(pair.iter().all(|c| c.len() == 7 && c.starts_with('#')));
            assert!(p["tooltip"].starts_with(&format!("headroom: {}", level.as_str())));
            match level {
                Level::Unknown => assert_eq!(title, "?"),
                _ => assert!(title.ends_with('%'), "{title}"),
            }
            seen.push((p["sfimage"].clone(), p["color"].clone()));
        }
        let shapes: std::collections::BTreeSet<_> = seen.iter().map(|s| &s.0).collect();
        let colours: std::collections::BTreeSet<_> = seen.iter().map(|s| &s.1).collect();
        assert_eq!((shapes.len(), colours.len()), (4, 4), "{seen:?}");
    }

    #[test]
    fn the_menu_has_usage_against_the_limit_eta_top_parent_and_actions() {
        let out = swiftbar(&at(Level::Warning, "agency"), true, &actions());
        let ls = lines(&out);
        let titles: Vec<&str> = ls.iter().map(|l| l.0.as_str()).collect();
        assert!(
            titles.contains(&"Warning: 56.3 % of the binding limit (rlimit-nproc)"),
            "{out}"
        );
        assert!(
            titles.contains(&"1,500 of 2,666 process slots used, 1,166 free"),
            "{out}"
        );
        assert!(
            titles.contains(&"ETA 13 min to the wall (+10.0 slots/min)"),
            "{out}"
        );
        assert!(
            titles.contains(&"2,038 zombies; most held by agency (pid 28979, 526 zombies)"),
            "{out}"
        );
        let by_title = |t: &str| &ls.iter().find(|l| l.0.starts_with(t)).unwrap().1;
        let reap = by_title("Reap dry run in Terminal");
        assert_eq!(reap["bash"], "/opt/homebrew/opt/headroom/bin/headroom");
        assert_eq!(
            (reap["param1"].as_str(), reap["param2"].as_str()),
            ("reap", "--dry-run")
        );
        assert_eq!(reap["terminal"], "true");
        let chart = by_title("Open the evidence chart");
        assert_eq!(chart["bash"], "/bin/sh");
        assert_eq!(chart["param1"], "-c");
        assert_eq!(chart["param2"], CHART_SCRIPT);
        assert_eq!(chart["param3"], "/opt/homebrew/opt/headroom/bin/headroom");
        // The space of "Application Support" survives: the value is quoted.
        assert_eq!(
            chart["param4"],
            "/Users/a/Library/Application Support/headroom/evidence.svg"
        );
        assert_eq!(chart["terminal"], "false");
        assert_eq!(by_title("Refresh")["refresh"], "true");
        for (title, p) in &ls {
            for k in p.keys() {
                assert!(KNOWN.contains(&k.as_str()), "`{k}` on `{title}`");
            }
        }
        // Without history or a log: said, and no chart to open.
        let none = Actions {
            chart: None,
            ..actions()
        };
        let out = swiftbar(&at(Level::Warning, "agency"), false, &none);
        assert!(
            out.contains("No ETA: trend off (--no-history or --snapshot) |"),
            "{out}"
        );
        assert!(out.contains("No evidence log yet"), "{out}");
        assert!(!out.contains("evidence --svg"), "{out}");
    }

    #[test]
    fn a_hostile_name_stays_text_on_its_own_line() {
        for level in [
            Level::Normal,
            Level::Warning,
            Level::Critical,
            Level::Unknown,
        ] {
            let plain = swiftbar(&at(level, "agency"), true, &actions());
            let out = swiftbar(&at(level, HOSTILE), true, &actions());
            let (pl, ls) = (lines(&plain), lines(&out));
            assert_eq!(pl.len(), ls.len(), "no line added:\n{out}");
            assert!(!out.contains('\x1b'), "{out}");
            for ((pt, pp), (t, p)) in pl.iter().zip(&ls) {
                assert_eq!(pp, p, "the parameters of `{t}` are ours alone");
                if pt != t {
                    assert!(
                        t.contains("ag\\u{7c}ency\\n---\\nx \\u{7c} bash=/bin/rm"),
                        "{t}"
                    );
                    assert!(t.contains("#[fg=red]\\u{1b}[2J:fire:"), "{t}");
                    assert_eq!(p["symbolize"], "false");
                    assert_eq!(p["emojize"], "false");
                }
            }
        }
        // Control: the name as it comes, unescaped, would end the title and add an action
        // and lines.
        let raw = format!("{HOSTILE} | symbolize=false");
        assert_eq!(raw.lines().count(), 3);
        assert!(parse(raw.lines().nth(2).unwrap()).1.contains_key("bash"));
        assert!(title_text(HOSTILE).lines().count() == 1 && !title_text(HOSTILE).contains('|'));
    }

    #[test]
    fn parameter_values_are_quoted_or_refused_as_swiftbar_reads_them() {
        for v in [
            "/opt/homebrew/bin/headroom",
            "/a b/c",
            "/it's here",
            "/say \"x\"",
        ] {
            let written = param_value(v).unwrap();
            let (_, p) = parse(&format!("t | k={written} next=1"));
            assert_eq!(p["k"], v, "{written}");
            assert_eq!(p["next"], "1");
        }
        for v in ["", "/a\nb", "/a\\b", "/both ' and \""] {
            assert_eq!(param_value(v), None, "{v:?}");
        }
        // A path that cannot be written leaves the actions out and says why.
        let odd = Actions {
            program: Ok(PathBuf::from("/x/it's \"odd\"/headroom")),
            chart: None,
        };
        let out = swiftbar(&at(Level::Normal, "agency"), true, &odd);
        assert!(out.contains("No actions: headroom's path"), "{out}");
        assert!(!out.contains("bash="), "{out}");
        let gone = Actions {
            program: Err("cannot find headroom's own executable".into()),
            chart: None,
        };
        let out = swiftbar(&at(Level::Normal, "agency"), true, &gone);
        assert!(
            out.contains("No actions: cannot find headroom's own executable |"),
            "{out}"
        );
    }
}
