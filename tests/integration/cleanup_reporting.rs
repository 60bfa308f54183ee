//! Issue 25 (items 10, 11) on real processes (Linux): the evidence row of a cleanup is best
//! effort everywhere (the report, the exit and `watch`'s cooldown are the action's), and one
//! reading, judged by the configured thresholds, in `probe`, `reap`, `watch`, MCP and the
//! evidence log. Fixtures as in `reap.rs`.

use std::path::Path;

use serde_json::{Value, json};

use crate::mcp::Server;
use crate::schema;
use crate::support::{Env, Tree, proc_state, strict_json_lines, wait_until, zombie_children};

fn leaker(env: &Env, name: &str, zombies: usize) -> (Tree, i32) {
    let exe = env.named_fixture(name);
    let n = zombies.to_string();
    let mut tree = env.spawn(&exe, &["leak", "--zombies", n.as_str(), "--ignore-term"]);
    let pid = tree.ready()["pid"].as_i64().unwrap() as i32;
    assert_eq!(zombie_children(pid), zombies);
    (tree, pid)
}

/// `text` as a config file the test user owns, mode 0600 (as a careful user keeps it).
fn write_config(env: &Env, path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    if env.private {
        crate::support::chown(path, env.uid);
    }
}

/// The evidence log's path made a directory: no row can be written there.
fn block_evidence(env: &Env) {
    std::fs::create_dir(env.home.join("evidence.csv")).unwrap();
}

const NOT_RECORDED: &str = "this cleanup is not in the evidence log";

