//! One interface across commands (issue 18): exit codes a monitoring system can trust,
//! errors said once in the user's words, and the same shape of help and usage errors for
//! every subcommand.

use predicates::prelude::*;

use crate::support::Env;

fn level_code(level: &str) -> i32 {
    match level {
        "normal" => 0,
        "warning" => 1,
        "critical" => 2,
        other => panic!("unexpected level {other}"),
    }
}

/// A reading that cannot be produced is UNKNOWN (3), never CRITICAL (2), and the OS error is
/// said once.
#[test]
fn probe_and_limits_without_a_reading_are_unknown_and_say_the_cause_once() {
    let env = Env::new();
    for cmd in ["probe", "limits"] {
        let out = env
            .cmd()
            .args([cmd, "--snapshot", "missing.json"])
            .assert()
            .code(3)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("missing.json"), "{err}");
        assert_eq!(err.matches("os error 2").count(), 1, "{cmd}: {err}");
        assert!(out.stdout.is_empty(), "{cmd}: no reading is printed");
    }
    // Control: a readable snapshot gives a reading and its level's code.
    let snap = env.path("s.json");
    std::fs::write(
        &snap,
        crate::probe::snapshot_json(
            "macos",
            100,
            0,
            crate::probe::mac_ceilings(Some(1000), Some(1000), Some(2000), 200),
        ),
    )
    .unwrap();
    env.cmd()
        .args(["probe", "--snapshot"])
        .arg(&snap)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("NORMAL"));
}

/// A state directory that is a regular file: the reading is printed and exits with its own
/// level; one warning line says what was not kept, in the user's words.
#[test]
fn probe_over_a_state_directory_that_is_a_file_exits_with_the_reading_level() {
    let env = Env::new();
    let file = env.path("state-is-a-file");
    std::fs::write(&file, "").unwrap();
    let out = env
        .cmd()
        .env("HEADROOM_HOME", &file)
        .args(["probe", "--json"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let level = report["level"].as_str().unwrap();
    assert_eq!(out.status.code(), Some(level_code(level)));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("headroom: warning:"), "{err}");
    assert!(err.contains("is not a directory"), "{err}");
    assert!(err.contains("not in the history"), "{err}");
    assert_eq!(report["history"], false);
    // Control: with a usable directory there is no warning and the history is kept.
    let out = env.cmd().args(["probe", "--json"]).output().unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["history"], true);
}

#[test]
fn evidence_over_an_unusable_state_directory_is_an_error_not_an_empty_log() {
    let env = Env::new();
    let file = env.path("state-is-a-file");
    std::fs::write(&file, "").unwrap();
    env.cmd()
        .env("HEADROOM_HOME", &file)
        .arg("evidence")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a directory"))
        .stdout(predicate::str::is_empty());
    // Control: a state directory not made yet is an empty log, not an error.
    env.cmd()
        .env("HEADROOM_HOME", env.path("not-yet"))
        .arg("evidence")
        .assert()
        .code(0)
        .stdout(predicate::str::contains("no evidence log yet"));
}

