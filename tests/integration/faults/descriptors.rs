//! The slot reading short of descriptors (RLIMIT_NOFILE): 40 sleeping fixture processes of
//! the test's uid are counted in full, or the reading says it is not complete (`partial`,
//! an `unreadable` count, or an error with an exit code of the table) — never a smaller
//! count presented as complete. `probe` (the one-shot reader) at soft limits down to 4, and
//! `watch`'s repeating reader (kept descriptors, within a budget taken from the limit) with
//! most of its limit already held by descriptors it inherited, so the budget promises more
//! than there is: it sheds what it kept and reads by path, and every round counts all 40.

use super::require_sandbox;
use crate::support::{Env, count_uid, json_lines, wait_until};

const FIXTURES: u64 = 40;

/// The test's 40 sleepers (a tree: one root, 39 children), once all are up.
fn sleepers(env: &Env) -> crate::support::Tree {
    let name = env.named_fixture("emfile-sleep");
    let mut tree = env.spawn(&name, &["tree", "--depth", "2", "--fanout", "39"]);
    tree.ready();
    wait_until("40 sleepers", || count_uid(env.uid).0 == FIXTURES);
    tree
}

/// `probe --json --no-history` under `--nofile=N:N` (None: the inherited limit): its
/// exit code and JSON.
fn probe(env: &Env, nofile: Option<u32>) -> (i32, serde_json::Value) {
    let limit = nofile.map(|n| format!("--nofile={n}:{n}"));
    let wrapper: Vec<&str> = match &limit {
        Some(l) => vec!["prlimit", l, "--"],
        None => vec![],
    };
    let out = env
        .cmd_in(&[], &wrapper)
        .args(["probe", "--json", "--no-history"])
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    let v = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (code, v)
}

/// A reading that claims to be complete counts every process of the uid.
fn complete_or_says_not(what: &str, v: &serde_json::Value, want: u64) {
    let partial = v["partial"] == true || v["unreadable"].as_u64().is_some_and(|u| u > 0);
    assert!(
        partial || v["processes"] == want,
        "{what}: {} processes presented as complete, {want} there: {v}",
        v["processes"]
    );
}

#[test]
#[cfg_attr(
    not(all(hr_root, hr_tool_prlimit, hr_tool_setpriv)),
    ignore = "needs root (a private uid), prlimit and setpriv"
)]
fn probe_short_of_descriptors_counts_all_or_says_the_reading_is_incomplete() {
    let env = Env::new();
    require_sandbox(&env);
    crate::support::require_tool("prlimit");
    let _tree = sleepers(&env);
    // The control, at the inherited limit: the 40 and probe itself, complete.
    let (code, control) = probe(&env, None);
    assert!(code <= 3, "{code}: {control}");
    assert_eq!(control["processes"], FIXTURES + 1, "{control}");
    assert_eq!(control["partial"], false, "{control}");
    for n in [4, 5, 6, 8, 12, 16, 32] {
        let (code, v) = probe(&env, Some(n));
        // probe's rows of the exit table: a level, or 3 (unknown) for no reading at all.
        assert!((0..=3).contains(&code), "--nofile={n}: exit {code}");
        if v.is_null() {
            assert!(code >= 2, "--nofile={n}: exit {code} and no JSON");
            continue;
        }
        complete_or_says_not(&format!("probe --nofile={n}"), &v, FIXTURES + 1);
    }
    // One descriptor beyond stdio, and the one-shot scan's own `/proc` descriptor closed
    // before the by-path reads it hands back: all of them, complete.
    let (_, v) = probe(&env, Some(4));
    assert_eq!(
        (v["processes"].as_u64(), v["partial"].as_bool()),
        (Some(FIXTURES + 1), Some(false)),
        "{v}"
    );
}

