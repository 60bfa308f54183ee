//! Fault 1: the disk fills up under a running guard (a 64 KiB tmpfs as the state directory).
//! Guaranteed: every reading is still taken and streamed; its evidence row waits in memory
//! and is written, in order, once space returns (never twice); no file is left torn; `probe`
//! from cron exits with its reading's level and a warning.

use super::{
    check_state_files, check_state_files_beside, fill, in_mount_ns, require_sandbox, tmpfs, umount,
};
use crate::support::{Env, json_lines, wait_until};

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn a_full_disk_loses_no_reading_and_tears_no_file() {
    let env = Env::new();
    require_sandbox(&env);
    in_mount_ns(|| {
        tmpfs(&env.home, "64k", env.uid);
        let probe_home = env.home.join("probe");
        std::fs::create_dir(&probe_home).unwrap();
        crate::support::chown(&probe_home, env.uid);
        let (out, err) = (env.path("watch.out"), env.path("watch.err"));
        let args = [
            "watch",
            "--interval",
            "200ms",
            "--json",
            "--no-auto-reap",
            "--no-hangs",
            // Every round reads the table: these rounds are what is under test.
            "--table-every",
            "0s",
        ];
        let mut watch = env.spawn_with(env.headroom_path(), &args, Some((&out, &err)));
        let events = || json_lines(&out);
        let readings = || events().iter().filter(|e| e["type"] == "reading").count();
        wait_until("two readings", || readings() >= 2);

        let filler = fill(&env.home);
        let seen = events().len();
        wait_until("rows kept in memory", || {
            events()[seen..].iter().any(|e| {
                e["type"] == "notice" && e["message"].as_str().unwrap().contains("kept in memory")
            })
        });
        let r = readings();
        wait_until("three more readings on the full disk", || {
            readings() >= r + 3
        });

        // probe from cron on the full disk: its level, a warning, its reading on stdout.
        let p = env
            .cmd()
            .env("HEADROOM_HOME", &probe_home)
            .args(["probe", "--json"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&p.stderr);
        assert!(
            stderr.contains("warning") && stderr.contains("No space left"),
            "{stderr}"
        );
        let report: serde_json::Value = serde_json::from_slice(&p.stdout).unwrap();
        let level = ["normal", "warning", "critical", "unknown"]
            .iter()
            .position(|l| report["level"] == *l)
            .unwrap();
        assert_eq!(p.status.code(), Some(level as i32), "{stderr}");
        // Nothing torn while full (the running guard's own temporary may be in flight).
        check_state_files_beside(&env.home, Some(watch.pid));
        check_state_files(&probe_home);

        // Space returns: the backlog is written, in order, and the guard goes on.
        drop(filler);
        std::fs::remove_file(env.home.join("filler")).unwrap();
        let r = readings();
        wait_until("two more readings with space", || readings() >= r + 2);
        watch.signal(libc::SIGTERM);
        assert_eq!(watch.exit_code(), 0);
        let events = events();
        let summary = events.last().unwrap();
        assert_eq!(summary["type"], "summary");
        assert_eq!(summary["pending_rows"], 0, "{summary}");
        let (files, rows) = check_state_files(&env.home);
        let polls: Vec<&str> = rows
            .iter()
            .filter(|r| r.action == "poll")
            .filter_map(|r| r.reading.at.as_deref())
            .collect();
        let taken: Vec<&str> = events
            .iter()
            .filter(|e| e["type"] == "reading")
            .map(|e| e["at"].as_str().unwrap())
            .collect();
        assert_eq!(polls, taken, "one row per reading, in order, none twice");
        eprintln!(
            "disk full: {} readings, {} rows written ({} expected), {files} files checked",
            taken.len(),
            polls.len(),
            taken.len()
        );
        umount(&env.home);
    });
}