fn repo_file(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn completions_offer_no_hidden_flag_or_command() {
    for file in ["headroom.bash", "_headroom", "headroom.fish"] {
        let text = repo_file(&format!("completions/{file}"));
        for hidden in ["proc-root", "sys-root", "burn-child", "generate"] {
            assert!(!text.contains(hidden), "completions/{file} offers {hidden}");
        }
        // Control: visible flags and commands are offered.
        for shown in ["dry-run", "idle-watch", "snapshot", "interval"] {
            assert!(text.contains(shown), "completions/{file} lacks {shown}");
        }
    }
}

/// `--snapshot` only where it is honoured; the poll period is `--interval` (`--every` an
/// alias); short flags `-n -l -i -d`.
#[test]
fn one_name_per_idea_and_snapshot_only_where_honoured() {
    let env = Env::new();
    for argv in [
        &["calibrate", "--snapshot", "x.json"][..],
        &["run", "--snapshot", "x.json", "--limit", "1G", "--", "true"][..],
        &["evidence", "--snapshot", "x.json"][..],
    ] {
        env.cmd()
            .args(argv)
            .assert()
            .code(64)
            .stderr(predicate::str::contains("unexpected argument `--snapshot`"));
    }
    for sub in ["probe", "limits", "reap", "idle-watch", "top", "watch"] {
        let help = env.cmd().args([sub, "--help"]).output().unwrap();
        let help = String::from_utf8(help.stdout).unwrap();
        assert!(
            help.contains("--snapshot <FILE>"),
            "{sub} does not offer --snapshot"
        );
        assert!(help.contains("Global options:"), "{sub}: {help}");
    }
    for sub in ["watch", "run", "idle-watch", "hangs", "config"] {
        let help = env.cmd().args([sub, "--help"]).output().unwrap();
        let help = String::from_utf8(help.stdout).unwrap();
        assert!(help.contains("-i, --interval <DUR>"), "{sub}: {help}");
    }
    let help = |sub: &str| {
        String::from_utf8(env.cmd().args([sub, "--help"]).output().unwrap().stdout).unwrap()
    };
    assert!(help("reap").contains("-n, --dry-run"));
    assert!(help("hangs").contains("-n, --dry-run"));
    assert!(help("run").contains("-l, --limit <SIZE>"));
    assert!(help("calibrate").contains("-d, --duration <DUR>"));
    assert!(help("idle-watch").contains("-d, --duration <DUR>"));
    // `--every` stays an alias where it was: the same usage check answers in the new name.
    env.cmd()
        .args(["idle-watch", "-d", "10s", "--every", "30s"])
        .assert()
        .code(64)
        .stderr(predicate::str::contains("shorter than --interval `30s`"));
    env.cmd()
        .args(["hangs", "--every", "5s"])
        .assert()
        .code(64)
        .stderr(predicate::str::contains(
            "`--interval` only applies to `--watch`",
        ));
}

#[test]
fn snapshot_dash_reads_standard_input() {
    let env = Env::new();
    let snap = crate::probe::snapshot_json(
        "macos",
        100,
        0,
        crate::probe::mac_ceilings(Some(1000), Some(1000), Some(2000), 200),
    );
    env.cmd()
        .args(["probe", "--json", "--snapshot", "-"])
        .write_stdin(snap)
        .assert()
        .code(0)
        .stdout(predicate::str::contains("\"used\":100"));
    // Control: `-` with nothing on standard input is an empty snapshot, UNKNOWN.
    env.cmd()
        .args(["probe", "--snapshot", "-"])
        .write_stdin("")
        .assert()
        .code(3)
        .stderr(predicate::str::contains("snapshot `-` is empty"));
}

/// `--observations -` reads standard input, as `--snapshot -` does.
#[test]
fn observations_dash_reads_standard_input() {
    let env = Env::new();
    let obs = crate::hangs::write_obs(&env, "obs.json", crate::hangs::scenario());
    let from_file = env
        .cmd()
        .args(["hangs", "--json", "--observations"])
        .arg(&obs)
        .output()
        .unwrap();
    let from_stdin = env
        .cmd()
        .args(["hangs", "--json", "--observations", "-"])
        .write_stdin(std::fs::read(&obs).unwrap())
        .output()
        .unwrap();
    assert_eq!(from_stdin.status.code(), from_file.status.code());
    assert_eq!(from_stdin.stdout, from_file.stdout);
    assert!(!from_file.stdout.is_empty());
    // Control: nothing on standard input is an empty observations file.
    env.cmd()
        .args(["hangs", "--observations", "-"])
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("observations file `-` is empty"));
}

