//! Snapshots of what users see: the human screen and the JSON of the main commands on
//! recorded inputs (the incident snapshot, the evidence fixture, a hangs replay), the
//! errors for bad input and a few `--help` pages, each with its exit code. A snapshot
//! fails when one byte of the screen changes; `cargo insta review` (or
//! `INSTA_UPDATE=always`) records the new one for review (CONTRIBUTING.md, "Snapshots").
//! Only what differs from run to run is filtered: the test's own directories and uid, and
//! the instants taken now (where a screen shows one).

use std::path::Path;

use serde_json::Value;

use crate::support::Env;

/// `headroom ARGS` as one screen: the exit code, then stdout and stderr.
fn screen(env: &Env, args: &[&str]) -> String {
    screen_of(env.cmd().args(args))
}

/// `headroom ARGS` at `columns` (`$COLUMNS`, stdout not a terminal), as one screen.
fn screen_at(env: &Env, columns: usize, args: &[&str]) -> String {
    screen_of(env.cmd().env("COLUMNS", columns.to_string()).args(args))
}

fn screen_of(cmd: &mut assert_cmd::Command) -> String {
    let out = cmd.output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().map_or("signal".into(), |c| c.to_string()),
        text(&out.stdout),
        text(&out.stderr)
    )
}

/// The JSON of `headroom --json ARGS` (one object or JSON Lines), each record pretty.
fn json_screen(env: &Env, args: &[&str]) -> String {
    let out = env.cmd().arg("--json").args(args).output().unwrap();
    let records: Vec<String> = serde_json::Deserializer::from_slice(&out.stdout)
        .into_iter::<Value>()
        .map(|v| {
            let v = v.unwrap_or_else(|e| {
                panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stdout))
            });
            serde_json::to_string_pretty(&v).unwrap()
        })
        .collect();
    assert!(!records.is_empty(), "{args:?} printed no JSON");
    format!(
        "exit: {}\n{}\n--- stderr\n{}",
        out.status.code().unwrap_or(-1),
        records.join("\n"),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// An RFC 3339 instant, for the screens that show one taken now.
const NOW: (&str, &str) = (
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)",
    "[NOW]",
);

