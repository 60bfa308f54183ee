//! Fault 8: headroom itself short of resources: `watch` and `reap` run at the fork wall
//! (RLIMIT_NPROC reached for their uid: not one more process or thread) and with
//! RLIMIT_NOFILE at 16. Guaranteed: the polling path works (it never forks), the cleanup at
//! the wall works (signals need no new process), what would need a new process is not tried
//! at ≤ 1 % free (notifications withheld, and a notice says so), with 16 descriptors a
//! notification is posted or a notice says why not, a thread that cannot start falls back
//! to direct writes, and nothing crashes. (Hang restarts, macOS, report a helper that could
//! not start as `restart-failed` with the error: `actions/recover/tests.rs`.)

use super::{check_state_files, require_sandbox};
use crate::support::{Env, count_uid, json_lines, proc_state, wait_more_readings, wait_until};

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn watch_and_reap_at_the_fork_wall_with_16_descriptors() {
    let env = Env::new();
    require_sandbox(&env);
    let cfg = env.path("wall.toml");
    std::fs::write(
        &cfg,
        "[reap]\nallow = [\"agency-wall\"]\ngrace = \"300ms\"\n[notifications]\nenabled = true\n",
    )
    .unwrap();
    let cfg_s = cfg.to_str().unwrap();
    let leaker = env.named_fixture("agency-wall");
    let mut leak = env.spawn(&leaker, &["leak", "--zombies", "150", "--ignore-term"]);
    let pid = leak.ready()["pid"].as_i64().unwrap() as i32;

    // At the wall: the limit is what the uid holds, plus one (the headroom being run).
    let wall = || format!("--nproc={0}:{0}", count_uid(env.uid).1 + 1);
    let nofile = "--nofile=16:16";

    // reap --dry-run and probe at the wall, with 16 descriptors.
    for args in [
        &["probe", "--json"][..],
        &["reap", "--dry-run", "--json", "--config", cfg_s][..],
    ] {
        let w = wall();
        let out = env
            .cmd_via(&["prlimit", &w, nofile, "--"])
            .args(args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code().is_some_and(|c| c <= 3),
            "{args:?}: {out:?}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if args[0] == "probe" {
            assert_eq!(v["limit_source"], "rlimit-nproc", "{v}");
            assert_eq!(v["free_slots"], 0, "at the wall: {v}");
        } else {
            assert!(
                v["parents"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|p| p["pid"] == pid),
                "{v}"
            );
        }
    }

    // A watch at the wall with 16 descriptors: rounds go on, it cleans the leaker up (no
    // fork needed), and stops cleanly.
    let (out, err) = (env.path("watch.out"), env.path("watch.err"));
    let w = wall();
    let args = [
        w.as_str(),
        nofile,
        "--",
        env.headroom_path().to_str().unwrap(),
        "watch",
        "--interval",
        "100ms",
        "--json",
        "--no-hangs",
        "--config",
        cfg_s,
    ];
    let mut watch = env.spawn_with(
        std::path::Path::new("/usr/bin/prlimit"),
        &args,
        Some((&out, &err)),
    );
    wait_until("a cleanup at the wall", || {
        json_lines(&out).iter().any(|e| {
            e["type"] == "cleanup"
                && e["targets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|t| t["pid"] == pid)
        })
    });
    wait_until("the leaker gone", || proc_state(pid).is_none());
    wait_more_readings("two more rounds", &out, 2);
    watch.signal(libc::SIGTERM);
    assert_eq!(watch.exit_code(), 0);
    let events = json_lines(&out);
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(events.last().unwrap()["type"], "summary");
    // The first readings were at the wall (free 0): no notification was attempted there,
    // and the guard said it withheld them (the crossing and the cleanup).
    let first = events.iter().find(|e| e["type"] == "reading").unwrap();
    assert_eq!(first["free_slots"], 0, "{first}");
    let said = |what: &str| {
        events
            .iter()
            .filter(|e| e["type"] == "notice" && e["message"].as_str().unwrap().contains(what))
            .count()
    };
    assert_eq!(
        said("notification not posted"),
        0,
        "a notification was tried at the wall: {events:?}"
    );
    assert!(
        said("notification withheld: 0 of") >= 2,
        "withheld silently: {events:?}"
    );
    let (files, rows) = check_state_files(&env.home);
    assert!(rows.iter().any(|r| r.action.starts_with("kill")));
    eprintln!(
        "exhaustion: {} rounds at/after the wall with 16 fds, {files} files checked",
        events.iter().filter(|e| e["type"] == "reading").count()
    );
    drop(leak);
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn with_16_descriptors_a_notification_is_posted_or_says_why_not() {
    let env = Env::new();
    require_sandbox(&env);
    // A notify-send of the test's own, that records what it was asked to post.
    let bin = env.path("bin");
    std::fs::create_dir(&bin).unwrap();
    let posted = env.path("posted");
    let fake = bin.join("notify-send");
    std::fs::write(
        &fake,
        format!("#!/bin/sh\necho \"$*\" >> {}\n", posted.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(env.path(""), std::fs::Permissions::from_mode(0o777)).unwrap();
    // Not in the scratch directory just opened to everyone: watch acts only on a config
    // file no one else can change (issue 25).
    let cfg = env.dir.path().join("fds.toml");
    std::fs::write(&cfg, "[notifications]\nenabled = true\n").unwrap();
    let path = format!(
        "PATH={}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Critical from the first reading (confirmed by the second: a crossing, so a
    // notification), and far from the wall.
    let (out, err) = (env.path("watch.out"), env.path("watch.err"));
    let args = [
        path.as_str(),
        "prlimit",
        "--nofile=16:16",
        "--",
        env.headroom_path().to_str().unwrap(),
        "watch",
        "--interval",
        "100ms",
        "--json",
        "--no-hangs",
        "--no-auto-reap",
        "--crit",
        "0.0001",
        "--warn",
        "0.0001",
        "--config",
        cfg.to_str().unwrap(),
    ];
    let mut watch = env.spawn_with(
        std::path::Path::new("/usr/bin/env"),
        &args,
        Some((&out, &err)),
    );
    let readings = || {
        json_lines(&out)
            .iter()
            .filter(|e| e["type"] == "reading")
            .count()
    };
    wait_until("four rounds", || readings() >= 4);
    watch.signal(libc::SIGTERM);
    assert_eq!(watch.exit_code(), 0);
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(!stderr.contains("panicked"), "{stderr}");
    let events = json_lines(&out);
    assert_eq!(events.last().unwrap()["type"], "summary", "{events:?}");
    assert!(
        events.iter().any(|e| e["confirmed_level"] == "critical"),
        "{events:?}"
    );
    let reading = events.iter().find(|e| e["type"] == "reading").unwrap();
    assert!(reading["free_slots"].as_u64().unwrap() > 100, "{reading}");
    let not_posted: Vec<&serde_json::Value> = events
        .iter()
        .filter(|e| {
            e["type"] == "notice"
                && e["message"]
                    .as_str()
                    .unwrap()
                    .contains("notification not posted")
        })
        .collect();
    // watch waits for its helpers at exit, so a posted one has written its line.
    let lines = std::fs::read_to_string(&posted).unwrap_or_default();
    assert!(
        lines.contains("process limit nearly reached") || !not_posted.is_empty(),
        "neither posted nor said why not: {events:?}"
    );
    eprintln!(
        "16 fds: {} notification(s) posted, {} not posted with a reason",
        lines.lines().count(),
        not_posted.len()
    );
}
