//! The protocol and the tool table, without starting a process: version negotiation, the
//! error codes, the stateless style, the schemas, and reap's narrowing.

use clap::Parser;
use serde_json::{Value, json};

use super::*;
use crate::config::Settings;
use session::{META_SERVER_INFO, META_VERSION};

/// A server whose messages are kept: each `ask` returns the answer to the message sent.
pub(super) struct Probe {
    server: Server,
    sink: std::sync::Arc<std::sync::Mutex<crate::output::Captured>>,
}

pub(super) fn server(read_only: bool) -> Probe {
    let cli = crate::cli::Cli::try_parse_from(["headroom", "mcp"]).unwrap();
    let (printer, sink) = crate::output::Printer::capturing(None);
    let out = std::sync::Arc::new(calls::Outbox::new(printer));
    let sel = if read_only {
        ToolSelection {
            groups: vec![crate::config::ToolGroup::Read],
            run_allow: None,
        }
    } else {
        ToolSelection::all()
    };
    Probe {
        server: Server::new(&cli.global, sel, out),
        sink,
    }
}

impl Probe {
    fn handle_line(&mut self, line: &[u8]) -> Option<Value> {
        self.server.handle_line(line);
        // A tools/call answers from its own thread: wait for it.
        for _ in 0..2000 {
            let mut c = self.sink.lock().unwrap();
            if !c.stdout.is_empty() {
                let text = String::from_utf8(std::mem::take(&mut c.stdout)).unwrap();
                return Some(serde_json::from_str(text.lines().next().unwrap()).unwrap());
            }
            drop(c);
            if !line.windows(10).any(|w| w == b"tools/call") {
                return None;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        None
    }
}

pub(super) fn ask(s: &mut Probe, msg: Value) -> Value {
    s.handle_line(msg.to_string().as_bytes()).unwrap()
}

pub(super) fn init(s: &mut Probe) {
    let r = ask(
        s,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}),
    );
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
}

pub(super) fn code(r: &Value) -> i64 {
    r["error"]["code"].as_i64().unwrap()
}

#[test]
fn initialize_agrees_a_version_and_offers_tools_only() {
    let mut s = server(false);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}),
    );
    assert_eq!(r["id"], 1);
    assert_eq!(r["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(
        r["result"]["capabilities"]["tools"],
        json!({"listChanged": false})
    );
    assert_eq!(r["result"]["capabilities"]["resources"]["subscribe"], true);
    assert_eq!(r["result"]["serverInfo"]["name"], "headroom");
    // A version it does not know: the newest it does.
    let r = ask(
        &mut server(false),
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}),
    );
    assert_eq!(r["result"]["protocolVersion"], HANDSHAKE_VERSIONS[0]);
    // The notification that follows is not answered.
    assert!(
        s.handle_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .is_none()
    );
}

#[test]
fn requests_before_initialize_are_refused_but_ping_is_answered() {
    let mut s = server(false);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":"a","method":"tools/list"}),
    );
    assert_eq!((code(&r), &r["id"]), (rpc::INVALID_REQUEST, &json!("a")));
    let r = ask(&mut s, json!({"jsonrpc":"2.0","id":2,"method":"ping"}));
    assert_eq!(r["result"], json!({}));
    init(&mut s);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}),
    );
    assert!(r["result"]["tools"].is_array(), "{r}");
}

#[test]
fn unknown_methods_tools_and_bad_arguments_get_their_codes() {
    let mut s = server(false);
    init(&mut s);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}),
    );
    assert_eq!(code(&r), rpc::METHOD_NOT_FOUND);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rm_rf","arguments":{}}}),
    );
    assert_eq!(code(&r), rpc::INVALID_PARAMS);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool `rm_rf`")
    );
    // Bad argument values are tool errors the model can read, not protocol errors.
    for args in [
        json!({"pid": "one"}),
        json!({}),
        json!({"pid": 5, "signal": "KILL"}),
        json!({"pid": 1.5}),
    ] {
        let r = ask(
            &mut s,
            json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"park","arguments":args}}),
        );
        assert_eq!(r["result"]["isError"], true, "{args}: {r}");
        assert_eq!(
            r["result"]["_meta"]["headroom"]["error"], "usage",
            "{args}: {r}"
        );
    }
    // A value the command line rejects is a bad argument too.
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"evidence","arguments":{"since":"soon"}}}),
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("`soon`"),
        "{r}"
    );
    // Control: a malformed request (arguments not an object) is a protocol error.
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"probe","arguments":[1]}}),
    );
    assert_eq!(code(&r), rpc::INVALID_PARAMS);
    // Still serving.
    let r = ask(&mut s, json!({"jsonrpc":"2.0","id":6,"method":"ping"}));
    assert_eq!(r["result"], json!({}));
}

