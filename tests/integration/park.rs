//! `park`, `wake`, `park-tree`, `wake-tree` on real processes (Linux), all started by the
//! test under its own supervisor and private uid.

use predicates::prelude::*;

use crate::schema;
use crate::support::{Env, proc_state, wait_until};

fn tree_pids(ready: &serde_json::Value) -> Vec<i32> {
    ready["pids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_i64().unwrap() as i32)
        .collect()
}

#[test]
fn park_tree_stops_every_process_and_wake_tree_continues_them() {
    let env = Env::new();
    let mut t = env.spawn(env.fixture(), &["tree", "--depth", "3", "--fanout", "2"]);
    let pids = tree_pids(&t.ready());
    assert_eq!(pids.len(), 7);
    let root = pids[0].to_string();

    let out = env
        .cmd()
        .args(["park-tree", &root])
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with(&format!("parked 7 processes of the tree of pid {root}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("headroom wake-tree {root}")),
        "{text}"
    );
    for &p in &pids {
        assert_eq!(proc_state(p), Some('T'), "pid {p} after park-tree");
    }
    // Again: nothing to do, still exit 0.
    env.cmd()
        .args(["park-tree", &root])
        .assert()
        .success()
        .stdout(predicate::str::contains("already parked"));

    let out = env
        .cmd()
        .args(["--json", "wake-tree", &root])
        .assert()
        .success()
        .get_output()
        .clone();
    let r: schema::Park = schema::read(&out.stdout);
    assert_eq!(
        (r.schema.as_str(), r.action.as_str(), r.changed),
        ("headroom.park/1", "wake-tree", 7)
    );
    assert_eq!(
        r.processes.last().unwrap().pid,
        pids[0],
        "the root is woken last"
    );
    for &p in &pids {
        wait_until("the tree to run again", || proc_state(p) != Some('T'));
    }
    drop(t);
}

#[test]
fn park_and_wake_one_process() {
    let env = Env::new();
    let mut t = env.spawn(env.fixture(), &["tree", "--depth", "2", "--fanout", "1"]);
    let pids = tree_pids(&t.ready());
    let child = pids[1].to_string();
    let out = env
        .cmd()
        .args(["--json", "park", &child])
        .assert()
        .success()
        .get_output()
        .clone();
    let r: schema::Park = schema::read(&out.stdout);
    assert_eq!((r.changed, r.processes[0].outcome.as_str()), (1, "stopped"));
    assert_eq!(proc_state(pids[1]), Some('T'));
    assert_ne!(proc_state(pids[0]), Some('T'), "only the one process");
    env.cmd()
        .args(["wake", &child])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("woke pid {child}")));
    wait_until("the child to run again", || {
        proc_state(pids[1]) != Some('T')
    });
    // Waking a process that is not stopped says so, and sends nothing.
    env.cmd()
        .args(["wake", &child])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "is not parked (state S); nothing to do",
        ));
    drop(t);
}

#[test]
fn refusals_exit_3_and_signal_nothing() {
    let env = Env::new();
    for (pid, why) in [
        ("1", "pid 1 is init"),
        ("0", "your whole process group"),
        ("-1", "every process you may signal"),
        ("-4242", "process group 4242"),
    ] {
        env.cmd()
            .args(["park", "--", pid])
            .assert()
            .code(3)
            .stderr(predicate::str::contains(format!(
                "pid `{pid}` is never signalled: "
            )))
            .stderr(predicate::str::contains(why));
    }
    env.cmd()
        .args(["park", "999999"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such process `999999`"));
    env.cmd()
        .args(["wake-tree", "99999999999"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no such process"));

    // headroom's own parent: a shell that runs `headroom park $$` and then reports. Were
    // the shell stopped, it would never print `rc=`.
    let out = env.path("stdout");
    let err = env.path("stderr");
    let script = format!("\"{}\" park $$; echo rc=$?", env.headroom_path().display());
    let mut t = env.spawn_with(
        std::path::Path::new("/bin/sh"),
        &["-c", &script],
        Some((&out, &err)),
    );
    assert_eq!(t.exit_code(), 0);
    let stdout = std::fs::read_to_string(&out).unwrap();
    let stderr = std::fs::read_to_string(&err).unwrap();
    assert_eq!(stdout.trim(), "rc=3", "{stderr}");
    assert!(stderr.contains("is an ancestor of headroom"), "{stderr}");

    // Another user's process (this test process itself when run as root with a private uid).
    if env.private {
        env.cmd()
            .args(["park-tree", &std::process::id().to_string()])
            .assert()
            .code(3)
            .stderr(predicate::str::contains("belongs to uid"));
        assert_ne!(proc_state(std::process::id() as i32), Some('T'));
    }
}
