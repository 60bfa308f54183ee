//! Fault 4: two guards at once on the same leaker: a `watch` (the service) and `reap` from
//! cron, twice over, and a second `watch`. Guaranteed: the leaker is signalled by one of them
//! only (`cleanup.lock` serialises select-signal-verify; one that waited reads the table
//! again and reports the parent as already handled); a second `watch` refuses (`watch.lock`),
//! and the state and evidence stay whole.

use super::{check_state_files, require_sandbox};
use crate::support::{
    Env, hold_cleanup_lock, json_lines, lock_waiters, proc_state, wait_more_readings, wait_until,
};

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn watch_and_two_reaps_signal_a_leaker_once_and_a_second_watch_refuses() {
    let env = Env::new();
    require_sandbox(&env);
    let cfg = env.path("guards.toml");
    std::fs::write(
        &cfg,
        "[reap]\nallow = [\"agency-2g\"]\ngrace = \"1s\"\n[notifications]\nenabled = false\n",
    )
    .unwrap();
    let terms = env.path("terms");
    let leaker = env.named_fixture("agency-2g");
    let mut leak = env.spawn(
        &leaker,
        &[
            "leak",
            "--zombies",
            "150",
            "--count-term",
            terms.to_str().unwrap(),
        ],
    );
    let pid = leak.ready()["pid"].as_i64().unwrap() as i32;
    // The test holds the cleanup lock first, so that every guard finds the leaker, selects
    // it and has to wait: then which one acts is the only thing left to chance, and the
    // others must report it as handled. (Left to timing, the watch's first round often
    // cleaned up before either reap had started, and nothing was ever waited for.)
    let (held, ino) = hold_cleanup_lock(&env);
    let (out, err) = (env.path("watch.out"), env.path("watch.err"));
    let cfg_s = cfg.to_str().unwrap();
    let args = [
        "watch",
        "--interval",
        "200ms",
        "--json",
        "--no-hangs",
        "--crit",
        "0.0001",
        "--warn",
        "0.0001",
        "--config",
        cfg_s,
    ];
    let mut watch = env.spawn_with(env.headroom_path(), &args, Some((&out, &err)));
    wait_until("the watch to wait for the cleanup lock", || {
        lock_waiters(ino) >= 1
    });

    // A second watch, long-running or --once, refuses while the first runs.
    for extra in [&["--once"][..], &[][..]] {
        let second = env
            .cmd()
            .args(["watch", "--json", "--no-hangs", "--config", cfg_s])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(second.status.code(), Some(3), "{second:?}");
        let e = String::from_utf8_lossy(&second.stderr);
        assert!(
            e.contains("another `headroom watch`") && e.contains("watch.lock"),
            "{e}"
        );
    }

    // Two cron `reap`s beside the watch, all three waiting for the lock, then let go.
    let reports: Vec<serde_json::Value> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let o = env
                        .cmd()
                        .args(["reap", "--json", "--config", cfg_s])
                        .output()
                        .unwrap();
                    assert!(o.status.code().is_some_and(|c| c <= 1), "{o:?}");
                    serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
                })
            })
            .collect();
        wait_until(
            "the watch and both reaps to wait for the cleanup lock",
            || lock_waiters(ino) >= 3,
        );
        drop(held);
        runs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    wait_until("the leaker to be reaped", || proc_state(pid).is_none());
    wait_more_readings("two more watch rounds", &out, 2);
    watch.signal(libc::SIGTERM);
    assert_eq!(watch.exit_code(), 0);

    let delivered = std::fs::read_to_string(&terms)
        .unwrap_or_default()
        .lines()
        .count();
    assert_eq!(
        delivered,
        1,
        "the leaker got {delivered} SIGTERMs: {reports:#?} {:#?}",
        json_lines(&out)
    );
    let cleanups: Vec<serde_json::Value> = json_lines(&out)
        .into_iter()
        .filter(|e| e["type"] == "cleanup")
        .collect();
    let all: Vec<&serde_json::Value> = reports.iter().chain(cleanups.iter()).collect();
    let signalled = all
        .iter()
        .filter(|r| {
            r["targets"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["pid"] == pid)
        })
        .count();
    assert_eq!(signalled, 1, "one guard acted: {all:#?}");
    let handled = all
        .iter()
        .filter(|r| {
            r["already_handled"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| *p == pid)
        })
        .count();
    // Both reaps waited; the watch waited too, and says so unless it was the one that acted.
    assert!(handled >= 2, "the guards that waited say so: {all:#?}");
    let said = all
        .iter()
        .find(|r| !r["already_handled"].as_array().unwrap().is_empty())
        .unwrap();
    assert!(
        said["summary"]
            .as_str()
            .unwrap()
            .contains("Already handled"),
        "{said}"
    );
    let (files, rows) = check_state_files(&env.home);
    let kills = rows.iter().filter(|r| r.action.starts_with("kill")).count();
    assert_eq!(kills, 1, "one kill row in the evidence");
    eprintln!(
        "two guards: {} reap runs + {} watch cleanups, 1 SIGTERM delivered, {handled} reported \
         already handled, {files} files checked",
        reports.len(),
        cleanups.len()
    );
    drop(leak);
}
