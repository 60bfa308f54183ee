//! `headroom generate man DIR | completions SHELL` (hidden): the man pages and shell
//! completions, generated from the same clap definitions the binary parses with. Their
//! output is committed in `man/` and `completions/`, and a test fails when it is stale.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::{GenerateArgs, GenerateWhat, full_command};
use crate::commands::Ctx;
use crate::exit::{self, ExitStatus};

pub(crate) fn run(ctx: &Ctx<'_>, args: &GenerateArgs) -> Result<ExitStatus> {
    match &args.what {
        GenerateWhat::Man { dir } => {
            man(dir)?;
            Ok(ExitStatus::Ok)
        }
        GenerateWhat::Schemas { dir } => {
            crate::commands::schema::write_all(dir)?;
            Ok(ExitStatus::Ok)
        }
        GenerateWhat::Swiftbar { dir: None } => {
            ctx.printer.raw(PLUGIN)?;
            Ok(ExitStatus::Ok)
        }
        GenerateWhat::Swiftbar { dir: Some(dir) } => {
            swiftbar_plugin(dir)?;
            Ok(ExitStatus::Ok)
        }
        GenerateWhat::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(*shell, &mut visible(&full_command()), "headroom", &mut buf);
            ctx.printer.raw(&String::from_utf8_lossy(&buf))?;
            Ok(ExitStatus::Ok)
        }
    }
}

/// The plugin's file name: SwiftBar reads the refresh interval from it (`name.30s.ext`).
pub(crate) const PLUGIN_FILE: &str = "headroom.30s.sh";

/// The plugin file: headroom on `$PATH` (SwiftBar runs plugins in a login shell), else
/// where Homebrew and cargo put it. It prints `probe --format swiftbar`, or `xbar` under
/// xbar (which sets `XBARDarkMode`, and SwiftBar `SWIFTBAR`); either exits 0 once the
/// figure is printed. Without headroom it says so in the menu bar.
pub(crate) const PLUGIN: &str = r#"#!/bin/sh
# <xbar.title>headroom</xbar.title>
# <xbar.desc>Process slots against the binding limit, the ETA to the wall and the top zombie parent, from headroom probe.</xbar.desc>
# <xbar.dependencies>headroom</xbar.dependencies>
# <xbar.abouturl>https://github.com/headroom-cli/headroom</xbar.abouturl>
# <swiftbar.hideRunInTerminal>true</swiftbar.hideRunInTerminal>
#
# Written by `headroom generate swiftbar`; Homebrew installs it as
# $(brew --prefix)/share/headroom/swiftbar/headroom.30s.sh. Link it into SwiftBar's (or
# xbar's) plugin folder; the 30s in the name is how often it runs. Each run is one probe.
format=swiftbar
# xbar reads the same protocol but refuses SwiftBar's own parameters.
if [ -z "${SWIFTBAR:-}" ] && [ -n "${XBARDarkMode:-}" ]; then
  format=xbar
fi
for h in "$(command -v headroom 2>/dev/null)" /opt/homebrew/bin/headroom /usr/local/bin/headroom "$HOME/.cargo/bin/headroom"; do
  if [ -n "$h" ] && [ -x "$h" ]; then
    exec "$h" probe --format "$format"
  fi
done
echo "headroom? | color=#57606a"
echo "---"
echo "headroom is not on PATH, in /opt/homebrew/bin, /usr/local/bin or ~/.cargo/bin"
echo "How to install headroom | href=https://github.com/headroom-cli/headroom#install"
"#;

/// The SwiftBar plugin written into `dir` (made if missing), executable: SwiftBar runs
/// every executable file of its plugin folder.
fn swiftbar_plugin(dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    let path = dir.join(PLUGIN_FILE);
    crate::store::fsio::atomic_write(&path, PLUGIN.as_bytes())?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make `{}` executable", path.display()))?;
    Ok(())
}

