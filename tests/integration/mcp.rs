//! `headroom mcp` (Linux): driven by the official MCP Python SDK as an agent would
//! (`mcp_client.py`, run from the virtualenv `.ci/run` makes; HEADROOM_MCP_PYTHON names its
//! python), and by raw lines for the protocol's edge cases. Everything runs as the test's
//! private uid; the processes acted on are fixtures under the test's own subreaper.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};

use serde_json::{Value, json};

use crate::support::{Env, TIMEOUT, chown, proc_state, spawn_retrying, zombie_children};

/// The virtualenv's python with the `mcp` package (HEADROOM_MCP_PYTHON; `.ci/run` makes
/// one): the first line of a test gated on `hr_mcp_python`, which fails without it.
pub(crate) fn sdk_python() -> PathBuf {
    let p = std::env::var_os("HEADROOM_MCP_PYTHON").map(PathBuf::from);
    match p {
        Some(p) if p.exists() => p,
        _ => panic!(
            "HEADROOM_MCP_PYTHON must name a python with the `mcp` package (.ci/run makes one), \
             not {p:?}; build.rs compiles this test to run where it was set (or under \
             HEADROOM_REQUIRE_TOOLS)"
        ),
    }
}

#[test]
#[cfg_attr(not(hr_mcp_python), ignore = "needs HEADROOM_MCP_PYTHON (see .ci/run)")]
fn an_agent_with_the_official_sdk_lists_calls_and_is_refused_where_a_person_would_be() {
    let python = sdk_python();
    let env = Env::new();
    let leaker_name = "agency-mcp";
    let exe = env.named_fixture(leaker_name);
    let mut leaker = env.spawn(&exe, &["leak", "--zombies", "120"]);
    let leaker_pid = leaker.ready()["pid"].as_i64().unwrap() as i32;
    let mut tree = env.spawn(env.fixture(), &["tree", "--depth", "2", "--fanout", "2"]);
    let tree_pids: Vec<i64> = tree.ready()["pids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_i64().unwrap())
        .collect();
    let script = env.path("mcp_client.py");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/integration/mcp_client.py"
        ),
        &script,
    )
    .unwrap();
    let cfg = env.path("mcp_client.json");
    std::fs::write(
        &cfg,
        json!({
            "server": [env.headroom_path(), "mcp"],
            "env": {"HEADROOM_HOME": env.home},
            "leaker": leaker_pid,
            "leaker_name": leaker_name,
            "leaker_zombies": 120,
            "tree": tree_pids,
            // The test itself runs as another uid when it is root.
            "foreign": if env.private { Some(std::process::id()) } else { None },
            "hog": [env.fixture(), "hog", "--mib", "200"],
        })
        .to_string(),
    )
    .unwrap();
    if env.private {
        chown(&script, env.uid);
        chown(&cfg, env.uid);
    }
    let mut argv = env.as_test_user();
    argv.extend(["timeout", "--kill-after=5", "120"].map(Into::into));
    argv.push(python.into());
    argv.push(script.into());
    argv.push(cfg.into());
    let out = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.lines().any(|l| l == "ok"),
        "the SDK client failed: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    // What the agent was refused or only asked about is untouched.
    assert_eq!(zombie_children(leaker_pid), 120);
    assert_eq!(proc_state(leaker_pid), Some('S'));
    for &p in &tree_pids {
        assert_ne!(proc_state(p as i32), Some('T'), "pid {p} left parked");
    }
    assert_ne!(proc_state(1), Some('T'));
    drop(tree);
    drop(leaker);
}

