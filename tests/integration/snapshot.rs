//! `snapshot` and `--snapshot`: a recording reproduces the report it was recorded from.

use crate::schema;
use crate::support::{Env, count_uid};

#[test]
fn a_recording_reproduces_the_live_report() {
    let env = Env::new();
    let leaker = env.named_fixture("agency-snap");
    let mut tree = env.spawn(&leaker, &["leak", "--zombies", "12"]);
    tree.ready();
    let rec = env.path("rec.json");
    let live = env
        .cmd()
        .args(["probe", "--json", "--no-history", "--record"])
        .arg(&rec)
        .output()
        .unwrap();
    let replay = env
        .cmd()
        .args(["probe", "--json", "--snapshot"])
        .arg(&rec)
        .output()
        .unwrap();
    assert_eq!(live.status.code(), replay.status.code());
    let a: serde_json::Value = serde_json::from_slice(&live.stdout).unwrap();
    let b: serde_json::Value = serde_json::from_slice(&replay.stdout).unwrap();
    assert_eq!(a, b);
    let limits_live = env
        .cmd()
        .args(["limits", "--json"])
        .arg("--snapshot")
        .arg(&rec)
        .output()
        .unwrap();
    let l: schema::Limits = schema::read(&limits_live.stdout);
    assert_eq!(l.used, a["used"].as_u64().unwrap());
}

#[test]
fn snapshot_command_writes_a_complete_table_atomically() {
    let env = Env::new();
    let leaker = env.named_fixture("agency-snap2");
    let sleeper = env.named_fixture("copilot-snap2");
    let mut tree = env.spawn(
        &leaker,
        &[
            "leak",
            "--zombies",
            "5",
            "--session",
            sleeper.to_str().unwrap(),
            "idle",
            "--log-dir",
            "/tmp/x",
            "--",
        ],
    );
    let ready = tree.ready();
    let session = ready["session"].as_i64().unwrap() as i32;
    let before = count_uid(env.uid);
    let out = env.path("snap.json");
    env.cmd()
        .args(["snapshot", "-o"])
        .arg(&out)
        .assert()
        .success()
        .stdout("");
    let s: schema::Snapshot = schema::read(&std::fs::read(&out).unwrap());
    assert_eq!(s.schema, "headroom.snapshot/1");
    assert_eq!(s.os, "linux");
    let mine = s.processes.iter().filter(|p| p.uid == env.uid).count() as u64;
    if env.private {
        assert_eq!(mine, before.0 + 1);
    }
    let zombies = s
        .processes
        .iter()
        .filter(|p| p.state == "zombie" && p.uid == env.uid)
        .count();
    assert!(zombies >= 5);
    // The session child's arguments are recorded (the liveness guard reads --log-dir).
    let sess = s.processes.iter().find(|p| p.pid == session).unwrap();
    assert_eq!(sess.argv.as_deref().unwrap().last().unwrap(), "/tmp/x");
    assert!(s.ceilings.iter().any(|c| c.source == "rlimit-nproc"));
    // Nothing half-written: a failed write leaves no file and no temp file behind.
    let missing = env.path("nodir/snap.json");
    env.cmd()
        .args(["snapshot", "-o"])
        .arg(&missing)
        .assert()
        .code(2);
    assert!(!env.path("nodir").exists());
}