/// `cmd` without what it hides (the test flags `--proc-root`/`--sys-root`, `doctor
/// --burn-child`, `generate` itself): clap_complete offers hidden items as completions.
pub(crate) fn visible(cmd: &clap::Command) -> clap::Command {
    let mut out = clap::Command::new(cmd.get_name().to_string())
        .about(cmd.get_about().cloned().unwrap_or_default())
        .disable_help_subcommand(cmd.is_disable_help_subcommand_set());
    if let Some(v) = cmd.get_version() {
        out = out.version(v.to_string());
    }
    for a in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        out = out.arg(a.clone());
    }
    for s in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        out = out.subcommand(visible(s));
    }
    out
}

/// Escape text for roff: backslashes, and a leading `.` or `'` that would read as a request.
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}

/// The date on every page's title line (mandoc wants one); `scripts/release.sh` sets it.
pub(crate) const MAN_DATE: &str = "2026-12-01";

/// `headroom.1` with EXIT STATUS, FILES and EXAMPLES, and one page per subcommand with its
/// notes, EXIT STATUS (its own line and a pointer to the table) and EXAMPLES.
pub(crate) fn man(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    let mut cmd = full_command().disable_help_subcommand(true);
    cmd.build();
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let page = clap_mangen::Man::new(sub.clone()).date(MAN_DATE);
        let path = dir.join(page.get_filename());
        std::fs::write(&path, tidy(&sub_page(&page, sub)?))
            .with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    let page = clap_mangen::Man::new(cmd).date(MAN_DATE);
    let mut out: Vec<u8> = Vec::new();
    let w = &mut out;
    page.render_title(w)?;
    page.render_name_section(w)?;
    page.render_synopsis_section(w)?;
    page.render_description_section(w)?;
    page.render_options_section(w)?;
    page.render_subcommands_section(w)?;
    let mut extra = String::new();
    let _ = writeln!(extra, ".SH \"EXIT STATUS\"");
    for (code, meaning) in exit::table() {
        let _ = writeln!(extra, ".TP\n\\fB{}\\fR\n{}", roff(code), roff(meaning));
    }
    let _ = writeln!(extra, ".SH FILES");
    for (path, what) in FILES {
        let _ = writeln!(extra, ".TP\n\\fI{}\\fR\n{}", roff(path), roff(what));
    }
    examples_section(&mut extra, EXAMPLES);
    let _ = writeln!(extra, ".SH \"SEE ALSO\"");
    let subs: Vec<String> = full_command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| format!("\\fBheadroom\\-{}\\fR(1)", roff(s.get_name())))
        .collect();
    let _ = writeln!(extra, "{}", subs.join(",\n"));
    out.extend_from_slice(extra.as_bytes());
    page.render_version_section(&mut out)?;
    let path = dir.join("headroom.1");
    std::fs::write(&path, tidy(&String::from_utf8_lossy(&out)))
        .with_context(|| format!("cannot write `{}`", path.display()))?;
    Ok(())
}

/// A subcommand's page: clap_mangen's sections, then ours instead of its EXTRA (the
/// `after_help` text split into prose and the exit-status paragraph).
fn sub_page(page: &clap_mangen::Man, sub: &clap::Command) -> Result<String> {
    let mut out: Vec<u8> = Vec::new();
    let w = &mut out;
    page.render_title(w)?;
    page.render_name_section(w)?;
    page.render_synopsis_section(w)?;
    page.render_description_section(w)?;
    page.render_options_section(w)?;
    if sub.get_subcommands().next().is_some() {
        page.render_subcommands_section(w)?;
    }
    let mut s = String::from_utf8_lossy(&out).into_owned();
    let after = sub
        .get_after_help()
        .map(ToString::to_string)
        .unwrap_or_default();
    let (exit_paras, notes): (Vec<&str>, Vec<&str>) = after
        .split("\n\n")
        .filter(|p| !p.trim().is_empty())
        .partition(|p| p.starts_with("Exit status"));
    if !notes.is_empty() {
        let _ = writeln!(s, ".SH NOTES");
        for p in notes {
            let _ = writeln!(s, ".PP\n{}", roff(&p.replace('\n', " ")));
        }
    }
    let _ = writeln!(s, ".SH \"EXIT STATUS\"");
    for p in exit_paras {
        let _ = writeln!(s, ".PP\n{}", roff(&p.replace('\n', " ")));
    }
    let _ = writeln!(
        s,
        ".PP\nThe full table of exit codes is in \\fBheadroom\\fR(1) under EXIT STATUS, and in \
         the README under \"Exit codes\"."
    );
    examples_section(&mut s, crate::cli_help::examples(sub.get_name()));
    let _ = writeln!(s, ".SH \"SEE ALSO\"\n\\fBheadroom\\fR(1)");
    let mut version = Vec::new();
    page.render_version_section(&mut version)?;
    s.push_str(&String::from_utf8_lossy(&version));
    Ok(s)
}

