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

#[test]
fn config_lists_every_setting_with_its_origin() {
    let env = Env::new();
    let cfg = env.path("c.toml");
    std::fs::write(
        &cfg,
        "[reap]\ngrace = \"5s\"\n[watch]\ninterval = \"30s\"\n",
    )
    .unwrap();
    let out = env
        .cmd()
        .args(["config", "--json", "--warn", "60", "--config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "headroom.config/1");
    let get = |k: &str| {
        v["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["key"] == k)
            .unwrap()
            .clone()
    };
    assert_eq!(
        (
            get("probe.warn")["value"].as_f64(),
            get("probe.warn")["origin"].as_str()
        ),
        (Some(60.0), Some("flag"))
    );
    assert_eq!(
        (
            get("reap.grace")["value"].as_str(),
            get("reap.grace")["origin"].as_str()
        ),
        (Some("5s"), Some("file"))
    );
    assert_eq!(get("watch.interval")["value"], "30s");
    assert_eq!(get("reap.min_zombies")["origin"], "default");
    for key in [
        "memory.guard",
        "hangs.cooldown",
        "hangs.min_interval",
        "emergency.free_pct",
        "notifications.enabled",
        "liveness.idle_threshold",
    ] {
        get(key);
    }
    env.cmd()
        .args(["config", "--interval", "5ms"])
        .assert()
        .code(64);
}

#[test]
fn idle_watch_rejects_a_duration_shorter_than_its_interval_and_a_zero_threshold() {
    let env = Env::new();
    env.cmd()
        .args(["idle-watch", "--duration", "10s", "--every", "30s"])
        .assert()
        .code(64)
        .stderr(predicate::str::contains(
            "--duration `10s` is shorter than --interval `30s`",
        ));
    env.cmd()
        .args(["idle-watch", "--threshold", "0"])
        .assert()
        .code(64)
        .stderr(predicate::str::contains("zero"));
}

#[test]
#[cfg(target_os = "linux")]
fn login_item_status_with_nothing_registered_says_so_and_exits_1() {
    let env = Env::new();
    let home = env.path("fakehome");
    std::fs::create_dir_all(&home).unwrap();
    let out = env
        .cmd()
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .args(["login-item", "status", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "headroom.login-item/1");
    assert_eq!(
        (v["registered"].as_bool(), v["effective"].as_bool()),
        (Some(false), Some(false))
    );
    // Without a systemd user manager (as here) it offers the crontab line instead.
    if v["backend"] == "cron" {
        assert!(v["crontab"].as_str().unwrap().contains(" watch >> "), "{v}");
        // No unit file: the path is null, not "" (issue 18).
        assert!(v["path"].is_null(), "{v}");
    } else {
        assert!(v["path"].as_str().is_some_and(|p| !p.is_empty()), "{v}");
    }
}

/// The binary skips Rust's runtime start-up (`no_main`), so its own start-up must do what
/// that did: a closed fd 0–2 is opened on /dev/null before anything else can take its
/// number (else the next file opened would receive stdout).
#[test]
#[cfg_attr(not(hr_tool_strace), ignore = "needs strace")]
fn closed_standard_fds_are_opened_on_dev_null_at_start() {
    crate::support::require_tool("strace");
    let env = Env::new();
    let logs = env.path("logs");
    std::fs::create_dir(&logs).unwrap();
    let trace = env.path("start.trace");
    let trace_arg = trace.to_str().unwrap();
    let out = env
        .cmd_via(&[
            "strace",
            "-f",
            "-qq",
            "-e",
            "trace=execve,openat,fcntl",
            "-o",
            trace_arg,
            "sh",
            "-c",
            r#"exec "$0" "$@" <&- >&- 2>&-"#,
        ])
        .args(["log-probe", logs.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let calls = std::fs::read_to_string(&trace).unwrap();
    let bin = env.headroom_path().to_str().unwrap().to_string();
    let after_exec: Vec<&str> = calls
        .lines()
        .skip_while(|l| !l.contains(&format!("execve(\"{bin}\"")))
        .collect();
    assert!(!after_exec.is_empty(), "headroom never started:\n{calls}");
    let reopened: Vec<&str> = after_exec
        .iter()
        .filter(|l| l.contains("\"/dev/null\""))
        .filter_map(|l| l.rsplit_once(" = ").map(|(_, fd)| fd.trim()))
        .collect();
    assert_eq!(reopened, ["0", "1", "2"], "{calls}");
}

/// SIGPIPE is ignored, as Rust's runtime would: output into a pipe nobody reads is an
/// EPIPE error that headroom treats as success, not a death by signal.
#[test]
fn a_pipe_closed_before_the_first_write_is_not_a_death_by_sigpipe() {
    use std::os::fd::{FromRawFd, OwnedFd};
    use std::os::unix::process::ExitStatusExt;
    let env = Env::new();
    let mut fds = [0; 2];
    // Close-on-exec from the start: a child another test spawns meanwhile must not inherit
    // the read end, which would keep the pipe readable and let the test pass untested.
    // SAFETY: fds has room for the two descriptors pipe2(2) writes.
    #[cfg(target_os = "linux")]
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    // SAFETY: as above (macOS has no pipe2; these tests run on Linux).
    #[cfg(not(target_os = "linux"))]
    let rc = unsafe { libc::pipe(fds.as_mut_ptr()) };
    assert_eq!(rc, 0);
    // SAFETY: both descriptors were just created and are owned here alone.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read_end);
    let out = env
        .cmd_via(&["env"])
        .arg("--help")
        .stdout(std::process::Stdio::from(write_end))
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(out.status.signal(), None, "killed: {out:?}");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Without strace: a command `run` starts inherits headroom's fds, so with headroom's stdin
/// and stdout closed it must find both open on /dev/null; and SIGPIPE, which headroom
/// ignores, is back at its default in the command.
#[cfg(target_os = "linux")]
#[test]
fn run_s_command_inherits_dev_null_for_closed_fds_and_the_default_sigpipe() {
    let env = Env::new();
    let out = env.path("stdout");
    let err = env.path("stderr");
    // The command shell reads its own fds from subshells: a redirection it applied itself
    // (dash applies them in the shell, around the fork) would show instead.
    let script = concat!(
        r#"exec "$0" run --limit 1G -- sh -c '"#,
        r#"a=$(readlink /proc/$$/fd/0); b=$(readlink /proc/$$/fd/1); "#,
        r#"echo "$a" >&2; echo "$b" >&2; grep SigIgn /proc/$$/status >&2' <&- >&-"#
    );
    let headroom = env.headroom_path().to_str().unwrap().to_string();
    let mut t = env.spawn_with(
        std::path::Path::new("/bin/sh"),
        &["-c", script, &headroom],
        Some((&out, &err)),
    );
    let code = t.exit_code();
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.get(..2),
        Some(&["/dev/null", "/dev/null"][..]),
        "{stderr}"
    );
    let ignored = lines
        .iter()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .map(|m| u64::from_str_radix(m.trim(), 16).unwrap())
        .unwrap_or_else(|| panic!("no SigIgn line: {stderr}"));
    let sigpipe_bit = 1u64 << (libc::SIGPIPE - 1);
    assert_eq!(
        ignored & sigpipe_bit,
        0,
        "SIGPIPE ignored in the command: {stderr}"
    );
}

/// When a closed fd cannot be opened on /dev/null (here: /dev/null hidden by an empty /dev
/// in a private mount namespace), headroom says so in one line and exits 3 having done
/// nothing: `probe` writes no reading. Needs root for the namespace; the binary still runs
/// as the test's private uid.
#[cfg(target_os = "linux")]
#[test]
#[cfg_attr(not(all(hr_root, hr_tool_unshare)), ignore = "needs root and unshare")]
fn a_closed_fd_that_cannot_be_made_safe_is_a_refusal_with_no_action() {
    crate::support::require_root();
    crate::support::require_tool("unshare");
    let env = Env::new();
    let script = r#"mount -t tmpfs headroom-test-dev /dev && exec "$@" <&-"#;
    let out = std::process::Command::new("timeout")
        .args([
            "--kill-after=5",
            &crate::support::TIMEOUT.as_secs().to_string(),
            "unshare",
            "--mount",
            "--propagation",
            "private",
        ])
        .args(["sh", "-c", script, "sh"])
        .args(env.as_test_user())
        .arg(env.headroom_path())
        .args(["probe", "--json"])
        .env("HEADROOM_HOME", &env.home)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(out.stdout.is_empty(), "{out:?}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("fd 0 is closed and /dev/null cannot be opened"),
        "{stderr}"
    );
    let written = crate::support::files_under(&env.home);
    assert!(written.is_empty(), "probe wrote {written:?}");
}
