//! How long `run`'s tree may live (Linux): `--timeout`, `--die-with-parent`, and
//! `--records-fd`, the channel that keeps `run`'s records out of the command's stderr.
//! Everything runs under the test's supervisor (a subreaper that kills what is left when
//! the test ends) as the test's private uid.

use std::path::Path;

use crate::schema::{self, RunEvent};
use crate::support::{Env, proc_state, wait_until};

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

fn alive(pid: i32) -> bool {
    proc_state(pid).is_some_and(|s| s != 'Z')
}

fn pid_in(p: &Path) -> Option<i32> {
    read(p).trim().parse().ok()
}

/// The parent of `pid` (field 4 of its stat), None when gone.
fn ppid(pid: i32) -> Option<i32> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s[s.rfind(')')? + 2..]
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn ended_by(events: &[RunEvent]) -> Option<String> {
    match events.last() {
        Some(RunEvent::Summary(s)) => s.ended_by.clone(),
        other => panic!("the last event is not the summary: {other:?}"),
    }
}

/// A command that ignores SIGTERM past its --timeout gets SIGKILL a grace later: exit 137,
/// `ended_by` `timeout`, nothing of it left. Control: a command that ends well within its
/// timeout keeps its own exit code and output, and nothing is signalled.
#[test]
fn a_timeout_ends_a_tree_that_ignores_sigterm_and_spares_one_that_finishes() {
    let env = Env::new();
    let (out, err) = (env.path("stdout"), env.path("stderr"));
    let pidfile = env.path("cmdpid");
    let script = format!(
        "trap '' TERM; echo $$ > {}; sleep 600 & wait; exec sleep 600",
        pidfile.display()
    );
    let mut t = env.spawn_with(
        env.headroom_path(),
        &[
            "--json",
            "run",
            "--limit",
            "100M",
            "--timeout",
            "1s",
            "--grace",
            "1s",
            "--",
            "/bin/sh",
            "-c",
            &script,
        ],
        Some((&out, &err)),
    );
    assert_eq!(t.exit_code(), 137, "{}", read(&err));
    let events = schema::run_events(&read(&err));
    assert_eq!(ended_by(&events).as_deref(), Some("timeout"), "{events:?}");
    let cmd = pid_in(&pidfile).unwrap();
    assert!(!alive(cmd), "the command outlived its timeout");
    if env.private {
        assert_eq!(crate::support::live_pids_of_uid(env.uid), Vec::<i32>::new());
    }
    crate::contract::assert_valid(
        "headroom.run/1",
        &crate::support::json_lines_among_text("run stderr", &read(&err)),
    );
    drop(t);

    let mut t = env.spawn_with(
        env.headroom_path(),
        &[
            "--json",
            "run",
            "--limit",
            "100M",
            "--timeout",
            "60s",
            "--",
            "/bin/sh",
            "-c",
            "echo done; exit 7",
        ],
        Some((&out, &err)),
    );
    assert_eq!(t.exit_code(), 7, "{}", read(&err));
    assert_eq!(read(&out), "done\n");
    let events = schema::run_events(&read(&err));
    assert_eq!(ended_by(&events), None, "{events:?}");
    assert!(
        !events.iter().any(|e| matches!(e, RunEvent::Signal { .. })),
        "{events:?}"
    );
}

/// The parent of `headroom run --die-with-parent` is SIGKILLed: run ends the tree (a
/// command that ignores SIGTERM, so it takes the SIGKILL) with `ended_by`
/// `parent-exited`. Control: without the flag the same command outlives the parent and
/// runs to its end (it finishes when the test lets it, after run was handed on).
#[test]
fn die_with_parent_ends_the_tree_when_the_parent_dies_and_only_with_the_flag() {
    for flag in [true, false] {
        let env = Env::new();
        let (go, done, cmdpid, hpid, err) = (
            env.path("go"),
            env.path("done"),
            env.path("cmdpid"),
            env.path("hpid"),
            env.path("records"),
        );
        let inner = format!(
            "trap '' TERM; echo \\$\\$ > {cmdpid}; while [ ! -e {go} ]; do sleep 0.05; done; \
             echo finished > {done}",
            cmdpid = cmdpid.display(),
            go = go.display(),
            done = done.display()
        );
        let script = format!(
            "{h} --json run {flag} --limit 100M --grace 1s -- /bin/sh -c \"{inner}\" \
             2>{err} & echo $! > {hpid}; wait",
            h = env.headroom_path().display(),
            flag = if flag { "--die-with-parent" } else { "" },
            err = err.display(),
            hpid = hpid.display(),
        );
        let t = env.spawn(Path::new("/bin/sh"), &["-c", &script]);
        wait_until("the command started", || pid_in(&cmdpid).is_some());
        let cmd = pid_in(&cmdpid).unwrap();
        let h = pid_in(&hpid).unwrap();
        assert_eq!(ppid(h), Some(t.pid), "headroom is the shell's child");
        t.signal(libc::SIGKILL);
        if flag {
            wait_until("the command ended with its parent's parent", || !alive(cmd));
            wait_until("headroom exited", || !alive(h));
            let events = schema::run_events(&read(&err));
            assert_eq!(
                ended_by(&events).as_deref(),
                Some("parent-exited"),
                "{events:?}"
            );
            assert!(!done.exists(), "the command was ended, not finished");
        } else {
            wait_until("headroom handed on", || ppid(h) != Some(t.pid));
            assert!(alive(cmd), "without the flag the command goes on");
            std::fs::write(&go, "").unwrap();
            wait_until("the command finished", || done.exists());
            wait_until("headroom exited", || !alive(h));
            assert_eq!(ended_by(&schema::run_events(&read(&err))), None);
        }
        drop(t);
    }
}