fn examples_section(s: &mut String, examples: &[(&str, &str)]) {
    let _ = writeln!(s, ".SH EXAMPLES");
    for (what, example) in examples {
        let what = what.trim_end_matches(':');
        let _ = writeln!(
            s,
            ".TP\n{}:\n.nf\n\\f(CW{}\\fR\n.fi",
            roff(what),
            roff(example)
        );
    }
}

/// The longest source line `mandoc -Tlint` lets pass without a style note.
const ROFF_LINE_MAX: usize = 80;

/// A filled text line cut at spaces into lines of at most `ROFF_LINE_MAX` bytes (the
/// rendering is the same: filling joins them again). Never at an escaped space (`\ `), and
/// never so that a piece starts with `.` or `'` (it would read as a request). A word longer
/// than the limit stays whole.
fn wrap_text_line(line: &str, out: &mut Vec<String>) {
    let mut rest = line;
    while rest.len() > ROFF_LINE_MAX {
        let b = rest.as_bytes();
        let cut = (1..=ROFF_LINE_MAX).rev().find(|&i| {
            b[i] == b' '
                && b[i - 1] != b'\\'
                && !ends_sentence(&b[..i])
                && !matches!(b.get(i + 1), None | Some(b'.' | b'\'' | b' '))
        });
        let Some(cut) = cut else { break };
        out.push(rest[..cut].to_string());
        rest = &rest[cut + 1..];
    }
    out.push(rest.to_string());
}

/// Whether `text` ends a sentence as roff sees it (`.`, `?` or `!`, perhaps closed by
/// `)`, `]`, `"`, `'` or `*`): a line ending there gets two spaces when filled, so a cut
/// there would change the rendering.
fn ends_sentence(text: &[u8]) -> bool {
    let end = text
        .iter()
        .rposition(|c| !matches!(c, b')' | b']' | b'"' | b'\'' | b'*'));
    end.is_some_and(|i| matches!(text[i], b'.' | b'?' | b'!'))
}

/// The title line with the page's name in capitals (`.TH HEADROOM-PROBE 1 …`), as man pages
/// have it and `mandoc -Tlint` expects.
fn upper_title(line: &str) -> String {
    let Some(rest) = line.strip_prefix(".TH ") else {
        return line.to_string();
    };
    let (title, tail) = rest.split_once(' ').unwrap_or((rest, ""));
    format!(".TH {} {tail}", title.to_ascii_uppercase())
        .trim_end()
        .to_string()
}

