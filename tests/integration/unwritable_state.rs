//! A state directory that cannot be written (a full disk; here, read-only for the test's
//! private uid) must not block a cleanup (issue 25 item 9): the CPU history that cannot be
//! rewritten is said once and counted, and the cleanup acts. The control, a writable
//! directory, gets its history written.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::schema;
use crate::support::{Env, Tree, json_lines, proc_state, wait_until, zombie_children};

/// The state files a first cleanup leaves (the CPU history and its lock, the evidence log
/// and its lock), made by a `reap` that matches nothing; then the directory read-only, so
/// every file can be read and appended to but nothing can be created or replaced, as on a
/// full disk. `None`, said, when the permissions would not bind (the tests as root without a
/// private uid cannot happen; this guards a change to `Env`).
fn read_only_state(env: &Env) {
    let out = env
        .cmd()
        .args(["reap", "--json", "--allow", "agency-none-xyz"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(env.home.join("cpu-history.json").is_file());
    assert!(
        !crate::support::is_root() || env.private,
        "the binary would run as root, which permissions do not bind"
    );
    set_mode(&env.home, 0o500);
}

fn set_mode(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn leaker(env: &Env, name: &str) -> (Tree, i32) {
    let exe = env.named_fixture(name);
    let mut tree = env.spawn(&exe, &["leak", "--zombies", "150", "--ignore-term"]);
    let pid = tree.ready()["pid"].as_i64().unwrap() as i32;
    assert_eq!(zombie_children(pid), 150);
    (tree, pid)
}

/// `reap`: before the fix it exited 2 ("cannot replace `cpu-history.json`") with nothing
/// signalled; now the leaker is ended and its zombies verified gone, with one warning.
#[test]
fn reap_acts_when_the_cpu_history_cannot_be_written() {
    let env = Env::new();
    read_only_state(&env);
    let before = std::fs::read(env.home.join("cpu-history.json")).unwrap();
    let (_tree, pid) = leaker(&env, "agency-rofs");
    let out = env
        .cmd()
        .args([
            "reap",
            "--json",
            "--allow",
            "agency-rofs",
            "--grace",
            "300ms",
        ])
        .output()
        .unwrap();
    set_mode(&env.home, 0o700);
    let err = String::from_utf8_lossy(&out.stderr);
    let r: schema::Reap = schema::read_or(&out.stdout, &err);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(r.targets.len(), 1, "{r:?}");
    assert_eq!((r.targets[0].pid, r.targets[0].verified), (pid, true));
    wait_until("the leaker to be reaped", || proc_state(pid).is_none());
    assert_eq!(
        err.matches("CPU history not written").count(),
        1,
        "said once: {err}"
    );
    assert_eq!(
        std::fs::read(env.home.join("cpu-history.json")).unwrap(),
        before,
        "not rewritten"
    );
}

/// The control: the same cleanup with the directory writable writes the history, and says
/// nothing about it.
#[test]
fn reap_writes_the_cpu_history_where_it_can() {
    let env = Env::new();
    read_only_state(&env);
    set_mode(&env.home, 0o700);
    std::fs::remove_file(env.home.join("cpu-history.json")).unwrap();
    let (_tree, pid) = leaker(&env, "agency-rwfs");
    let out = env
        .cmd()
        .args([
            "reap",
            "--json",
            "--allow",
            "agency-rwfs",
            "--grace",
            "300ms",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // Exit 0 needs the leaker gone within the escalation's settle time after SIGKILL and its
    // zombies reaped within the verification bound (the product's own bounds, 5 s and 10 s);
    // the report says which one a loaded machine missed.
    assert_eq!(
        out.status.code(),
        Some(0),
        "{err}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    wait_until("the leaker to be reaped", || proc_state(pid).is_none());
    assert!(!err.contains("CPU history"), "{err}");
    let h: serde_json::Value =
        serde_json::from_slice(&std::fs::read(env.home.join("cpu-history.json")).unwrap()).unwrap();
    assert_eq!(h["schema"], "headroom.cpu-history/2");
    assert_eq!(h["uid"], env.uid);
}

/// `watch`: its automatic cleanup, at a critical level, in a directory it cannot write (each
/// round's own writes fail too, and are reported as before). The leaker is ended once, the
/// lost history write is said once and counted in the summary. Before the fix every cleanup
/// failed ("cleanup failed: cannot replace …") and the leaker stayed.
#[test]
fn watch_cleans_up_when_the_cpu_history_cannot_be_written() {
    let env = Env::new();
    read_only_state(&env);
    set_mode(&env.home, 0o700);
    let cfg = env.path("watch.toml");
    std::fs::write(
        &cfg,
        "[reap]\nallow = [\"agency-rows\"]\ngrace = \"300ms\"\n[watch]\nhangs = false\n[notifications]\nenabled = false\n",
    )
    .unwrap();
    let (mut _tree, pid) = leaker(&env, "agency-rows");
    // The watch's own lock and state file exist before the directory goes read-only.
    let out_path = env.path("watch.out");
    let err_path = env.path("watch.err");
    let args = [
        "watch",
        "--interval",
        "200ms",
        "--json",
        "--crit",
        "0.0001",
        "--warn",
        "0.0001",
        "--config",
        cfg.to_str().unwrap(),
    ];
    let mut watch = env.spawn_with(env.headroom_path(), &args, Some((&out_path, &err_path)));
    wait_until("a first reading", || {
        json_lines(&out_path).iter().any(|e| e["type"] == "reading")
    });
    set_mode(&env.home, 0o500);
    wait_until("a cleanup with a target", || {
        json_lines(&out_path)
            .iter()
            .any(|e| e["type"] == "cleanup" && !e["targets"].as_array().unwrap().is_empty())
    });
    wait_until("the leaker to be reaped", || proc_state(pid).is_none());
    watch.signal(libc::SIGTERM);
    let code = watch.exit_code();
    set_mode(&env.home, 0o700);
    assert_eq!(code, 0);
    let events = json_lines(&out_path);
    let said = events
        .iter()
        .filter(|e| {
            let m = e["message"].as_str().unwrap_or_default();
            m.contains("CPU history not written")
        })
        .count();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let said = said + stderr.matches("CPU history not written").count();
    assert_eq!(said, 1, "said once: {events:?}\n{stderr}");
    let summary = events.last().unwrap();
    assert_eq!(summary["type"], "summary");
    assert!(
        summary["history_writes_lost"].as_u64().unwrap() >= 1,
        "{summary}"
    );
    assert!(
        !events.iter().any(|e| e["message"]
            .as_str()
            .is_some_and(|m| m.contains("cleanup failed"))),
        "{events:?}"
    );
    crate::contract::assert_valid("headroom.watch/3", &events);
}