#[test]
fn errors_in_the_users_words() {
    let env = Env::new();
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["run", "--limit", "99999999999999999999", "--", "true"],
            64,
            "too large",
        ),
        (
            &["run", "--limit", "512K", "--", "true"],
            64,
            "did you mean `512M`?",
        ),
        (
            &["run", "--limit", "512B", "--", "true"],
            64,
            "did you mean `512M`?",
        ),
        (
            &["watch", "--interval", "x"],
            64,
            "`x` is not a duration; write it like",
        ),
        (&["run", "--limit", "1G", "echo"], 64, "use `-- echo`"),
        (&["probe", "--jsn"], 64, "did you mean `--json`?"),
        (
            &["run", "--jsonn", "-l", "1G", "--", "true"],
            64,
            "did you mean `--json`? To pass `--jsonn` as a value, use `-- --jsonn`",
        ),
        (&["park", "abc"], 64, "`abc` is not a process id"),
        (&["top", "--pid", "99999999999"], 64, "is not a process id"),
        (&["top", "--pid", "-1"], 64, "is not a process id"),
        (&["watch", "-i", "-1s"], 64, "`-1s` is negative"),
        (
            &["probe", "--color", "sometimes"],
            64,
            "possible values: auto, always, never",
        ),
    ];
    for (argv, code, says) in cases {
        let out = env
            .cmd()
            .args(*argv)
            .assert()
            .code(*code)
            .get_output()
            .clone();
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{argv:?}: {err}");
        assert!(err.contains(says), "{argv:?}: {err}");
        for internal in ["expected number at", "invalid digit", "..=", "?;"] {
            assert!(!err.contains(internal), "{argv:?}: {err}");
        }
    }
    let e = env.cmd().args(["probe", "--jsn"]).output().unwrap();
    assert!(String::from_utf8_lossy(&e.stderr).contains("(see `headroom probe --help`)"));
}

#[cfg(target_os = "linux")]
#[test]
fn run_of_a_directory_says_it_is_a_directory_and_exits_126() {
    let env = Env::new();
    let dir = env.path("a-dir");
    std::fs::create_dir(&dir).unwrap();
    env.cmd()
        .args(["run", "--enforce", "poll", "--limit", "1G", "--"])
        .arg(&dir)
        .assert()
        .code(126)
        .stderr(predicate::str::contains("is a directory"));
    // Control: a file without the execute bit is "cannot be executed", still 126.
    let file = env.path("not-exec");
    std::fs::write(&file, "#!/bin/sh\n").unwrap();
    env.cmd()
        .args(["run", "--enforce", "poll", "--limit", "1G", "--"])
        .arg(&file)
        .assert()
        .code(126)
        .stderr(predicate::str::contains("cannot be executed"));
}

/// Whether `pid` catches `sig` (its `SigCgt` mask in /proc): the condition to wait for
/// before signalling, so the signal does not land before the handler is installed.
#[cfg(target_os = "linux")]
fn catches(pid: i32, sig: i32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (sig - 1)) != 0)
}

/// SIGINT ends every long-running loop the same way: after the round in flight, with its
/// summary, exit 130; SIGTERM the same way with 0. (`hangs --watch` is macOS-only; its loop
/// uses the same `exit::after_stop`.)
#[cfg(target_os = "linux")]
#[test]
fn sigint_and_sigterm_end_the_loops_alike() {
    use crate::support::{json_lines, wait_until};
    let env = Env::new();
    let cases: &[(&[&str], &str, i32, i32)] = &[
        (
            &["idle-watch", "--json", "-d", "10m", "-i", "1m"],
            "summary",
            libc::SIGINT,
            130,
        ),
        (
            &["idle-watch", "--json", "-d", "10m", "-i", "1m"],
            "summary",
            libc::SIGTERM,
            0,
        ),
        (
            &["calibrate", "--json", "-d", "10m"],
            "headroom.calibrate/1",
            libc::SIGINT,
            130,
        ),
        (
            &["calibrate", "--json", "-d", "10m"],
            "headroom.calibrate/1",
            libc::SIGTERM,
            0,
        ),
        (
            &["top", "--json", "--watch", "-i", "10m"],
            "headroom.top/2",
            libc::SIGINT,
            130,
        ),
        (
            &["top", "--json", "--watch", "-i", "10m"],
            "headroom.top/2",
            libc::SIGTERM,
            0,
        ),
        (
            &[
                "watch",
                "--json",
                "--no-hangs",
                "--no-auto-reap",
                "-i",
                "10m",
            ],
            "summary",
            libc::SIGINT,
            130,
        ),
        (
            &[
                "watch",
                "--json",
                "--no-hangs",
                "--no-auto-reap",
                "-i",
                "10m",
            ],
            "summary",
            libc::SIGTERM,
            0,
        ),
    ];
    for (i, (argv, last, sig, code)) in cases.iter().enumerate() {
        let (out, err) = (env.path(&format!("out{i}")), env.path(&format!("err{i}")));
        let mut t = env.spawn_with(env.headroom_path(), argv, Some((&out, &err)));
        wait_until("the stop handler", || catches(t.pid, *sig));
        if argv[0] != "calibrate" {
            wait_until("a first round", || !json_lines(&out).is_empty());
        }
        t.signal(*sig);
        assert_eq!(t.exit_code(), *code, "{argv:?} on signal {sig}");
        let lines = json_lines(&out);
        let end = lines
            .last()
            .unwrap_or_else(|| panic!("{argv:?}: no output"));
        assert!(
            end["type"] == *last || end["schema"] == *last,
            "{argv:?} on signal {sig} ended without its summary: {end}"
        );
    }
}

