//! Command-line shape and bad input: one clear line, the documented exit code, no action.

use predicates::prelude::*;

use crate::support::Env;

#[test]
fn unknown_flag_is_a_usage_error_on_one_line() {
    let env = Env::new();
    let out = env
        .cmd()
        .args(["probe", "--frobnicate"])
        .assert()
        .code(64)
        .get_output()
        .clone();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--frobnicate"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn inverted_and_out_of_range_thresholds_are_usage_errors() {
    let env = Env::new();
    env.cmd()
        .args(["probe", "--warn", "90", "--crit", "80"])
        .assert()
        .code(64)
        .stderr(predicate::str::contains("--warn `90` is above --crit `80`"));
    env.cmd()
        .args(["probe", "--warn", "150"])
        .assert()
        .code(64)
        .stderr(predicate::str::contains("150"));
    env.cmd()
        .args(["limits", "--crit", "abc"])
        .assert()
        .code(64)
        .stderr(predicate::str::contains("abc"));
}

#[test]
fn help_and_version_exit_zero() {
    let env = Env::new();
    env.cmd()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("probe"));
    env.cmd()
        .arg("--version")
        .assert()
        .success()
        .stdout(predicate::str::contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn malformed_config_is_a_usage_error_naming_the_key_and_file() {
    let env = Env::new();
    let cfg = env.path("bad.toml");
    std::fs::write(&cfg, "[probe]\nwarm = 60\n").unwrap();
    env.cmd()
        .args(["probe", "--config"])
        .arg(&cfg)
        .assert()
        .code(64)
        .stderr(predicate::str::contains("warm").and(predicate::str::contains("bad.toml")));
}
