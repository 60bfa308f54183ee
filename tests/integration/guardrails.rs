//! Source scans: the code that can send signals is where the design says it is, and every
//! command that obtains a signal handle also consults a core safety decision.

use std::path::{Path, PathBuf};

/// The crate's Rust sources, without the files that are whole test modules (declared
/// `#[cfg(test)] mod x;` in their parent): `code` cuts an inline test module at its marker,
/// a test file has no marker of its own.
fn sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for src in crate::support::source_roots() {
        let tests = crate::support::test_only_files(&src);
        let mut under = crate::support::files_under(&src);
        under.retain(|p| p.extension().is_some_and(|x| x == "rs") && !tests.contains(p));
        files.extend(under);
    }
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

/// `code` without `use` declarations (which may span lines): a name imported is not a name
/// called, and `use libc::kill;` must not hide a bare `kill(` either.
fn code_without_uses(path: &Path) -> String {
    let c = code(path);
    let mut out = String::new();
    let mut in_use = false;
    for line in c.lines() {
        let t = line.trim_start();
        if !in_use
            && (t.starts_with("use ")
                || t.starts_with("pub use ")
                || t.starts_with("pub(crate) use "))
        {
            in_use = true;
        }
        if in_use {
            in_use = !t.trim_end().ends_with(';');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Whether `code` calls `name` as a function or method: `name(` not preceded by an
/// identifier character (so `kill(` matches `libc::kill(`, `kill(`, `.kill(` but not
/// `kill_now(` or `skill(`).
fn calls(code: &str, name: &str) -> bool {
    let pat = format!("{name}(");
    code.match_indices(&pat).any(|(i, _)| {
        code[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

#[test]
fn nothing_but_the_platform_signal_layer_sends_a_signal() {
    // Every way to send a signal from Rust on Unix that the crate could use.
    let senders = [
        "kill",
        "killpg",
        "tgkill",
        "tkill",
        "raise",
        "sigqueue",
        "pthread_kill",
        "pidfd_send_signal",
        "SYS_kill",
        "SYS_tgkill",
        "SYS_tkill",
        "SYS_pidfd_send_signal",
        // rustix's names for kill(2) and killpg(2).
        "kill_process",
        "kill_process_group",
        "kill_current_process_group",
    ];
    // Reviewed exceptions, each with why.
    let reviewed: &[(&str, &str, &str)] = &[
        // `run`'s job control: headroom stops itself on ^Z after stopping the tree.
        (
            "crates/headroom-platform/src/supervise.rs",
            "raise",
            "SIGTSTP to headroom itself",
        ),
        // A timed-out `open`/`launchctl`/notifier headroom spawned: `Child::kill` goes to
        // the unreaped child of the handle, which no other process can hold.
        (
            "crates/headroom-actions/src/actions/exec.rs",
            "kill",
            "Child::kill of headroom's own exec child",
        ),
        // `doctor` ends a system tool it spawned (`ps`, `sysctl`, a login shell) that
        // outlived its deadline, through the handle of its own unreaped child.
        (
            "crates/headroom-commands/src/commands/doctor_tools.rs",
            "kill",
            "Child::kill of doctor's own tool child",
        ),
    ];
    let files = sources();
    assert!(files.len() > 40);
    let mut found = Vec::new();
    for f in &files {
        let c = code_without_uses(f);
        let name = rel(f);
        for s in senders {
            let hit = calls(&c, s) || c.contains(&format!("libc::{s}"));
            if hit && name != "crates/headroom-platform/src/signal.rs" {
                found.push((name.clone(), s));
            }
        }
    }
    let unreviewed: Vec<_> = found
        .iter()
        .filter(|(n, s)| !reviewed.iter().any(|(rn, rs, _)| rn == n && rs == s))
        .collect();
    assert!(
        unreviewed.is_empty(),
        "signals sent outside platform/signal.rs: {unreviewed:?}"
    );
    // The exceptions are still real (a stale one would hide a new sender).
    for (n, s, why) in reviewed {
        assert!(
            found.iter().any(|(fnm, fs)| fnm == n && fs == s),
            "{n} no longer calls {s} ({why})"
        );
    }
    let signal =
        code(&Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/headroom-platform/src/signal.rs"));
    assert!(
        calls(&signal, "kill"),
        "the signal layer itself is found by the scan"
    );
}

#[test]
fn nothing_but_the_one_escalation_sends_sigkill_through_a_control() {
    // A SIGKILL passed to a `signal(` call is an escalation of its own: it belongs in
    // actions/escalate.rs (identities re-read before each signal, one clock, outcomes out).
    // None: `run_limited` ends its `headroom run` child through the escalation too.
    let reviewed: &[(&str, &str)] = &[];
    let mut found = Vec::new();
    for f in &sources() {
        let name = rel(f);
        if name == "crates/headroom-actions/src/actions/escalate.rs"
            || name.starts_with("crates/headroom-platform/")
        {
            continue;
        }
        let c = code_without_uses(f);
        if c.lines()
            .any(|l| calls(l, "signal") && l.contains("Signal::Kill"))
        {
            found.push(name);
        }
    }
    let unreviewed: Vec<_> = found
        .iter()
        .filter(|n| !reviewed.iter().any(|(rn, _)| rn == n))
        .collect();
    assert!(
        unreviewed.is_empty(),
        "SIGKILL sent outside escalate.rs: {unreviewed:?}"
    );
    for (n, why) in reviewed {
        assert!(
            found.iter().any(|f| f == n),
            "{n} no longer sends SIGKILL ({why})"
        );
    }
    // Hang recovery, reap, the memory guards and run's enforcement drive it.
    for (f, call) in [
        (
            "crates/headroom-actions/src/actions/recover/mod.rs",
            "escalate::run(",
        ),
        (
            "crates/headroom-actions/src/actions/terminate.rs",
            "escalate::",
        ),
        (
            "crates/headroom-actions/src/actions/memory_guard/end.rs",
            "escalate::",
        ),
        (
            "crates/headroom-actions/src/actions/watchdog/ending.rs",
            "Escalation",
        ),
        (
            "crates/headroom-mcp/src/mcp/tools/run_limited.rs",
            "Escalation::new",
        ),
    ] {
        let c = code_without_uses(&Path::new(env!("CARGO_MANIFEST_DIR")).join(f));
        assert!(
            c.contains(call),
            "{f} does not use the one escalation (`{call}`)"
        );
    }
}

#[test]
fn only_files_declared_as_test_modules_are_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let raise = "fn f() { unsafe { libc::raise(1) }; }\n";
    std::fs::create_dir(dir.path().join("a")).unwrap();
    std::fs::write(
        dir.path().join("a.rs"),
        format!(
            "mod b;\npub(crate) mod c;\n{raise}#[cfg(test)]\nmod tests;\n\
             #[cfg(test)]\npub(crate) mod fixture;\n"
        ),
    )
    .unwrap();
    for f in ["a/b.rs", "a/c.rs", "a/tests.rs", "a/fixture.rs"] {
        std::fs::write(dir.path().join(f), raise).unwrap();
    }
    let tests = crate::support::test_only_files(dir.path());
    assert_eq!(
        tests.into_iter().collect::<Vec<_>>(),
        vec![
            dir.path().join("a/fixture.rs"),
            dir.path().join("a/tests.rs")
        ],
        "test modules of any visibility are skipped, plain submodules (of any) are not"
    );
    // Control: the code before the marker and a non-test submodule are still scanned.
    assert!(calls(&code_without_uses(&dir.path().join("a.rs")), "raise"));
    assert!(calls(
        &code_without_uses(&dir.path().join("a/b.rs")),
        "raise"
    ));
    // In the crate: `pressure`'s tests raise signals at the test process and are skipped,
    // the module itself is scanned.
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/headroom-platform/src");
    let files = sources();
    let tests_file = src.join("pressure/tests.rs");
    assert!(calls(
        &std::fs::read_to_string(&tests_file).unwrap(),
        "raise"
    ));
    assert!(!files.contains(&tests_file) && files.contains(&src.join("pressure.rs")));
}

#[test]
fn the_scan_sees_through_use_lines_and_method_calls() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.rs");
    std::fs::write(
        &f,
        "use libc::{\n    kill,\n};\nfn a() { unsafe { kill(1, 9) }; }\n",
    )
    .unwrap();
    assert!(calls(&code_without_uses(&f), "kill"));
    std::fs::write(&f, "use crate::core::policy::select;\nfn a() {}\n").unwrap();
    assert!(
        !code_without_uses(&f).contains("select"),
        "an import alone is not a call"
    );
    assert!(calls("child.kill();", "kill") && calls("libc::raise(x)", "raise"));
    assert!(!calls("self.kill_now();", "kill") && !calls("fn skill(", "kill"));
}

#[test]
fn every_signal_handle_is_used_behind_a_core_decision() {
    // The file that obtains `native_control` → the core rule it must consult.
    // Each is a call, looked for outside `use` lines (an import alone proves nothing).
    let allowed: &[(&str, &[&str])] = &[
        // The cleanup `reap` and `watch` run.
        (
            "crates/headroom-actions/src/actions/cleanup.rs",
            &["policy::select_among("],
        ),
        (
            "crates/headroom-commands/src/commands/park.rs",
            &["ParkPermission::new("],
        ),
        (
            "crates/headroom-commands/src/commands/run.rs",
            &["watchdog::run("],
        ),
        (
            "crates/headroom-commands/src/commands/hangs/mod.rs",
            &["MonitorState::", "process_round("],
        ),
        // The hang round `watch` runs (`watch_round`): the core decides through
        // `process_round`, on the persisted monitor state.
        (
            "crates/headroom-actions/src/actions/hang_round.rs",
            &["MonitorState::", "process_round("],
        ),
        // Signals only the `headroom run` it spawned, by the identity read from its pid.
        (
            "crates/headroom-mcp/src/mcp/tools/run_limited.rs",
            &["child.id()", ".identity()"],
        ),
        // watch's memory round; its cleanup goes through `actions::cleanup::execute`.
        (
            "crates/headroom-commands/src/commands/watch/memory.rs",
            &["breaches(", "memory_guard::enforce(", "parked.rejudge("],
        ),
        // At exit, only what the memory round parked is woken.
        (
            "crates/headroom-commands/src/commands/watch/mod.rs",
            &["parked.take_all("],
        ),
    ];
    let files = sources();
    for f in &files {
        let name = rel(f);
        let c = code_without_uses(f);
        if !c.contains("native_control(") || name == "crates/headroom-platform/src/lib.rs" {
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
    let parking =
        code(&Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/headroom-core/src/parking.rs"));
    assert!(parking.contains("ancestors") && parking.contains("pid <= 1"));
    let watchdog = code(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("crates/headroom-actions/src/actions/watchdog/mod.rs"),
    );
    assert!(watchdog.contains("core::memory"));
    // The memory guards take every member from `Holding`, which checks each one against
    // `ParkPermission` and the guards' own protections.
    let guard = code(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("crates/headroom-actions/src/actions/memory_guard.rs"),
    );
    assert!(
        guard.contains("Holding::new(") && guard.contains(".members("),
        "memory guards take their members from Holding"
    );
    let holding = code(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/headroom-core/src/memory_guard.rs"),
    );
    assert!(
        holding.contains("permission.check(") && holding.contains("protection("),
        "Holding checks every member"
    );
}

/// The module `file` (under the source root `src`) is, file by file: `file` itself and,
/// when it was split into a folder of its name, every file under that folder but its test
/// modules.
fn module_files(src: &Path, file: &Path) -> Vec<PathBuf> {
    let dir = file.with_extension("");
    let tests = crate::support::test_only_files(src);
    let mut files = vec![file.to_path_buf()];
    if dir.is_dir() {
        let mut under = crate::support::files_under(&dir);
        under.retain(|p| p.extension().is_some_and(|x| x == "rs") && !tests.contains(p));
        under.sort();
        files.extend(under);
    }
    files
}

/// The files of `file`'s module that hold a signal handle, or could signal without one (a
/// call to the control's `signal`, or to `park::signal_each`).
fn holding_a_signal_handle(src: &Path, file: &Path) -> Vec<PathBuf> {
    module_files(src, file)
        .into_iter()
        .filter(|f| {
            let c = code_without_uses(f);
            c.contains("native_control")
                || c.contains("ProcessControl")
                || calls(&c, "signal")
                || calls(&c, "signal_each")
        })
        .collect()
}

#[test]
fn idle_watch_and_log_probe_hold_no_signal_handle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/headroom-commands/src");
    let mut scanned = Vec::new();
    for f in [
        "commands/idle_watch.rs",
        "commands/log_probe.rs",
        "commands/probe.rs",
        "commands/top.rs",
    ] {
        let file = src.join(f);
        assert!(file.is_file(), "{f} is gone: name its module's new file");
        let found = holding_a_signal_handle(&src, &file);
        assert!(found.is_empty(), "{found:?}");
        scanned.extend(module_files(&src, &file));
    }
    // The folders the split modules became are scanned whole, their test modules are not.
    for f in ["commands/probe/human.rs", "commands/top/human.rs"] {
        assert!(scanned.contains(&src.join(f)), "{f} is not scanned");
    }
    assert!(!scanned.contains(&src.join("commands/probe/tests.rs")));
}

#[test]
fn a_signal_handle_in_a_submodule_of_a_read_only_command_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("probe/deep")).unwrap();
    let write = |f: &str, text: &str| std::fs::write(src.join(f), text).unwrap();
    write(
        "probe.rs",
        "mod human;\nmod deep;\nfn f() {}\n#[cfg(test)]\nmod tests;\n",
    );
    write("probe/human.rs", "fn f() {}\n");
    write("probe/deep.rs", "mod leaf;\n");
    write("probe/deep/leaf.rs", "fn f() {}\n");
    // A test module may hold a control (a fake): it is not the command's code.
    write("probe/tests.rs", "fn t(c: &dyn ProcessControl) {}\n");
    let probe = src.join("probe.rs");
    assert!(
        holding_a_signal_handle(src, &probe).is_empty(),
        "control: nothing but a test module holds one"
    );
    for (f, text) in [
        ("probe/human.rs", "fn f(c: &dyn ProcessControl) {}\n"),
        (
            "probe/human.rs",
            "fn f() { control.signal(id, Signal::Term); }\n",
        ),
        (
            "probe/deep/leaf.rs",
            "fn f() { let c = native_control(s); }\n",
        ),
        (
            "probe/deep/leaf.rs",
            "fn f() { signal_each(c, &ids, Signal::Stop); }\n",
        ),
    ] {
        write(f, text);
        assert_eq!(
            holding_a_signal_handle(src, &probe),
            vec![src.join(f)],
            "{f}: {text}"
        );
        write(f, "fn f() {}\n");
    }
}
