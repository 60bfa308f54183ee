//! Issue 25 (items 4–6) on real processes (Linux): every decision `reap` (and `watch`'s
//! cleanup) acts on is still true at its signal, only what headroom ended is credited,
//! verification waits for a slow inheritor, and the grace is bounded and never stops
//! `watch` reading. Fixtures as in `reap.rs`: under a subreaper the test owns, a name unique
//! to the test in `--allow`, headroom as the private test uid.

use crate::schema;
use crate::support::{
    Env, Tree, hold_cleanup_lock, json_lines, lock_waiters, proc_state, wait_more_readings,
    wait_until, zombie_children,
};

/// A leaking parent named `name` holding `zombies`, with the fixture's `extra` options.
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

fn reap_report(out: &std::process::Output) -> schema::Reap {
    schema::read_or(&out.stdout, &String::from_utf8_lossy(&out.stderr))
}

fn target(r: &schema::Reap, pid: i32) -> &schema::ReapTarget {
    r.targets
        .iter()
        .find(|t| t.pid == pid)
        .unwrap_or_else(|| panic!("pid {pid} not a target: {r:#?}"))
}

fn lines(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .count()
}

/// Two targets that ignore SIGTERM share one escalation. One of them (B) reaps all its
/// zombies when SIGTERM arrives: at the end of the grace the table is read again and B is
/// no target any more, so it is `spared` (SIGTERM only, no SIGKILL) and none of its zombies
/// is credited. The control, A, still leaking at the end of the grace, is killed and its
/// 120 zombies credited. (Before: each target had its own grace, and the decision was never
/// made again: B got SIGKILL and the report credited its 110 zombies to headroom.)
#[test]
fn a_parent_that_reaps_its_zombies_during_the_grace_is_spared_and_not_credited() {
    let env = Env::new();
    let (_a_tree, a) = leaker(&env, "agency-gate-a", 120, &["--ignore-term"]);
    let terms = env.path("b.terms");
    let terms_s = terms.to_str().unwrap();
    let (_b_tree, b) = leaker(
        &env,
        "agency-gate-b",
        110,
        &["--reap-on-term", "--count-term", terms_s],
    );
    let out = env
        .cmd()
        .args(["reap", "--json", "--allow", "agency-gate", "--grace", "2s"])
        .output()
        .unwrap();
    let r = reap_report(&out);
    assert_eq!(out.status.code(), Some(0), "{r:#?}");
    let ta = target(&r, a);
    assert_eq!(
        (ta.outcome.as_str(), ta.zombies_reaped, ta.verified),
        ("sigkill", 120, true)
    );
    let tb = target(&r, b);
    assert_eq!(
        (tb.outcome.as_str(), tb.signals.clone(), tb.zombies_reaped),
        ("spared", vec!["SIGTERM".to_string()], 0),
        "{tb:?}"
    );
    assert!(!tb.verified);
    assert_eq!(lines(&terms), 1, "one SIGTERM, nothing after it");
    assert_eq!(proc_state(b), Some('S'), "B is never killed");
    assert_eq!(zombie_children(b), 0, "B reaped its own");
    assert!(
        r.summary.starts_with("120 zombies reaped")
            && r.summary.contains(&format!("Not ended: pid {b}")),
        "{}",
        r.summary
    );
    let evidence = std::fs::read_to_string(env.home.join("evidence.csv")).unwrap();
    let row_b = evidence
        .lines()
        .find(|l| l.contains(&format!(",{b},agency-gate-b,")))
        .unwrap_or_else(|| panic!("{evidence}"));
    assert!(
        row_b.contains(",kill:15,") && row_b.contains("spared;reaped=0;freed=0;verified=false"),
        "{row_b}"
    );
    wait_until("A to be reaped", || proc_state(a).is_none());
}