/// `headroom mcp` as the test user, read line by line.
pub(crate) struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Server {
    pub(crate) fn start(env: &Env) -> Self {
        let mut c = env.cmd_via(&[]);
        c.arg("mcp");
        Self::spawn(c)
    }

    /// The server `c` (a command line ending in `mcp`) starts.
    fn spawn(mut c: std::process::Command) -> Self {
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = spawn_retrying(&mut c);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines: rx,
        }
    }

    /// Started and initialized, ready for `tools/call`.
    pub(crate) fn ready(env: &Env) -> Self {
        let mut s = Self::start(env);
        let r = s.ask(json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}));
        assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
        s.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        s
    }

    /// The result of calling `tool` with `args`.
    pub(crate) fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.ask(json!({"jsonrpc":"2.0","id":tool,"method":"tools/call","params":{"name":tool,"arguments":args}}));
        r["result"].clone()
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let w = self.stdin.as_mut().unwrap();
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
    }

    /// The next message; stdout carries nothing else.
    fn recv(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(TIMEOUT)
            .unwrap_or_else(|e| panic!("no reply within {TIMEOUT:?}: {e}"));
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not JSON on stdout: {e}: {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        v
    }

    pub(crate) fn ask(&mut self, msg: Value) -> Value {
        self.send_raw(format!("{msg}\n").as_bytes());
        self.recv()
    }

    fn alive(&mut self) {
        let r = self.ask(json!({"jsonrpc":"2.0","id":"ping","method":"ping"}));
        assert_eq!(
            (&r["id"], &r["result"]),
            (&json!("ping"), &json!({})),
            "{r}"
        );
    }

    /// Close stdin; the exit code.
    pub(crate) fn finish(mut self) -> (i32, String) {
        drop(self.stdin.take());
        let out = self.child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn code(r: &Value) -> i64 {
    r["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {r}"))
}

#[test]
fn protocol_errors_get_their_codes_and_the_server_keeps_serving() {
    let env = Env::new();
    let mut s = Server::start(&env);
    s.send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"initialize\"\n");
    let r = s.recv();
    assert_eq!((code(&r), &r["id"]), (-32700, &Value::Null), "{r}");
    s.alive();
    let r = s.ask(json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}));
    assert_eq!(
        (code(&r), &r["id"]),
        (-32600, &json!(2)),
        "before initialize: {r}"
    );
    let r = s.ask(json!({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}));
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    // A notification is not answered: the next line read is the ping's.
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    s.alive();
    let r = s.ask(json!({"jsonrpc":"2.0","id":4,"method":"sampling/createMessage"}));
    assert_eq!(code(&r), -32601, "{r}");
    let r = s.ask(json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"kill_everything","arguments":{}}}));
    assert_eq!(code(&r), -32602, "an unknown tool: {r}");
    // A bad argument value is a tool error the model can read (SEP-1303), not -32602.
    let r = s.ask(json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"park","arguments":{"pid":"1; rm -rf /"}}}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(r["result"]["_meta"]["headroom"]["error"], "usage", "{r}");
    let r = s.ask(json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"top","arguments":{"pid":-1,"park_min_mb":0}}}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    s.alive();
    // A huge argument: a message over the 1 MiB bound is refused whole, not buffered, and
    // answered with its id so the client's request resolves.
    let huge = "x".repeat(2 << 20);
    let r = s.ask(json!({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"explain_reap","arguments":{"deny":[huge]}}}));
    assert_eq!((code(&r), &r["id"]), (-32600, &json!(8)), "{}", r["error"]);
    s.alive();
    // A large one within the bound is just an argument.
    let big = "y".repeat(200 << 10);
    let r = s.ask(json!({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"explain_reap","arguments":{"deny":[big]}}}));
    assert_eq!(r["result"]["isError"], false, "{}", r["result"]["content"]);
    assert_eq!(
        r["result"]["structuredContent"]["schema"],
        "headroom.reap/3"
    );
    // A refusal is a result, not a protocol error.
    let r = s.ask(json!({"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"park_tree","arguments":{"pid":1}}}));
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        r["result"]["_meta"]["headroom"]["reason"], "init-process",
        "{r}"
    );
    // stdin closed mid-request: the partial line is answered as what it is, then a clean exit.
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"pi");
    drop(s.stdin.take());
    let r = s.recv();
    assert_eq!(code(&r), -32700, "{r}");
    let (exit, stderr) = s.finish();
    assert_eq!(exit, 0, "{stderr}");
    assert!(stderr.contains("headroom mcp"), "{stderr}");
}

#[test]
fn the_server_exits_cleanly_on_eof_and_writes_nothing_but_protocol() {
    let env = Env::new();
    let mut s = Server::start(&env);
    s.alive();
    let (exit, _) = s.finish();
    assert_eq!(exit, 0);
}

