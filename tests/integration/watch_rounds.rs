//! Which of `watch`'s rounds read the process table (`core::round_plan`), with a real watch:
//! while every task on the machine together is far below the warning threshold a round
//! reads only that bound, near it every round reads, and a leak of 50 zombies a second
//! toward the wall is cleaned up before any fork fails.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::faults::{in_mount_ns, mount, require_sandbox};
use crate::support::{Env, count_uid, json_lines, proc_state, wait_until};

/// Every task on the machine (`/proc/loadavg`'s total), as the bound is read.
fn machine_tasks() -> u64 {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap();
    s.split_whitespace()
        .nth(3)
        .unwrap()
        .split_once('/')
        .unwrap()
        .1
        .parse()
        .unwrap()
}

/// `watch` at 100 ms with an exact round at least every second, at RLIMIT_NPROC `nproc`,
/// until it has given `readings` readings; its events.
fn watch_until_readings(env: &Env, nproc: u64, readings: usize) -> Vec<serde_json::Value> {
    let (out, err) = (env.path("watch.out"), env.path("watch.err"));
    let limit = format!("--nproc={nproc}:{nproc}");
    let args = [
        limit.as_str(),
        "--",
        env.headroom_path().to_str().unwrap(),
        "watch",
        "--interval",
        "100ms",
        "--table-every",
        "1s",
        "--json",
        "--no-hangs",
        "--no-auto-reap",
    ];
    let mut watch = env.spawn_with(Path::new("/usr/bin/prlimit"), &args, Some((&out, &err)));
    let count = || {
        json_lines(&out)
            .iter()
            .filter(|e| e["type"] == "reading")
            .count()
    };
    wait_until("the readings", || count() >= readings);
    watch.signal(libc::SIGTERM);
    assert_eq!(
        watch.exit_code(),
        0,
        "{}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    json_lines(&out)
}

/// Far: a limit 50 times the machine's tasks puts the bound at 2 %, below the 40 % margin:
/// between the exact rounds (the first, then one a second) the rounds read only the bound,
/// print and record nothing. Near, the control: a limit of 1.5 times the machine's tasks puts
/// the bound at about 67 %, and every round reads the table (the user's own count stays
/// far below the 50 % warning, so the readings are normal). Fails when the plan never waits
/// (no quiet rounds far) or waits near (quiet rounds near).
#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn far_rounds_read_only_the_bound_and_near_ones_read_the_table() {
    let env = Env::new();
    require_sandbox(&env);
    let tasks = machine_tasks();
    let events = watch_until_readings(&env, tasks * 50, 3);
    let summary = events.last().unwrap();
    assert_eq!(summary["type"], "summary", "{summary}");
    let readings = events.iter().filter(|e| e["type"] == "reading").count() as u64;
    assert_eq!(summary["rounds"], readings, "{summary}");
    assert!(
        summary["quiet_rounds"].as_u64().unwrap() > 0,
        "far from the wall, no round waited: {summary}"
    );
    // One evidence row per reading: a quiet round records nothing.
    let rows = std::fs::read_to_string(env.home.join("evidence.csv")).unwrap();
    assert_eq!(
        rows.lines().filter(|l| l.contains(",poll,")).count() as u64,
        readings
    );

    // The machine's task count moves by hundreds while other tests make and end their
    // zombies; read live, a fall by 40 % during the run (a leak test's 1,500 zombies reaped)
    // would put the bound below the margin and let a round wait. So the watch reads the
    // count taken now, held: `/proc/loadavg` in its own mount namespace is a file saying
    // it. The bound stays an upper bound of the user's own count (checked below).
    let env = Env::new();
    let tasks = machine_tasks();
    let (_, user) = count_uid(env.uid);
    assert!(
        tasks >= 4 * (user + 3),
        "too few tasks here for the control"
    );
    let held = env.path("loadavg");
    std::fs::write(&held, format!("0.00 0.00 0.00 1/{tasks} 1\n")).unwrap();
    std::fs::set_permissions(&held, std::fs::Permissions::from_mode(0o644)).unwrap();
    let events = in_mount_ns(|| {
        mount(
            Some(held.to_str().unwrap()),
            Path::new("/proc/loadavg"),
            None,
            libc::MS_BIND,
            None,
        );
        assert_eq!(machine_tasks(), tasks, "the held count is what is read");
        watch_until_readings(&env, tasks * 3 / 2, 12)
    });
    let summary = events.last().unwrap();
    assert_eq!(
        summary["quiet_rounds"], 0,
        "near the wall a round waited: {summary}"
    );
    assert!(
        events
            .iter()
            .filter(|e| e["type"] == "reading")
            .all(|e| e["level"] == "normal"),
        "{events:?}"
    );
}

