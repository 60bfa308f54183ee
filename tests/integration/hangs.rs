//! `hangs` on Linux: recorded rounds (`--observations`) drive the same monitor as the live
//! macOS source; nothing is ever signalled or executed, every action is listed step by step.

use predicates::prelude::*;
use serde_json::{Value, json};

use crate::schema;
use crate::support::Env;

const CURSOR_ID: &str = "com.apple.TextInputUI.xpc.CursorUIViewService";
const CURSOR_PATH: &str = "/System/Library/PrivateFrameworks/TextInputUIMacHelper.framework/Versions/A/XPCServices/CursorUIViewService.xpc";

/// With the start time and uid live reads: a replay without them plans no signal.
fn editor(pid: i32, responsive: bool) -> Value {
    json!({"pid": pid, "bundle_id": "com.example.Editor", "bundle_path": "/Applications/Editor.app",
           "name": "Editor", "policy": "regular", "responsive": responsive, "extra": "ignored",
           "start_time": pid * 10, "uid": 501})
}

fn cursor(pid: i32, responsive: bool, path: &str) -> Value {
    json!({"pid": pid, "bundle_id": CURSOR_ID, "bundle_path": path, "name": "CursorUIViewService",
           "policy": "prohibited", "responsive": responsive, "start_time": pid * 10, "uid": 501})
}

fn finder(responsive: bool) -> Value {
    json!({"pid": 300, "bundle_id": "com.apple.finder",
           "bundle_path": "/System/Library/CoreServices/Finder.app", "name": "Finder",
           "policy": "regular", "responsive": responsive})
}

fn round(sec: u32, available: bool, apps: Vec<Value>) -> Value {
    json!({"at": format!("2026-11-30T10:{:02}:{:02}Z", sec / 60, sec % 60),
           "available": available, "apps": apps})
}

pub fn write_obs(env: &Env, name: &str, rounds: Vec<Value>) -> std::path::PathBuf {
    let p = env.path(name);
    std::fs::write(&p, json!({ "rounds": rounds }).to_string()).unwrap();
    p
}

/// The scenario of the issue: Editor hangs, is restarted, hangs again within the hour and is
/// blocked; CursorUIViewService hangs and is restarted through launchd; Finder (Apple) and a
/// lookalike service at the wrong path are ignored; then the interface goes away.
pub fn scenario() -> Vec<Value> {
    let fake_cursor = "/Users/me/CursorUIViewService.xpc";
    vec![
        round(
            0,
            true,
            vec![
                editor(501, false),
                cursor(700, false, CURSOR_PATH),
                finder(false),
            ],
        ),
        round(
            15,
            true,
            vec![
                editor(501, false),
                cursor(700, false, CURSOR_PATH),
                finder(false),
                cursor(800, false, fake_cursor),
            ],
        ),
        round(
            30,
            true,
            vec![
                editor(900, false),
                cursor(701, true, CURSOR_PATH),
                finder(true),
            ],
        ),
        round(
            45,
            true,
            vec![editor(900, false), cursor(701, true, CURSOR_PATH)],
        ),
        round(60, true, vec![editor(900, false)]),
        round(75, false, vec![]),
    ]
}

fn lines(out: &[u8]) -> Vec<schema::HangsRound> {
    schema::hangs_rounds(out)
}

fn app<'a>(r: &'a schema::HangsRound, identity: &str) -> &'a schema::HangsApp {
    r.apps
        .iter()
        .find(|a| a.identity == identity)
        .unwrap_or_else(|| panic!("no {identity} in {r:?}"))
}