/// `env`'s directories, then `extra`.
fn filters(env: &Env, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let dir = |p: &Path| regex_escape(&p.display().to_string());
    let mut f = vec![
        (dir(&env.home), "[HOME]".to_string()),
        (dir(env.dir.path()), "[DIR]".to_string()),
        // The test's private uid (the replayed hangs plan a `launchctl` in its domain).
        (format!(r"\b{}\b", env.uid), "[UID]".to_string()),
    ];
    f.extend(extra.iter().map(|(a, b)| (a.to_string(), b.to_string())));
    f
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$#&-~".contains(c);
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// `insta::assert_snapshot!` under `env`'s filters (and `extra`), named `name`.
macro_rules! assert_screen {
    ($env:expr, $name:expr, $text:expr) => {
        assert_screen!($env, $name, $text, &[])
    };
    ($env:expr, $name:expr, $text:expr, $extra:expr) => {{
        let filters = filters($env, $extra);
        let filters: Vec<(&str, &str)> = filters
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        insta::with_settings!({filters => filters, prepend_module_to_snapshot => false, omit_expression => true}, {
            insta::assert_snapshot!(AsRef::<str>::as_ref(&$name), $text);
        });
    }};
}

/// The screen of `headroom ARGS` as `name` and its `--json` output as `name_json`.
fn human_and_json(env: &Env, name: &str, args: &[&str], extra: &[(&str, &str)]) {
    assert_screen!(env, name, screen(env, args), extra);
    assert_screen!(env, &format!("{name}_json"), json_screen(env, args), extra);
}

/// `probe`, `limits` and `reap --dry-run` on the incident Mac at the wall (a replayed
/// reading is stamped now).
#[test]
fn probe_limits_and_reap_on_the_incident_snapshot() {
    let env = Env::new();
    let f = crate::probe::wall_snapshot(&env);
    let f = f.to_str().unwrap();
    for (name, args) in [
        ("probe", vec!["probe", "--snapshot", f]),
        ("limits", vec!["limits", "--snapshot", f]),
        ("reap_dry_run", vec!["reap", "--dry-run", "--snapshot", f]),
    ] {
        human_and_json(&env, name, &args, &[NOW]);
    }
}

/// `limits` and `reap --dry-run` on the incident Mac in a terminal of 60 and 40 columns:
/// each ceiling's source wraps under its row and the reap table keeps its columns, as
/// `probe` and `top` fit theirs (`narrow.rs` holds every width to fitting; these pin how).
#[test]
fn limits_and_reap_in_a_narrow_terminal() {
    let env = Env::new();
    let f = crate::probe::wall_snapshot(&env);
    let f = f.to_str().unwrap();
    for columns in [60, 40] {
        for (name, args) in [
            ("limits", vec!["limits", "--snapshot", f]),
            ("reap_dry_run", vec!["reap", "--dry-run", "--snapshot", f]),
        ] {
            let name = format!("{name}_{columns}_columns");
            assert_screen!(&env, name, screen_at(&env, columns, &args), &[NOW]);
        }
    }
}

/// `top` on a small recorded table: two zombie parents and a few shells.
#[test]
fn top_on_a_recorded_table() {
    let env = Env::new();
    let f = env.path("small.json");
    let ceilings = crate::probe::mac_ceilings(Some(4000), Some(2666), Some(4000), 12);
    std::fs::write(&f, crate::probe::snapshot_json("macos", 4, 6, ceilings)).unwrap();
    let args = ["top", "--snapshot", f.to_str().unwrap()];
    human_and_json(&env, "top", &args, &[NOW]);
}

/// `evidence` on the recorded log of 2026-08-29 (every instant is the log's own).
#[test]
fn evidence_on_the_recorded_log() {
    let env = Env::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/evidence-2026-08-29/evidence.csv");
    std::fs::copy(fixture, env.home.join("evidence.csv")).unwrap();
    human_and_json(&env, "evidence", &["evidence"], &[]);
}

/// `hangs` replaying the recorded rounds (pending, confirmed with its restart plan,
/// cooling down, blocked, the interface unavailable).
#[test]
fn hangs_on_a_replay() {
    let env = Env::new();
    let obs = crate::hangs::write_obs(&env, "obs.json", crate::hangs::scenario());
    let args = ["hangs", "--observations", obs.to_str().unwrap()];
    human_and_json(&env, "hangs", &args, &[NOW]);
}

/// What a mistyped command line and an unreadable input say, on stderr and (with `--json`)
/// as the error object, and the exit code of each.
#[test]
fn errors_for_bad_input() {
    let env = Env::new();
    let missing = env.path("missing.json");
    let missing = missing.to_str().unwrap();
    for (name, args) in [
        (
            "error_missing_snapshot",
            vec!["probe", "--snapshot", missing],
        ),
        (
            "error_json_missing_snapshot",
            vec!["--json", "probe", "--snapshot", missing],
        ),
        ("error_unknown_flag", vec!["limits", "--no-such-flag"]),
        ("error_unknown_command", vec!["prob"]),
        ("error_bad_size", vec!["run", "-l", "lots", "--", "true"]),
        ("error_no_command", vec!["run", "-l", "100M"]),
        (
            "error_no_such_program",
            vec!["run", "-l", "100M", "--", "/no/such/program"],
        ),
    ] {
        assert_screen!(&env, name, screen(&env, &args));
    }
}

/// The help of the commands a user starts with (clap's layout at its default width: the
/// tests run without `COLUMNS`).
#[test]
fn help_of_the_main_commands() {
    let env = Env::new();
    for cmd in ["probe", "reap", "run", "top"] {
        assert_screen!(&env, &format!("help_{cmd}"), screen(&env, &[cmd, "--help"]));
    }
}
