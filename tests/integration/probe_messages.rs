//! What `probe` says when part of the job fails or the flags disagree (issue 29 item 7): a
//! file that cannot be written is not "no reading", and `--json` never loses silently to
//! `--format`.

use crate::probe::{mac_ceilings, snapshot_json};
use crate::support::Env;

/// A normal-level reading (100 of 4,000 slots), so that exit 0 is the control.
fn normal_snapshot(env: &Env) -> std::path::PathBuf {
    let f = env.path("normal.json");
    let ceilings = mac_ceilings(Some(4000), Some(4000), Some(6000), 100);
    std::fs::write(&f, snapshot_json("macos", 100, 0, ceilings)).unwrap();
    f
}

#[test]
fn an_output_file_that_cannot_be_written_is_an_io_error_and_the_reading_is_still_given() {
    let env = Env::new();
    let snap = normal_snapshot(&env);
    let out = env
        .cmd()
        .args(["probe", "--format", "prometheus", "--snapshot"])
        .arg(&snap)
        .args(["-o", "/nonexistent/dir/x.prom"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(2),
        "an I/O error, not UNKNOWN: {stderr}"
    );
    assert!(
        stderr.contains("cannot write `/nonexistent/dir/x.prom`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the reading (NORMAL) was taken"),
        "{stderr}"
    );
    assert!(!stderr.contains("no reading"), "{stderr}");
    assert!(
        stdout.contains("headroom_level{uid=\"501\"} 0\n"),
        "{stdout}"
    );
    // Control: a writable FILE gets the reading, stdout stays empty, the exit is the level.
    let prom = env.path("x.prom");
    let out = env
        .cmd()
        .args(["probe", "--format", "prometheus", "--snapshot"])
        .arg(&snap)
        .arg("-o")
        .arg(&prom)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let text = std::fs::read_to_string(&prom).unwrap();
    assert!(text.contains("headroom_level{uid=\"501\"} 0\n"), "{text}");
}

#[test]
fn with_json_an_unwritable_output_file_leaves_the_report_the_one_document_on_stdout() {
    let env = Env::new();
    let snap = normal_snapshot(&env);
    let out = env
        .cmd()
        .args(["probe", "--json", "--snapshot"])
        .arg(&snap)
        .args(["-o", "/nonexistent/dir/x.json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "an I/O error: {stderr}");
    assert!(
        stderr.contains("cannot write `/nonexistent/dir/x.json`"),
        "{stderr}"
    );
    // One JSON document, the report: a second (the error object) would break a reader that
    // parses stdout as one value.
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("stdout is not one JSON document ({e}): {stdout}");
    });
    assert_eq!(doc["schema"], "headroom.probe/2", "{stdout}");
    // Control: a failure with nothing on stdout yet (an unreadable snapshot) still gets its
    // error object there.
    let out = env
        .cmd()
        .args(["probe", "--json", "--snapshot"])
        .arg(env.path("missing.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!("stdout is not one JSON document ({e}): {stdout}");
    });
    assert_eq!(doc["schema"], "headroom.error/1", "{stdout}");
}

#[test]
fn json_with_another_format_is_refused_as_a_usage_error() {
    let env = Env::new();
    let snap = normal_snapshot(&env);
    for format in ["human", "prometheus"] {
        let out = env
            .cmd()
            .args(["probe", "--json", "--format", format, "--snapshot"])
            .arg(&snap)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{format}: {stderr}");
        assert!(
            stderr.contains(&format!("--json cannot be used with --format {format}")),
            "{stderr}"
        );
        // The refusal is the only thing on stdout: JSON, as --json asked.
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["exit_code"], 64);
    }
    // Controls: --json with --format json, and --format human alone, both read.
    let out = env
        .cmd()
        .args(["probe", "--json", "--format", "json", "--snapshot"])
        .arg(&snap)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["type"], "probe");
    let out = env
        .cmd()
        .args(["probe", "--format", "human", "--snapshot"])
        .arg(&snap)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("NORMAL"));
}

#[test]
fn a_missing_config_file_is_a_usage_error_and_a_file_naming_its_keys() {
    let env = Env::new();
    let snap = normal_snapshot(&env);
    let out = env
        .cmd()
        .arg("--config")
        .arg(env.path("none.toml"))
        .args(["probe", "--snapshot"])
        .arg(&snap)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{stderr}");
    assert!(stderr.contains("none.toml` does not exist"), "{stderr}");
    let inverted = env.path("inverted.toml");
    std::fs::write(&inverted, "[probe]\nwarn = 80\ncrit = 60\n").unwrap();
    let out = env
        .cmd()
        .arg("--config")
        .arg(&inverted)
        .args(["probe", "--snapshot"])
        .arg(&snap)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(64), "{stderr}");
    assert!(
        stderr.contains("`[probe] warn = 80` is above `[probe] crit = 60`"),
        "{stderr}"
    );
    assert!(stderr.contains("inverted.toml"), "{stderr}");
    assert!(!stderr.contains("--warn"), "no flag was typed: {stderr}");
    // Control: the same file in order reads.
    std::fs::write(&inverted, "[probe]\nwarn = 60\ncrit = 80\n").unwrap();
    env.cmd()
        .arg("--config")
        .arg(&inverted)
        .args(["probe", "--snapshot"])
        .arg(&snap)
        .assert()
        .code(0);
}
