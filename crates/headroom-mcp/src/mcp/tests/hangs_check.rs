//! `hangs_check`: where it is offered, what a call says where it is not, and that its
//! decision is the core's on a recorded round.

use clap::Parser;
use serde_json::{Value, json};

use super::server;
// Only the test of a machine without a WindowServer asks the server over the protocol.
#[cfg(not(target_os = "macos"))]
use super::{ask, code, init};
#[cfg(not(target_os = "macos"))]
use crate::mcp::rpc;
use crate::mcp::{ToolSelection, args, calls, session, tools};

/// `hangs_check` is offered, listed and named in the instructions only where a hangs round
/// can ask the WindowServer; elsewhere calling it is an error saying why. Control: the
/// same server with a GUI session offers it, and `hangs_events` is offered either way.
#[test]
fn hangs_check_is_offered_only_with_a_gui_session_to_ask() {
    let s = server(true);
    let names = |t: &tools::Tools| -> Vec<String> {
        t.list()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let without = s.server_tools(false);
    assert!(!names(&without).contains(&"hangs_check".to_string()));
    assert!(names(&without).contains(&"hangs_events".to_string()));
    assert!(!session::instructions(&without).contains("hangs_check"));
    let with = s.server_tools(true);
    assert!(names(&with).contains(&"hangs_check".to_string()));
    assert!(session::instructions(&with).contains("hangs_check"));
    let spec = with.find("hangs_check").unwrap();
    assert!(spec.needs_gui && spec.effect == tools::Effect::Reads);
    // Not in the read selection's absence: a run-only server offers it nowhere.
    let run_only = tools::Tools::with_gui(
        &crate::cli::Cli::try_parse_from(["headroom", "mcp"])
            .unwrap()
            .global,
        ToolSelection {
            groups: vec![crate::config::ToolGroup::Run],
            run_allow: None,
        },
        true,
    );
    assert!(!names(&run_only).contains(&"hangs_check".to_string()));
}

/// This machine has no WindowServer (Linux; a macOS test thread is not the main thread):
/// a call is the protocol's error naming why, not an empty success.
#[cfg(not(target_os = "macos"))]
#[test]
fn hangs_check_where_it_is_not_offered_says_why() {
    let mut s = server(true);
    init(&mut s);
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hangs_check","arguments":{}}}),
    );
    assert_eq!(code(&r), rpc::INVALID_PARAMS, "{r}");
    let m = r["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("WindowServer") && m.contains("hangs_events"),
        "{m}"
    );
    // Control: an unknown name is only unknown.
    let r = ask(
        &mut s,
        json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"hangs_chek","arguments":{}}}),
    );
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("unknown tool"),
        "{r}"
    );
}

/// The decision behind `hangs_check` is `hangs --dry-run`'s, made by the core from a round
/// the test records: a regular app unresponsive in two consecutive rounds is confirmed, a
/// responsive one is not listed, and the summary says both. Control: one round only is
/// pending, not confirmed.
#[test]
fn hangs_checks_decision_comes_from_the_core_on_a_recorded_round() {
    let s = server(true);
    let t = s.server_tools(true);
    let dir = tempfile::tempdir().unwrap();
    let app = |pid: i32, responsive: bool, name: &str| {
        json!({"pid": pid, "bundle_id": format!("com.example.{name}"),
               "bundle_path": format!("/Applications/{name}.app"), "name": name,
               "policy": "regular", "responsive": responsive})
    };
    let round = |at: &str| json!({"at": at, "available": true, "apps": [app(501, false, "Editor"), app(502, true, "Mail")]});
    let spec = t.find("hangs_check").unwrap();
    // The tool's own path (arguments, settings, the typed report's summary), with the
    // live round replaced by the recorded one.
    let summary = |rounds: Vec<Value>| -> (Value, String) {
        let f = dir.path().join("rounds.json");
        std::fs::write(&f, json!({ "rounds": rounds }).to_string()).unwrap();
        let path = f.to_str().unwrap().to_string();
        let r = t.command::<args::NoArgs, crate::actions::hang_round::report::RoundReport>(
            spec,
            &calls::Call::new(),
            json!({}),
            |_, _, _| {
                ["hangs", "--dry-run", "--observations", &path]
                    .map(String::from)
                    .to_vec()
            },
        );
        assert_eq!(r["isError"], false, "{r}");
        let text = r["content"][1]["text"].as_str().unwrap().to_string();
        (r["structuredContent"].clone(), text)
    };
    let (v, text) = summary(vec![
        round("2026-12-01T10:00:00Z"),
        round("2026-12-01T10:00:15Z"),
    ]);
    assert_eq!(v["apps"][0]["state"], "confirmed", "{v}");
    assert_eq!(v["apps"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(
        text,
        "2 apps checked, 1 not responding; Editor (pid 501) confirmed"
    );
    let (v, text) = summary(vec![round("2026-12-01T10:00:00Z")]);
    assert_eq!(v["apps"][0]["state"], "pending", "{v}");
    assert!(text.ends_with("Editor (pid 501) pending"), "{text}");
}