/// The `run_limited` result, produced for real over the raw protocol: a command that ends
/// by itself, and a tree over its limit that `run` ends (the hog fixture, as the test's
/// private uid, inside the tree `run` started), each validated against the published
/// `headroom.run-limited/1` (the SDK test checks the tool's `outputSchema` only where the
/// SDK is installed).
#[test]
fn run_limited_results_validate_against_the_published_schema() {
    let env = Env::new();
    let mut s = Server::start(&env);
    let r = s.ask(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}));
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    let fixture = env.fixture().to_str().unwrap().to_string();
    let calls = [
        json!({"command": ["true"], "limit": "64M"}),
        json!({"command": [fixture, "hog", "--mib", "200"], "limit": "64M", "grace": "1s", "timeout": "60s"}),
    ];
    let mut results = Vec::new();
    for (id, args) in calls.into_iter().enumerate() {
        let r = s.ask(json!({"jsonrpc":"2.0","id":id + 2,"method":"tools/call","params":{"name":"run_limited","arguments":args}}));
        results.push(r["result"]["structuredContent"].clone());
    }
    assert_eq!(
        (&results[0]["exit_code"], &results[0]["capped"]),
        (&json!(0), &json!(false)),
        "{}",
        results[0]
    );
    assert_eq!(results[1]["capped"], true, "{}", results[1]);
    // `summary` is "`run`'s final `headroom.run/1` record, as it wrote it", so it is held
    // to that schema, closed, and the whole result, summary's `schema` and `type`
    // included, to `headroom.run-limited/1`.
    let summaries: Vec<Value> = results.iter().map(|r| r["summary"].clone()).collect();
    crate::contract::assert_valid("headroom.run/1", &summaries);
    crate::contract::assert_valid("headroom.run-limited/1", &results);
    let (code, err) = s.finish();
    assert_eq!(code, 0, "{err}");
}

/// The official SDK on long calls and the session's end (`mcp_session.py`): a normal run
/// completes with its output (the control); ping and another tool answer while a long run
/// holds its call; progress arrives; a cancelled call's tree (a command that ignores
/// SIGTERM) ends; a hang recorded while subscribed is an update; the SDK's shutdown (close
/// stdin, SIGTERM, SIGKILL to the server's group) and a SIGKILL of the server mid-call each
/// leave nothing running; `--tools read` offers and starts nothing that acts; `[mcp]
/// run_allow` refuses `kill -STOP <agent>` and runs an allowed program. Afterwards nothing
/// the test uid runs survives.
#[test]
#[cfg_attr(not(hr_mcp_python), ignore = "needs HEADROOM_MCP_PYTHON (see .ci/run)")]
fn long_calls_end_with_the_session_and_nothing_outlives_it() {
    let python = sdk_python();
    let env = Env::new();
    let script = env.path("mcp_session.py");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/integration/mcp_session.py"
        ),
        &script,
    )
    .unwrap();
    let allow = env.path("allow.toml");
    std::fs::write(&allow, "[mcp]\nrun_allow = [\"sh\"]\n").unwrap();
    let cfg = env.path("mcp_session.json");
    std::fs::write(
        &cfg,
        json!({
            "server": [env.headroom_path(), "mcp"],
            "env": {"HEADROOM_HOME": env.home, "PATH": std::env::var("PATH").unwrap_or_default()},
            "work": env.path(""),
            "state": env.home,
            "allow_config": allow,
        })
        .to_string(),
    )
    .unwrap();
    if env.private {
        for p in [&script, &cfg, &allow] {
            chown(p, env.uid);
        }
    }
    let mut argv = env.as_test_user();
    argv.extend(["timeout", "--kill-after=5", "170"].map(Into::into));
    argv.push(python.into());
    argv.push(script.into());
    argv.push(cfg.into());
    let out = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.lines().any(|l| l == "ok"),
        "the SDK client failed: {:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    if env.private {
        crate::support::wait_until("nothing the test uid started survives", || {
            crate::support::live_pids_of_uid(env.uid).is_empty()
        });
    }
}

/// A closed stdout is an error the man page names: exit 2, said on stderr. Control: the
/// same server with stdout open exits 0 at the end of stdin
/// (`the_server_exits_cleanly_on_eof_and_writes_nothing_but_protocol`).
#[test]
fn a_closed_stdout_exits_2() {
    let env = Env::new();
    let mut c = env.cmd_via(&[]);
    c.arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn_retrying(&mut c);
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot write to stdout"),
        "{out:?}"
    );
}

/// A server whose protocol is initialized.
fn ready_server(env: &Env) -> Server {
    ready(Server::start(env))
}

fn ready(mut s: Server) -> Server {
    let r = s.ask(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}));
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25", "{r}");
    s.send_raw(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    s
}

