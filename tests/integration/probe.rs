//! `probe` against real zombies (Linux) and against recorded snapshots.

use predicates::prelude::*;
use serde_json::json;

use crate::schema;
use crate::support::Env;
#[cfg(target_os = "linux")]
use crate::support::count_uid;

fn probe_json(env: &Env, extra: &[&str]) -> (schema::Probe, i32) {
    let out = env
        .cmd()
        .args(["probe", "--json"])
        .args(extra)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    assert!(
        code <= 3,
        "probe failed ({code}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (schema::read(&out.stdout), code)
}

/// A snapshot with `live` processes and one parent holding `zombies`, for `uid` 501.
pub fn snapshot_json(os: &str, live: usize, zombies: usize, ceilings: serde_json::Value) -> String {
    let proc_ = |pid: usize, ppid: usize, state: &str, name: &str| {
        json!({"pid": pid, "ppid": ppid, "uid": 501, "state": state, "start_time": 1000 + pid,
               "name": name, "pgid": pid, "sid": pid, "threads": 1, "cpu_ns": 0, "footprint_bytes": 4096})
    };
    let mut procs = vec![proc_(1, 0, "sleeping", "launchd")];
    procs[0]["uid"] = json!(0);
    procs.push(proc_(100, 1, "sleeping", "agency"));
    for i in 0..zombies {
        procs.push(proc_(10_000 + i, 100, "zombie", "send-telemetry"));
    }
    for i in 0..live.saturating_sub(1) {
        procs.push(proc_(50_000 + i, 1, "sleeping", "zsh"));
    }
    json!({"schema": "headroom.snapshot/1", "os": os, "taken_at_ms": 1_788_043_361_000i64,
           "self_pid": 50_000, "uid": 501, "processes": procs, "ceilings": ceilings, "memory": null})
    .to_string()
}

pub fn mac_ceilings(
    per_uid: Option<i64>,
    rlimit: Option<i64>,
    maxproc: Option<i64>,
    in_use: u64,
) -> serde_json::Value {
    json!([
        {"source": "per-uid", "value": per_uid, "scope": "user", "origin": "sysctl kern.maxprocperuid"},
        {"source": "rlimit-nproc", "value": rlimit, "scope": "user", "origin": "getrlimit(RLIMIT_NPROC)"},
        {"source": "system-wide", "value": maxproc, "scope": "shared", "in_use": in_use, "origin": "sysctl kern.maxproc"},
    ])
}

#[test]
#[cfg(target_os = "linux")]
fn probe_reports_real_zombies_of_a_fixture_parent_exactly() {
    let env = Env::new();
    let leaker = env.named_fixture("agency-probe");
    let mut tree = env.spawn(&leaker, &["leak", "--zombies", "37"]);
    let ready = tree.ready();
    let pid = ready["pid"].as_i64().unwrap() as i32;
    let before = count_uid(env.uid);
    let (r, _) = probe_json(&env, &["--no-history"]);
    let after = count_uid(env.uid);
    assert_eq!(r.schema, "headroom.probe/2");
    assert!(
        r.top_parents.contains(&schema::TopParent {
            pid,
            name: "agency-probe".into(),
            zombies: 37
        }),
        "{:?}",
        r.top_parents
    );
    // The probe itself is one more process (and task) of the user while it runs.
    if env.private {
        assert_eq!(
            before, after,
            "the uid is private, its processes must not change"
        );
        assert_eq!(r.processes, before.0 + 1);
        assert_eq!(r.tasks, Some(before.1 + 1));
        assert_eq!(r.zombies, 37);
    } else {
        assert!(r.processes > before.0.min(after.0) && r.processes <= before.0.max(after.0) + 1);
        assert!(r.zombies >= 37);
    }
    assert_eq!(r.used, r.tasks.unwrap());
    assert_eq!(r.uid, env.uid);
    drop(tree);
}

/// macOS has no subreaper for the fixture's supervisor: the test starts the leaker itself,
/// owns it, and ends it by its pid (its zombies then go to launchd, which reaps them).
#[test]
#[cfg(target_os = "macos")]
fn probe_reports_real_zombies_of_a_leaking_parent_exactly_on_macos() {
    use std::io::BufRead;
    use std::process::{Child, Command, Stdio};
    struct Owned(Child);
    impl Drop for Owned {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let env = Env::new();
    let leaker = env.named_fixture("agency-probe");
    let mut child = Owned(
        Command::new(&leaker)
            .args(["leak", "--zombies", "37"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    std::io::BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let ready: serde_json::Value =
        serde_json::from_str(line.trim().strip_prefix("ready ").unwrap()).unwrap();
    let pid = ready["pid"].as_i64().unwrap() as i32;
    assert_eq!(pid as u32, child.0.id());
    let (r, _) = probe_json(&env, &["--no-history"]);
    assert!(
        r.top_parents.contains(&schema::TopParent {
            pid,
            name: "agency-probe".into(),
            zombies: 37
        }),
        "{:?}",
        r.top_parents
    );
    assert!(r.zombies >= 37, "{r:?}");
}

#[test]
fn trend_appears_after_three_readings_and_no_history_leaves_no_file() {
    let env = Env::new();
    env.cmd()
        .args(["probe", "--json", "--no-history"])
        .assert()
        .code(predicate::in_iter([0, 1, 2]));
    assert!(!env.home.join("readings.json").exists());
    let mut last = None;
    for _ in 0..3 {
        last = Some(probe_json(&env, &[]).0);
    }
    let r = last.unwrap();
    assert!(r.history);
    assert_eq!(r.trend_samples, 3);
    assert!(env.home.join("readings.json").exists());
}

#[test]
fn exit_codes_follow_the_level_driven_by_thresholds() {
    let env = Env::new();
    // Usage here is a tiny fraction of a large limit.
    env.cmd()
        .args(["probe", "--no-history"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("NORMAL"));
    env.cmd()
        .args(["probe", "--no-history", "--warn", "0.0001", "--crit", "100"])
        .assert()
        .code(1)
        .stdout(predicate::str::contains("WARNING"));
    env.cmd()
        .args([
            "probe",
            "--no-history",
            "--warn",
            "0.0001",
            "--crit",
            "0.0001",
        ])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("CRITICAL"));
}

#[test]
fn exit_codes_from_snapshots_including_unknown() {
    let env = Env::new();
    let cases = [
        (
            100,
            mac_ceilings(Some(4000), Some(4000), Some(6000), 100),
            0,
            "normal",
        ),
        (
            2100,
            mac_ceilings(Some(4000), Some(4000), None, 2100),
            1,
            "warning",
        ),
        (
            2744,
            mac_ceilings(Some(4000), Some(2666), Some(4000), 2744),
            2,
            "critical",
        ),
        (2744, mac_ceilings(None, Some(0), None, 2744), 3, "unknown"),
    ];
    for (i, (live, ceilings, code, level)) in cases.into_iter().enumerate() {
        let f = env.path(&format!("snap-{i}.json"));
        std::fs::write(&f, snapshot_json("macos", live, 0, ceilings)).unwrap();
        let out = env
            .cmd()
            .args(["probe", "--json", "--snapshot"])
            .arg(&f)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(code),
            "{level}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r: schema::Probe = schema::read(&out.stdout);
        assert_eq!(r.level, level);
        if level == "unknown" {
            assert_eq!(
                (r.limit, r.usage_pct, r.free_slots, r.limit_source),
                (None, None, None, None)
            );
        }
    }
}

/// The incident Mac at the wall (706 processes, 2,038 zombies, RLIMIT_NPROC 2,666 binding),
/// written as a snapshot file in `env`'s scratch directory.
pub fn wall_snapshot(env: &Env) -> std::path::PathBuf {
    let f = env.path("wall.json");
    std::fs::write(
        &f,
        snapshot_json(
            "macos",
            706,
            2038,
            mac_ceilings(Some(4000), Some(2666), Some(4000), 2744),
        ),
    )
    .unwrap();
    f
}

#[test]
fn mac_incident_replays_on_linux_with_rlimit_binding() {
    let env = Env::new();
    let f = wall_snapshot(&env);
    let out = env
        .cmd()
        .args(["probe", "--json", "--snapshot"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let r: schema::Probe = schema::read(&out.stdout);
    assert_eq!((r.processes, r.zombies, r.tasks), (2744, 2038, None));
    assert_eq!(
        (r.limit, r.limit_source.as_deref(), r.free_slots),
        (Some(2666), Some("rlimit-nproc"), Some(0))
    );
    assert_eq!(r.usage_pct, Some(102.93));
    assert_eq!(
        r.top_parents,
        vec![schema::TopParent {
            pid: 100,
            name: "agency".into(),
            zombies: 2038
        }]
    );
    assert!(
        !r.history,
        "a replay neither reads nor writes the live history"
    );
    assert!(!env.home.join("readings.json").exists());
    let human = env
        .cmd()
        .args(["probe", "--snapshot"])
        .arg(&f)
        .output()
        .unwrap();
    let text = String::from_utf8(human.stdout).unwrap();
    assert!(
        text.contains(
            "2,744 of 2,666 process slots used, 0 free; the binding limit is rlimit-nproc"
        ),
        "{text}"
    );
}

#[test]
fn prometheus_format_to_a_file_atomically() {
    let env = Env::new();
    let f = wall_snapshot(&env);
    let prom = env.path("headroom.prom");
    env.cmd()
        .args(["probe", "--format", "prometheus", "--snapshot"])
        .arg(&f)
        .arg("-o")
        .arg(&prom)
        .assert()
        .code(2)
        .stdout("");
    let text = std::fs::read_to_string(&prom).unwrap();
    // The whole exposition: every gauge with its HELP and TYPE, a value only where known
    // (no tasks on macOS, no trend in a replay).
    insta::with_settings!({prepend_module_to_snapshot => false, omit_expression => true}, {
        insta::assert_snapshot!("probe_prometheus", text);
    });
}

#[test]
fn unwritable_state_dir_is_a_warning_and_the_reading_its_level() {
    let env = Env::new();
    let blocker = env.path("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let out = env
        .cmd()
        .env("HEADROOM_HOME", blocker.join("state"))
        .args(["probe", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("warning") && err.contains("not-a-dir/state"),
        "{err}"
    );
    let r: schema::Probe = schema::read(&out.stdout);
    assert!(!r.history);
    let code = ["normal", "warning", "critical", "unknown"]
        .iter()
        .position(|l| r.level == *l)
        .unwrap();
    assert_eq!(out.status.code(), Some(code as i32), "the reading's level");
}

#[test]
fn bad_snapshot_files_are_one_line_errors_with_exit_3_unknown() {
    let env = Env::new();
    let empty = env.path("empty.json");
    std::fs::write(&empty, "").unwrap();
    let bad = env.path("bad.json");
    std::fs::write(
        &bad,
        "{\"schema\": \"headroom.snapshot/1\", \"os\": \"linux\", \"processes\": [",
    )
    .unwrap();
    let other = env.path("other.json");
    std::fs::write(&other, "{\"schema\": \"headroom.probe/2\"}").unwrap();
    for (path, needle) in [
        (env.path("missing.json"), "cannot read snapshot"),
        (empty, "is empty"),
        (bad, "is not valid JSON"),
        (other, "headroom.probe/2"),
    ] {
        for cmd in ["probe", "limits"] {
            let out = env
                .cmd()
                .args([cmd, "--snapshot"])
                .arg(&path)
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(3), "{cmd} {}", path.display());
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err.lines().count(), 1, "{err}");
            assert!(
                err.contains(needle) && err.contains(&*path.to_string_lossy()),
                "{err}"
            );
            assert!(out.stdout.is_empty());
        }
    }
}

#[test]
#[cfg(target_os = "linux")]
fn a_torn_proc_entry_is_skipped_not_fatal() {
    let env = Env::new();
    let root = env.path("fakeproc");
    let mk = |pid: &str, stat: &str, status: &str| {
        std::fs::create_dir_all(root.join(pid)).unwrap();
        std::fs::write(root.join(pid).join("stat"), stat).unwrap();
        std::fs::write(root.join(pid).join("status"), status).unwrap();
    };
    let uid = env.uid;
    let status = |name: &str, state: &str, ppid: u32| {
        format!(
            "Name:\t{name}\nState:\t{state}\nPPid:\t{ppid}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nThreads:\t1\n"
        )
    };
    mk(
        "10",
        "10 (agency) S 1 10 10 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 0 0",
        &status("agency", "S (sleeping)", 1),
    );
    mk(
        "11",
        "11 (z) Z 10 10 10 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 6 0 0",
        &status("z", "Z (zombie)", 10),
    );
    // Torn mid-scan: a status cut short, and a directory whose files are already gone.
    mk("12", "12 (torn", "Name:\ttorn\nSta");
    std::fs::create_dir_all(root.join("13")).unwrap();
    std::fs::create_dir_all(root.join("sys/kernel")).unwrap();
    std::fs::write(root.join("sys/kernel/threads-max"), "20\n").unwrap();
    std::fs::write(root.join("loadavg"), "0 0 0 1/4 9\n").unwrap();
    let out = env
        .cmd()
        .args(["probe", "--json", "--no-history", "--proc-root"])
        .arg(&root)
        .output()
        .unwrap();
    let r: schema::Probe = schema::read(&out.stdout);
    assert_eq!((r.processes, r.zombies), (2, 1));
    assert_eq!(r.limit_source.as_deref(), Some("threads-max"));
    assert_eq!(r.limit, Some(18)); // 20 − (4 tasks − 2 of ours)
    assert_eq!(out.status.code(), Some(0));
}