#[test]
fn every_tool_has_object_schemas_and_truthful_annotations() {
    let mut s = server(false);
    init(&mut s);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    );
    let tools = r["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "probe",
            "limits",
            "top",
            "evidence",
            "log_probe",
            "hangs_events",
            "doctor",
            "explain_reap",
            "reap",
            "park",
            "wake",
            "park_tree",
            "wake_tree",
            "run_limited",
            "run_start",
            "run_status",
            "run_terminate",
            "run_list",
        ]
    );
    for t in tools {
        let name = t["name"].as_str().unwrap();
        assert_eq!(t["inputSchema"]["type"], "object", "{name}");
        assert_eq!(t["outputSchema"]["type"], "object", "{name}");
        assert_eq!(
            t["outputSchema"]["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        assert!(
            t["outputSchema"]["properties"]["schema"].is_object(),
            "{name} reports have a schema name"
        );
        let a = &t["annotations"];
        let reads = a["readOnlyHint"].as_bool().unwrap();
        let acting = matches!(
            name,
            "reap"
                | "park"
                | "wake"
                | "park_tree"
                | "wake_tree"
                | "run_limited"
                | "run_start"
                | "run_terminate"
        );
        assert_eq!(reads, !acting, "{name}");
        if matches!(
            name,
            "reap" | "park" | "park_tree" | "run_limited" | "run_start" | "run_terminate"
        ) {
            assert_eq!(a["destructiveHint"], true, "{name}");
        }
    }
    // doctor reads, takes no arguments and declares its report's shape.
    let doctor = tools.iter().find(|t| t["name"] == "doctor").unwrap();
    assert_eq!(doctor["annotations"]["readOnlyHint"], true);
    assert_eq!(doctor["annotations"]["destructiveHint"], false);
    assert!(doctor["inputSchema"].get("required").is_none(), "{doctor}");
    for field in ["checks", "ok", "mismatches", "skipped"] {
        assert!(
            doctor["outputSchema"]["properties"][field].is_object(),
            "doctor's outputSchema lacks `{field}`"
        );
    }
    // Unknown fields are refused, so an agent's typo is not silently ignored.
    let park = tools.iter().find(|t| t["name"] == "park").unwrap();
    assert_eq!(park["inputSchema"]["additionalProperties"], false);
    assert_eq!(park["inputSchema"]["required"], json!(["pid"]));
}

#[test]
fn read_only_offers_no_tool_that_acts_and_refuses_to_call_one() {
    let mut s = server(true);
    init(&mut s);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    );
    let tools = r["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 8);
    for t in tools {
        assert!(!t["name"].as_str().unwrap().contains("run"), "{t}");
    }
    assert!(
        tools
            .iter()
            .all(|t| t["annotations"]["readOnlyHint"] == true)
    );
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"park","arguments":{"pid":2}}}),
    );
    assert_eq!(code(&r), rpc::INVALID_PARAMS);
    // The instructions name exactly the tools offered.
    let i = session::instructions(&s.server_tools(false));
    let words: Vec<&str> = i
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .collect();
    for t in ["reap", "park", "park_tree", "run_limited"] {
        assert!(!words.contains(&t), "{t} in {i}");
    }
    assert!(
        i.contains("explain_reap") && i.contains("starts a process"),
        "{i}"
    );
}

#[test]
fn the_stateless_style_needs_no_handshake_and_marks_results_complete() {
    let mut s = server(false);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{META_VERSION: STATELESS_VERSION}}}),
    );
    let d = &r["result"];
    assert_eq!(d["resultType"], "complete");
    assert!(
        d["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert_eq!(d["_meta"][META_SERVER_INFO]["name"], "headroom");
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{META_VERSION: STATELESS_VERSION}}}),
    );
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["cacheScope"], "private");
    assert!(r["result"]["ttlMs"].is_u64());
    assert_eq!(r["result"]["tools"].as_array().unwrap().len(), 18);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{META_VERSION: "2031-01-01"}}}),
    );
    assert_eq!(code(&r), rpc::UNSUPPORTED_PROTOCOL_VERSION);
    assert!(r["error"]["data"]["supported"].is_array());
}

#[test]
fn lines_are_bounded_and_a_last_line_without_newline_is_read() {
    let mut input: &[u8] = b"{\"a\":1}\n0123456789\nlast";
    assert_eq!(
        read_line(&mut input, 8).unwrap(),
        InputLine::Message(b"{\"a\":1}".to_vec())
    );
    assert!(matches!(
        read_line(&mut input, 8).unwrap(),
        InputLine::TooLong(_)
    ));
    assert_eq!(
        read_line(&mut input, 8).unwrap(),
        InputLine::Message(b"last".to_vec())
    );
    assert_eq!(read_line(&mut input, 8).unwrap(), InputLine::Eof);
    // A too-long line split across reads is still skipped whole, its start kept.
    let mut r = std::io::BufReader::with_capacity(3, &b"abcdefgh\nok\n"[..]);
    assert!(
        matches!(read_line(&mut r, 4).unwrap(), InputLine::TooLong(p) if p.starts_with(b"abc"))
    );
    assert_eq!(
        read_line(&mut r, 4).unwrap(),
        InputLine::Message(b"ok".to_vec())
    );
}

