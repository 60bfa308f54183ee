//! `reap` on real processes (Linux): every fixture runs under a subreaper the test owns, as
//! the test's private uid, with a name unique to the test in `--allow`.

use predicates::prelude::*;

use crate::schema;
use crate::support::{Env, Tree, proc_state, wait_until, zombie_children};

fn reap_json(env: &Env, args: &[&str]) -> (schema::Reap, i32) {
    let out = env
        .cmd()
        .arg("reap")
        .arg("--json")
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r = schema::read_or(&out.stdout, &format!("exit {code}\nstderr: {stderr}"));
    (r, code)
}

/// A leaking parent named `name` holding `zombies`, optionally ignoring SIGTERM.
fn leaker(env: &Env, name: &str, zombies: usize, extra: &[&str]) -> (Tree, i32) {
    let exe = env.named_fixture(name);
    let n = zombies.to_string();
    let mut args = vec!["leak", "--zombies", n.as_str()];
    args.extend_from_slice(extra);
    let mut tree = env.spawn(&exe, &args);
    let pid = tree.ready()["pid"].as_i64().unwrap() as i32;
    assert_eq!(zombie_children(pid), zombies);
    (tree, pid)
}

fn parent(r: &schema::Reap, pid: i32) -> &schema::ReapParent {
    r.parents
        .iter()
        .find(|p| p.pid == pid)
        .unwrap_or_else(|| panic!("pid {pid} not in {:?}", r.parents))
}

#[test]
fn a_term_ignoring_leaker_is_killed_and_its_zombies_verified_gone() {
    let env = Env::new();
    let (_tree, pid) = leaker(&env, "agency-reap1", 150, &["--ignore-term"]);
    let (r, code) = reap_json(&env, &["--allow", "agency-reap1", "--grace", "300ms"]);
    assert_eq!(code, 0, "{r:?}");
    assert_eq!(r.schema, "headroom.reap/3");
    let p = parent(&r, pid);
    assert_eq!(
        (p.verdict.as_str(), p.reason.as_deref(), p.zombies),
        ("target", None, 150)
    );
    assert_eq!(r.targets.len(), 1);
    let t = &r.targets[0];
    assert_eq!(
        (t.pid, t.outcome.as_str(), t.verified, t.zombies_reaped),
        (pid, "sigkill", true, 150)
    );
    assert_eq!(t.signals, vec!["SIGTERM", "SIGKILL"]);
    assert!(r.summary.contains("150 zombies reaped"), "{}", r.summary);
    wait_until("the leaker to be reaped", || proc_state(pid).is_none());
    assert_eq!(zombie_children(pid), 0);
    let evidence = std::fs::read_to_string(env.home.join("evidence.csv")).unwrap();
    let row = evidence
        .lines()
        .find(|l| l.contains(",kill:15+9,"))
        .unwrap_or_else(|| panic!("{evidence}"));
    assert!(
        row.contains(&format!(",{pid},agency-reap1,150,"))
            && row.contains("sigkill;reaped=150;freed=151;verified=true"),
        "{row}"
    );
}

#[test]
fn dry_run_decides_and_signals_nothing() {
    let env = Env::new();
    let (_tree, pid) = leaker(&env, "agency-dry", 120, &["--ignore-term"]);
    let (r, code) = reap_json(&env, &["--dry-run", "--allow", "agency-dry"]);
    assert_eq!(code, 0);
    assert!(r.dry_run);
    assert_eq!(parent(&r, pid).verdict, "target");
    assert!(r.targets.is_empty());
    assert_eq!(proc_state(pid), Some('S'));
    assert_eq!(zombie_children(pid), 120);
    let human = env
        .cmd()
        .args(["reap", "--dry-run", "--allow", "agency-dry"])
        .output()
        .unwrap();
    let text = String::from_utf8(human.stdout).unwrap();
    assert!(text.contains("dry run: nothing was signalled."), "{text}");
    assert!(
        text.contains("agency-dry") && text.contains("target"),
        "{text}"
    );
    assert!(
        !env.home.join("evidence.csv").exists(),
        "a dry run records no cleanup"
    );
}

#[test]
fn reap_run_from_inside_the_leaker_spares_its_own_ancestor() {
    let env = Env::new();
    let out = env.path("reap.json");
    let cmd = format!(
        "{} reap --json --allow agency-anc > {}",
        env.headroom_path().display(),
        out.display()
    );
    let exe = env.named_fixture("agency-anc");
    let mut tree = env.spawn(
        &exe,
        &[
            "leak",
            "--zombies",
            "150",
            "--exec-child",
            "/bin/sh",
            "-c",
            &cmd,
            "--",
        ],
    );
    let pid = tree.ready()["pid"].as_i64().unwrap() as i32;
    assert_eq!(tree.expect("child-exited "), "0");
    let r: schema::Reap = schema::read(&std::fs::read(&out).unwrap());
    assert_eq!(
        parent(&r, pid).reason.as_deref(),
        Some("protected-ancestor")
    );
    assert!(r.targets.is_empty());
    assert_eq!(zombie_children(pid), 150);
}

