//! `probe --format tmux`: one line for tmux's `status-right`, styled with `#[…]`.
//!
//! tmux expands the line as a format: `#` starts a style (`#[fg=red]`), a variable (`#S`)
//! or a shell command (`#(…)`), so every `#` of text we did not write is doubled (`##`
//! prints one); control characters are escaped by the sanitizer first. The level reads
//! without colour too: a word per level beside the figure.

use std::fmt::Write as _;

use crate::commands::probe::ProbeReport;
use crate::core::reading::Level;
use crate::output::human_duration;
use crate::sanitize::sanitize;

/// Longest process name shown; a status line is narrow.
const NAME_MAX: usize = 24;

/// The style and the word of a level.
fn look(level: Level) -> (&'static str, &'static str) {
    match level {
        Level::Normal => ("fg=green", "ok"),
        Level::Warning => ("fg=yellow,bold", "WARN"),
        Level::Critical => ("fg=white,bg=red,bold", "CRIT"),
        Level::Unknown => ("fg=colour244", "?"),
    }
}

/// Text we did not write, inert in a tmux format: cut to `NAME_MAX` characters (before
/// escaping, so no escape is cut in half), sanitized, every `#` doubled.
pub(crate) fn tmux_text(s: &str) -> String {
    let mut cut: String = s.chars().take(NAME_MAX).collect();
    let more = s.chars().nth(NAME_MAX).is_some();
    cut = sanitize(&cut).replace('#', "##");
    if more {
        cut.push('…');
    }
    cut
}

/// `#[style] slots 63% WARN eta 13 min · agency 526z #[default]`, and a newline.
pub(crate) fn tmux(rep: &ProbeReport, history: bool) -> String {
    let r = &rep.reading;
    let (style, word) = look(r.level);
    let mut s = format!("#[{style}] slots ");
    match r.usage_pct {
        Some(pct) => {
            let _ = write!(s, "{pct:.0}% {word}");
        }
        None => {
            let _ = write!(s, "{word} no limit");
        }
    }
    if let (true, Some(eta), Some(g)) = (history, r.eta_seconds, r.growth_per_min) {
        if g > 0.0 {
            let _ = write!(s, " eta {}", human_duration(eta as f64));
        }
    }
    match rep.top_parents.first() {
        Some(top) if r.level != Level::Normal => {
            let _ = write!(s, " · {} {}z", tmux_text(&top.name), top.zombies);
        }
        _ => {}
    }
    s.push_str(" #[default]\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::probe::tests::at;

    /// What tmux's format expander would act on in `line`: every `#` sequence but `##`
    /// (which prints `#`), each with the rest of its line.
    fn directives(line: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut rest = line;
        while let Some(i) = rest.find('#') {
            let after = &rest[i + 1..];
            if let Some(tail) = after.strip_prefix('#') {
                rest = tail;
                continue;
            }
            let end = after.find(']').map_or(after.len(), |e| e + 1);
            out.push(format!("#{}", &after[..end]));
            rest = &after[end..];
        }
        out
    }

    const HOSTILE: &str = "#[fg=red]#(id)\n#S\x1b";

    #[test]
    fn each_level_is_one_styled_line_with_its_own_word() {
        let mut words = Vec::new();
        for level in [
            Level::Normal,
            Level::Warning,
            Level::Critical,
            Level::Unknown,
        ] {
            let line = tmux(&at(level, "agency"), true);
            assert!(
                line.ends_with(" #[default]\n") && line.lines().count() == 1,
                "{line:?}"
            );
            let (style, word) = look(level);
            assert!(line.starts_with(&format!("#[{style}] slots ")), "{line}");
            assert!(line.contains(word), "{line}");
            assert_eq!(
                directives(&line),
                [format!("#[{style}]"), "#[default]".into()]
            );
            words.push(word);
        }
        assert_eq!(
            tmux(&at(Level::Warning, "agency"), true),
            "#[fg=yellow,bold] slots 56% WARN eta 13 min · agency 526z #[default]\n"
        );
        assert_eq!(
            tmux(&at(Level::Normal, "agency"), true),
            "#[fg=green] slots 15% ok #[default]\n"
        );
        assert_eq!(
            tmux(&at(Level::Unknown, "agency"), false),
            "#[fg=colour244] slots ? no limit · agency 526z #[default]\n"
        );
        // Without history there is no ETA to give.
        assert!(!tmux(&at(Level::Warning, "agency"), false).contains("eta"));
        words.sort_unstable();
        words.dedup();
        assert_eq!(words.len(), 4);
    }

    #[test]
    fn a_hostile_name_is_inert_text() {
        for level in [Level::Warning, Level::Critical, Level::Unknown] {
            let plain = tmux(&at(level, "agency"), true);
            let line = tmux(&at(level, HOSTILE), true);
            assert_eq!(directives(&line), directives(&plain), "{line}");
            assert_eq!(line.lines().count(), 1, "{line:?}");
            assert!(!line.contains('\x1b'), "{line:?}");
            assert!(line.contains(" ##[fg=red]##(id)\\n##S\\u{1b} "), "{line}");
            assert!(!line.contains("(id)\n"), "{line:?}");
        }
        // Control: the name unescaped would restyle the line and run a command.
        let raw = format!("#[fg=green] {HOSTILE} #[default]");
        assert!(
            directives(&raw).iter().any(|d| d.starts_with("#(")),
            "{raw}"
        );
        // Long names are cut, never in the middle of a `##`.
        let long = tmux_text(&format!("{} and more", "#".repeat(24)));
        assert_eq!(long, format!("{}…", "##".repeat(24)));
    }
}
