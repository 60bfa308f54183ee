//! Every command's actual `--json` output, validated against its published schema (the
//! committed file in `schemas/`, closed: `contract.rs`) by a real JSON Schema validator
//! (`boon`, draft 2020-12): one-shot reports, JSON Lines streams record by record,
//! and the error object. A mangled record must fail, or the schemas would prove nothing.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::contract::{assert_valid, errors, validator};
use crate::support::Env;

/// Where a command writes its JSON.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Out {
    /// One object (pretty-printed or not) on stdout.
    Object,
    /// JSON Lines on stdout.
    Lines,
    /// JSON Lines on stderr (`run`).
    StderrLines,
}

struct Case {
    args: Vec<String>,
    schema: &'static str,
    out: Out,
    /// Exit codes that are a correct answer here (a level, "not registered", a mismatch).
    codes: &'static [i32],
}

fn case(args: &[&str], schema: &'static str, out: Out, codes: &'static [i32]) -> Case {
    Case {
        args: args.iter().map(|s| s.to_string()).collect(),
        schema,
        out,
        codes,
    }
}

fn records(case: &Case, stdout: &[u8], stderr: &[u8]) -> Vec<Value> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match case.out {
        Out::Object => vec![
            serde_json::from_slice(stdout)
                .unwrap_or_else(|e| panic!("{:?}: {e}: {}", case.args, text(stdout))),
        ],
        // stdout is all JSON; `run`'s stderr is shared with the command's own.
        Out::Lines => crate::support::strict_json_lines(&format!("{:?}", case.args), &text(stdout)),
        Out::StderrLines => {
            crate::support::json_lines_among_text(&format!("{:?}", case.args), &text(stderr))
        }
    }
}

