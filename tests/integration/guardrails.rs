//! Source scans: the code that can send signals is where the design says it is, and every
//! command that obtains a signal handle also consults a core safety decision.

use std::path::{Path, PathBuf};

/// The crate's Rust sources.
fn sources() -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = crate::support::files_under(&src);
    files.retain(|p| p.extension().is_some_and(|x| x == "rs"));
    files
}

/// The file without comments, test modules and string literals of test scans.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let body = text.split("#[cfg(test)]").next().unwrap_or("");
    body.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn rel(p: &Path) -> String {
    p.strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap()
        .display()
        .to_string()
}

#[test]
fn only_platform_signal_rs_calls_kill() {
    let files = sources();
    assert!(files.len() > 40);
    for f in &files {
        let c = code(f);
        let name = rel(f);
        for call in [
            "libc::kill(",
            "libc::killpg(",
            "pidfd_send_signal",
            "libc::tgkill(",
        ] {
            if c.contains(call) {
                assert_eq!(name, "src/platform/signal.rs", "{name} calls {call}");
            }
        }
    }
}

#[test]
fn every_signal_handle_is_used_behind_a_core_decision() {
    // The file that obtains `native_control` → the core rule it must consult.
    let allowed: &[(&str, &[&str])] = &[
        ("src/commands/reap.rs", &["policy::select"]),
        ("src/commands/park.rs", &["core::parking::Guard"]),
        ("src/commands/run.rs", &["actions::watchdog"]),
        ("src/commands/hangs.rs", &["core::hangs"]),
        // Signals only the `headroom run` it spawned, by the identity read from its pid.
        ("src/mcp/run_limited.rs", &["child.id()", "identity"]),
        (
            "src/commands/watch.rs",
            &[
                "reap::execute",
                "memory_guard::breaches",
                "memory_guard::enforce",
            ],
        ),
    ];
    let files = sources();
    for f in &files {
        let name = rel(f);
        let c = code(f);
        if !c.contains("native_control(") || name == "src/platform/mod.rs" {
            continue;
        }
        let Some((_, needs)) = allowed.iter().find(|(n, _)| *n == name) else {
            panic!("{name} obtains a signal handle but is not a reviewed control path");
        };
        for n in *needs {
            assert!(c.contains(n), "{name} signals without consulting `{n}`");
        }
    }
    // The core decisions themselves refuse what must never be touched.
    let parking = code(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/core/parking.rs"));
    assert!(parking.contains("ancestors") && parking.contains("pid <= 1"));
    let watchdog = code(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/actions/watchdog/mod.rs"));
    assert!(watchdog.contains("core::memory"));
    let guard = code(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src/actions/memory_guard.rs"));
    assert!(
        guard.contains("guard.check("),
        "memory guards check every member"
    );
}

#[test]
fn idle_watch_and_log_probe_hold_no_signal_handle() {
    for f in [
        "src/commands/idle_watch.rs",
        "src/commands/log_probe.rs",
        "src/commands/probe.rs",
        "src/commands/top.rs",
    ] {
        let c = code(&Path::new(env!("CARGO_MANIFEST_DIR")).join(f));
        assert!(
            !c.contains("native_control") && !c.contains("ProcessControl"),
            "{f}"
        );
    }
}
