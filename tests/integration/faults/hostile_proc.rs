//! Fault 6: hostile or odd /proc entries. Processes that name themselves with `)`, spaces,
//! a newline, an escape sequence, invalid UTF-8 or a formula; one with 64 KiB of argv; pids
//! that vanish between getdents and read (a fork-and-exit churn); a private /proc mounted
//! with hidepid=2. Guaranteed: counts are what the test counts itself, every zombie parent is
//! attributed to the right pid, terminal output escapes control characters, and the evidence
//! CSV neutralises a formula name.

use super::{in_mount_ns, mount, require_sandbox, umount};
use crate::support::{Env, Tree, count_uid};

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// (name bytes, zombies): the formula name holds the most, so it is the evidence's top parent.
const NAMES: [(&[u8], u64); 3] = [
    (b"=a) b\nc", 30),
    (b"@\x1b[31mred", 20),
    (b"\xff\xfe) (z", 10),
];

fn probe(env: &Env) -> serde_json::Value {
    let out = env.cmd().args(["probe", "--json"]).output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 3), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The leakers with hostile names (and one with 64 KiB of argv): (pid, zombies) each.
fn hostile_leakers(env: &Env) -> (Vec<Tree>, Vec<(i64, u64)>) {
    let mut trees = Vec::new();
    let mut expected = Vec::new();
    for (name, zombies) in NAMES {
        let n = zombies.to_string();
        let mut t = env.spawn(
            env.fixture(),
            &["leak", "--zombies", &n, "--comm-hex", &hex(name)],
        );
        expected.push((t.ready()["pid"].as_i64().unwrap(), zombies));
        trees.push(t);
    }
    let pad = "x".repeat(64 * 1024);
    let mut t = env.spawn(env.fixture(), &["leak", "--zombies", "5", "--pad", &pad]);
    expected.push((t.ready()["pid"].as_i64().unwrap(), 5));
    trees.push(t);
    (trees, expected)
}

/// `reap --dry-run` with every hostile leaker allowed (they run the fixture's executable).
fn dry_run(env: &Env) -> serde_json::Value {
    let out = env
        .cmd()
        .args(["reap", "--dry-run", "--json", "--min-zombies", "1"])
        .args(["--allow", "hr-fixture"])
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

fn check_reading(env: &Env, r: &serde_json::Value, expected: &[(i64, u64)]) {
    // The test counts after the probe exited; the probe counted itself too.
    let (procs, tasks) = count_uid(env.uid);
    assert_eq!(r["processes"].as_u64().unwrap(), procs + 1, "{r}");
    assert_eq!(r["tasks"].as_u64().unwrap(), tasks + 1, "{r}");
    assert_eq!(
        pid_zombies(&r["top_parents"]),
        sorted(expected),
        "each zombie parent attributed to its pid"
    );
}

/// The (pid, zombies) pairs of a JSON list of parents, sorted.
fn pid_zombies(parents: &serde_json::Value) -> Vec<(i64, u64)> {
    sorted(
        &parents
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["pid"].as_i64().unwrap(), p["zombies"].as_u64().unwrap()))
            .collect::<Vec<_>>(),
    )
}

