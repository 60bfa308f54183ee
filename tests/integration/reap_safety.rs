//! Issue 16 on real processes (Linux): the denylist only grows, and no command acts on a
//! recorded or redirected process table. Fixtures as in `reap.rs`: under a subreaper the
//! test owns, a name unique to the test in `--allow`, headroom as the private test uid.

use predicates::prelude::*;

use crate::schema;
use crate::support::{Env, Tree, proc_state, wait_until, zombie_children};

fn leaker(env: &Env, name: &str, zombies: usize) -> (Tree, i32) {
    let exe = env.named_fixture(name);
    let n = zombies.to_string();
    let mut tree = env.spawn(&exe, &["leak", "--zombies", n.as_str(), "--ignore-term"]);
    let pid = tree.ready()["pid"].as_i64().unwrap() as i32;
    assert_eq!(zombie_children(pid), zombies);
    // It says ready before it goes to sleep: on a loaded machine it may still be running
    // (`R`) for a while. Asleep, it stays `S` until a signal wakes it, so a test's "still
    // `S`" then says that nothing stopped or woke it.
    wait_until("the leaker to sleep", || proc_state(pid) == Some('S'));
    (tree, pid)
}

fn verdict(env: &Env, args: &[&str], pid: i32) -> (String, Option<String>) {
    let out = env.cmd().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let r: schema::Reap = schema::read(&out.stdout);
    let p = r.parents.iter().find(|p| p.pid == pid).unwrap();
    (p.verdict.clone(), p.reason.clone())
}

#[test]
fn a_deny_flag_adds_to_the_configured_denylist_and_never_replaces_it() {
    let env = Env::new();
    let (_tree, pid) = leaker(&env, "agency-deny16", 120);
    let cfg = env.path("deny.toml");
    std::fs::write(&cfg, "[reap]\ndeny = [\"agency-deny16\"]\n").unwrap();
    let cfg = cfg.to_str().unwrap();
    let base = ["reap", "--dry-run", "--json", "--allow", "agency-deny16"];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        verdict(&env, &a, pid)
    };
    let denied = (
        "skipped".to_string(),
        Some("not-permitted-by-policy".to_string()),
    );
    assert_eq!(with(&["--config", cfg, "--deny", "unrelated"]), denied);
    assert_eq!(with(&["--config", cfg]), denied);
    // Control: without the configured pattern the same leaker is a target.
    assert_eq!(with(&["--deny", "unrelated"]), ("target".to_string(), None));
    env.cmd()
        .args(["reap", "--help"])
        .assert()
        .success()
        .stdout(
            predicate::str::contains("added to the")
                .and(predicate::str::contains("replaces the configured")),
        );
}

#[test]
fn no_acting_command_runs_against_a_redirected_process_table() {
    let env = Env::new();
    let (_tree, pid) = leaker(&env, "agency-redir16", 150);
    // A redirect to the real /proc is still a redirect: the flag is refused, not judged.
    let pid_s = pid.to_string();
    let cases: Vec<Vec<&str>> = vec![
        vec!["reap", "--allow", "agency-redir16", "--grace", "100ms"],
        vec!["park", &pid_s],
        vec!["wake", &pid_s],
        vec!["park-tree", &pid_s],
        vec!["wake-tree", &pid_s],
        vec!["run", "--limit", "1G", "--", "true"],
        vec!["hangs"],
    ];
    for flag in ["--proc-root", "--sys-root"] {
        let dir = if flag == "--proc-root" {
            "/proc"
        } else {
            "/sys"
        };
        for args in &cases {
            env.cmd()
                .arg(args[0])
                .args([flag, dir])
                .args(&args[1..])
                .assert()
                .code(64)
                .stderr(predicate::str::contains(flag));
        }
    }
    assert_eq!(proc_state(pid), Some('S'), "never stopped");
    assert_eq!(zombie_children(pid), 150, "never signalled");
    // Control: the dry run through the redirect still decides (read-only use is allowed),
    // and the same leaker is a target there.
    assert_eq!(
        verdict(
            &env,
            &[
                "reap",
                "--dry-run",
                "--json",
                "--allow",
                "agency-redir16",
                "--proc-root",
                "/proc"
            ],
            pid
        ),
        ("target".to_string(), None)
    );
}

