//! Issue 25 item 3 on real trees (Linux, as the private test uid): a memory guard holds the
//! topmost process of a chain whose name matches, not the root of the user's tree, and
//! never a session leader, a shell at its terminal's prompt, or an ancestor of headroom.
//! Every case runs `watch --once --json` with a 16 MiB (or 1 MiB) guard over 64 MiB hogs;
//! each protection has its control, the same set-up where the guard does act.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{Env, Tree, json_lines, proc_state, wait_until};

fn guard(pattern: &str, limit: &str) -> String {
    format!(
        "[[memory.guard]]\npattern = \"{pattern}\"\nlimit = \"{limit}\"\n[memory]\n\
         grace = \"1s\"\n[watch]\nauto_reap = false\nhangs = false\n\
         [notifications]\nenabled = false\n"
    )
}

fn alive(pid: i32) -> bool {
    proc_state(pid).is_some_and(|s| s != 'Z')
}

fn ppid(pid: i32) -> i32 {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &s[s.rfind(')').unwrap() + 2..];
    rest.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// `watch --once --json` with `config` as the test user: its memory events.
fn watch_once(env: &Env, cfg: &Path, config: &str) -> Vec<Value> {
    std::fs::write(cfg, config).unwrap();
    let out = env
        .cmd()
        .args(["watch", "--once", "--json", "--config"])
        .arg(cfg)
        .output()
        .unwrap();
    let code = out.status.code();
    assert!(
        code == Some(0) || code == Some(1),
        "{code:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = env.path("events.jsonl");
    std::fs::write(&events, &out.stdout).unwrap();
    memory_events(&events)
}

fn memory_events(path: &Path) -> Vec<Value> {
    json_lines(path)
        .into_iter()
        .filter(|e| e["type"] == "memory")
        .collect()
}

fn pids(v: &Value) -> Vec<i64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_i64).collect())
        .unwrap_or_default()
}

/// bash (not matching) → hr-cargo (a hog, matching) → hr-cargo (its child, matching too).
#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn a_match_below_a_shell_is_held_from_the_topmost_match_and_the_shell_is_left() {
    let env = Env::new();
    crate::support::require_root();
    let cargo = env.named_fixture("hr-cargo");
    let script = r#""$0" hog --mib 64 --children 1 --depth 2; echo after $?; sleep 3600"#;
    let mut tree = env.spawn(
        Path::new("/bin/bash"),
        &["-c", script, cargo.to_str().unwrap()],
    );
    let (a, b): (i32, i32) = (
        tree.expect("ready ").trim().parse().unwrap(),
        tree.expect("ready ").trim().parse().unwrap(),
    );
    let (outer, inner) = if ppid(b) == a { (a, b) } else { (b, a) };
    assert_eq!(ppid(outer), tree.pid, "bash → outer → inner");
    let ev = watch_once(&env, &env.path("chain.toml"), &guard("hr-cargo", "16M"));
    assert_eq!(ev.len(), 1, "one held tree, not two: {ev:?}");
    assert_eq!(ev[0]["root"], outer, "{}", ev[0]);
    assert_eq!(ev[0]["outcome"], "sigterm", "{}", ev[0]);
    assert_eq!(pids(&ev[0]["terminated"]), vec![outer as i64, inner as i64]);
    assert!(ev[0]["footprint_bytes"].as_u64().unwrap() >= 128 << 20);
    // bash saw its job end by SIGTERM and is itself untouched.
    assert_eq!(tree.expect("after ").trim(), "143");
    assert!(alive(tree.pid));
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn a_session_leader_is_never_held_the_same_process_leading_nothing_is() {
    let env = Env::new();
    crate::support::require_root();
    let hog = env.named_fixture("hr-leader");
    // On a terminal of its own, the hog leads its session.
    let mut leader = env.spawn_pty(&hog, &["hog", "--mib", "64"]);
    let pid: i32 = leader.expect("tty ready ").trim().parse().unwrap();
    let cfg = env.path("leader.toml");
    let ev = watch_once(&env, &cfg, &guard("hr-leader", "16M"));
    assert!(ev.is_empty(), "{ev:?}");
    assert!(alive(pid));
    drop(leader);
    // Control: the same hog started without a session of its own is held and ended.
    let mut plain = env.spawn(&hog, &["hog", "--mib", "64"]);
    let pid: i32 = plain.expect("ready ").trim().parse().unwrap();
    let ev = watch_once(&env, &cfg, &guard("hr-leader", "16M"));
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0]["root"], pid);
    assert_eq!(plain.exit_code(), 128 + 15);
}