fn call(s: &mut Server, id: u64, tool: &str, args: Value) -> Value {
    let r = s.ask(json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":args}}));
    r["result"].clone()
}

/// Issue 25 item 1: while the config file is one others can write, every acting tool is a
/// tool error (exit 2, nothing signalled) and the read tools answer with the warning; with
/// the same file private, the same calls act.
#[test]
fn acting_tools_refuse_a_config_others_can_write_and_read_tools_warn() {
    let env = Env::new();
    let exe = env.named_fixture("agency-mcpt");
    let mut leaker = env.spawn(&exe, &["leak", "--zombies", "120"]);
    let leaker_pid = leaker.ready()["pid"].as_i64().unwrap() as i32;
    let mut tree = env.spawn(env.fixture(), &["tree", "--depth", "1", "--fanout", "1"]);
    let root = tree.ready()["pids"][0].as_i64().unwrap();
    std::fs::set_permissions(
        &env.home,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let cfg = env.home.join("config.toml");
    std::fs::write(
        &cfg,
        "[reap]\nallow = [\"agency-mcpt\"]\ngrace = \"200ms\"\n[notifications]\nenabled = false\n",
    )
    .unwrap();
    chown(&cfg, env.uid);
    let mode = |m: u32| {
        std::fs::set_permissions(&cfg, std::os::unix::fs::PermissionsExt::from_mode(m)).unwrap();
    };
    mode(0o666);
    let mut s = ready_server(&env);
    for (id, tool, args) in [
        (2, "reap", json!({})),
        (3, "park", json!({"pid": root})),
        (4, "park_tree", json!({"pid": root})),
        (
            5,
            "run_limited",
            json!({"command": ["true"], "limit": "64M"}),
        ),
    ] {
        let r = call(&mut s, id, tool, args);
        assert_eq!(r["isError"], true, "{tool}: {r}");
        assert_eq!(r["_meta"]["headroom"]["exit_code"], 2, "{tool}: {r}");
        let text = r["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.contains("is not trusted: it has mode 0666"),
            "{tool}: {text}"
        );
    }
    assert_eq!(zombie_children(leaker_pid), 120, "reap signalled nothing");
    assert_ne!(proc_state(root as i32), Some('T'), "park signalled nothing");
    let r = call(&mut s, 6, "explain_reap", json!({}));
    assert_eq!(r["isError"], false, "{r}");
    // The JSON is the first text block; the summary, with what the command warned, the second.
    let text = r["content"][1]["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("not trusted") && text.contains("signals nothing"),
        "{text}"
    );
    let (code, err) = s.finish();
    assert_eq!(code, 0, "{err}");
    // Control: the same file, private: the same calls act.
    mode(0o600);
    let mut s = ready_server(&env);
    let r = call(&mut s, 2, "park", json!({"pid": root}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(proc_state(root as i32), Some('T'));
    let r = call(&mut s, 3, "wake", json!({"pid": root}));
    assert_eq!(r["isError"], false, "{r}");
    let r = call(&mut s, 4, "reap", json!({}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(leaker.exit_code(), 128 + 15);
    let (code, err) = s.finish();
    assert_eq!(code, 0, "{err}");
}

/// Issue 25 item 2: a pattern argument is held to the one rule (a tool error naming the
/// pattern and the rule, nothing decided); a real pattern is an argument like any other.
#[test]
fn a_bad_deny_pattern_is_a_tool_error_a_real_one_is_used() {
    let env = Env::new();
    let exe = env.named_fixture("agency-mcpp");
    let mut leaker = env.spawn(&exe, &["leak", "--zombies", "120"]);
    let leaker_pid = leaker.ready()["pid"].as_i64().unwrap() as i32;
    let cfg = env.path("mcpp.toml");
    std::fs::write(
        &cfg,
        "[reap]\nallow = [\"agency-mcpp\"]\ngrace = \"200ms\"\n",
    )
    .unwrap();
    let mut c = env.cmd_via(&[]);
    c.arg("--config").arg(&cfg).arg("mcp");
    let mut s = ready(Server::spawn(c));
    for (id, tool, bad) in [
        (2, "reap", "*"),
        (3, "reap", "/"),
        (4, "explain_reap", "."),
        (5, "explain_reap", "agency*"),
    ] {
        let r = call(&mut s, id, tool, json!({"deny": [bad]}));
        assert_eq!(r["isError"], true, "{tool} {bad}: {r}");
        assert_eq!(r["_meta"]["headroom"]["error"], "usage", "{r}");
        let text = r["content"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.contains(&format!("deny pattern `{bad}` is refused")),
            "{text}"
        );
    }
    assert_eq!(zombie_children(leaker_pid), 120, "nothing was signalled");
    // Controls: a real deny pattern that matches denies; one that does not lets reap act.
    let r = call(&mut s, 6, "explain_reap", json!({"deny": ["agency-mcpp"]}));
    assert_eq!(r["isError"], false, "{r}");
    let p = r["structuredContent"]["parents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"] == leaker_pid)
        .cloned()
        .unwrap();
    assert_eq!(p["reason"], "not-permitted-by-policy", "{p}");
    let r = call(&mut s, 7, "reap", json!({"deny": ["unrelated"]}));
    assert_eq!(r["isError"], false, "{r}");
    assert_eq!(leaker.exit_code(), 128 + 15);
    let (code, err) = s.finish();
    assert_eq!(code, 0, "{err}");
}