/// Make a page lint-clean: every non-ASCII character as a groff/mandoc `\[uXXXX]` escape
/// (raw ones make `groff -ww` warn), no trailing blanks, and no blank line next to a `.br`
/// (clap_mangen's possible-values lists) nor a `.PP` straight after a heading (mandoc warns
/// "skipping paragraph macro" for both); the title in capitals and filled text lines cut to
/// 80 bytes (`mandoc -Tlint`'s style notes).
pub(crate) fn tidy(page: &str) -> String {
    let mut escaped = String::with_capacity(page.len());
    for c in page.chars() {
        if c.is_ascii() {
            escaped.push(c);
        } else {
            let _ = write!(escaped, "\\[u{:04X}]", c as u32);
        }
    }
    let lines: Vec<&str> = escaped.lines().map(str::trim_end).collect();
    let mut out: Vec<&str> = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let next_br = lines.get(i + 1).is_some_and(|n| *n == ".br");
        if line.is_empty() && (out.last() == Some(&".br") || next_br) {
            continue;
        }
        if *line == ".br"
            && out
                .last()
                .is_some_and(|l| *l == ".br" || l.starts_with(".TP"))
        {
            continue;
        }
        if *line == ".PP" && out.last().is_some_and(|l| l.starts_with(".SH")) {
            continue;
        }
        out.push(line);
    }
    let mut wrapped: Vec<String> = Vec::with_capacity(out.len());
    let mut fill = true;
    let mut tag_next = false;
    for line in out {
        // The line after `.TP` is the item's tag: cut, its tail would become the body.
        let is_tag = std::mem::replace(&mut tag_next, line.starts_with(".TP"));
        match line {
            ".nf" | ".EX" => fill = false,
            ".fi" | ".EE" => fill = true,
            _ => {}
        }
        if line.starts_with(".TH ") {
            wrapped.push(upper_title(line));
        } else if fill && !is_tag && !line.starts_with('.') && !line.starts_with('\'') {
            wrap_text_line(line, &mut wrapped);
        } else {
            wrapped.push(line.to_string());
        }
    }
    let mut s = wrapped.join("\n");
    s.push('\n');
    s
}

const FILES: &[(&str, &str)] = &[
    (
        "~/Library/Application Support/headroom/",
        "macOS state: reading history, CPU history, evidence log, hang monitor.",
    ),
    (
        "${XDG_STATE_HOME:-~/.local/state}/headroom/",
        "Linux state, as above.",
    ),
    (
        "evidence.csv",
        "In the state directory: one row per reading and per cleanup; rotated at 4 MiB, 3 kept.",
    ),
    (
        "${XDG_CONFIG_HOME:-~/.config}/headroom/config.toml",
        "Settings; an unknown key is an error.",
    ),
    (
        "HEADROOM_HOME",
        "Environment: when set, holds the state and config.toml instead.",
    ),
];

const EXAMPLES: &[(&str, &str)] = &[
    (
        "One reading, as a monitoring plugin would take it:",
        "headroom probe; echo $?",
    ),
    (
        "Every minute from cron, building the trend and the evidence log:",
        "* * * * * headroom probe -q",
    ),
    ("Which ceiling binds, and why:", "headroom limits"),
    (
        "What reap would do, without doing it:",
        "headroom reap --dry-run",
    ),
    (
        "Audit the liveness guard before trusting it:",
        "headroom idle-watch --duration 5m --threshold 2m",
    ),
    (
        "The menu-bar figure: SwiftBar's plugin, into its plugin folder:",
        "headroom generate swiftbar ~/SwiftBarPlugins",
    ),
    (
        "Free slots of the worst parent, in a pipeline:",
        "headroom probe --json | jq '.free_slots, .top_parents[0]'",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_lines_are_cut_where_filling_rejoins_them_unchanged() {
        let words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu";
        let line = format!("{words} nu. {words} xi \\ omicron .pi 'rho {words}");
        let mut out = Vec::new();
        wrap_text_line(&line, &mut out);
        assert!(out.len() > 2, "{out:?}");
        assert_eq!(out.join(" "), line, "filling joins the pieces again");
        for piece in &out {
            assert!(piece.len() <= ROFF_LINE_MAX, "{piece}");
            assert!(!piece.starts_with(['.', '\'', ' ']), "{piece}");
            assert!(!piece.ends_with('\\') && !piece.ends_with("nu."), "{piece}");
        }
        // Control: a short line, and a word longer than the limit, stay whole.
        let mut out = Vec::new();
        wrap_text_line("short", &mut out);
        let long = "x".repeat(100);
        wrap_text_line(&long, &mut out);
        assert_eq!(out, vec!["short".to_string(), long]);
    }

    #[test]
    fn the_title_is_in_capitals_and_the_rest_of_its_line_kept() {
        assert_eq!(
            upper_title(".TH headroom-probe 1 2026-12-01 \"probe 0.1.0\""),
            ".TH HEADROOM-PROBE 1 2026-12-01 \"probe 0.1.0\""
        );
        assert_eq!(upper_title(".SH NAME"), ".SH NAME");
    }
}