fn sorted(pairs: &[(i64, u64)]) -> Vec<(i64, u64)> {
    let mut v = pairs.to_vec();
    v.sort_unstable();
    v
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn hostile_names_and_huge_argv_are_read_whole_and_neutralised() {
    let env = Env::new();
    require_sandbox(&env);
    let _heavy = super::heavy();
    let (_trees, expected) = hostile_leakers(&env);
    let r = probe(&env);
    check_reading(&env, &r, &expected);
    let names: Vec<&str> = r["top_parents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"=a) b\nc"), "{names:?}");
    assert!(
        names.contains(&"\u{fffd}\u{fffd}) (z"),
        "invalid UTF-8 read lossily: {names:?}"
    );

    // The terminal: no raw escape or newline from a name reaches it.
    let human = env.cmd().arg("probe").output().unwrap();
    let text = String::from_utf8(human.stdout).unwrap();
    assert!(!text.contains('\x1b'), "{text:?}");
    assert!(
        text.contains("@\\u{1b}[31mred") && text.contains("=a) b\\nc"),
        "{text}"
    );

    // reap --dry-run reads every parent whole (exe, argv, session) and judges the right pid.
    let dry = env
        .cmd()
        .args(["reap", "--dry-run", "--json", "--min-zombies", "1"])
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&dry.stdout).unwrap();
    assert_eq!(
        pid_zombies(&report["parents"]),
        sorted(&expected),
        "{report}"
    );

    // The evidence CSV, opened in a spreadsheet for a bug report, runs no formula.
    let (rows, anomalies) = headroom::testing::read_file(&env.home.join("evidence.csv")).unwrap();
    assert!(anomalies.is_empty(), "{anomalies:?}");
    let top = rows[0].top_parent_name.as_deref().unwrap();
    assert_eq!(top, "'=a) b\\nc");
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn pids_vanishing_mid_scan_and_a_hidepid_proc_keep_counts_right() {
    let env = Env::new();
    require_sandbox(&env);
    let _heavy = super::heavy();
    let (_trees, expected) = hostile_leakers(&env);
    // The control, on the machine's /proc: whole, and the same parents are targets.
    let r = probe(&env);
    assert_eq!(
        (&r["others_hidden"], &r["partial"]),
        (&false.into(), &false.into())
    );
    let seen = dry_run(&env);
    let targets = |v: &serde_json::Value| {
        v["parents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["verdict"] == "target")
            .count()
    };
    assert_eq!(targets(&seen), expected.len(), "{seen}");
    let churn = env.spawn(env.fixture(), &["churn"]);
    // Its child is a zombie from its exit to the churn's waitpid: a reading can catch the
    // churn as a parent of one zombie beside the leakers.
    let churn_pid = i64::from(churn.pid);
    // Every reading during the churn: whole, and its count (itself included) within the one
    // short-lived child the churn can have at a time.
    for _ in 0..20 {
        let r = probe(&env);
        let (procs, _) = count_uid(env.uid);
        let got = r["processes"].as_u64().unwrap();
        assert!(got >= procs && got <= procs + 2, "{got} vs {procs} counted");
    }
    // A private /proc with hidepid=2: headroom sees only its own uid's processes, which are
    // all it counts.
    in_mount_ns(|| {
        mount(
            Some("proc"),
            std::path::Path::new("/proc"),
            Some("proc"),
            0,
            Some("hidepid=2"),
        );
        let r = probe(&env);
        let (procs, _) = count_uid(env.uid);
        let got = r["processes"].as_u64().unwrap();
        assert!(got >= procs && got <= procs + 2, "{got} vs {procs}");
        let mut parents = pid_zombies(&r["top_parents"]);
        parents.retain(|&(pid, _)| pid != churn_pid);
        assert_eq!(parents, sorted(&expected));
        // What it cannot see it says it cannot see: partial, and nothing is selected on it
        // (another user's session child of any of these parents would be invisible).
        assert_eq!(
            (&r["others_hidden"], &r["partial"]),
            (&true.into(), &true.into())
        );
        let human = env.cmd().arg("probe").output().unwrap();
        let text = String::from_utf8_lossy(&human.stdout);
        assert!(text.contains("hidden (/proc hidepid): partial"), "{text}");
        // reap cannot see its own ancestry (the test runs as root) and refuses outright.
        let out = env
            .cmd()
            .args(["reap", "--dry-run", "--json", "--min-zombies", "1"])
            .args(["--allow", "hr-fixture"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("nothing was signalled"),
            "{stderr}"
        );
        let w = env
            .cmd()
            .args(["watch", "--once", "--json", "--no-hangs", "--no-auto-reap"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&w.stdout);
        let reading: serde_json::Value = text
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|e| e["type"] == "reading")
            .unwrap();
        assert_eq!(reading["partial"], true, "{reading}");
        let (rows, _) = headroom::testing::read_file(&env.home.join("evidence.csv")).unwrap();
        assert!(
            rows.iter()
                .rev()
                .take(3)
                .all(|r| r.reading.partial == Some(true) && r.result.is_empty()),
            "{rows:?}"
        );
        // And it really is hidden: the test user cannot see root's pid 1 here.
        let ls = env
            .cmd_via(&[
                "sh",
                "-c",
                "test -e /proc/1/status && echo visible || echo hidden",
                "sh",
            ])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&ls.stdout).trim(), "hidden");
        umount(std::path::Path::new("/proc"));
    });
}
