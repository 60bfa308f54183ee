//! `limits`: every ceiling on its own line; unreadable never reads as 0; the traps explained.

use crate::probe::{mac_ceilings, snapshot_json};
use crate::schema;
use crate::support::Env;

#[test]
fn unreadable_ceilings_and_the_inherited_rlimit_trap() {
    let env = Env::new();
    let f = env.path("mac.json");
    std::fs::write(
        &f,
        snapshot_json(
            "macos",
            706,
            2038,
            mac_ceilings(Some(4000), Some(2666), None, 2744),
        ),
    )
    .unwrap();
    let out = env
        .cmd()
        .args(["limits", "--snapshot"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8(out.stdout).unwrap();
    let line = |src: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(src))
            .unwrap_or_else(|| panic!("{src}: {text}"))
    };
    assert!(
        line("system-wide").contains("unreadable (does not constrain)"),
        "{text}"
    );
    assert!(
        line("rlimit-nproc").contains("2,666") && line("rlimit-nproc").contains("BINDS"),
        "{text}"
    );
    assert!(
        line("per-uid").contains("4,000") && !line("per-uid").contains("BINDS"),
        "{text}"
    );
    assert!(text.contains("launchctl limit maxproc"), "{text}");
    assert!(
        text.contains("effective limit: 2,666 (rlimit-nproc)"),
        "{text}"
    );

    let out = env
        .cmd()
        .args(["limits", "--json", "--snapshot"])
        .arg(&f)
        .output()
        .unwrap();
    let l: schema::Limits = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(l.schema, "headroom.limits/2");
    assert_eq!(
        (l.limit, l.limit_source.as_deref(), l.level.as_str()),
        (Some(2666), Some("rlimit-nproc"), "critical")
    );
    let sw = l
        .ceilings
        .iter()
        .find(|c| c.source == "system-wide")
        .unwrap();
    assert_eq!(
        (sw.value, sw.status.as_str(), sw.binds),
        (None, "unreadable", false)
    );
    assert!(l.notes.iter().any(|n| n.contains("kern.maxprocperuid")));
}

#[test]
fn nothing_readable_is_unknown_with_exit_3() {
    let env = Env::new();
    let f = env.path("none.json");
    std::fs::write(
        &f,
        snapshot_json("macos", 10, 0, mac_ceilings(None, Some(-1), None, 10)),
    )
    .unwrap();
    let out = env
        .cmd()
        .args(["limits", "--snapshot"])
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("effective limit: unknown"), "{text}");
    assert!(
        !text.contains(" 0 "),
        "an unreadable ceiling must never print as 0: {text}"
    );
}

#[test]
#[cfg(target_os = "linux")]
fn live_linux_ceilings_are_all_listed() {
    let env = Env::new();
    let out = env.cmd().args(["limits", "--json"]).output().unwrap();
    let l: schema::Limits = serde_json::from_slice(&out.stdout).unwrap();
    let sources: Vec<&str> = l.ceilings.iter().map(|c| c.source.as_str()).collect();
    assert_eq!(
        sources,
        ["rlimit-nproc", "cgroup-pids", "threads-max", "pid-max"]
    );
    assert_eq!(l.ceilings.iter().filter(|c| c.binds).count(), 1);
    let rl = &l.ceilings[0];
    // The binary under test runs unprivileged when the tests run as root.
    assert_eq!(rl.enforced, env.uid != 0);
}