#[test]
fn a_multi_round_replay_decides_as_live_lists_every_step_and_logs_events() {
    let env = Env::new();
    let obs = write_obs(&env, "obs.json", scenario());
    let out = env
        .cmd()
        .args(["hangs", "--json", "--record-events", "--observations"])
        .arg(&obs)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = lines(&out.stdout);
    assert_eq!(r.len(), 6, "one JSON Lines object per round");
    assert!(
        r.iter()
            .all(|x| x.kind.as_deref() == Some("round") && x.mode == "replay")
    );

    // Round 1: first unresponsive observation → pending; Finder ignored.
    assert_eq!(app(&r[0], "com.example.Editor").state, "pending");
    assert_eq!(app(&r[0], CURSOR_ID).state, "pending");
    let f = app(&r[0], "com.apple.finder");
    assert_eq!(f.state, "ignored");
    assert!(f.action.is_none());

    // Round 2: both confirmed, restarts planned with their exact steps; lookalike ignored.
    let ed = app(&r[1], "com.example.Editor");
    assert_eq!((ed.state.as_str(), ed.rounds), ("confirmed", 2));
    let a = ed.action.as_ref().unwrap();
    assert_eq!((a.outcome.as_str(), a.performed), ("planned", false));
    let steps: Vec<_> = a.steps.iter().map(|s| s.step.as_str()).collect();
    assert_eq!(
        steps,
        ["signal", "wait-exit", "signal", "wait-exit", "exec"]
    );
    assert_eq!(a.steps[0].signal.as_deref(), Some("SIGTERM"));
    assert_eq!(a.steps[2].signal.as_deref(), Some("SIGKILL"));
    assert!(
        a.steps[2]
            .condition
            .as_deref()
            .unwrap()
            .contains("same process")
    );
    assert_eq!(
        a.steps[4].argv.as_deref().unwrap(),
        ["/usr/bin/open", "-g", "/Applications/Editor.app"]
    );
    assert!(ed.notification.is_none(), "no notification for a restart");
    let svc = r[1]
        .apps
        .iter()
        .find(|x| x.identity == CURSOR_ID && x.pid == 700)
        .unwrap();
    assert_eq!(svc.kind.as_deref(), Some("service"));
    let s = svc.action.as_ref().unwrap();
    let argv = s.steps[4].argv.as_ref().unwrap();
    assert_eq!(argv[0..2], ["/bin/launchctl", "kickstart"]);
    assert!(argv[2].starts_with("gui/") && argv[2].ends_with(CURSOR_ID));
    assert!(!argv.iter().any(|a| a == "-s" || a == "-k"));
    assert!(s.steps[5].argv.as_ref().unwrap()[2].starts_with("user/"));
    assert_eq!(s.steps[6].step, "wait-replacement");
    assert!(svc.notification.is_none());
    let fake = r[1].apps.iter().find(|x| x.pid == 800).unwrap();
    assert_eq!(fake.state, "ignored");
    assert!(fake.reason.as_deref().unwrap().contains("allowlisted only"));

    // Rounds 3–5: the restarted Editor (new pid) hangs again within the hour.
    let ed = app(&r[2], "com.example.Editor");
    assert_eq!(ed.state, "cooling-down");
    assert!(ed.cooldown_until.as_deref() == Some("2026-11-30T11:00:15Z"));
    let ed = app(&r[3], "com.example.Editor");
    assert_eq!(ed.state, "blocked");
    assert!(ed.action.is_none());
    let n = ed.notification.as_ref().unwrap();
    assert!(!n.sent && n.message.contains("Editor is not responding again"));
    let ed = app(&r[4], "com.example.Editor");
    assert_eq!(ed.state, "blocked");
    assert!(ed.notification.is_none(), "notified once");

    // Round 6: interface unavailable.
    assert_eq!(r[5].status, "interface unavailable");
    assert!(r[5].apps.is_empty());
    assert_eq!(r[5].cleared_pending, 1);

    // The events file, as live (marked replayed).
    let text = std::fs::read_to_string(env.home.join("hangs-events.jsonl")).unwrap();
    let events = schema::hang_events(&text);
    let got: Vec<_> = events
        .iter()
        .map(|e| (e.event.as_str(), e.identity.as_str(), e.pid))
        .collect();
    assert_eq!(
        got,
        [
            ("detected", "com.example.Editor", 501),
            ("restarted", "com.example.Editor", 501),
            ("detected", CURSOR_ID, 700),
            ("restarted", CURSOR_ID, 700),
            ("detected", "com.example.Editor", 900),
            ("blocked", "com.example.Editor", 900),
        ]
    );
    assert!(events.iter().all(|e| e.replayed));
    assert_eq!(events[0].at, "2026-11-30T10:00:15Z");
    assert_eq!(events[0].bundle_path, "/Applications/Editor.app");
    assert_eq!(events[0].name, "Editor");
    assert!(
        !text.contains("extra"),
        "only the documented fields are stored"
    );
    // A replay keeps its own monitor: the live state file is untouched.
    assert!(!env.home.join("hangs.json").exists());

    // --events lists them; --since filters.
    let out = env
        .cmd()
        .args(["hangs", "--events", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let listed: schema::HangsEvents = schema::read(&out.stdout);
    assert_eq!(listed.schema, "headroom.hangs-events/2");
    assert_eq!(listed.events.len(), 6);
    let out = env
        .cmd()
        .args(["hangs", "--events", "--json", "--since", "1s"])
        .output()
        .unwrap();
    let listed: schema::HangsEvents = schema::read(&out.stdout);
    assert!(listed.events.is_empty() && listed.since_at.is_some());
    env.cmd()
        .args(["hangs", "--events"])
        .assert()
        .success()
        .stdout(predicate::str::contains("blocked").and(predicate::str::contains("[replayed]")));
}

#[test]
fn a_replay_without_start_time_plans_no_signal_as_live_would_not_send_one() {
    let env = Env::new();
    let anon = json!({"pid": 501, "bundle_id": "com.example.Editor",
                      "bundle_path": "/Applications/Editor.app", "name": "Editor",
                      "policy": "regular", "responsive": false});
    let obs = write_obs(
        &env,
        "anon.json",
        vec![
            round(0, true, vec![anon.clone()]),
            round(15, true, vec![anon]),
        ],
    );
    let out = env
        .cmd()
        .args(["hangs", "--json", "--observations"])
        .arg(&obs)
        .output()
        .unwrap();
    let r = lines(&out.stdout);
    let a = app(&r[1], "com.example.Editor").action.as_ref().unwrap();
    // It used to list `SIGTERM pid 501`, which live refuses to send.
    assert_eq!((a.outcome.as_str(), a.performed), ("restart-failed", false));
    assert!(a.steps.is_empty(), "{:?}", a.steps);
    env.cmd()
        .args(["hangs", "--observations"])
        .arg(&obs)
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("nothing was signalled")
                .and(predicate::str::contains("SIGTERM").not()),
        );
}

#[test]
fn human_output_lists_states_and_the_steps_it_would_take() {
    let env = Env::new();
    let obs = write_obs(&env, "obs.json", scenario());
    env.cmd()
        .args(["hangs", "--observations"])
        .arg(&obs)
        .assert()
        .code(1)
        .stdout(
            predicate::str::contains("(replay: nothing is done)")
                .and(predicate::str::contains(
                    "Editor (com.example.Editor) pid 501: confirmed after 2 rounds",
                ))
                .and(predicate::str::contains("would restart:"))
                .and(predicate::str::contains(
                    "5. /usr/bin/open -g /Applications/Editor.app",
                ))
                .and(predicate::str::contains("/bin/launchctl kickstart gui/"))
                .and(predicate::str::contains(
                    "interface unavailable: recorded as unavailable",
                )),
        );
}

#[test]
fn dry_run_replay_decides_but_writes_no_events() {
    let env = Env::new();
    let obs = write_obs(&env, "obs.json", scenario());
    let out = env
        .cmd()
        .args(["hangs", "--dry-run", "--json", "--observations"])
        .arg(&obs)
        .output()
        .unwrap();
    // A dry run that found work exits 0, as `reap --dry-run` does (issue 18).
    assert_eq!(out.status.code(), Some(0));
    assert!(lines(&out.stdout).iter().all(|r| r.mode == "dry-run"));
    assert!(!env.home.join("hangs-events.jsonl").exists());
}

#[test]
fn nothing_is_acted_on_unless_the_same_process_was_unresponsive_twice_in_a_row() {
    let env = Env::new();
    // Gone between rounds, replaced by another pid, responsive in between, rounds too far
    // apart: never confirmed, never acted on.
    let obs = write_obs(
        &env,
        "obs.json",
        vec![
            round(0, true, vec![editor(501, false)]),
            round(15, true, vec![]),
            round(30, true, vec![editor(501, false)]),
            round(45, true, vec![editor(502, false)]),
            round(60, true, vec![editor(502, true)]),
            round(75, true, vec![editor(502, false)]),
            round(75 + 11 * 60, true, vec![editor(502, false)]),
        ],
    );
    let out = env
        .cmd()
        .args(["hangs", "--json", "--observations"])
        .arg(&obs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "nothing confirmed");
    for r in lines(&out.stdout) {
        for a in &r.apps {
            assert!(a.action.is_none() && a.state == "pending", "{a:?}");
        }
    }
    assert!(!env.home.join("hangs-events.jsonl").exists());
}

#[test]
fn config_deny_is_honoured() {
    let env = Env::new();
    let cfg = env.path("config.toml");
    std::fs::write(&cfg, "[hangs]\ndeny = [\"com.example.Editor\"]\n").unwrap();
    let obs = write_obs(
        &env,
        "obs.json",
        vec![
            round(0, true, vec![editor(501, false)]),
            round(15, true, vec![editor(501, false)]),
        ],
    );
    let out = env
        .cmd()
        .args(["hangs", "--json", "--config"])
        .arg(&cfg)
        .arg("--observations")
        .arg(&obs)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let r = lines(&out.stdout);
    assert_eq!(r[1].apps[0].state, "ignored");
    assert!(r[1].apps[0].reason.as_deref().unwrap().contains("deny"));
}

#[test]
#[cfg(not(target_os = "macos"))]
fn without_observations_it_is_unsupported_off_macos() {
    let env = Env::new();
    let unsupported = format!(
        "hangs: unsupported on {} (needs the macOS WindowServer)",
        std::env::consts::OS
    );
    for extra in [&[][..], &["--watch"][..], &["--dry-run", "--json"][..]] {
        let json = extra.contains(&"--json");
        let out = env
            .cmd()
            .arg("hangs")
            .args(extra)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(unsupported.as_str()))
            .get_output()
            .clone();
        // With --json the error is also the one object on stdout.
        if json {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["schema"], "headroom.error/1");
            assert_eq!(v["exit_code"], 2);
            assert!(v["error"].as_str().unwrap().contains(&unsupported), "{v}");
        } else {
            assert!(out.stdout.is_empty());
        }
    }
    assert!(!env.home.join("hangs.json").exists());
}