#[test]
fn reap_arguments_only_narrow_the_configured_policy() {
    let mut s = Settings::default();
    s.reap.deny.value = vec!["keep-me".into()];
    s.reap.max_targets.value = 10;
    s.reap.min_zombies.value = 100;
    let argv = |a: Value| {
        let a: args::ReapToolArgs = serde_json::from_value(a).unwrap();
        tools::reap_argv(a, &s, false)
    };
    // Wider asks are clamped to the configuration; the configured deny list is kept.
    assert_eq!(
        argv(json!({"deny": ["-x", " "], "max_targets": 50, "min_zombies": 1})),
        [
            "reap",
            "--deny=keep-me",
            "--deny=-x",
            "--max-targets=10",
            "--min-zombies=100"
        ]
    );
    // Narrower asks are passed.
    assert_eq!(
        argv(json!({"max_targets": 2, "min_zombies": 500, "no_emergency": true})),
        [
            "reap",
            "--deny=keep-me",
            "--max-targets=2",
            "--min-zombies=500",
            "--no-emergency"
        ]
    );
    // There is no way to name an allow pattern.
    let e = serde_json::from_value::<args::ReapToolArgs>(json!({"allow": ["bash"]})).unwrap_err();
    assert!(e.to_string().contains("unknown field `allow`"), "{e}");
    // And the command line they make parses, with the narrowed values.
    let cli = crate::cli::Cli::try_parse_from(
        std::iter::once("headroom".to_string()).chain(argv(json!({"deny": ["-x"]}))),
    )
    .unwrap();
    let crate::cli::Command::Reap(r) = cli.command else {
        panic!("not reap")
    };
    assert_eq!(r.deny, ["keep-me", "-x"]);
    assert!(r.allow.is_empty());
}

impl Probe {
    /// The read-only server's tools, with or without a GUI session to ask.
    pub(super) fn server_tools(&self, gui: bool) -> tools::Tools {
        let cli = crate::cli::Cli::try_parse_from(["headroom", "mcp"]).unwrap();
        let sel = ToolSelection {
            groups: vec![crate::config::ToolGroup::Read],
            run_allow: None,
        };
        tools::Tools::with_gui(&cli.global, sel, gui)
    }
}

#[test]
fn a_second_initialize_and_one_without_a_version_are_refused() {
    let mut s = server(false);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}),
    );
    assert_eq!(code(&r), rpc::INVALID_PARAMS, "{r}");
    init(&mut s);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}),
    );
    assert_eq!(code(&r), rpc::INVALID_REQUEST, "{r}");
}

#[test]
fn batches_are_answered_in_2025_03_26_only() {
    let mut s = server(false);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}),
    );
    assert_eq!(r["result"]["protocolVersion"], "2025-03-26");
    s.server.handle_line(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":2,"method":"tools/list"}]"#);
    let text = String::from_utf8(std::mem::take(&mut s.sink.lock().unwrap().stdout)).unwrap();
    let v: Value = serde_json::from_str(text.trim()).unwrap();
    let ids: Vec<&Value> = v.as_array().unwrap().iter().map(|m| &m["id"]).collect();
    assert_eq!(ids, [&json!(1), &json!(2)], "{v}");
    // Control: a later revision refuses a batch.
    let mut s = server(false);
    init(&mut s);
    s.server
        .handle_line(br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#);
    let text = String::from_utf8(std::mem::take(&mut s.sink.lock().unwrap().stdout)).unwrap();
    let v: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(v["error"]["code"], rpc::INVALID_REQUEST, "{v}");
}

#[test]
fn no_schema_a_client_sees_has_a_schemars_format_or_a_nullable_argument() {
    let mut s = server(false);
    init(&mut s);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":1,"method":"tools/list"}),
    );
    fn walk(v: &Value, input: bool, path: &str) {
        match v {
            Value::Object(o) => {
                if let Some(f) = o.get("format").and_then(Value::as_str) {
                    assert!(
                        ["date-time", "date", "time", "uri", "regex"].contains(&f),
                        "{path}: format `{f}`"
                    );
                }
                if input {
                    assert_ne!(o.get("type"), Some(&json!(["integer", "null"])), "{path}");
                }
                for (k, x) in o {
                    walk(x, input, &format!("{path}/{k}"));
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, input, path)),
            _ => {}
        }
    }
    for t in r["result"]["tools"].as_array().unwrap() {
        let n = t["name"].as_str().unwrap();
        walk(&t["inputSchema"], true, n);
        walk(&t["outputSchema"], false, n);
    }
}

mod hangs_check;