#[test]
fn a_session_child_without_history_is_protected_as_unreadable() {
    let env = Env::new();
    let copilot = env.named_fixture("copilot-ses");
    let (_tree, pid) = leaker(
        &env,
        "agency-ses",
        150,
        &["--session", copilot.to_str().unwrap(), "idle", "--"],
    );
    let (r, code) = reap_json(&env, &["--allow", "agency-ses"]);
    assert_eq!(code, 0);
    let p = parent(&r, pid);
    assert_eq!(
        (p.reason.as_deref(), p.session.as_str()),
        (Some("session-signal-unavailable"), "unreadable")
    );
    assert_eq!(p.session_children.len(), 1);
    assert!(
        r.summary.contains("session signals are unreadable"),
        "{}",
        r.summary
    );
    assert_eq!(zombie_children(pid), 150);
    let evidence = std::fs::read_to_string(env.home.join("evidence.csv")).unwrap();
    assert!(
        evidence.contains("cleanup,no-targets;unreadable=1,"),
        "{evidence}"
    );
}

#[test]
fn verification_fails_when_the_zombies_are_inherited_by_a_non_reaping_subreaper() {
    let env = Env::new();
    let holder = env.fixture().to_path_buf();
    let leak = env.named_fixture("agency-held");
    let mut tree = env.spawn(
        &holder,
        &["holder", leak.to_str().unwrap(), "leak", "--zombies", "110"],
    );
    let leaker_pid: i32 = tree.expect("holding ").trim().parse().unwrap();
    wait_until("110 zombies", || zombie_children(leaker_pid) == 110);
    let (r, code) = reap_json(&env, &["--allow", "agency-held", "--grace", "200ms"]);
    assert_eq!(code, 1, "{r:?}");
    let t = &r.targets[0];
    assert_eq!(
        (
            t.outcome.as_str(),
            t.verified,
            t.zombies_reaped,
            t.zombies_left
        ),
        ("sigterm", false, 0, 110)
    );
    // The parent is gone; the report names who holds its zombies now, after the bound.
    let holder = t.held_by.as_ref().unwrap_or_else(|| panic!("{r:?}"));
    assert_eq!((holder.pid, holder.name.as_str()), (tree.pid, "hr-fixture"));
    assert!(r.verify_ms >= 10_000, "{}", r.verify_ms);
    assert!(
        r.summary
            .starts_with("Parent ended, but no zombie was reaped yet.")
            && r.summary.contains(&format!(
                "110 zombies of pid {leaker_pid} now belong to pid {} (`hr-fixture`), which has \
                 not reaped them within 10 s",
                tree.pid
            )),
        "{}",
        r.summary
    );
    let evidence = std::fs::read_to_string(env.home.join("evidence.csv")).unwrap();
    assert!(
        evidence.contains(&format!(
            "sigterm;reaped=0;freed=1;verified=false;left=110;held_by={}",
            tree.pid
        )),
        "{evidence}"
    );
}

#[test]
fn nothing_to_do_exits_zero_and_records_no_targets() {
    let env = Env::new();
    let (r, code) = reap_json(&env, &["--allow", "agency-none-xyz"]);
    assert_eq!(code, 0);
    assert!(r.targets.is_empty());
    assert_eq!(r.summary, "No candidates for cleanup.");
}

#[test]
fn bad_input_is_refused_before_anything_is_signalled() {
    let env = Env::new();
    let (_tree, pid) = leaker(&env, "agency-bad", 150, &[]);
    for (args, needle) in [
        (vec!["--min-zombies", "0"], "at least 1"),
        (vec!["--max-targets", "0"], "at least 1"),
        (vec!["--grace", "-1s"], "-1s"),
        (vec!["--grace", "abc"], "abc"),
        (vec!["--idle-threshold", "soon"], "soon"),
    ] {
        let mut full = vec!["reap", "--allow", "agency-bad"];
        full.extend(args);
        env.cmd()
            .args(&full)
            .assert()
            .code(64)
            .stderr(predicate::str::contains(needle));
    }
    let cfg = env.path("bad.toml");
    std::fs::write(&cfg, "[reap]\nallow = \"agency-bad\"\n").unwrap();
    env.cmd()
        .args(["reap", "--allow", "agency-bad", "--config"])
        .arg(&cfg)
        .assert()
        .code(64)
        .stderr(predicate::str::contains("bad.toml"));
    // An empty allowlist matches nothing, and says so.
    env.cmd()
        .args(["reap", "--allow", ""])
        .assert()
        .code(0)
        .stderr(predicate::str::contains("allowlist is empty"));
    // A recording cannot be acted on.
    let snap = env.path("snap.json");
    env.cmd()
        .args(["snapshot", "-o"])
        .arg(&snap)
        .assert()
        .success();
    env.cmd()
        .args(["reap", "--allow", "agency-bad", "--snapshot"])
        .arg(&snap)
        .assert()
        .code(64)
        .stderr(predicate::str::contains("--dry-run"));
    let (r, code) = reap_json(
        &env,
        &[
            "--dry-run",
            "--allow",
            "agency-bad",
            "--snapshot",
            snap.to_str().unwrap(),
        ],
    );
    assert_eq!((code, parent(&r, pid).verdict.as_str()), (0, "target"));
    assert_eq!(proc_state(pid), Some('S'));
    assert_eq!(
        zombie_children(pid),
        150,
        "no signal was sent because of bad input"
    );
}

#[test]
fn a_corrupt_state_file_is_kept_aside_and_reap_starts_fresh() {
    let env = Env::new();
    std::fs::write(env.home.join("cpu-history.json"), "{corrupt").unwrap();
    if env.private {
        crate::support::chown(&env.home.join("cpu-history.json"), env.uid);
    }
    env.cmd()
        .args(["reap", "--dry-run", "--allow", "agency-none"])
        .assert()
        .success()
        .stderr(
            predicate::str::contains("was corrupt").and(predicate::str::contains("started fresh")),
        );
    let names: Vec<String> = std::fs::read_dir(&env.home)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("cpu-history.json.corrupt-")),
        "{names:?}"
    );
}
