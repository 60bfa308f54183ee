//! `run --limit` on real process trees (Linux). headroom itself runs under the test's
//! supervisor (a subreaper that kills everything it started when the test ends) as the
//! test's private uid, so nothing can escape even if headroom fails, and every process the
//! test looks at is one it started.

use std::path::Path;

use crate::schema::{self, RunEvent, RunSummary};
use crate::support::{Env, Tree, proc_state, wait_until};

const MIB: u64 = 1 << 20;

/// Start `headroom ARGS` under the supervisor, stdout and stderr to files.
fn headroom(env: &Env, args: &[&str]) -> (Tree, std::path::PathBuf, std::path::PathBuf) {
    let out = env.path("stdout");
    let err = env.path("stderr");
    let t = env.spawn_with(env.headroom_path(), args, Some((&out, &err)));
    (t, out, err)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

fn summary(events: &[RunEvent]) -> &RunSummary {
    match events.last() {
        Some(RunEvent::Summary(s)) => s,
        other => panic!("the last event is not the summary: {other:?}"),
    }
}

/// Pids the fixture printed (`ready PID` from each hog, `ready {"pids":[..]}` from a tree).
fn ready_pids(stdout: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for l in stdout.lines() {
        let Some(rest) = l.strip_prefix("ready ") else {
            continue;
        };
        if let Ok(pid) = rest.trim().parse::<i32>() {
            out.push(pid);
        } else if let Ok(v) = serde_json::from_str::<serde_json::Value>(rest) {
            out.extend(
                v["pids"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p.as_i64())
                    .map(|p| p as i32),
            );
        }
    }
    out
}

/// Every pid the run's events name (signalled, parked, forwarded, the command).
fn event_pids(events: &[RunEvent]) -> Vec<i32> {
    let mut out = Vec::new();
    for e in events {
        match e {
            RunEvent::Start { command_pid, .. } => out.push(*command_pid),
            RunEvent::Signal { pids, .. }
            | RunEvent::Park { pids, .. }
            | RunEvent::Forward { pids, .. } => out.extend(pids),
            _ => {}
        }
    }
    out
}

/// A process that is still alive (present and not a zombie waiting for its reaper).
fn alive(pid: i32) -> bool {
    proc_state(pid).is_some_and(|s| s != 'Z')
}

/// Nothing of the tree is alive the moment headroom has exited.
fn assert_tree_gone(env: &Env, pids: &[i32]) {
    let live: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
    assert!(
        live.is_empty(),
        "still alive after headroom exited: {live:?}"
    );
    if env.private {
        assert_eq!(
            crate::support::live_pids_of_uid(env.uid),
            Vec::<i32>::new(),
            "the test uid still runs something"
        );
    }
}

#[test]
fn a_tree_over_its_limit_is_ended_and_nothing_survives() {
    let env = Env::new();
    let fx = env.fixture().to_str().unwrap().to_string();
    let (mut t, out, err) = headroom(
        &env,
        &[
            "--json",
            "run",
            "--limit",
            "100M",
            "--interval",
            "100ms",
            "--grace",
            "2s",
            "--",
            &fx,
            "hog",
            "--mib",
            "100",
            "--children",
            "1",
            "--depth",
            "3",
        ],
    );
    let code = t.exit_code();
    let events = schema::run_events(&read(&err));
    assert!(code == 137 || code == 143, "exit {code}; events {events:?}");
    let mut pids = ready_pids(&read(&out));
    pids.extend(event_pids(&events));
    assert!(!pids.is_empty());
    assert_tree_gone(&env, &pids);
    let s = summary(&events);
    assert_eq!(i32::from(s.exit_code), code);
    assert_eq!(s.ended_by.as_deref(), Some("limit"));
    assert!(s.peak_footprint_bytes >= 100 * MIB, "{s:?}");
    assert!(s.terminated >= 1 && s.survivors.is_empty(), "{s:?}");
    assert!(events.iter().any(|e| matches!(e, RunEvent::Breach { .. })));
    // Every record, the breach and the signals among them, as published.
    let records = crate::support::json_lines_among_text("run stderr", &read(&err));
    // Each says when it happened, in the order it happened (to the second: equal may be).
    let mut last = i64::MIN;
    for kind in ["start", "breach", "signal", "summary"] {
        let r = records.iter().find(|r| r["type"] == kind);
        let at = r
            .and_then(|r| r["at"].as_str())
            .and_then(|t| headroom_core::time::parse_ms(t).ok());
        let Some(at) = at else {
            panic!("no {kind} with an RFC 3339 `at`: {records:?}");
        };
        assert!(
            at >= last,
            "{kind} is dated before the record it follows: {records:?}"
        );
        last = at;
    }
    crate::contract::assert_valid("headroom.run/1", &records);
    drop(t);
}

#[test]
fn the_human_summary_names_the_peak() {
    let env = Env::new();
    let fx = env.fixture().to_str().unwrap().to_string();
    let (mut t, out, err) = headroom(
        &env,
        &[
            "run", "--limit", "50M", "--grace", "2s", "--", &fx, "hog", "--mib", "80",
        ],
    );
    let code = t.exit_code();
    assert!(code == 137 || code == 143, "exit {code}");
    let err = read(&err);
    let last = err.lines().last().unwrap_or_default();
    assert!(last.starts_with("headroom: peak "), "{err}");
    assert!(
        last.contains("limit 50 MiB") && last.contains(&format!("exit {code}")),
        "{err}"
    );
    let peak: f64 = last["headroom: peak ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(peak >= 50.0, "{last}");
    assert_tree_gone(&env, &ready_pids(&read(&out)));
}

#[test]
fn a_tree_under_its_limit_exits_with_its_own_code_and_stdout_untouched() {
    let env = Env::new();
    let fx = env.fixture().to_str().unwrap().to_string();
    let (mut t, out, err) = headroom(&env, &["run", "--limit", "100M", "--", &fx, "exit", "7"]);
    assert_eq!(t.exit_code(), 7);
    assert_eq!(
        read(&out),
        "",
        "headroom adds nothing to the command's stdout"
    );
    let err = read(&err);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("nothing done") && err.ends_with("exit 7\n"),
        "{err}"
    );

    // With --json too, stdout stays the command's.
    let (mut t, out, err) = headroom(
        &env,
        &["--json", "run", "--limit", "100M", "--", &fx, "exit", "7"],
    );
    assert_eq!(t.exit_code(), 7);
    assert_eq!(read(&out), "");
    let events = schema::run_events(&read(&err));
    assert!(matches!(
        events.first(),
        Some(RunEvent::Start {
            subreaper: true,
            ..
        })
    ));
    let s = summary(&events);
    assert_eq!(
        (s.exit_code, s.ended_by.as_deref(), s.terminated, s.killed),
        (7, None, 0, 0)
    );
}

#[test]
fn sigint_to_headroom_reaches_the_command_and_nothing_remains() {
    let env = Env::new();
    let fx = env.fixture().to_str().unwrap().to_string();
    let (mut t, out, err) = headroom(
        &env,
        &[
            "--json", "run", "--limit", "1G", "--", &fx, "tree", "--depth", "3", "--fanout", "2",
        ],
    );
    wait_until("the tree to be ready", || read(&out).contains("ready "));
    let pids = ready_pids(&read(&out));
    assert_eq!(pids.len(), 7, "{pids:?}");
    wait_until("headroom's start event", || {
        read(&err).contains("\"start\"")
    });
    t.signal(libc::SIGINT);
    assert_eq!(t.exit_code(), 130);
    assert_tree_gone(&env, &pids);
    let events = schema::run_events(&read(&err));
    let forwarded: Vec<&RunEvent> = events
        .iter()
        .filter(|e| matches!(e, RunEvent::Forward { .. }))
        .collect();
    assert_eq!(forwarded.len(), 1, "{events:?}");
    if let RunEvent::Forward {
        signal, pids: to, ..
    } = forwarded[0]
    {
        assert_eq!(signal, "SIGINT");
        assert!(
            pids.iter().all(|p| to.contains(p)),
            "forwarded to {to:?}, tree {pids:?}"
        );
    }
    let s = summary(&events);
    assert_eq!(
        s.command_status.as_ref().and_then(|c| c.signal),
        Some(2),
        "the command died of the SIGINT itself"
    );
}

#[test]
fn idle_subtrees_are_parked_first_and_never_left_stopped() {
    let env = Env::new();
    let fx = env.fixture().to_str().unwrap().to_string();
    // The command (group leader, never parked) holds 600 MiB and grows 100 MiB/s; its child
    // holds 600 MiB and sleeps: after a second of history the child is an idle subtree.
    let (mut t, out, err) = headroom(
        &env,
        &[
            "--json",
            "run",
            "--limit",
            "1600M",
            "--grace",
            "2s",
            "--",
            &fx,
            "hog",
            "--mib",
            "600",
            "--children",
            "1",
            "--depth",
            "2",
            "--grow-mib-per-s",
            "100",
        ],
    );
    let code = t.exit_code();
    let events = schema::run_events(&read(&err));
    let pids = ready_pids(&read(&out));
    assert!(code == 137 || code == 143, "exit {code}; {events:?}");
    assert_tree_gone(&env, &pids);
    let cmd = match events.first() {
        Some(RunEvent::Start { command_pid, .. }) => *command_pid,
        other => panic!("{other:?}"),
    };
    let parked: Vec<i32> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Park { pids, .. } => Some(pids.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(parked.len(), 1, "the idle child, and only it: {events:?}");
    assert_ne!(parked[0], cmd, "the command leads its group: never parked");
    let park_at = events
        .iter()
        .position(|e| matches!(e, RunEvent::Park { .. }))
        .unwrap();
    let term_at = events
        .iter()
        .position(|e| matches!(e, RunEvent::Signal { signal, .. } if signal == "SIGTERM"))
        .unwrap();
    assert!(park_at < term_at, "parked before anything was terminated");
    if let RunEvent::Signal { pids: termed, .. } = &events[term_at] {
        assert!(termed.contains(&parked[0]), "the parked child is ended too");
    }
    assert_eq!(summary(&events).parked, 1);
}

#[test]
fn bad_input_is_refused_before_anything_starts() {
    let env = Env::new();
    for (args, needle) in [
        (
            vec!["--limit", "0"],
            "`0` is zero; a size must be at least 1M",
        ),
        (vec!["--limit", "abc"], "`abc` is not a size"),
        (vec!["--limit", "-5"], "`-5` is negative"),
        (vec!["--limit", "1G", "--interval", "0"], "`0` is zero"),
        (vec!["--limit", "1G", "--interval", "1ms"], "at least 10ms"),
        // Used to abort on an `Instant` overflow with the command left running.
        (
            vec!["--limit", "1G", "--interval", "500000000000y"],
            "at most 3650 days",
        ),
        (vec!["--limit", "1G", "--interval", "2m"], "at most 1m"),
        (vec!["--limit", "1G", "--grace", "11m"], "at most 10m"),
        // Used to mean 512 MiB.
        (vec!["--limit", "512B"], "too small a unit"),
        (vec!["--limit", "512KB"], "at least 1M"),
    ] {
        let marker = env.home.join("started");
        let script = format!("touch {}", marker.display());
        let mut argv = vec!["run"];
        argv.extend(args);
        argv.extend(["--", "/bin/sh", "-c", &script]);
        let out = env.cmd().args(&argv).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{argv:?}: {err}");
        assert!(err.contains(needle), "{argv:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!marker.exists(), "{argv:?}: the command was started");
    }
    for argv in [
        vec!["run", "--limit", "1G", "--"],
        vec!["run", "--limit", "1G"],
    ] {
        let out = env.cmd().args(&argv).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{argv:?}: {err}");
        assert!(err.contains("<CMD>"), "{err}");
    }
}

#[test]
fn a_missing_or_unexecutable_command_is_127_or_126() {
    let env = Env::new();
    let (mut t, _, err) = headroom(&env, &["run", "--limit", "1G", "--", "/nonexistent/cmd"]);
    assert_eq!(t.exit_code(), 127);
    assert!(
        read(&err).contains("`/nonexistent/cmd`: command not found"),
        "{}",
        read(&err)
    );
    let (mut t, _, err) = headroom(&env, &["run", "--limit", "1G", "--", "no-such-command-hr"]);
    assert_eq!(t.exit_code(), 127);
    assert!(read(&err).contains("command not found"));
    let script = env.path("not-executable.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    let (mut t, out, err) = headroom(
        &env,
        &["run", "--limit", "1G", "--", script.to_str().unwrap()],
    );
    assert_eq!(t.exit_code(), 126);
    assert!(read(&err).contains("cannot be executed"), "{}", read(&err));
    assert_eq!(read(&out), "");
}

/// headroom on a real (pseudo-)terminal: the command's group is handed the terminal, so
/// Ctrl-C goes straight to it, it can read what is typed, and headroom exits 130.
// Linux: the fixture opens the pseudo-terminal with O_CLOEXEC, which macOS's posix_openpt
// does not take.
#[cfg(target_os = "linux")]
#[test]
fn on_a_terminal_the_command_is_in_the_foreground_and_ctrl_c_reaches_it() {
    let env = Env::new();
    let fx = env.fixture().to_str().unwrap().to_string();
    let script = format!("read line; echo got-$line; exec \"{fx}\" tree --depth 2 --fanout 1");
    // --json: the job-control records on the terminal say when the Ctrl-Z was handled.
    let mut t = env.spawn_pty(
        env.headroom_path(),
        &[
            "--json", "run", "--limit", "1G", "--", "/bin/sh", "-c", &script,
        ],
    );
    // Reading from the terminal works only in the foreground (else SIGTTIN stops it).
    t.send("type hello");
    t.expect("tty got-hello");
    let pids = ready_pids(&format!("ready {}", t.expect("tty ready ")));
    assert_eq!(pids.len(), 2, "{pids:?}");
    t.send("fg?");
    let fg: i32 = t.expect("fg-pgid ").trim().parse().unwrap();
    assert_eq!(fg, pids[0], "the command's own group owns the terminal");
    assert_ne!(fg, t.pid, "not headroom's");

    // Ctrl-Z: headroom has no job-control shell above it here (its group is orphaned), so
    // it must not leave the command stopped.
    t.send("ctrl-z");
    // The stop was seen and the group continued (not merely "nothing is stopped yet").
    let mut actions = Vec::new();
    while actions.last().map(String::as_str) != Some("continued") {
        // The terminal echoes Ctrl-Z as `^Z` in front of the record that follows it.
        let line = t.expect("tty ");
        let record = line.find('{').map_or("", |i| &line[i..]);
        if let Ok(RunEvent::JobControl { action, .. }) = schema::run_event(record) {
            actions.push(action);
        }
    }
    assert_eq!(actions, ["stopped", "continued"]);
    wait_until("the command to run again after Ctrl-Z", || {
        pids.iter().all(|&p| proc_state(p) != Some('T'))
    });
    t.send("fg?");
    let fg: i32 = t.expect("fg-pgid ").trim().parse().unwrap();
    assert_eq!(fg, pids[0], "the terminal is handed back to the command");

    t.send("ctrl-c");
    assert_eq!(t.exit_code(), 130);
    assert_tree_gone(&env, &pids);
}

/// The suite's signal tests again, in a test process started with SIGINT ignored, as
/// under `nohup` or `cargo test &` from a script: the fixture resets SIGINT to the default,
/// so they still pass (without that reset they wait out their timeout and fail).
#[test]
fn the_signal_tests_pass_when_the_runner_inherits_sigint_ignored() {
    use std::os::unix::process::CommandExt;
    let tests = [
        "run::sigint_to_headroom_reaches_the_command_and_nothing_remains",
        "run::on_a_terminal_the_command_is_in_the_foreground_and_ctrl_c_reaches_it",
    ];
    let mut c = std::process::Command::new(std::env::current_exe().unwrap());
    c.args(["--exact", "--test-threads=2"])
        .args(tests)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    // SAFETY: between fork and exec, only signal(2), which is async-signal-safe.
    unsafe {
        c.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        })
    };
    let child = crate::support::spawn_retrying(&mut c);
    // The control: the inner run really has SIGINT (bit 1) ignored.
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let ign = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .unwrap_or_else(|| panic!("no SigIgn in {status}"));
    assert_eq!(ign & 2, 2, "SIGINT ignored in the inner run: {ign:x}");
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 2 passed"),
        "{}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What the command leaves running when it exits is ended, and the command's code kept —
/// including a daemon that left the command's session and group (on Linux it is reparented
/// to headroom, a child subreaper, not to init).
// Linux: the escaped daemon is caught by headroom as a subreaper; on macOS it goes to launchd.
#[cfg(target_os = "linux")]
#[test]
fn leftovers_and_escaped_daemons_are_ended_when_the_command_exits() {
    let env = Env::new();
    let fx = env.fixture().to_str().unwrap().to_string();
    let script = format!("\"{fx}\" idle & setsid \"{fx}\" idle & echo started; exit 3");
    let (mut t, out, err) = headroom(
        &env,
        &[
            "--json", "run", "--limit", "1G", "--grace", "2s", "--", "/bin/sh", "-c", &script,
        ],
    );
    assert_eq!(t.exit_code(), 3);
    assert_eq!(read(&out), "started\n");
    let events = schema::run_events(&read(&err));
    let termed: Vec<i32> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Signal {
                signal,
                reason,
                pids,
                ..
            } if signal == "SIGTERM" && reason == "leftovers" => Some(pids.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(termed.len(), 2, "both background processes: {events:?}");
    assert_tree_gone(&env, &termed);
    let s = summary(&events);
    assert_eq!((s.exit_code, s.ended_by.as_deref()), (3, Some("leftovers")));
}

/// The command starts with the signal mask headroom was started with (headroom blocks
/// SIGTTOU/SIGTTIN for itself while it runs; a blocked signal would survive exec).
// Linux: the mask is read from /proc/self/status.
#[cfg(target_os = "linux")]
#[test]
fn the_command_gets_the_signal_mask_headroom_was_given() {
    let env = Env::new();
    let (mut t, out, _) = headroom(
        &env,
        &[
            "run",
            "--limit",
            "1G",
            "--",
            "/bin/grep",
            "-E",
            "^Sig(Blk|Cgt)",
            "/proc/self/status",
        ],
    );
    assert_eq!(t.exit_code(), 0);
    let out = read(&out);
    assert!(out.contains("SigBlk:\t0000000000000000"), "{out}");

    // Started with SIGHUP ignored (as under `nohup`), headroom leaves it ignored, so the
    // command inherits that too (a handler would be reset to the default by exec).
    let script = format!(
        "trap '' HUP; exec \"{}\" run --limit 1G -- /bin/grep ^SigIgn /proc/self/status",
        env.headroom_path().display()
    );
    let out = env.path("stdout-nohup");
    let err = env.path("stderr-nohup");
    let mut t = env.spawn_with(Path::new("/bin/sh"), &["-c", &script], Some((&out, &err)));
    assert_eq!(t.exit_code(), 0);
    let line = read(&out);
    let mask = u64::from_str_radix(line.trim().trim_start_matches("SigIgn:").trim(), 16)
        .unwrap_or_else(|e| panic!("{e}: {line}"));
    assert_eq!(mask & 1, 1, "SIGHUP (bit 0) still ignored: {line}");
}

/// `run --json --limit 100M --grace G -- /bin/sh -c SCRIPT` (`FX` in the script is the
/// fixture); the exit code and the events.
fn run_script(env: &Env, grace: &str, script: &str) -> (i32, Vec<RunEvent>) {
    let fx = env.fixture().to_str().unwrap().to_string();
    let script = script.replace("FX", &fx);
    let (mut t, _, err) = headroom(
        env,
        &[
            "--json",
            "run",
            "--limit",
            "100M",
            "--interval",
            "100ms",
            "--grace",
            grace,
            "--",
            "/bin/sh",
            "-c",
            &script,
        ],
    );
    let code = t.exit_code();
    let events = schema::run_events(&read(&err));
    drop(t);
    (code, events)
}

/// The command's pid, from the start event.
fn s_pid(events: &[RunEvent]) -> i32 {
    events
        .iter()
        .find_map(|e| match e {
            RunEvent::Start { command_pid, .. } => Some(*command_pid),
            _ => None,
        })
        .unwrap()
}

fn signalled(events: &[RunEvent], sig: &str) -> Vec<i32> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Signal { signal, pids, .. } if signal == sig => Some(pids.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

#[test]
fn grace_survivors_get_sigkill_only_while_still_over_the_limit() {
    let env = Env::new();
    // The hog (150 MiB) dies on SIGTERM; the shell ignores it, waits for the hog, then
    // outlives the grace (1 s) in a `sleep` and is tiny: under the limit by then, it is
    // spared (it used to be SIGKILLed: exit 137) and the command ends with its own code.
    let (code, events) = run_script(
        &env,
        "1s",
        "exec 2>/dev/null; trap '' TERM; (trap - TERM; exec FX hog --mib 150) & wait $!; sleep 1.5; exit 5",
    );
    let s = summary(&events);
    assert_eq!(code, 5, "{events:?}");
    assert!(signalled(&events, "SIGKILL").is_empty(), "{events:?}");
    assert_eq!(s.killed, 0, "{s:?}");
    assert!(
        s.spared.contains(&s_pid(&events)),
        "the shell is spared: {s:?}"
    );
    assert!(events.iter().any(|e| matches!(e, RunEvent::Spared { .. })));
    assert_tree_gone(&env, &[]);
    // Control: the hog itself ignores SIGTERM and still holds 150 MiB: SIGKILL, exit 137.
    let (code, events) = run_script(&env, "1s", "trap '' TERM; FX hog --mib 150");
    let s = summary(&events);
    assert_eq!(code, 137, "{events:?}");
    assert!(s.killed >= 1 && s.spared.is_empty(), "{s:?}");
    assert_tree_gone(&env, &[]);
}

#[test]
fn a_process_born_during_the_grace_is_not_sigtermed_on_sight() {
    let env = Env::new();
    let helper = env.path("helper");
    let done = env.path("done");
    // On SIGTERM the command starts a cleanup helper, waits for it and exits 0.
    let script = format!(
        "FX hog --mib 150 & trap '(sleep 1; echo ok > {d}) & echo $! > {h}; wait $!; exit 0' \
         TERM; wait",
        d = done.display(),
        h = helper.display()
    );
    let (_, events) = run_script(&env, "5s", &script);
    let helper_pid: i32 = read(&helper).trim().parse().expect("the helper started");
    // It used to be SIGTERMed at the next tick, before it could do its work.
    assert!(
        !signalled(&events, "SIGTERM").contains(&helper_pid),
        "{events:?}"
    );
    assert_eq!(read(&done).trim(), "ok", "the helper finished: {events:?}");
    assert!(signalled(&events, "SIGKILL").is_empty(), "{events:?}");
    // Control: the breach's own tree was SIGTERMed.
    assert!(signalled(&events, "SIGTERM").len() >= 2, "{events:?}");
    assert_tree_gone(&env, &[helper_pid]);
}