#[test]
fn limits_on_what_may_be_configured_are_one_line_exit_64_and_nothing_is_signalled() {
    let env = Env::new();
    let (_tree, pid) = leaker(&env, "agency-lim16", 120);
    for (args, needle) in [
        (
            vec!["--idle-threshold", "59s"],
            "idle threshold `59s` is refused",
        ),
        (vec!["--grace", "99ms"], "grace `99ms` is refused"),
        (vec!["--allow", "a"], "allow pattern `a` is refused"),
        (vec!["--allow", "/"], "allow pattern `/` is refused"),
    ] {
        let mut full = vec!["reap", "--allow", "agency-lim16"];
        full.extend(args);
        let out = env.cmd().args(&full).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{full:?}: {err}");
        assert!(err.contains(needle), "{full:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    // The same limits from the config file.
    let cfg = env.path("lim.toml");
    std::fs::write(&cfg, "[reap]\ngrace = \"10ms\"\n").unwrap();
    env.cmd()
        .args(["reap", "--allow", "agency-lim16", "--config"])
        .arg(&cfg)
        .assert()
        .code(64)
        .stderr(predicate::str::contains("grace `10ms` is refused"));
    assert_eq!(zombie_children(pid), 120, "nothing was signalled");
    // Controls: the smallest accepted values decide normally.
    assert_eq!(
        verdict(
            &env,
            &[
                "reap",
                "--dry-run",
                "--json",
                "--allow",
                "agency-lim16",
                "--idle-threshold",
                "60s",
                "--grace",
                "100ms"
            ],
            pid
        ),
        ("target".to_string(), None)
    );
}

#[test]
fn a_state_dir_others_can_write_is_one_line_exit_2_and_nothing_is_signalled() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let (_tree, pid) = leaker(&env, "agency-mode16", 120);
    let home = env.home.to_str().unwrap().to_string();
    let acting = ["reap", "--allow", "agency-mode16", "--grace", "100ms"];
    let set_mode =
        |m: u32| std::fs::set_permissions(&env.home, std::fs::Permissions::from_mode(m)).unwrap();
    // (what the message says, mode, owned by root instead of the user)
    let mut bad = vec![("mode 0777", 0o777, false), ("mode 0720", 0o720, false)];
    if env.private {
        // As root the test user is private: a directory root owns is not the user's.
        bad.push(("owned by uid 0", 0o755, true));
    }
    for &(says, mode, root_owned) in &bad {
        set_mode(mode);
        if root_owned {
            crate::support::chown(&env.home, 0);
        }
        let out = env.cmd().args(acting).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{says}: {out:?}");
        assert!(
            err.contains(&format!("state directory `{home}`"))
                && err.contains(says)
                && err.contains("not writable by group or others")
                && err.contains("nothing was signalled"),
            "{says}: {err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert_eq!(proc_state(pid), Some('S'), "{says}: never stopped");
        assert_eq!(zombie_children(pid), 120, "{says}: never signalled");
        // A dry run still decides, saying why the CPU history is not used.
        let out = env
            .cmd()
            .args(["reap", "--dry-run", "--json", "--allow", "agency-mode16"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{says}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("CPU history not used") && err.contains(says),
            "{says}: {err}"
        );
        assert!(
            !env.home.join("cpu-history.json").exists(),
            "{says}: nothing written into an untrusted directory"
        );
    }
    // Control: the user's own 0700 directory lets the same command act.
    if env.private {
        crate::support::chown(&env.home, env.uid);
    }
    set_mode(0o700);
    let out = env.cmd().args(acting).args(["--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let r: schema::Reap = schema::read(&out.stdout);
    assert_eq!(r.targets.len(), 1, "{r:?}");
    assert_eq!(r.targets[0].pid, pid);
    crate::support::wait_until("the leaker to be reaped", || proc_state(pid).is_none());
}

#[test]
#[cfg_attr(not(all(hr_root, hr_tool_unshare)), ignore = "needs root and unshare")]
fn a_pid_reused_after_selection_is_identity_changed_and_the_new_process_untouched() {
    // Everything runs in a private pid namespace the test creates: pid 1 there is the
    // helper (examples/hr-pidreuse.rs), which refuses to run anywhere else, and the kernel
    // ends whatever is left when it exits.
    crate::support::require_root();
    crate::support::require_tool("unshare");
    let helper = crate::support::headroom_bin()
        .parent()
        .unwrap()
        .join("examples/hr-pidreuse");
    let out = std::process::Command::new("timeout")
        .args([
            "--kill-after=5",
            "60",
            "unshare",
            "--pid",
            "--fork",
            "--mount-proc",
        ])
        .arg(&helper)
        .arg(crate::support::fixture_bin())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_ne!(r["stale_start_time"], r["new_start_time"], "{r}");
    assert_eq!(r["outcome"], "identity-changed", "{r}");
    assert_eq!(
        r["signals"],
        serde_json::json!([]),
        "nothing sent to it: {r}"
    );
    assert_eq!(r["new_process_alive_after"], true, "{r}");
    // Control: with its own identity the same termination ends the new process.
    assert_eq!(r["control_outcome"], "sigterm", "{r}");
    assert_eq!(r["control_gone"], true, "{r}");
}
