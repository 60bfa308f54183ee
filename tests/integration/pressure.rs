//! The memory-pressure source `watch` waits on between rounds (Linux): a real PSI trigger
//! armed as the test's unprivileged uid, and polling where `/proc/pressure` is missing.

use std::path::Path;

use crate::support::{Env, json_lines, wait_until};

/// Start `watch ARGS` and return the message of its `memory pressure source` notice.
fn announced(env: &Env, extra: &[&str]) -> String {
    let (out, err) = (env.path("watch.out"), env.path("watch.err"));
    let mut args = vec!["watch", "--json", "--interval", "60s", "--no-auto-reap"];
    args.extend(extra);
    let mut watch = env.spawn_with(env.headroom_path(), &args, Some((&out, &err)));
    let find = || {
        json_lines(&out).iter().find_map(|e| {
            let m = e["message"].as_str()?;
            (e["type"] == "notice" && m.starts_with("memory pressure source: "))
                .then(|| m.to_string())
        })
    };
    wait_until("the pressure-source notice", || find().is_some());
    watch.signal(libc::SIGINT);
    // SIGINT ends watch with 130 after the round (issue 18).
    assert_eq!(
        watch.exit_code(),
        130,
        "{}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    find().unwrap()
}

#[test]
#[cfg_attr(not(hr_psi), ignore = "needs PSI (/proc/pressure/memory)")]
fn watch_waits_on_a_psi_trigger_the_kernel_accepted_from_an_unprivileged_user() {
    assert!(
        Path::new("/proc/pressure/memory").exists(),
        "/proc/pressure/memory does not exist (kernel without PSI)"
    );
    let env = Env::new();
    let m = announced(&env, &[]);
    let (source, level) = m.split_once("; level ").unwrap_or((&m, ""));
    assert_eq!(
        source,
        "memory pressure source: psi (/proc/pressure/memory, trigger `some 150000 2000000`)"
    );
    // The level read now, from the same file: normal, warn or critical, and the figure.
    let (name, from) = level.split_once(' ').unwrap_or(("", ""));
    assert!(
        ["normal", "warn", "critical"].contains(&name) && from.starts_with("(some avg10 "),
        "{m}"
    );
    // `limits` shows the same source; a replay arms nothing and shows none.
    let out = env.cmd().args(["limits", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["memory_pressure"],
        "psi (/proc/pressure/memory, trigger `some 150000 2000000`)"
    );
    let out = env.cmd().args(["limits"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("memory pressure source: psi ("));
}

#[test]
fn without_proc_pressure_watch_says_it_polls_and_why() {
    let env = Env::new();
    // A /proc with a process table but no pressure directory.
    let fake = env.path("proc");
    let uid = env.uid;
    std::fs::create_dir_all(fake.join("10")).unwrap();
    std::fs::write(
        fake.join("10/status"),
        format!("Name:\tx\nState:\tS (sleeping)\nPPid:\t1\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nThreads:\t1\n"),
    )
    .unwrap();
    std::fs::create_dir_all(fake.join("sys/kernel")).unwrap();
    std::fs::write(fake.join("sys/kernel/threads-max"), "100\n").unwrap();
    std::fs::write(fake.join("loadavg"), "0 0 0 1/1 1\n").unwrap();
    let m = announced(&env, &["--proc-root", fake.to_str().unwrap()]);
    assert!(
        m.starts_with("memory pressure source: poll (")
            && m.contains(&format!("{}/pressure/memory: No such file", fake.display())),
        "{m}"
    );
}

/// `[memory] pressure = "off"` leaves the timer only, and says so; the control is the test
/// above, where the same machine arms PSI.
#[test]
fn pressure_off_in_the_config_arms_nothing_and_says_so() {
    let env = Env::new();
    let cfg = env.path("config.toml");
    std::fs::write(&cfg, "[memory]\npressure = \"off\"\n").unwrap();
    let cfg = cfg.to_str().unwrap();
    let m = announced(&env, &["--config", cfg]);
    assert_eq!(
        m,
        "memory pressure source: poll (turned off by [memory] pressure = \"off\")"
    );
    let out = env
        .cmd()
        .args(["limits", "--json", "--config", cfg])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v["memory_pressure"],
        "poll (turned off by [memory] pressure = \"off\")"
    );
}

/// `run --limit` honours `[memory] pressure = "off"` as `watch` does: its enforcement record
/// says the source was turned off. Control: the same run without the file arms one (PSI here,
/// or a poll that names another reason), never "turned off".
#[test]
fn pressure_off_in_the_config_leaves_run_limit_on_its_timer() {
    let env = Env::new();
    let cfg = env.path("config.toml");
    std::fs::write(&cfg, "[memory]\npressure = \"off\"\n").unwrap();
    let pressure = |extra: &[&str]| {
        let out = env
            .cmd()
            .args(extra)
            .args(["--json", "run", "--limit", "100M", "--", "true"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        crate::schema::run_events(&stderr)
            .into_iter()
            .find_map(|e| match e {
                crate::schema::RunEvent::Enforcement { pressure, .. } => Some(pressure),
                _ => None,
            })
            .flatten()
            .unwrap_or_else(|| panic!("no enforcement record naming the source: {stderr}"))
    };
    assert_eq!(
        pressure(&["--config", cfg.to_str().unwrap()]),
        "poll (turned off by [memory] pressure = \"off\")"
    );
    let armed = pressure(&[]);
    assert!(!armed.contains("turned off"), "{armed}");
}