/// With the evidence log unwritable, `reap` (human and `--json`, with targets and without)
/// keeps its report and the exit of the action, with one warning. (Before: the targets were
/// signalled, then exit 2 with only the error, and `--json` printed only
/// `headroom.error/1`.) Control: once the log is writable the same cleanup gets its row.
#[test]
fn an_unwritable_evidence_log_keeps_reaps_report_and_exit() {
    let env = Env::new();
    block_evidence(&env);
    let (_t1, p1) = leaker(&env, "agency-ev10h", 120);
    let out = env
        .cmd()
        .args(["reap", "--allow", "agency-ev10h", "--grace", "100ms"])
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("120 zombies reaped"), "{stdout}");
    assert!(stderr.contains(NOT_RECORDED), "{stderr}");
    wait_until("the first leaker to be reaped", || proc_state(p1).is_none());

    let (_t2, p2) = leaker(&env, "agency-ev10j", 110);
    let out = env
        .cmd()
        .args([
            "reap",
            "--json",
            "--allow",
            "agency-ev10j",
            "--grace",
            "100ms",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let r: schema::Reap = schema::read(&out.stdout);
    assert_eq!(r.schema, "headroom.reap/3");
    assert_eq!(
        (
            r.targets[0].pid,
            r.targets[0].zombies_reaped,
            r.targets[0].verified
        ),
        (p2, 110, true)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains(NOT_RECORDED));
    // No targets: the `cleanup,no-targets` row is lost the same way, and the answer stands.
    let out = env
        .cmd()
        .args(["reap", "--json", "--allow", "agency-none-ev10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let r: schema::Reap = schema::read(&out.stdout);
    assert_eq!(r.summary, "No candidates for cleanup.");
    assert!(String::from_utf8_lossy(&out.stderr).contains(NOT_RECORDED));

    // Control: a writable log gets the row, and no warning.
    std::fs::remove_dir(env.home.join("evidence.csv")).unwrap();
    let (_t3, p3) = leaker(&env, "agency-ev10c", 105);
    let out = env
        .cmd()
        .args(["reap", "--allow", "agency-ev10c", "--grace", "100ms"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains(NOT_RECORDED));
    let evidence = std::fs::read_to_string(env.home.join("evidence.csv")).unwrap();
    assert!(
        evidence.contains(&format!(",{p3},agency-ev10c,105,"))
            && evidence.contains("sigkill;reaped=105;freed=106;verified=true"),
        "{evidence}"
    );
}

fn watch_once(env: &Env, cfg: &Path) -> Vec<Value> {
    let out = env
        .cmd()
        .args(["watch", "--once", "--json", "--no-hangs", "--config"])
        .arg(cfg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "critical: {out:?}");
    strict_json_lines("watch --once", &String::from_utf8_lossy(&out.stdout))
}

/// `watch`'s auto-reap with the evidence log unwritable: the cleanup is reported (its rows
/// wait in memory with the round's, said in a notice) and its cooldown starts, so the next
/// run inside the cooldown leaves a new leaker alone. (Before: "cleanup failed", and no
/// cooldown: the next run cleaned up again at once.)
#[test]
fn an_unwritable_evidence_log_keeps_watchs_cleanup_and_starts_its_cooldown() {
    let env = Env::new();
    block_evidence(&env);
    let cfg = env.path("watch.toml");
    write_config(
        &env,
        &cfg,
        "[probe]\nwarn = 0.0001\ncrit = 0.0001\n[reap]\nallow = [\"agency-ev10w\"]\n\
         grace = \"100ms\"\n[notifications]\nenabled = false\n",
    );
    let (_t1, p1) = leaker(&env, "agency-ev10w", 120);
    // Critical in two consecutive readings (two runs) before the cleanup.
    let first = watch_once(&env, &cfg);
    assert!(!first.iter().any(|e| e["type"] == "cleanup"), "{first:#?}");
    let second = watch_once(&env, &cfg);
    let cleanup = second
        .iter()
        .find(|e| e["type"] == "cleanup")
        .unwrap_or_else(|| panic!("{second:#?}"));
    assert_eq!(cleanup["targets"][0]["pid"], p1, "{cleanup}");
    assert_eq!(cleanup["targets"][0]["verified"], true, "{cleanup}");
    assert!(
        second
            .iter()
            .any(|e| e["type"] == "notice"
                && e["message"].as_str().unwrap().contains("kept in memory")),
        "{second:#?}"
    );
    assert!(
        !second
            .iter()
            .any(|e| e["type"] == "notice"
                && e["message"].as_str().unwrap().contains("cleanup failed")),
        "{second:#?}"
    );
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(env.home.join("watch-state.json")).unwrap())
            .unwrap();
    assert!(
        state["last_cleanup_ms"].is_i64(),
        "the cooldown started: {state}"
    );
    wait_until("the first leaker to be reaped", || proc_state(p1).is_none());
    // Inside the cooldown (120 s by default): a new leaker is left alone.
    let (_t2, p2) = leaker(&env, "agency-ev10w2", 130);
    let third = watch_once(&env, &cfg);
    assert!(!third.iter().any(|e| e["type"] == "cleanup"), "{third:#?}");
    assert_eq!(zombie_children(p2), 130);
    assert_eq!(proc_state(p2), Some('S'));
}

/// MCP's `reap` with the evidence log unwritable: the call is no error, its report is the
/// structured content, and the warning is in the text. (Before: `isError` and no report.)
#[test]
fn an_unwritable_evidence_log_keeps_the_mcp_reap_result() {
    let env = Env::new();
    block_evidence(&env);
    write_config(
        &env,
        &env.home.join("config.toml"),
        "[reap]\nallow = [\"agency-ev10m\"]\ngrace = \"100ms\"\n",
    );
    let (_t, pid) = leaker(&env, "agency-ev10m", 120);
    let mut s = Server::ready(&env);
    let r = s.call("reap", json!({}));
    assert_eq!(r["isError"], false, "{r}");
    let t = &r["structuredContent"]["targets"][0];
    assert_eq!(
        (&t["pid"], &t["zombies_reaped"], &t["verified"]),
        (&json!(pid), &json!(120), &json!(true)),
        "{r}"
    );
    // The warning is in the summary, the second text block (the first is the JSON).
    assert!(
        r["content"][1]["text"]
            .as_str()
            .unwrap()
            .contains(NOT_RECORDED),
        "{r}"
    );
    let (code, err) = s.finish();
    assert_eq!(code, 0, "{err}");
}

/// The `level` column of every evidence row, with its action.
fn evidence_levels(home: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(home.join("evidence.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (level, action) = (col("level"), col("action"));
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            (cells[action].to_string(), cells[level].to_string())
        })
        .collect()
}

/// With `[probe] warn/crit` far below the defaults, the same table is `critical` for
/// `probe`, `reap` (its `usage` and its evidence row), `watch` (its reading, its cleanup and
/// their rows) and MCP's `probe` and `reap`. (Before: `reap` judged by the defaults and
/// recorded `cleanup=normal` beside `poll=critical`.) Control: without the config every one
/// of them says `normal`.
#[test]
fn probe_reap_watch_mcp_and_the_evidence_read_one_level_by_the_configured_thresholds() {
    let env = Env::new();
    let cfg = env.home.join("config.toml");
    write_config(
        &env,
        &cfg,
        "[probe]\nwarn = 0.0001\ncrit = 0.0001\n[reap]\nallow = [\"agency-none-11\"]\n\
         [notifications]\nenabled = false\n",
    );
    // The slots of 120 zombies put the test user over 0.0001 % of any limit.
    let (_t, _pid) = leaker(&env, "agency-lvl11", 120);
    let json_out = |args: &[&str]| -> Value {
        let out = env.cmd().args(args).output().unwrap();
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
    };
    let probe = json_out(&["probe", "--json"]);
    assert_eq!(probe["level"], "critical", "{probe}");
    assert_eq!(probe["crit_pct"], 0.0001);
    let reap = json_out(&["reap", "--json"]);
    assert_eq!(reap["usage"]["level"], "critical", "{reap}");
    let dry = json_out(&["reap", "--dry-run", "--json"]);
    assert_eq!(dry["usage"]["level"], "critical", "{dry}");
    let mut watch = Vec::new();
    for _ in 0..2 {
        let out = env
            .cmd()
            .args(["watch", "--once", "--json", "--no-hangs"])
            .output()
            .unwrap();
        watch.extend(strict_json_lines(
            "watch --once",
            &String::from_utf8_lossy(&out.stdout),
        ));
    }
    let readings: Vec<&Value> = watch.iter().filter(|e| e["type"] == "reading").collect();
    assert_eq!(readings.len(), 2);
    assert!(
        readings.iter().all(|e| e["level"] == "critical"),
        "{watch:#?}"
    );
    let cleanup = watch
        .iter()
        .find(|e| e["type"] == "cleanup")
        .unwrap_or_else(|| panic!("{watch:#?}"));
    assert_eq!(cleanup["usage"]["level"], "critical", "{cleanup}");
    let mut s = Server::ready(&env);
    let mcp_probe = s.call("probe", json!({}));
    assert_eq!(
        mcp_probe["structuredContent"]["level"], "critical",
        "{mcp_probe}"
    );
    let mcp_reap = s.call("reap", json!({}));
    assert_eq!(
        mcp_reap["structuredContent"]["usage"]["level"], "critical",
        "{mcp_reap}"
    );
    s.finish();
    // Every row: probe's, reap's, watch's two polls and its cleanup, MCP's probe and reap.
    let rows = evidence_levels(&env.home);
    let actions: Vec<&str> = rows.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(
        actions.iter().filter(|a| **a == "poll").count(),
        4,
        "{rows:?}"
    );
    assert_eq!(
        actions.iter().filter(|a| **a == "cleanup").count(),
        3,
        "{rows:?}"
    );
    assert!(rows.iter().all(|(_, l)| l == "critical"), "{rows:?}");

    // Control: the defaults read the same table as normal, everywhere.
    std::fs::remove_file(&cfg).unwrap();
    std::fs::remove_file(env.home.join("evidence.csv")).unwrap();
    assert_eq!(json_out(&["probe", "--json"])["level"], "normal");
    let reap = json_out(&["reap", "--json", "--allow", "agency-none-11"]);
    assert_eq!(reap["usage"]["level"], "normal", "{reap}");
    let rows = evidence_levels(&env.home);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows.iter().all(|(_, l)| l == "normal"), "{rows:?}");
}