/// B stops leaking (reaps its zombies on SIGUSR1) after `reap` decided but before any
/// signal: `reap` waits for the cleanup lock the test holds, the test cues B, then lets go.
/// The table read again after the wait no longer chooses B: never signalled, not credited,
/// reported as no longer a target. The control, A, still leaking, is ended and credited.
#[test]
fn a_parent_that_stops_leaking_before_its_signal_is_never_signalled() {
    let env = Env::new();
    let (_a_tree, a) = leaker(&env, "agency-cue-a", 120, &["--ignore-term"]);
    let terms = env.path("b.terms");
    let terms_s = terms.to_str().unwrap();
    let (b_tree, b) = leaker(
        &env,
        "agency-cue-b",
        110,
        &["--reap-on-usr1", "--count-term", terms_s],
    );
    let (held, ino) = hold_cleanup_lock(&env);
    let out = std::thread::scope(|s| {
        let run = s.spawn(|| {
            env.cmd()
                .args([
                    "reap",
                    "--json",
                    "--allow",
                    "agency-cue",
                    "--grace",
                    "200ms",
                ])
                .output()
                .unwrap()
        });
        // reap has decided (both are targets) and waits for the lock.
        wait_until("reap to wait for the cleanup lock", || {
            lock_waiters(ino) >= 1
        });
        b_tree.signal(libc::SIGUSR1);
        wait_until("B to reap its zombies", || zombie_children(b) == 0);
        drop(held);
        run.join().unwrap()
    });
    let r = reap_report(&out);
    assert_eq!(out.status.code(), Some(0), "{r:#?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("another cleanup holds"), "{err}");
    assert_eq!(r.already_handled, vec![b], "{r:#?}");
    assert!(r.targets.iter().all(|t| t.pid != b), "{r:#?}");
    assert_eq!(lines(&terms), 0, "B got no SIGTERM");
    assert_eq!(proc_state(b), Some('S'));
    let ta = target(&r, a);
    assert_eq!(
        (ta.outcome.as_str(), ta.zombies_reaped, ta.verified),
        ("sigkill", 120, true)
    );
    wait_until("A to be reaped", || proc_state(a).is_none());
}

/// The leaker's zombies are inherited by a subreaper the test owns that reaps them only
/// 2.5 s after it first sees one (a slow container init): verification waits for them and
/// the cleanup is verified, exit 0 (with a fixed 1 s window it was "Cleanup without
/// effect", exit 1, and a failure in the evidence log). The control, a subreaper that never
/// reaps, is `verification_fails_when_the_zombies_are_inherited_by_a_non_reaping_subreaper`
/// in `reap.rs`: exit 1, the holder named.
#[test]
fn a_slow_inheritor_is_waited_for_and_the_cleanup_verified() {
    let env = Env::new();
    let leak = env.named_fixture("agency-slow");
    let mut tree = env.spawn(
        env.fixture(),
        &[
            "holder",
            "--reap-after-ms",
            "2500",
            leak.to_str().unwrap(),
            "leak",
            "--zombies",
            "110",
        ],
    );
    let leaker_pid: i32 = tree.expect("holding ").trim().parse().unwrap();
    wait_until("110 zombies", || zombie_children(leaker_pid) == 110);
    let out = env
        .cmd()
        .args([
            "reap",
            "--json",
            "--allow",
            "agency-slow",
            "--grace",
            "200ms",
        ])
        .output()
        .unwrap();
    let r = reap_report(&out);
    assert_eq!(out.status.code(), Some(0), "{r:#?}");
    let t = target(&r, leaker_pid);
    assert_eq!(
        (
            t.outcome.as_str(),
            t.verified,
            t.zombies_reaped,
            t.zombies_left
        ),
        ("sigterm", true, 110, 0)
    );
    assert_eq!(t.held_by, None);
    assert!(
        r.verify_ms > 1000,
        "waited past one second: {}",
        r.verify_ms
    );
    assert!(r.summary.starts_with("110 zombies reaped"), "{}", r.summary);
    let evidence = std::fs::read_to_string(env.home.join("evidence.csv")).unwrap();
    assert!(
        evidence.contains("sigterm;reaped=110;freed=111;verified=true"),
        "{evidence}"
    );
}

/// One bound for every grace that ends a process (60 s): `reap --grace`, `[reap] grace` and
/// `[memory] grace` beyond it are exit 64 with the bound in the one-line message, and
/// nothing is signalled; the controls, exactly 60 s from each, are accepted.
#[test]
fn a_grace_beyond_sixty_seconds_is_refused_from_the_flag_and_both_sections() {
    let env = Env::new();
    let (_tree, pid) = leaker(&env, "agency-grace6", 120, &["--ignore-term"]);
    let reap = ["reap", "--allow", "agency-grace6"];
    let cfg = env.path("grace.toml");
    let cfg_s = cfg.to_str().unwrap();
    let refused = |extra: &[&str], file: Option<&str>, needle: &str| {
        if let Some(f) = file {
            std::fs::write(&cfg, f).unwrap();
        }
        let mut c = env.cmd();
        c.args(reap).args(extra);
        if file.is_some() {
            c.args(["--config", cfg_s]);
        }
        let out = c.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(64), "{extra:?} {file:?}: {err}");
        assert!(err.contains(needle), "{extra:?} {file:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    };
    refused(
        &["--grace", "61s"],
        None,
        "grace `1m 1s` is refused: at most 1m",
    );
    refused(
        &[],
        Some("[reap]\ngrace = \"61s\"\n"),
        "grace `1m 1s` is refused: at most 1m",
    );
    refused(
        &["--dry-run"],
        Some("[memory]\ngrace = \"61s\"\n"),
        "must be between 1ms and 1m",
    );
    assert_eq!(zombie_children(pid), 120, "nothing was signalled");
    // Controls: exactly the bound, from each.
    let accepted = |extra: &[&str], file: &str| {
        std::fs::write(&cfg, file).unwrap();
        let out = env
            .cmd()
            .args(reap)
            .args(["--dry-run", "--json", "--config", cfg_s])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{extra:?} {file:?}: {out:?}");
        reap_report(&out).grace_ms
    };
    assert_eq!(accepted(&["--grace", "60s"], ""), 60_000);
    assert_eq!(accepted(&[], "[reap]\ngrace = \"60s\"\n"), 60_000);
    accepted(&[], "[memory]\ngrace = \"60s\"\n");
}

/// `watch`'s cleanup runs beside the rounds: while its escalation waits out a 30 s grace (long enough that a loaded machine still fits three rounds and a guard in it) for
/// a leaker that ignores SIGTERM, readings keep coming, and (as the private uid) a memory
/// guard ends a tree over its limit; only then is the leaker killed and the cleanup
/// reported. (Before: the round was held for the whole grace, no reading and no guard.)
#[test]
fn watch_keeps_reading_and_guarding_while_its_cleanup_waits_out_the_grace() {
    let env = Env::new();
    let cfg = env.path("watch.toml");
    std::fs::write(
        &cfg,
        "[reap]\nallow = [\"agency-wgrace\"]\ngrace = \"30s\"\n[notifications]\nenabled = false\n\
         [[memory.guard]]\npattern = \"hog-wgrace\"\nlimit = \"100M\"\n[memory]\ngrace = \"1s\"\n",
    )
    .unwrap();
    let terms = env.path("terms");
    let terms_s = terms.to_str().unwrap();
    let (_leak, pid) = leaker(&env, "agency-wgrace", 150, &["--count-term", terms_s]);
    let (out, err) = (env.path("watch.out"), env.path("watch.err"));
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
        cfg.to_str().unwrap(),
    ];
    let mut watch = env.spawn_with(env.headroom_path(), &args, Some((&out, &err)));
    wait_until("the leaker's SIGTERM", || lines(&terms) == 1);
    wait_more_readings("three rounds during the grace", &out, 3);
    let hog = env.private.then(|| {
        let exe = env.named_fixture("hog-wgrace");
        // Not waited for `ready`: the guard may end it while it is still allocating.
        env.spawn(&exe, &["hog", "--mib", "300"])
    });
    if hog.is_some() {
        wait_until("the guard to act during the grace", || {
            json_lines(&out).iter().any(|e| e["type"] == "memory")
        });
    }
    // All of that happened inside the grace: the leaker is still there, its zombies too.
    let during = json_lines(&out);
    assert!(
        !during.iter().any(|e| e["type"] == "cleanup"),
        "no cleanup report yet: {during:#?}"
    );
    assert_eq!(proc_state(pid), Some('S'), "still in its grace");
    assert_eq!(zombie_children(pid), 150);
    wait_until("the cleanup report", || {
        json_lines(&out).iter().any(|e| e["type"] == "cleanup")
    });
    let events = json_lines(&out);
    let c = events.iter().find(|e| e["type"] == "cleanup").unwrap();
    assert_eq!(
        (&c["targets"][0]["outcome"], &c["targets"][0]["verified"]),
        (&serde_json::json!("sigkill"), &serde_json::json!(true)),
        "{c}"
    );
    watch.signal(libc::SIGTERM);
    assert_eq!(
        watch.exit_code(),
        0,
        "{}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    crate::contract::assert_valid("headroom.watch/3", &json_lines(&out));
    drop(hog);
}
