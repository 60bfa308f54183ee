//! Fault 2: the state directory is read-only, vanishes under a running guard, holds
//! symbolic links planted to another user's file, or is itself replaced by a link to another
//! user's directory or file. Guaranteed: the reading is still printed (and `probe` exits
//! with its level), a clear message names the path, no write follows a link, and a vanished
//! directory is made again.

use std::os::unix::fs::PermissionsExt;

use super::{check_state_files, in_mount_ns, mount, require_sandbox, umount};
use crate::support::{Env, chown, json_lines, wait_until};

fn level_code(report: &serde_json::Value) -> i32 {
    ["normal", "warning", "critical", "unknown"]
        .iter()
        .position(|l| report["level"] == *l)
        .unwrap() as i32
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn a_read_only_state_dir_is_a_warning_and_the_reading_still_counts() {
    let env = Env::new();
    require_sandbox(&env);
    in_mount_ns(|| {
        let opts = format!("size=64k,mode=0700,uid={0},gid={0}", env.uid);
        mount(
            Some("tmpfs"),
            &env.home,
            Some("tmpfs"),
            libc::MS_RDONLY,
            Some(&opts),
        );
        let p = env.cmd().args(["probe", "--json"]).output().unwrap();
        let stderr = String::from_utf8_lossy(&p.stderr);
        assert!(
            stderr.contains("warning") && stderr.contains("Read-only file system"),
            "{stderr}"
        );
        assert!(stderr.contains(env.home.to_str().unwrap()), "{stderr}");
        let report: serde_json::Value = serde_json::from_slice(&p.stdout).unwrap();
        assert_eq!(p.status.code(), Some(level_code(&report)));
        let w = env
            .cmd()
            .args(["watch", "--once", "--json", "--no-hangs"])
            .output()
            .unwrap();
        let lines: Vec<serde_json::Value> = String::from_utf8(w.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let reading = lines.iter().find(|e| e["type"] == "reading").unwrap();
        assert_eq!(w.status.code(), Some(level_code(reading)));
        assert!(lines.iter().any(|e| {
            e["type"] == "notice"
                && e["message"]
                    .as_str()
                    .unwrap()
                    .contains("Read-only file system")
        }));
        assert_eq!(lines.last().unwrap()["pending_rows"], 1, "the row waits");
        umount(&env.home);
    });
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn a_vanished_state_dir_is_made_again_and_no_reading_is_lost() {
    let env = Env::new();
    require_sandbox(&env);
    // As `~/.local/state/headroom` is: a directory the user may make again.
    let state = env.home.join("state");
    let (out, err) = (env.path("watch.out"), env.path("watch.err"));
    let home = format!("HEADROOM_HOME={}", state.display());
    let args = [
        home.as_str(),
        env.headroom_path().to_str().unwrap(),
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
    wait_until("two readings", || readings() >= 2);
    // The guard writes into it meanwhile: a file made (ENOTEMPTY) or renamed away (ENOENT)
    // under `remove_dir_all` fails that attempt, and the next one removes what is left.
    wait_until("the state directory removed", || {
        std::fs::remove_dir_all(&state).is_ok()
    });
    let r = readings();
    wait_until("two readings after the removal", || readings() >= r + 2);
    watch.signal(libc::SIGTERM);
    assert_eq!(watch.exit_code(), 0);
    let meta = std::fs::metadata(&state).unwrap();
    assert!(meta.is_dir());
    assert_eq!(meta.permissions().mode() & 0o777, 0o700);
    let (_, rows) = check_state_files(&state);
    assert!(
        rows.len() >= 2,
        "the readings after the removal were written"
    );
    let events = json_lines(&out);
    assert_eq!(events.last().unwrap()["pending_rows"], 0);
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn no_write_follows_a_link_planted_to_another_users_file() {
    let env = Env::new();
    require_sandbox(&env);
    // Another user's file the test user could write if a link were followed (0666), and a
    // place where following a dangling link would create a file.
    let other = env.dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o777)).unwrap();
    let victim = other.join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o666)).unwrap();
    chown(&victim, env.uid + 1);
    let dangling = other.join("created-through-a-link");
    for name in ["evidence.csv", "readings.json", "watch-state.json"] {
        std::os::unix::fs::symlink(&victim, env.home.join(name)).unwrap();
    }
    std::os::unix::fs::symlink(&dangling, env.home.join("evidence.csv.lock")).unwrap();
    let p = env.cmd().args(["probe", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&p.stderr);
    assert!(stderr.contains("symbolic link"), "{stderr}");
    assert!(stderr.contains("readings.json"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&p.stdout).unwrap();
    assert_eq!(p.status.code(), Some(level_code(&report)));
    // The history link removed: the evidence lock's link is met next, and refused too.
    std::fs::remove_file(env.home.join("readings.json")).unwrap();
    let p = env.cmd().args(["probe", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&p.stderr);
    assert!(stderr.contains("evidence.csv.lock"), "{stderr}");
    std::fs::remove_file(env.home.join("evidence.csv.lock")).unwrap();
    let p = env.cmd().args(["probe", "--json"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&p.stderr);
    assert!(
        stderr.contains("evidence.csv") && stderr.contains("symbolic link"),
        "{stderr}"
    );
    let w = env
        .cmd()
        .args(["watch", "--once", "--json", "--no-hangs"])
        .output()
        .unwrap();
    let text = String::from_utf8(w.stdout).unwrap();
    assert!(text.contains("\"type\":\"reading\""), "{text}");
    assert!(text.contains("symbolic link"), "{text}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(!dangling.exists(), "a dangling link was followed");
    for name in ["evidence.csv", "watch-state.json"] {
        let m = std::fs::symlink_metadata(env.home.join(name)).unwrap();
        assert!(m.file_type().is_symlink(), "{name} was replaced silently");
    }
    // The control: with the links gone the same runs write their files.
    for name in ["evidence.csv", "watch-state.json"] {
        std::fs::remove_file(env.home.join(name)).unwrap();
    }
    env.cmd()
        .args(["probe", "--json"])
        .assert()
        .stderr(predicates::str::is_empty());
    let (files, rows) = check_state_files(&env.home);
    assert!(files >= 2 && rows.len() == 1, "{files} {rows:?}");
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn a_state_dir_replaced_by_a_link_to_another_users_dir_or_file_is_not_written_through() {
    let env = Env::new();
    require_sandbox(&env);
    // Another user's directory the test user could write into if the link were followed
    // (0777), and another user's 0666 file.
    let other = env.dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::set_permissions(&other, std::fs::Permissions::from_mode(0o777)).unwrap();
    chown(&other, env.uid + 1);
    let victim = env.dir.path().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o666)).unwrap();
    chown(&victim, env.uid + 1);
    let state = env.home.join("state");
    // As the test user, with HEADROOM_HOME the link.
    let run = |args: &[&str]| {
        let argv = env.as_test_user();
        std::process::Command::new(&argv[0])
            .args(&argv[1..])
            .arg(env.headroom_path())
            .args(args)
            .env("HEADROOM_HOME", &state)
            .output()
            .unwrap()
    };
    for (target, why) in [
        (&other, "not yours"),
        (&victim, "not a directory"),
        (&env.dir.path().join("nowhere"), "cannot be followed"),
    ] {
        let _ = std::fs::remove_file(&state);
        std::os::unix::fs::symlink(target, &state).unwrap();
        let p = run(&["probe", "--json"]);
        let stderr = String::from_utf8_lossy(&p.stderr);
        assert!(
            stderr.contains("symbolic link") && stderr.contains(why),
            "{target:?}: {stderr}"
        );
        assert!(stderr.contains(state.to_str().unwrap()), "{stderr}");
        let report: serde_json::Value = serde_json::from_slice(&p.stdout).unwrap();
        assert_eq!(p.status.code(), Some(level_code(&report)), "{stderr}");
        let w = run(&["watch", "--once", "--json", "--no-hangs"]);
        let lines: Vec<serde_json::Value> = String::from_utf8(w.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert!(lines.iter().any(|e| e["type"] == "reading"), "{lines:?}");
        assert!(
            lines.iter().any(|e| e["type"] == "notice"
                && e["message"].as_str().unwrap().contains("symbolic link")),
            "{lines:?}"
        );
        assert_eq!(
            std::fs::read_dir(&other).unwrap().count(),
            0,
            "written through the link to another user's directory"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
        assert!(!env.dir.path().join("nowhere").exists());
        let m = std::fs::symlink_metadata(&state).unwrap();
        assert!(m.file_type().is_symlink(), "the link was replaced");
    }
    // The control: a link to a directory of the user's own (dotfiles) is followed.
    let own = env.home.join("own");
    std::fs::create_dir(&own).unwrap();
    chown(&own, env.uid);
    std::fs::remove_file(&state).unwrap();
    std::os::unix::fs::symlink(&own, &state).unwrap();
    let p = run(&["probe", "--json"]);
    assert!(
        p.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&p.stderr)
    );
    let (files, rows) = check_state_files(&own);
    assert!(files >= 2 && rows.len() == 1, "{files} {rows:?}");
}