#[test]
fn bad_observation_files_get_a_clear_message_and_exit_2() {
    let env = Env::new();
    let good = json!({"rounds": scenario()}).to_string();
    let cases: Vec<(&str, String, &str)> = vec![
        ("empty.json", String::new(), "is empty"),
        (
            "truncated.json",
            good[..good.len() / 2].to_string(),
            "is not valid JSON",
        ),
        (
            "garbage.json",
            "not json at all".into(),
            "is not valid JSON",
        ),
        (
            "norounds.json",
            "{\"round\": []}".into(),
            "has no `rounds` array",
        ),
        (
            "nopid.json",
            json!({"rounds": [{"at": "2026-11-30T10:00:00Z", "available": true,
                "apps": [{"bundle_id": null, "bundle_path": "/Applications/X.app",
                          "name": "X", "policy": "regular", "responsive": false}]}]})
            .to_string(),
            "rounds[0].apps[0]: missing field `pid`",
        ),
        (
            "badtime.json",
            json!({"rounds": [{"at": "yesterday", "available": true, "apps": []}]}).to_string(),
            "rounds[0].at",
        ),
    ];
    for (name, text, says) in cases {
        let p = env.path(name);
        std::fs::write(&p, text).unwrap();
        env.cmd()
            .args(["hangs", "--observations"])
            .arg(&p)
            .assert()
            .code(2)
            .stdout(predicate::str::is_empty())
            .stderr(
                predicate::str::contains(says)
                    .and(predicate::str::contains(name))
                    .and(predicate::str::contains("panicked").not()),
            );
    }
    env.cmd()
        .args(["hangs", "--observations", "/nonexistent/obs.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/obs.json"));
    assert!(!env.home.join("hangs-events.jsonl").exists());
}