/// The reaction at the wall: a leaker forking a zombie every 20 ms under an RLIMIT_NPROC
/// 600 to 1,500 above what its uid holds, and a watch at 100 ms with the same limit. While the
/// machine's tasks are below 40 % of that limit the rounds start quiet; the zombies raise
/// the bound with the user's count, so exact rounds begin before any reading could warn,
/// and the cleanup at critical ends the leaker before its fork fails. Fails when a round
/// waits on a bound that does not include the leak (or waits at all once near): the
/// watch never reads critical, and the leaker reaches the wall (`fork-failed`).
#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn a_leak_of_50_zombies_a_second_is_cleaned_up_before_a_fork_fails() {
    let env = Env::new();
    require_sandbox(&env);
    let cfg = env.path("pace.toml");
    std::fs::write(
        &cfg,
        "[reap]\nallow = [\"agency-pace\"]\ngrace = \"300ms\"\n[notifications]\nenabled = false\n",
    )
    .unwrap();
    // Three times the machine's tasks, so that the rounds start quiet, within 600 to 1,500
    // above the user's count (12 to 30 s of leak to the wall).
    let user = count_uid(env.uid).1;
    let wall = (3 * machine_tasks()).clamp(user + 600, user + 1500);
    let limit = format!("--nproc={wall}:{wall}");
    let (out, err) = (env.path("watch.out"), env.path("watch.err"));
    let args = [
        limit.as_str(),
        "--",
        env.headroom_path().to_str().unwrap(),
        "watch",
        "--interval",
        "100ms",
        "--json",
        "--no-hangs",
        "--config",
        cfg.to_str().unwrap(),
    ];
    let mut watch = env.spawn_with(Path::new("/usr/bin/prlimit"), &args, Some((&out, &err)));
    wait_until("a first reading", || {
        json_lines(&out).iter().any(|e| e["type"] == "reading")
    });
    let leaker = env.named_fixture("agency-pace");
    let zombies = (wall + 100).to_string();
    let leak_args = [
        limit.as_str(),
        "--",
        leaker.to_str().unwrap(),
        "leak",
        "--zombies",
        zombies.as_str(),
        "--pace-ms",
        "20",
    ];
    let mut leak = env.spawn(Path::new("/usr/bin/prlimit"), &leak_args);
    let pid = leak.ready()["pid"].as_i64().unwrap() as i32;
    wait_until("the leaker ended, or its fork failed", || {
        leak.saw("fork-failed") || proc_state(pid).is_none()
    });
    assert!(
        !leak.saw("fork-failed"),
        "the leak reached the wall: {}",
        std::fs::read_to_string(&out).unwrap_or_default()
    );
    watch.signal(libc::SIGTERM);
    assert_eq!(
        watch.exit_code(),
        0,
        "{}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    let events = json_lines(&out);
    assert!(
        events.iter().any(|e| e["type"] == "cleanup"
            && e["targets"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["pid"] == pid)),
        "{events:?}"
    );
    let summary = events.last().unwrap();
    eprintln!(
        "wall {wall}: {} exact rounds, {} quiet, machine tasks {}",
        summary["rounds"],
        summary["quiet_rounds"],
        machine_tasks()
    );
    drop(leak);
}
