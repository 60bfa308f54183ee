//! `evidence --chart` and `--svg` on real evidence files: the 2026-08-29 replay, the archived
//! row with one field too many, piped and terminal behaviour, and the SVG through a real
//! renderer.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Env, require_tool};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/evidence-2026-08-29/evidence.csv")
}

fn with_fixture() -> Env {
    let env = Env::new();
    std::fs::copy(fixture(), env.home.join("evidence.csv")).unwrap();
    env
}

fn stdout(env: &Env, args: &[&str], envs: &[(&str, &str)]) -> (String, i32) {
    let out = env
        .cmd()
        .arg("evidence")
        .args(args)
        .envs(envs.iter().copied())
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        out.status.code().unwrap(),
    )
}

#[test]
fn piped_it_prints_the_summary_only_unless_asked_for_the_chart() {
    let env = with_fixture();
    let (plain, code) = stdout(&env, &[], &[]);
    assert_eq!(code, 0);
    assert!(plain.starts_with("evidence: 154 rows"), "{plain}");
    assert!(!plain.contains('┤') && !plain.contains("effective limit"));

    let (charted, code) = stdout(&env, &["--chart"], &[("COLUMNS", "80"), ("TERM", "xterm")]);
    assert_eq!(code, 0);
    assert!(
        charted.starts_with("used slots vs effective limit"),
        "{charted}"
    );
    assert!(
        charted.ends_with(&plain),
        "the summary follows the chart unchanged"
    );
    let chart = &charted[..charted.len() - plain.len()];
    assert!(chart.lines().all(|l| l.chars().count() <= 80), "{chart}");
    assert_eq!(chart.lines().filter(|l| l.contains('┤')).count(), 10);
    for w in ["40", "200"] {
        let (out, _) = stdout(&env, &["--chart", "--width", w], &[]);
        let w: usize = w.parse().unwrap();
        assert!(out.lines().any(|l| l.chars().count() == w), "{out}");
        assert!(
            out.lines()
                .take_while(|l| !l.starts_with("evidence:"))
                .all(|l| l.chars().count() <= w),
            "{out}"
        );
    }
}

#[test]
fn term_dumb_and_ascii_draw_plain_ascii() {
    let env = with_fixture();
    let (dumb, _) = stdout(&env, &["--chart", "--width", "80"], &[("TERM", "dumb")]);
    let (ascii, _) = stdout(
        &env,
        &["--chart", "--width", "80", "--ascii"],
        &[("TERM", "xterm")],
    );
    assert_eq!(dumb, ascii);
    let chart: String = ascii
        .lines()
        .take_while(|l| !l.starts_with("evidence:"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(chart.is_ascii(), "{chart}");
    assert!(
        chart.contains('=') && chart.contains('^') && chart.contains('E'),
        "{chart}"
    );
    assert!(chart.contains("per-uid 4,000 from 08-29 14:24"), "{chart}");
}

#[test]
fn a_width_too_narrow_or_not_a_number_is_a_usage_error() {
    let env = with_fixture();
    for w in ["10", "wide", "0", "5000"] {
        let out = env
            .cmd()
            .args(["evidence", "--chart", "--width", w])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(64), "{w}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains(&format!("`{w}`")), "{err}");
    }
}

#[test]
#[cfg_attr(
    not(hr_tool_rsvg_convert),
    ignore = "needs rsvg-convert (the SVG is rendered)"
)]
fn the_archived_row_is_a_mark_on_the_chart_and_in_the_svg() {
    require_tool("rsvg-convert");
    let env = Env::new();
    let header = "timestamp,total_procs,zombies,limit,usage_pct,free_slots,growth_per_min,eta_seconds,top_parent_pid,top_parent_name,top_parent_zombies,action,result";
    let mut text = format!("{header}\n");
    for i in 0..86 {
        text.push_str(&format!(
            "2026-08-28T16:{:02}:53Z,{},239,4000,20.0,3199,0.00,,86183,agency,115,poll,\n",
            i % 60,
            700 + i
        ));
    }
    text.push_str("2026-08-28T18:09:53Z,801,239,4000,20.0,3199,0.00,,86183,agency,115,cpu_idle=unknown;log_age=8,poll,\n");
    std::fs::write(env.home.join("evidence.1.csv"), text).unwrap();
    let (out, code) = stdout(&env, &["--chart", "--width", "60"], &[]);
    assert_eq!(
        code, 1,
        "an uninterpretable row is still the unhappy answer"
    );
    assert!(out.contains("? row not interpreted (1)"), "{out}");
    let axis = out.lines().find(|l| l.contains('└')).unwrap();
    assert!(
        axis.ends_with('?'),
        "the row is at its own time, the latest: {axis}"
    );
    assert!(out.contains("line 88: 14 fields where the header has 13"));

    let svg = env.home.join("archived.svg");
    let (_, code) = stdout(&env, &["--svg", svg.to_str().unwrap()], &[]);
    assert_eq!(code, 1);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("row not interpreted (1)"), "{text}");
    assert!(
        text.contains("<text class=\"unread\""),
        "the mark on the axis"
    );
    assert!(
        text.contains("limit (unknown source)"),
        "an old layout has no source"
    );
    render_png(&svg);
}

/// The SVG through librsvg: it must render without an error to a non-empty PNG.
fn render_png(svg: &Path) {
    let png = svg.with_extension("png");
    let out = Command::new("rsvg-convert")
        .arg(svg)
        .arg("-o")
        .arg(&png)
        .output()
        .unwrap();
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "rsvg-convert: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n") && bytes.len() > 10_000);
}