#[test]
fn every_json_output_validates_against_its_published_schema() {
    let env = Env::new();
    let snap = env.path("snap.json");
    env.cmd()
        .args(["snapshot", "-o"])
        .arg(&snap)
        .assert()
        .success();
    let snap = snap.to_str().unwrap().to_string();
    let logs = env.path("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(logs.join("session.log"), "working\n").unwrap();
    let logs = logs.to_str().unwrap().to_string();
    let obs = crate::hangs::write_obs(&env, "obs.json", crate::hangs::scenario());
    let obs = obs.to_str().unwrap().to_string();
    // A process of the test's own to park and wake.
    let mut t = env.spawn(env.fixture(), &["tree", "--depth", "1", "--fanout", "1"]);
    let pid = t.ready()["pids"][0].as_i64().unwrap().to_string();

    const LEVEL: &[i32] = &[0, 1, 2];
    let cases = [
        case(&["probe"], "headroom.probe/2", Out::Object, LEVEL),
        case(
            &["probe", "--snapshot", &snap],
            "headroom.probe/2",
            Out::Object,
            LEVEL,
        ),
        case(&["limits"], "headroom.limits/2", Out::Object, LEVEL),
        case(&["snapshot"], "headroom.snapshot/1", Out::Object, &[0]),
        case(&["reap", "--dry-run"], "headroom.reap/3", Out::Object, &[0]),
        case(
            &["idle-watch", "--duration", "2s", "--interval", "1s"],
            "headroom.idle-watch/2",
            Out::Lines,
            &[0],
        ),
        case(&["watch", "--once"], "headroom.watch/3", Out::Lines, &[0]),
        // After watch, so the evidence log has rows.
        case(&["evidence"], "headroom.evidence/3", Out::Object, &[0]),
        case(
            &["log-probe", &logs],
            "headroom.log-probe/4",
            Out::Object,
            &[0],
        ),
        case(
            &["run", "-l", "100M", "--", "true"],
            "headroom.run/1",
            Out::StderrLines,
            &[0],
        ),
        case(&["top"], "headroom.top/2", Out::Object, &[0]),
        case(&["park", &pid], "headroom.park/1", Out::Object, &[0]),
        case(&["wake", &pid], "headroom.park/1", Out::Object, &[0]),
        case(
            &["calibrate", "-d", "1s"],
            "headroom.calibrate/1",
            Out::Object,
            &[0],
        ),
        case(
            &["hangs", "--observations", &obs],
            "headroom.hangs/2",
            Out::Lines,
            &[0, 1],
        ),
        case(
            &["hangs", "--events"],
            "headroom.hangs-events/2",
            Out::Object,
            &[0],
        ),
        case(
            &["login-item", "status"],
            "headroom.login-item/1",
            Out::Object,
            &[0, 1],
        ),
        case(&["config"], "headroom.config/1", Out::Object, &[0]),
        case(&["doctor"], "headroom.doctor/1", Out::Object, &[0, 1]),
        case(&["schema"], "headroom.schemas/1", Out::Object, &[0]),
        // Errors: a reading that cannot be made, a usage error, `run`'s own failure.
        case(
            &["probe", "--snapshot", "missing.json"],
            "headroom.error/1",
            Out::Object,
            &[3],
        ),
        case(
            &["limits", "--no-such-flag"],
            "headroom.error/1",
            Out::Object,
            &[64],
        ),
        case(
            &["run", "-l", "100M", "--", "/no/such/command"],
            "headroom.error/1",
            Out::StderrLines,
            &[127],
        ),
    ];
    let mut covered = BTreeSet::new();
    let mut failures = Vec::new();
    for c in &cases {
        let out = env.cmd().arg("--json").args(&c.args).output().unwrap();
        let code = out.status.code().unwrap_or(-1);
        assert!(
            c.codes.contains(&code),
            "{:?} exited {code}: {}",
            c.args,
            String::from_utf8_lossy(&out.stderr)
        );
        let recs = records(c, &out.stdout, &out.stderr);
        assert!(!recs.is_empty(), "{:?} printed no JSON", c.args);
        let v = validator(c.schema);
        for r in &recs {
            assert_eq!(r["schema"], c.schema, "{:?}: {r}", c.args);
            // `type` beside it, one-shot or stream line (the schemas require it too).
            assert!(r["type"].is_string(), "{:?} printed no `type`: {r}", c.args);
            let errs = errors(&v, r);
            if !errs.is_empty() {
                failures.push(format!("{:?} vs {}: {errs:?}\n  {r}", c.args, c.schema));
            }
        }
        if c.schema == "headroom.error/1" {
            // The object says what the stderr line says, with the exit code.
            assert_eq!(recs.last().unwrap()["exit_code"], code, "{:?}", c.args);
        }
        covered.insert(c.schema);
    }
    drop(t);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every published schema is exercised here but the MCP-only `run_limited` result
    // (validated by mcp::run_limited_results_validate_against_the_published_schema).
    let untested: Vec<_> = headroom::testing::ALL
        .iter()
        .map(|e| e.name)
        .filter(|n| !covered.contains(n) && *n != "headroom.run-limited/1")
        .collect();
    assert!(untested.is_empty(), "no case for {untested:?}");
}

/// The schemas are strict enough to fail: a record with a required field missing, a value
/// of the wrong type or outside its enum, or another output's name, is refused; the
/// untouched record (the control) is accepted.
#[test]
fn a_mangled_record_fails_validation() {
    let env = Env::new();
    let out = env.cmd().args(["--json", "probe"]).output().unwrap();
    let good: Value = serde_json::from_slice(&out.stdout).unwrap();
    let v = validator("headroom.probe/2");
    assert!(errors(&v, &good).is_empty(), "{:?}", errors(&v, &good));
    let mangle = |f: &dyn Fn(&mut serde_json::Map<String, Value>)| {
        let mut m = good.as_object().unwrap().clone();
        f(&mut m);
        Value::Object(m)
    };
    for (what, bad) in [
        ("no `used`", mangle(&|m| drop(m.remove("used")))),
        ("no `schema`", mangle(&|m| drop(m.remove("schema")))),
        ("no `type`", mangle(&|m| drop(m.remove("type")))),
        (
            "another output's type",
            mangle(&|m| drop(m.insert("type".into(), "limits".into()))),
        ),
        (
            "another output's name",
            mangle(&|m| drop(m.insert("schema".into(), "headroom.limits/2".into()))),
        ),
        (
            "`used` a string",
            mangle(&|m| drop(m.insert("used".into(), "12".into()))),
        ),
        (
            "a level not in the enum",
            mangle(&|m| drop(m.insert("level".into(), "fine".into()))),
        ),
        (
            "an instant that is not RFC 3339",
            mangle(&|m| drop(m.insert("at".into(), "yesterday".into()))),
        ),
        (
            "unknown as missing, not null",
            mangle(&|m| drop(m.remove("limit"))),
        ),
    ] {
        assert!(!errors(&v, &bad).is_empty(), "{what} was accepted: {bad}");
    }

    // A stream record too: a watch reading without its instant, or with a `type` no
    // record has.
    let out = env
        .cmd()
        .args(["--json", "watch", "--once"])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout)
        .lines()
        .find(|l| l.contains(r#""type":"reading""#))
        .map(str::to_string)
        .unwrap();
    let reading: Value = serde_json::from_str(&line).unwrap();
    let v = validator("headroom.watch/3");
    assert!(errors(&v, &reading).is_empty(), "{line}");
    let mut no_at = reading.clone();
    no_at.as_object_mut().unwrap().remove("at");
    assert!(!errors(&v, &no_at).is_empty(), "{no_at}");
    let mut odd = reading.clone();
    odd["type"] = "readings".into();
    assert!(!errors(&v, &odd).is_empty(), "{odd}");
}

/// `watch`'s `hang` record is a `hangs` round under watch's names; `watch` runs hangs rounds
/// only on macOS, so here a real replayed round (`hangs --observations`, which decides as a
/// live round would) is validated in that form: a field the round adds must be in
/// `headroom.watch/3` too. The control: the same round under its own `type` is refused.
#[test]
fn a_replayed_hangs_round_validates_as_a_watch_hang_record() {
    let env = Env::new();
    let obs = crate::hangs::write_obs(&env, "obs.json", crate::hangs::scenario());
    let out = env
        .cmd()
        .args(["--json", "hangs", "--observations"])
        .arg(&obs)
        .output()
        .unwrap();
    let rounds: Vec<Value> =
        crate::support::strict_json_lines("hangs stdout", &String::from_utf8_lossy(&out.stdout))
            .into_iter()
            .filter(|r| r["type"] == "round")
            .collect();
    assert!(
        rounds
            .iter()
            .any(|r| !r["apps"].as_array().unwrap().is_empty()),
        "the scenario has a round with an unresponsive app: {rounds:?}"
    );
    let as_watch = |r: &Value, kind: &str| {
        let mut r = r.clone();
        r["schema"] = "headroom.watch/3".into();
        r["type"] = kind.into();
        r
    };
    let hangs: Vec<Value> = rounds.iter().map(|r| as_watch(r, "hang")).collect();
    assert_valid("headroom.watch/3", &hangs);
    let v = validator("headroom.watch/3");
    assert!(!errors(&v, &as_watch(&rounds[0], "round")).is_empty());
}

/// `top --watch --json` piped: a `top` report per refresh, each as published, until SIGTERM
/// (sent to the headroom the test started, by its pid), which ends it with 0.
#[test]
#[cfg(target_os = "linux")]
fn top_watch_lines_validate_until_sigterm() {
    use crate::support::{json_lines, wait_until};
    let env = Env::new();
    let (out, err) = (env.path("top.out"), env.path("top.err"));
    let args = ["--json", "top", "--watch", "--interval", "200ms"];
    let mut top = env.spawn_with(env.headroom_path(), &args, Some((&out, &err)));
    wait_until("two refreshes", || json_lines(&out).len() >= 2);
    top.signal(libc::SIGTERM);
    assert_eq!(
        top.exit_code(),
        0,
        "{}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    assert_valid("headroom.top/2", &json_lines(&out));
}
