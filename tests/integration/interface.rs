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