#[test]
#[cfg_attr(
    not(hr_tool_rsvg_convert),
    ignore = "needs rsvg-convert (the SVG is rendered)"
)]
fn the_2026_08_29_replay_as_svg_has_every_series_mark_and_label() {
    require_tool("rsvg-convert");
    let env = with_fixture();
    let svg = env.home.join("incident.svg");
    let (out, code) = stdout(&env, &["--svg", svg.to_str().unwrap()], &[]);
    assert_eq!(code, 0);
    assert!(
        out.contains(&format!("chart written to {}", svg.display())),
        "{out}"
    );
    assert!(
        !out.contains('┤'),
        "piped: the SVG does not bring the terminal chart"
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    // Self-contained: no script, no link, no external font or stylesheet.
    for banned in [
        "<script",
        "href",
        "url(",
        "@import",
        "<image",
        "<foreignObject",
    ] {
        assert!(!text.contains(banned), "{banned}");
    }
    // An opaque ground, so a dark viewer does not show dark ink on black.
    assert!(text.contains(r##"fill="#FFFFFF""##));
    let count = |class: &str| {
        text.matches(&format!("<polyline class=\"{class}\""))
            .count()
    };
    assert_eq!(count("used"), 2, "used slots, broken at the gap");
    assert_eq!(count("zombies"), 2, "zombies, broken at the gap");
    assert_eq!(
        count("limit"),
        3,
        "per-uid; rlimit-nproc before and after the gap"
    );
    assert_eq!(count("projection"), 1);
    for label in [
        "headroom evidence: process slots, 2026-08-29 13:00 → 08-30 01:30 UTC",
        "4,000 (per-uid)",
        "2,666 (rlimit-nproc)",
        "limit (per-uid)",
        "limit (rlimit-nproc)",
        "critical 75 % of the limit",
        "warning 50 % of the limit",
        "at or over the limit",
        "cleanup (numbered below)",
        "emergency cleanup",
        "no readings 2 h 14 min",
        "used slots",
        "zombies",
        "time (UTC; 1 gap drawn shorter)",
        "process slots (processes of the uid)",
        "14:00",
        "22:00",
    ] {
        assert!(text.contains(label), "missing `{label}`");
    }
    assert!(!text.contains("15:08"), "ticks at round hours");
    assert!(
        !text.contains("row not interpreted"),
        "this log has no anomaly"
    );
    render_png(&svg);
}

#[test]
fn svg_is_written_atomically_and_refuses_when_there_is_nothing_to_draw() {
    let env = with_fixture();
    let svg = env.home.join("old.svg");
    std::fs::write(&svg, "previous").unwrap();
    // --since 1h: nothing from 2026 in the last hour.
    let out = env
        .cmd()
        .args(["evidence", "--since", "1h", "--svg", svg.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("nothing to draw") && err.contains("old.svg"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&svg).unwrap(), "previous");

    let missing = env.home.join("no/such/dir/x.svg");
    let out = env
        .cmd()
        .args(["evidence", "--svg", missing.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("x.svg"));
    // No temporary file is left beside the target.
    let left: Vec<_> = std::fs::read_dir(&env.home)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp."))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn json_is_unchanged_by_the_chart_flags() {
    let env = with_fixture();
    let (a, _) = stdout(&env, &["--json"], &[]);
    let (b, _) = stdout(&env, &["--json", "--chart", "--width", "80"], &[]);
    assert_eq!(a, b);
    assert!(a.trim_start().starts_with('{'));
}

#[test]
fn the_readme_example_is_the_fixture_as_rendered_today() {
    let env = with_fixture();
    let svg = env.home.join("now.svg");
    stdout(&env, &["--svg", svg.to_str().unwrap()], &[]);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(
        std::fs::read(&svg).unwrap()
            == std::fs::read(repo.join("docs/evidence-2026-08-29.svg")).unwrap(),
        "docs/evidence-2026-08-29.svg is stale: regenerate it and its PNG (README, `--svg`)"
    );
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    assert!(readme.contains("](docs/evidence-2026-08-29.png)"));
    assert!(repo.join("docs/evidence-2026-08-29.png").exists());
    // The README's terminal example is the chart at 80 columns.
    let (chart, _) = stdout(&env, &["--chart", "--width", "80"], &[]);
    let plot: Vec<&str> = chart
        .lines()
        .skip_while(|l| !l.starts_with("5,000"))
        .take_while(|l| !l.is_empty())
        .map(str::trim_end)
        .collect();
    assert!(plot.len() > 10);
    assert!(
        readme.contains(&plot.join("\n")),
        "the README's 80-column chart is stale"
    );
}

#[test]
#[cfg_attr(not(hr_tool_script), ignore = "needs script (util-linux)")]
fn on_a_terminal_the_chart_comes_first_at_the_terminal_width() {
    require_tool("script");
    let env = with_fixture();
    // A pseudo-terminal 60 columns wide (reading files only: nothing is signalled).
    let cmd = format!(
        "stty cols 60; {} evidence; {} evidence --ascii",
        env.headroom_path().display(),
        env.headroom_path().display()
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .env("HEADROOM_HOME", &env.home)
        .env("TERM", "xterm")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n");
    assert!(text.starts_with("used slots vs effective limit"), "{text}");
    let (uni, asc) = text.split_at(text.rfind("used slots vs").unwrap());
    for chart in [uni, asc] {
        let plot: Vec<&str> = chart
            .lines()
            .filter(|l| l.contains(" ┤") || l.contains(" |"))
            .collect();
        assert_eq!(plot.len(), 10, "{chart}");
        assert!(plot.iter().all(|l| l.chars().count() == 60), "{chart}");
        // (On a terminal the summary's first word is painted bold.)
        assert!(
            chart.contains(": 154 rows from"),
            "the summary follows: {chart}"
        );
    }
    assert!(uni.contains('━') && asc.contains('=') && !asc.contains('━'));
}