#[test]
fn usage_errors_exit_64() {
    let env = Env::new();
    for argv in [
        &["hangs", "--events", "--watch"][..],
        &["hangs", "--since", "1h"][..],
        &["hangs", "--every", "5s"][..],
        &["hangs", "--watch", "--every", "1h"][..],
    ] {
        env.cmd().args(argv).assert().code(64);
    }
    let cfg = env.path("bad.toml");
    std::fs::write(&cfg, "[hangs]\ncooldown = \"5m\"\n").unwrap();
    env.cmd()
        .args(["hangs", "--events", "--config"])
        .arg(&cfg)
        .assert()
        .code(64)
        .stderr(predicate::str::contains("cooldown"));
}

#[test]
fn the_watch_summary_matches_its_published_schema() {
    // --watch only runs on macOS; its last line is checked against the schema here.
    let s = headroom::testing::HangsSummary {
        at: "2026-08-28T18:05:00Z".into(),
        stopped_by: Some("SIGTERM".into()),
        ..Default::default()
    };
    let back: schema::HangsSummary =
        schema::read(headroom::testing::to_line(&s).unwrap().as_bytes());
    assert_eq!(
        (back.schema.as_str(), back.kind.as_str()),
        ("headroom.hangs/2", "summary")
    );
}

/// Issue 25 item 13, replayed: the recorded rounds carry each app's process state, and a
/// stopped (parked) or traced (at a breakpoint) editor is reported as such and never planned
/// a SIGTERM, SIGKILL or `open -g`, however many rounds it stays unresponsive; the round
/// before it was parked counts for nothing after. Control: the same rounds with the editor
/// running are a confirmed hang with its restart planned in round two.
#[test]
fn a_stopped_or_traced_app_is_reported_and_never_restarted_in_a_replay() {
    let env = Env::new();
    let with = |state: &str| {
        let mut e = editor(501, false);
        e["state"] = json!(state);
        e
    };
    for held in ["stopped", "traced"] {
        let obs = write_obs(
            &env,
            &format!("{held}.json"),
            vec![
                round(0, true, vec![with("running")]),
                round(15, true, vec![with(held)]),
                round(30, true, vec![with(held)]),
                round(45, true, vec![with("running")]),
            ],
        );
        let out = env
            .cmd()
            .args(["hangs", "--json", "--observations"])
            .arg(&obs)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "nothing left hung: {held}");
        let r = lines(&out.stdout);
        let states: Vec<&str> = r.iter().map(|x| x.apps[0].state.as_str()).collect();
        assert_eq!(states, vec!["pending", held, held, "pending"], "{held}");
        assert!(
            r.iter().all(|x| x.apps[0].action.is_none()),
            "{held}: {r:?}"
        );
        assert!(
            r[1].apps[0]
                .reason
                .as_deref()
                .unwrap()
                .contains("never restarted")
        );
    }
    let obs = write_obs(
        &env,
        "running.json",
        vec![
            round(0, true, vec![with("running")]),
            round(15, true, vec![with("sleeping")]),
        ],
    );
    let out = env
        .cmd()
        .args(["hangs", "--json", "--observations"])
        .arg(&obs)
        .output()
        .unwrap();
    let r = lines(&out.stdout);
    assert_eq!(r[1].apps[0].state, "confirmed");
    assert_eq!(r[1].apps[0].action.as_ref().unwrap().outcome, "planned");
    // A state that is not one is refused, naming the place.
    let obs = write_obs(&env, "bad.json", vec![round(0, true, vec![with("frozen")])]);
    env.cmd()
        .args(["hangs", "--observations"])
        .arg(&obs)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("rounds[0].apps[0]").and(predicate::str::contains("frozen")),
        );
}