/// The thread that forked `run` ends while its process lives on (PR_SET_PDEATHSIG fires on
/// the parent *thread*): run must not take that for its parent's exit. The command runs to
/// its end, told to finish only after that thread is gone.
#[test]
fn the_spawning_thread_ending_is_not_the_parent_dying() {
    let env = Env::new();
    let (go, done, err) = (env.path("go"), env.path("done"), env.path("records"));
    let py = format!(
        r#"
import os, subprocess, threading, time
procs = []
tids = []
def start():
    tids.append(threading.get_native_id())
    procs.append(subprocess.Popen(
        ["{h}", "--json", "run", "--die-with-parent", "--limit", "100M", "--grace", "1s",
         "--", "/bin/sh", "-c", "while [ ! -e {go} ]; do sleep 0.05; done; echo finished > {done}"],
        stderr=open("{err}", "w")))
t = threading.Thread(target=start)
t.start()
t.join()
while os.path.exists(f"/proc/self/task/{{tids[0]}}"):
    time.sleep(0.01)
open("{go}", "w").close()
print("exited", procs[0].wait(), flush=True)
"#,
        h = env.headroom_path().display(),
        go = go.display(),
        done = done.display(),
        err = err.display(),
    );
    let mut t = env.spawn(Path::new("/usr/bin/python3"), &["-c", &py]);
    let code = t.expect("exited ");
    assert_eq!(code.trim(), "0", "{}", read(&err));
    assert!(done.exists(), "the command ran to its end");
    assert_eq!(ended_by(&schema::run_events(&read(&err))), None);
}

/// With --records-fd, run's records go to that descriptor and the command's stderr is its
/// own, byte for byte, even lines that look like run's records; the command does not
/// inherit the descriptor. Control: the records there are the run's own, valid, ending
/// with the summary of the command's exit.
#[test]
fn records_fd_keeps_runs_records_out_of_the_commands_bytes() {
    let env = Env::new();
    let (out, err, records) = (env.path("stdout"), env.path("stderr"), env.path("records"));
    let lookalikes = r#"{"type":"warning","at":"x","message":"mine"}
{"schema":"headroom.run/1","type":"summary"}
plain
"#;
    std::fs::write(env.path("lookalikes"), lookalikes).unwrap();
    let script = format!(
        "exec {h} --json run --records-fd 3 --limit 100M -- /bin/sh -c \
         'cat {l} >&2; if [ -e /proc/self/fd/3 ]; then echo fd3-inherited; else echo no-fd3; fi' \
         3>{r}",
        h = env.headroom_path().display(),
        l = env.path("lookalikes").display(),
        r = records.display(),
    );
    let mut t = env.spawn_with(Path::new("/bin/sh"), &["-c", &script], Some((&out, &err)));
    assert_eq!(t.exit_code(), 0, "{}", read(&err));
    assert_eq!(read(&err), lookalikes, "the command's stderr, untouched");
    assert_eq!(read(&out), "no-fd3\n");
    let recs = crate::support::strict_json_lines("records", &read(&records));
    crate::contract::assert_valid("headroom.run/1", &recs);
    assert_eq!(recs.first().map(|r| &r["type"]), Some(&"start".into()));
    let last = recs.last().unwrap();
    assert_eq!(
        (&last["type"], &last["exit_code"]),
        (&"summary".into(), &0.into())
    );
    // A descriptor that is not open is a usage error, before anything starts.
    let o = env
        .cmd()
        .args(["run", "--records-fd", "9", "--limit", "1M", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(64));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--records-fd `9`"),
        "{o:?}"
    );
}