/// `hangs --observations` is a replay: it writes no event unless `--record-events`, so
/// replaying twice does not duplicate history.
#[test]
fn a_hangs_replay_writes_events_only_when_asked() {
    let env = Env::new();
    let obs = crate::hangs::write_obs(&env, "obs.json", crate::hangs::scenario());
    let events = env.home.join("hangs-events.jsonl");
    for _ in 0..2 {
        env.cmd()
            .args(["hangs", "--observations"])
            .arg(&obs)
            .assert()
            .code(1);
    }
    assert!(!events.exists(), "a replay wrote events unasked");
    // Control: asked, it writes them.
    env.cmd()
        .args(["hangs", "--record-events", "--observations"])
        .arg(&obs)
        .assert()
        .code(1);
    let n = std::fs::read_to_string(&events).unwrap().lines().count();
    assert!(n > 0);
    env.cmd()
        .args(["hangs", "--record-events", "--dry-run", "--observations"])
        .arg(&obs)
        .assert()
        .code(64);
}

/// The README's exit-code table, once, as `exit::TABLE` has it (and every page points to it).
fn readme_exit_table() -> String {
    let mut s = String::from("| Code | Meaning |\n|---|---|\n");
    for (code, meaning) in headroom::testing::exit_table() {
        s.push_str(&format!("| {code} | {meaning} |\n"));
    }
    s
}

#[test]
fn the_readme_documents_the_exit_table_once_and_every_page_points_to_it() {
    let readme = repo_file("README.md");
    let table = readme_exit_table();
    assert_eq!(
        readme.matches(&table).count(),
        1,
        "README.md must hold this table once, under `## Exit codes`:\n{table}"
    );
    assert!(readme.contains("## Exit codes\n"));
    // A dry run exits 0 whatever it found (the table's row 0): every paragraph of the README
    // or the guide that gives a command's exit status says so, none files `--dry-run` under 1.
    let guide = repo_file("docs/GUIDE.md");
    let paras: Vec<&str> = [readme.as_str(), guide.as_str()]
        .into_iter()
        .flat_map(|doc| doc.split("\n\n"))
        .filter(|p| p.starts_with("Exit status:"))
        .collect();
    assert!(!paras.is_empty(), "no `Exit status:` paragraph to check");
    for para in paras {
        let unhappy = para.split("; 1 ").nth(1).unwrap_or("");
        let unhappy = unhappy.split("; 2 ").next().unwrap_or("");
        assert!(
            !unhappy.contains("dry-run"),
            "the docs say a dry run exits 1: {para}"
        );
    }
    for sub in headroom::testing::EXAMPLES.iter().map(|(n, _)| *n) {
        let page = repo_file(&format!("man/headroom-{sub}.1"));
        assert!(page.contains("README under \"Exit codes\""), "{sub}");
        assert!(
            page.contains(".SH \"EXIT STATUS\"") && page.contains(".SH EXAMPLES"),
            "{sub}"
        );
        assert!(!page.contains(".SH EXTRA"), "{sub}");
    }
}