/// The terminal's lines until one starts with `prefix` once what a line editor rewrites
/// is taken off (everything up to the last carriage return, bracketed-paste switches): the
/// rest of it.
fn tty(t: &mut Tree, prefix: &str) -> String {
    loop {
        let line = t.expect("tty ");
        let shown = line.rsplit('\r').next().unwrap_or_default();
        let shown = shown
            .replace("\u{1b}[?2004h", "")
            .replace("\u{1b}[?2004l", "");
        if let Some(rest) = shown.strip_prefix(prefix) {
            return rest.to_string();
        }
    }
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn a_shell_at_its_prompt_is_never_held_the_same_shell_running_a_job_is() {
    let env = Env::new();
    crate::support::require_root();
    // An interactive bash (it leads its session) → a nested interactive bash, at its prompt:
    // it leads the terminal's foreground process group, and leads no session.
    let bash = ["--norc", "--noprofile", "-i"];
    let mut t = env.spawn_pty(Path::new("/bin/bash"), &bash);
    t.send("type PS1='$ '; echo outer=$$");
    let outer: i32 = tty(&mut t, "outer=").trim().parse().unwrap();
    t.send("type bash --norc --noprofile -i");
    // 32 MB of the shell's own (a variable), so that held it would be over the guard.
    t.send("type PS1='$ '; x=$(printf '%*s' 32000000 ''); echo inner=$$");
    let inner: i32 = tty(&mut t, "inner=").trim().parse().unwrap();
    assert_eq!(ppid(inner), outer);
    t.send("fg?");
    let fg: i32 = t.expect("fg-pgid ").trim().parse().unwrap();
    assert_eq!(fg, inner, "the nested shell holds the terminal");
    let cfg = env.path("shell.toml");
    let ev = watch_once(&env, &cfg, &guard("bash", "16M"));
    assert!(ev.is_empty(), "a shell at its prompt was held: {ev:?}");
    assert!(alive(inner) && alive(outer));
    // Control: the nested shell runs a job in the foreground; the job's group holds the
    // terminal now, and the shell is held with its job (the outer one still leads its
    // session).
    let hog: PathBuf = env.named_fixture("hr-job");
    t.send(&format!("type {} hog --mib 64", hog.display()));
    let job: i32 = tty(&mut t, "ready ").trim().parse().unwrap();
    wait_until("the job to hold the terminal", || {
        t.send("fg?");
        t.expect("fg-pgid ").trim().parse::<i32>().unwrap() == job
    });
    let ev = watch_once(&env, &cfg, &guard("bash", "16M"));
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0]["root"], inner, "{}", ev[0]);
    let ended = pids(&ev[0]["terminated"]);
    assert!(
        ended.contains(&(inner as i64)) && ended.contains(&(job as i64)),
        "{}",
        ev[0]
    );
    assert!(!ended.contains(&(outer as i64)));
    assert!(alive(outer));
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn headroom_s_own_ancestor_is_never_held_the_same_tree_beside_it_is() {
    let env = Env::new();
    crate::support::require_root();
    let hog = env.named_fixture("hr-anc-hog");
    let cfg = env.path("anc.toml");
    std::fs::write(&cfg, guard("bash", "16M")).unwrap();
    let out = env.path("anc.jsonl");
    // bash → hog (64 MiB) and bash → headroom watch: bash is headroom's parent.
    let script = r#""$1" hog --mib 64 & "$2" watch --once --json --config "$3" > "$4"; echo watched $?; wait"#;
    let mut tree = env.spawn(
        Path::new("/bin/bash"),
        &[
            "-c",
            script,
            "bash",
            hog.to_str().unwrap(),
            env.headroom_path().to_str().unwrap(),
            cfg.to_str().unwrap(),
            out.to_str().unwrap(),
        ],
    );
    let hog_pid: i32 = tree.expect("ready ").trim().parse().unwrap();
    let code: i32 = tree.expect("watched ").trim().parse().unwrap();
    assert!(code == 0 || code == 1, "watch exited {code}");
    assert!(memory_events(&out).is_empty(), "{:?}", memory_events(&out));
    assert!(alive(tree.pid) && alive(hog_pid));
    drop(tree);
    // Control: the same bash and hog, with watch run beside them: held and ended.
    let mut tree = env.spawn(
        Path::new("/bin/bash"),
        &[
            "-c",
            r#""$1" hog --mib 64 & wait"#,
            "bash",
            hog.to_str().unwrap(),
        ],
    );
    let hog_pid: i32 = tree.expect("ready ").trim().parse().unwrap();
    let ev = watch_once(&env, &cfg, &guard("bash", "16M"));
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!(ev[0]["root"], tree.pid, "{}", ev[0]);
    assert_eq!(
        pids(&ev[0]["terminated"]),
        vec![tree.pid as i64, hog_pid as i64]
    );
    assert_eq!(tree.exit_code(), 128 + 15);
}
