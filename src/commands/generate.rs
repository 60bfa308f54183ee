//! `headroom generate man DIR | completions SHELL` (hidden): the man pages and shell
//! completions, generated from the same clap definitions the binary parses with. Their
//! output is committed in `man/` and `completions/`, and a test fails when it is stale.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use crate::cli::{GenerateArgs, GenerateWhat, full_command};
use crate::commands::Ctx;
use crate::exit;

pub fn run(ctx: &Ctx<'_>, args: &GenerateArgs) -> Result<u8> {
    match &args.what {
        GenerateWhat::Man { dir } => {
            man(dir)?;
            Ok(exit::OK)
        }
        GenerateWhat::Completions { shell } => {
            let mut buf = Vec::new();
            clap_complete::generate(*shell, &mut visible(&full_command()), "headroom", &mut buf);
            ctx.printer.raw(&String::from_utf8_lossy(&buf))?;
            Ok(exit::OK)
        }
    }
}

/// `cmd` without what it hides (the test flags `--proc-root`/`--sys-root`, `doctor
/// --burn-child`, `generate` itself): clap_complete offers hidden items as completions.
pub fn visible(cmd: &clap::Command) -> clap::Command {
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

/// `headroom.1` with EXIT STATUS, FILES and EXAMPLES, and one page per subcommand.
pub fn man(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    let cmd = full_command();
    clap_mangen::generate_to(cmd.clone(), dir)
        .with_context(|| format!("cannot write man pages to `{}`", dir.display()))?;
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let page = clap_mangen::Man::new(cmd);
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
    for (code, meaning) in exit::TABLE {
        let _ = writeln!(extra, ".TP\n\\fB{}\\fR\n{}", roff(code), roff(meaning));
    }
    let _ = writeln!(extra, ".SH FILES");
    for (path, what) in FILES {
        let _ = writeln!(extra, ".TP\n\\fI{}\\fR\n{}", roff(path), roff(what));
    }
    let _ = writeln!(extra, ".SH EXAMPLES");
    for (what, example) in EXAMPLES {
        let _ = writeln!(
            extra,
            ".TP\n{}\n.nf\n\\f(CW{}\\fR\n.fi",
            roff(what),
            roff(example)
        );
    }
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
    std::fs::write(&path, out).with_context(|| format!("cannot write `{}`", path.display()))?;
    Ok(())
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
        "Free slots of the worst parent, in a pipeline:",
        "headroom probe --json | jq '.free_slots, .top_parents[0]'",
    ),
];