/// Every visible subcommand, and each action of those that take one as a positional value
/// (`login-item status`, `schema probe`), as a user would type it.
fn every_command_line_prefix() -> Vec<Vec<String>> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    for sub in headroom::testing::full_command().get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let name = sub.get_name().to_string();
        out.push(vec![name.clone()]);
        for a in sub.get_positionals() {
            for v in a.get_possible_values().iter().filter(|v| !v.is_hide_set()) {
                out.push(vec![name.clone(), v.get_name().to_string()]);
            }
        }
    }
    if out.iter().any(|p| p[0] == "schema") {
        out.push(vec!["schema".into(), "probe".into()]);
    }
    let top = headroom::testing::Cli::command();
    assert!(top.get_subcommands().filter(|s| !s.is_hide_set()).count() >= 20);
    out
}

/// The published JSON Schema of the error object, closed, compiled by a real validator.
fn error_validator() -> crate::contract::Validator {
    crate::contract::validator("headroom.error/1")
}

/// Every visible subcommand (and action), one table: its help ends with two or three
/// examples that name it; an unknown flag is a one-line usage error (64) with a suggestion
/// and the subcommand's own help, and with `--json` also one error object on stdout that
/// validates against `headroom.error/1`; a huge argument never makes a huge stderr line.
#[test]
fn every_subcommand_has_examples_suggests_on_a_typo_and_clips_a_huge_argument() {
    let env = Env::new();
    let huge = "x".repeat(100_000);
    let errors = error_validator();
    let prefixes = every_command_line_prefix();
    assert!(
        prefixes.iter().any(|p| p == &["login-item", "status"]),
        "{prefixes:?}"
    );
    for prefix in &prefixes {
        let sub = &prefix[0];
        let what = prefix.join(" ");
        if prefix.len() == 1 {
            let out = env.cmd().args([sub, "--help"]).output().unwrap();
            assert_eq!(out.status.code(), Some(0), "{sub} --help");
            let help = String::from_utf8(out.stdout).unwrap();
            let examples = help
                .split("Examples:\n")
                .nth(1)
                .unwrap_or_else(|| panic!("{sub} --help has no examples: {help}"));
            let lines = examples
                .lines()
                .take_while(|l| !l.is_empty())
                .filter(|l| !l.trim_start().starts_with('#') && l.contains("headroom "))
                .count();
            assert!((2..=3).contains(&lines), "{sub}: {lines} examples");
            assert!(
                examples.contains(&format!("headroom {sub} ")),
                "{sub}: {examples}"
            );
            assert!(help.contains("Exit codes:"), "{sub}");
        }

        let out = env.cmd().args(prefix).arg("--jsonn").output().unwrap();
        assert_eq!(out.status.code(), Some(64), "{what} --jsonn");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.contains("did you mean `--json`?"), "{what}: {err}");
        assert!(
            err.contains(&format!("(see `headroom {sub} --help`)")),
            "{what}: {err}"
        );

        for argv in [vec![huge.as_str()], vec!["--config", huge.as_str()]] {
            let out = env.cmd().args(prefix).args(&argv).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                out.status.code() != Some(0) || sub == "login-item",
                "{what}"
            );
            assert_clipped(&what, &err);
        }

        let out = env
            .cmd()
            .args(prefix)
            .args(["--json", "--jsonn"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(64), "{what} --json --jsonn");
        if sub == "mcp" {
            // Its standard output carries the protocol's messages only.
            assert!(out.stdout.is_empty(), "{what}");
            continue;
        }
        // `run`'s standard output is its command's: its records go to standard error.
        let stream = if sub == "run" { out.stderr } else { out.stdout };
        let stream = String::from_utf8(stream).unwrap();
        let last = stream.lines().last().unwrap_or_default();
        assert!(
            sub == "run" || stream.lines().count() == 1,
            "{what}: {stream}"
        );
        let obj: serde_json::Value = serde_json::from_str(last).unwrap();
        let bad = crate::contract::errors(&errors, &obj);
        assert!(bad.is_empty(), "{what}: {obj} {bad:?}");
        assert_eq!(obj["exit_code"], 64, "{what}: {obj}");
    }
    // Control: the validator refuses an error object that lost its exit code.
    let mangled = serde_json::json!({"schema": "headroom.error/1", "type": "error", "error": "x"});
    assert!(!crate::contract::errors(&errors, &mangled).is_empty());
}