#[test]
#[cfg_attr(
    not(all(hr_root, hr_tool_prlimit, hr_tool_setpriv)),
    ignore = "needs root (a private uid), prlimit and setpriv"
)]
fn watch_whose_descriptor_budget_overstates_what_is_free_counts_all_every_round() {
    let env = Env::new();
    require_sandbox(&env);
    crate::support::require_tool("prlimit");
    let _tree = sleepers(&env);
    // 1,300 descriptors, 1,260 of them held (inherited from the shell): the budget, the
    // limit less 1,024, is 276; about 40 are free. Stdio, the shell's own and these leave
    // the rest to watch.
    let held = "for i in $(seq 1250); do exec {f}</dev/null; done; ";
    let readings = watch_readings(&env, held, Some(1300), "held");
    for (i, r) in readings.iter().enumerate() {
        // The 40 and watch itself.
        complete_or_says_not(&format!("round {i}"), r, FIXTURES + 1);
        assert_eq!(
            (r["processes"].as_u64(), r["partial"].as_bool()),
            (Some(FIXTURES + 1), Some(false)),
            "round {i}: descriptors shed and read by path, not left out: {r}"
        );
    }
}

/// `watch` at `--nofile=N:N` (None: the inherited limit) for five rounds, started by a
/// shell that first runs `before`: its reading events. It must stop on SIGTERM with 0 and
/// no panic.
fn watch_readings(
    env: &Env,
    before: &str,
    nofile: Option<u32>,
    tag: &str,
) -> Vec<serde_json::Value> {
    let limit = nofile.map_or(String::new(), |n| format!("prlimit --nofile={n}:{n} -- "));
    let script = format!(
        "{before}exec {limit}{} watch --interval 100ms --json --no-hangs --no-auto-reap --table-every 0s",
        env.headroom_path().display()
    );
    let (out, err) = (
        env.path(&format!("{tag}.out")),
        env.path(&format!("{tag}.err")),
    );
    let mut watch = env.spawn_with(
        std::path::Path::new("/bin/bash"),
        &["-c", &script],
        Some((&out, &err)),
    );
    let readings = || {
        json_lines(&out)
            .into_iter()
            .filter(|e| e["type"] == "reading")
            .collect::<Vec<_>>()
    };
    wait_until("five rounds", || readings().len() >= 5);
    watch.signal(libc::SIGTERM);
    assert_eq!(watch.exit_code(), 0, "{tag}");
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(!stderr.contains("panicked"), "{tag}: {stderr}");
    readings()
}

/// A ceiling's file that cannot be opened for want of a descriptor is not a ceiling that
/// is not there: on 7f29497 `watch` at `--nofile=10`/`12` read "normal" against
/// RLIMIT_NPROC (96,362 here) because `pid_max` (the tightest, 32,768) could not be opened.
/// Now a reading either finds the same binding ceiling as the control, or says its level
/// is not known (`unknown`, never `normal` against a looser limit); and `probe` exits by
/// the level it prints. The control: the inherited limit, normal against the tightest.
#[test]
#[cfg_attr(
    not(all(hr_root, hr_tool_prlimit, hr_tool_setpriv)),
    ignore = "needs root (a private uid), prlimit and setpriv"
)]
fn a_ceiling_unread_for_want_of_descriptors_is_unknown_not_looser() {
    let env = Env::new();
    require_sandbox(&env);
    crate::support::require_tool("prlimit");
    let control = watch_readings(&env, "", None, "control");
    let source = control[0]["limit_source"].clone();
    for (i, r) in control.iter().enumerate() {
        assert_eq!(
            (&r["level"], &r["limit_source"]),
            (&serde_json::json!("normal"), &source),
            "control round {i}: {r}"
        );
    }
    for n in [10, 12] {
        for (i, r) in watch_readings(&env, "", Some(n), &format!("n{n}"))
            .iter()
            .enumerate()
        {
            assert!(
                r["limit_source"] == source || r["level"] != "normal",
                "--nofile={n} round {i}: normal against {} instead of {source}: {r}",
                r["limit_source"]
            );
        }
    }
    for n in [6, 8, 10, 12, 16] {
        let (code, v) = probe(&env, Some(n));
        if v.is_null() {
            continue;
        }
        let want = match v["level"].as_str() {
            Some("normal") => 0,
            Some("warning") => 1,
            Some("critical") => 2,
            _ => 3,
        };
        assert_eq!(code, want, "probe --nofile={n}: {v}");
        assert!(
            v["limit_source"] == source || v["level"] != "normal",
            "probe --nofile={n}: {v}"
        );
    }
}