fn assert_clipped(what: &str, err: &str) {
    for line in err.lines() {
        assert!(
            line.chars().count() <= 1000,
            "{what}: a {}-character line",
            line.len()
        );
    }
    assert!(err.len() < 4000, "{what}: {} bytes of stderr", err.len());
}

/// A 100,000-character value to every flag that takes one, on every subcommand: the error
/// (or warning) echoes it cut, never 100 KB of stderr. Acting commands get `--dry-run`
/// (and `run` a harmless command) so nothing is signalled.
#[test]
fn a_huge_value_to_any_flag_is_echoed_cut() {
    let env = Env::new();
    let huge = "x".repeat(100_000);
    let mut tried = 0;
    for sub in headroom::testing::full_command().get_subcommands() {
        let name = sub.get_name();
        if sub.is_hide_set() || name == "help" || name == "mcp" {
            continue;
        }
        for a in sub.get_arguments() {
            let Some(long) = a.get_long() else { continue };
            if a.is_hide_set() || !a.get_action().takes_values() || a.is_positional() {
                continue;
            }
            let mut cmd = env.cmd();
            cmd.arg(name);
            match name {
                "reap" | "hangs" => {
                    cmd.arg("-n");
                }
                "run" if long != "limit" => {
                    cmd.args(["-l", "1G"]);
                }
                _ => {}
            }
            cmd.arg(format!("--{long}")).arg(&huge);
            match name {
                "run" => {
                    cmd.args(["--", "true"]);
                }
                "log-probe" => {
                    cmd.arg(env.home.as_os_str());
                }
                "park" | "wake" | "park-tree" | "wake-tree" => {
                    cmd.arg("1");
                }
                _ => {}
            }
            let out = cmd
                .timeout(std::time::Duration::from_secs(60))
                .output()
                .unwrap();
            assert_clipped(
                &format!("{name} --{long}"),
                &String::from_utf8_lossy(&out.stderr),
            );
            tried += 1;
        }
    }
    assert!(tried >= 40, "only {tried} flags tried");
}

/// Whether the formula and the README tell the same, true story: a stable `url` only with a
/// tag that exists (`tag_exists`), and the README's install command the one that works.
fn formula_agrees(
    formula: &str,
    readme: &str,
    tag_exists: &dyn Fn(&str) -> bool,
) -> Result<(), String> {
    // The stable block `scripts/release.sh formula` writes: `version "X"` and a `url` per
    // platform (the archives of tag vX); `tag:` for a source url. A `url` inside `head do`
    // is the head's.
    let mut in_head = false;
    let mut stable_url = false;
    let mut tag = None;
    for l in formula.lines() {
        let t = l.trim();
        if t == "head do" {
            in_head = true;
        } else if in_head && l.starts_with("  end") {
            in_head = false;
        } else if !in_head && t.starts_with("url ") {
            stable_url = true;
        }
        if let Some(v) = t.strip_prefix("version \"") {
            tag = Some(format!("v{}", v.trim_end_matches('"')));
        }
        if let Some(t) = t.strip_prefix("tag:") {
            tag = Some(t.trim().trim_matches(|c| c == '"' || c == ',').to_string());
        }
    }
    let head = formula
        .lines()
        .any(|l| l.trim_start().starts_with("head ") || l.trim() == "head do");
    let installs: Vec<&str> = readme
        .lines()
        .map(str::trim)
        // Only headroom's own install: the README also installs SwiftBar with brew.
        .filter(|l| l.starts_with("brew install") && l.contains("headroom"))
        .collect();
    if installs.is_empty() {
        return Err("the README gives no `brew install` command".into());
    }
    match (stable_url, tag) {
        (true, Some(tag)) if !tag_exists(&tag) => Err(format!(
            "the formula's stable url names tag `{tag}`, which is not in the repository"
        )),
        (true, None) => Err("the formula has a stable url without a tag".into()),
        (true, Some(_)) => Ok(()),
        (false, _) if !head => Err("the formula has neither a stable url nor a head".into()),
        (false, _) => match installs.iter().find(|l| !l.contains("--HEAD")) {
            Some(l) => Err(format!(
                "the formula is head-only but the README says `{l}`"
            )),
            None => Ok(()),
        },
    }
}

#[test]
fn the_formula_and_the_readme_agree_on_how_to_install() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let tag_exists = |tag: &str| {
        std::process::Command::new("git")
            .args(["-C", repo.to_str().unwrap(), "rev-parse", "-q", "--verify"])
            .arg(format!("refs/tags/{tag}"))
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let formula = repo_file("Formula/headroom.rb");
    let readme = repo_file("README.md");
    formula_agrees(&formula, &readme, &tag_exists).unwrap();
    // Controls: what this round fixed is caught.
    let stable = "  url \"https://github.com/headroom-cli/headroom.git\",\n      tag: \"v0.1.0\"\n  head \"x\"\n";
    let e = formula_agrees(stable, "brew install headroom\n", &|_| false).unwrap_err();
    assert!(e.contains("not in the repository"), "{e}");
    assert!(formula_agrees(stable, "brew install headroom\n", &|_| true).is_ok());
    let e = formula_agrees("  head \"x\"\n", "brew install headroom\n", &|_| true).unwrap_err();
    assert!(e.contains("head-only"), "{e}");
    // The shape release.sh writes: a version and per-platform archives, a head block.
    let archives = "  version \"0.2.0\"\n  on_macos do\n    on_arm do\n      url \"https://x/v0.2.0/a.tar.gz\"\n    end\n  end\n  head do\n    url \"x.git\", branch: \"main\"\n  end\n";
    assert!(formula_agrees(archives, "brew install headroom\n", &|t| t == "v0.2.0").is_ok());
    let e = formula_agrees(archives, "brew install headroom\n", &|_| false).unwrap_err();
    assert!(e.contains("tag `v0.2.0`"), "{e}");
    let head_only = "  head do\n    url \"x.git\", branch: \"main\"\n  end\n";
    let e = formula_agrees(head_only, "brew install headroom\n", &|_| true).unwrap_err();
    assert!(e.contains("head-only"), "{e}");
    assert!(formula_agrees(head_only, "brew install --HEAD headroom\n", &|_| true).is_ok());
}

/// `run -q` leaves out the closing summary line; without it the line is there.
#[cfg(target_os = "linux")]
#[test]
fn run_quiet_silences_the_closing_summary() {
    let env = Env::new();
    env.cmd()
        .args(["run", "-q", "--enforce", "poll", "-l", "1G", "--", "true"])
        .assert()
        .code(0)
        .stderr(predicate::str::is_empty());
    env.cmd()
        .args(["run", "--enforce", "poll", "-l", "1G", "--", "true"])
        .assert()
        .code(0)
        .stderr(predicate::str::contains("the command exited 0; exit 0"));
}

/// `top --watch` refreshes; piped, each round is a plain table (no screen control codes).
#[cfg(target_os = "linux")]
#[test]
fn top_watch_repeats_plain_tables_when_piped_and_needs_the_live_machine() {
    use crate::support::wait_until;
    let env = Env::new();
    let (out, err) = (env.path("top.out"), env.path("top.err"));
    let mut t = env.spawn_with(
        env.headroom_path(),
        &["top", "--watch", "-i", "200ms"],
        Some((&out, &err)),
    );
    let tables = || {
        std::fs::read_to_string(&out)
            .unwrap_or_default()
            .matches("PID")
            .count()
    };
    wait_until("two refreshed tables", || tables() >= 2);
    t.signal(libc::SIGTERM);
    assert_eq!(t.exit_code(), 0);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(!text.contains('\x1b'), "control codes when piped: {text:?}");
    env.cmd().args(["top", "-i", "2s"]).assert().code(64);
    let snap = env.path("s.json");
    env.cmd()
        .args(["snapshot", "-o"])
        .arg(&snap)
        .assert()
        .success();
    env.cmd()
        .args(["top", "--watch", "--snapshot"])
        .arg(&snap)
        .assert()
        .code(64)
        .stderr(predicate::str::contains("one instant"));
}

/// Counted nouns users see every day, which must go through `output::plural` so that 1 is
/// singular ("1 parent holds", "1 row", "1 zombie").
const COUNTED: &[&str] = &[
    "zombies",
    "rows",
    "parents",
    "samples",
    "processes",
    "lines",
    "rounds",
    "files",
    "apps",
    "cleanups",
    "errors",
    "events",
    "trees",
    "readings",
    "slots",
    "polls",
    "fields",
    "tasks",
];

/// The format strings in `text` that put a bare count before a plural noun (`"{} rows"`,
/// `"{n} parents would"`), which reads "1 rows" at 1. Not flagged: a constant (`{MAX} apps`),
/// a denominator (`of {limit} slots`), a possessive (`parents'`), a rate (`slots/min`).
fn bare_counts(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines().filter(|l| l.contains('"')) {
        let t = line.trim_start();
        if t.starts_with("//") {
            continue;
        }
        let mut from = 0;
        while let Some(i) = line[from..].find("} ").map(|i| i + from) {
            from = i + 2;
            let Some(open) = line[..i].rfind('{') else {
                continue;
            };
            let inside = &line[open + 1..i];
            if inside.contains('}')
                || inside.chars().any(|c| c.is_ascii_uppercase())
                || line[..open].ends_with("of ")
            {
                continue;
            }
            let rest = &line[i + 2..];
            let word: String = rest.chars().take_while(char::is_ascii_alphabetic).collect();
            let after = rest[word.len()..].chars().next();
            let singular = COUNTED
                .iter()
                .any(|c| c.strip_suffix('s').is_some_and(|one| word == one));
            // `process(es)`, `row(s)`: the plural hedged instead of chosen.
            let hedged = singular
                && (rest[word.len()..].starts_with("(s)")
                    || rest[word.len()..].starts_with("(es)"))
                || word == "process" && rest[word.len()..].starts_with("(es)");
            if (COUNTED.contains(&word.as_str()) && !matches!(after, Some('\'' | '/'))) || hedged {
                found.push(line.trim().to_string());
            }
        }
    }
    found
}

#[test]
fn counted_nouns_go_through_the_plural_helper() {
    let mut bad = Vec::new();
    for src in crate::support::source_roots() {
        let tests = crate::support::test_only_files(&src);
        for f in crate::support::files_under(&src) {
            if f.extension().is_none_or(|x| x != "rs") || tests.contains(&f) {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            for l in bare_counts(code) {
                bad.push(format!("{}: {l}", f.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "say these with output::plural:\n{}",
        bad.join("\n")
    );
    // Controls: what the scan must catch, and what it must let through.
    assert_eq!(
        bare_counts(r#"format!("{n} parents would be terminated.")"#).len(),
        1
    );
    assert_eq!(
        bare_counts(r#"format!("{}: {} rows ({})", a, b, c)"#).len(),
        1
    );
    assert_eq!(bare_counts(r#"format!("{n} process(es) ended")"#).len(), 1);
    assert_eq!(bare_counts(r#"format!("{n} row(s)")"#).len(), 1);
    assert_eq!(
        bare_counts(r#"format!("{polls} polls; {} fields")"#).len(),
        2
    );
    assert!(bare_counts(r#"format!("{MAX_TRACKED} apps were restarted")"#).is_empty());
    assert!(bare_counts(r#"format!("{used} of {limit} slots")"#).is_empty());
    assert!(bare_counts(r#"format!("{} parents' signals", n)"#).is_empty());
    assert!(bare_counts(r#"format!("{g:+.1} slots/min")"#).is_empty());
}
