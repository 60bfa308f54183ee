//! The protocol's state between messages: the version agreed by `initialize` (once; a
//! second one, or one without `protocolVersion`, is refused), the stateless style, batches
//! (2025-03-26 only, the one revision that has them), and where each message goes: quick
//! requests answered on the reading thread, `tools/call` to `calls`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::calls::{Calls, Outbox, Reply};
use super::rpc::{self, Incoming, RpcError};
use super::tools::{ToolSelection, Tools};
use crate::cli::GlobalArgs;
use crate::config::ToolGroup;

/// Revisions with the `initialize` handshake, newest first; a client asking for another
/// gets the newest (it may then disconnect, as the protocol says).
pub(crate) const HANDSHAKE_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The stateless revision: no handshake, the version in every request's `_meta`.
pub(crate) const STATELESS_VERSION: &str = "2026-07-28";
/// The one revision whose clients may send JSON-RPC batches.
const BATCH_VERSION: &str = "2025-03-26";
pub(crate) const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// How long a client may keep `server/discover` and `tools/list`: they change only with
/// the binary (or the selection).
const TOOLS_TTL_MS: u64 = 3_600_000;

/// The server: the protocol's state, the tools, the calls in flight.
pub(crate) struct Server {
    tools: Arc<Tools>,
    /// The version agreed by `initialize`; None until then.
    session: Mutex<Option<&'static str>>,
    calls: Arc<Calls>,
    out: Arc<Outbox>,
    resources: super::resources::Resources,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").finish_non_exhaustive()
    }
}

impl Server {
    pub(crate) fn new(global: &GlobalArgs, selection: ToolSelection, out: Arc<Outbox>) -> Self {
        let tools = Arc::new(Tools::new(global, selection));
        Self {
            resources: super::resources::Resources::new(Arc::clone(&tools), Arc::clone(&out)),
            tools,
            session: Mutex::new(None),
            calls: Arc::new(Calls::default()),
            out,
        }
    }

    /// The groups offered, as said at start (`read,act,run`).
    pub(crate) fn groups_text(&self) -> String {
        let g: Vec<&str> = self
            .tools
            .selection
            .groups
            .iter()
            .map(|g| g.as_str())
            .collect();
        g.join(",")
    }

    fn version(&self) -> Option<&'static str> {
        *self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A message over the size bound: answered with its id when the kept start of it
    /// names one (the client's request then resolves), else with null.
    pub(crate) fn too_long(&self, prefix: &[u8]) {
        let id = rpc::id_in_prefix(prefix);
        self.out.send(&rpc::error(
            id,
            RpcError::new(
                rpc::INVALID_REQUEST,
                format!("message longer than {} bytes; skipped", super::MAX_MESSAGE),
            ),
        ));
    }

    /// Handle one line: a message, or a batch of them.
    pub(crate) fn handle_line(&self, line: &[u8]) {
        if line.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
            return self.batch(line);
        }
        let reply: Reply = {
            let out = Arc::clone(&self.out);
            Box::new(move |v| out.send(&v))
        };
        self.message(rpc::parse(line), reply);
    }

    /// A JSON-RPC batch: for 2025-03-26 every message in it is handled and the answers go
    /// back as one array once all are in (none when it held only notifications); otherwise
    /// refused, as later revisions removed batches.
    fn batch(&self, line: &[u8]) {
        if self.version() != Some(BATCH_VERSION) {
            let e = RpcError::new(
                rpc::INVALID_REQUEST,
                format!(
                    "a batch (JSON array): only protocol version {BATCH_VERSION} has them; \
                     send one message per line"
                ),
            );
            return self.out.send(&rpc::error(Value::Null, e));
        }
        let items = match serde_json::from_slice::<Vec<Value>>(line) {
            Ok(v) if !v.is_empty() => v,
            Ok(_) => {
                let e = RpcError::new(rpc::INVALID_REQUEST, "an empty batch");
                return self.out.send(&rpc::error(Value::Null, e));
            }
            Err(e) => {
                let e = RpcError::new(rpc::PARSE_ERROR, format!("not JSON: {e}"));
                return self.out.send(&rpc::error(Value::Null, e));
            }
        };
        let answers = Arc::new(Mutex::new(Batch {
            left: items.len(),
            answers: Vec::new(),
        }));
        for item in items {
            let mine = Arc::clone(&answers);
            let out = Arc::clone(&self.out);
            let reply: Reply = Box::new(move |v| Batch::answer(&mine, &out, Some(v)));
            let parsed = rpc::parse_value(item);
            let answered = matches!(parsed, Ok(Incoming::Request { .. }) | Err(_));
            // Notifications and responses have no answer: they count as in.
            if answered {
                self.message(parsed, reply);
            } else {
                self.message(parsed, Box::new(|_| {}));
                Batch::answer(&answers, &self.out, None);
            }
        }
    }

    fn message(&self, parsed: Result<Incoming, (Value, RpcError)>, reply: Reply) {
        match parsed {
            Err((id, e)) => reply(rpc::error(id, e)),
            Ok(Incoming::Response) => {}
            Ok(Incoming::Notification { method, params }) => self.notification(&method, &params),
            Ok(Incoming::Request { id, method, params }) => {
                if method == "tools/call" {
                    return self.call(id, &params, reply);
                }
                reply(match self.request(&method, &params) {
                    Ok(r) => rpc::result(id, r),
                    Err(e) => rpc::error(id, e),
                });
            }
        }
    }

    fn notification(&self, method: &str, params: &Map<String, Value>) {
        // `notifications/initialized` and any other need nothing.
        if method == "notifications/cancelled" {
            if let Some(id) = params.get("requestId") {
                self.calls.cancel(id);
            }
        }
    }

    /// Whether a request may go on: the stateless style (the version in `_meta`), or an
    /// initialized session. Err is the error to answer with.
    fn admitted(&self, method: &str, params: &Map<String, Value>) -> Result<bool, RpcError> {
        let stateless = match params
            .get("_meta")
            .and_then(|m| m.get(META_VERSION))
            .and_then(Value::as_str)
        {
            Some(STATELESS_VERSION) => true,
            Some(v) if HANDSHAKE_VERSIONS.contains(&v) && self.version().is_some() => false,
            Some(v) => {
                let mut e = RpcError::new(
                    rpc::UNSUPPORTED_PROTOCOL_VERSION,
                    format!("protocol version `{v}` is not supported here without `initialize`"),
                );
                e.data = Some(json!({"supported": supported_versions()}));
                return Err(e);
            }
            None => false,
        };
        if !stateless && self.version().is_none() {
            return Err(RpcError::new(
                rpc::INVALID_REQUEST,
                format!("`{method}` before `initialize`: initialize the session first"),
            ));
        }
        Ok(stateless)
    }

    fn request(&self, method: &str, params: &Map<String, Value>) -> Result<Value, RpcError> {
        match method {
            "initialize" => return self.initialize(params),
            "ping" => return Ok(json!({})),
            "server/discover" => return Ok(self.discover()),
            _ => {}
        }
        let stateless = self.admitted(method, params)?;
        let mut result = match method {
            "tools/list" => self.tools.list(),
            "resources/list" => self.resources.list(),
            "resources/templates/list" => json!({"resourceTemplates": []}),
            "resources/read" => self.resources.read(params)?,
            "resources/subscribe" => self.resources.subscribe(params, true)?,
            "resources/unsubscribe" => self.resources.subscribe(params, false)?,
            "prompts/list" => super::prompts::list(&self.tools.selection),
            "prompts/get" => super::prompts::get(&self.tools.selection, params)?,
            _ => {
                return Err(RpcError::new(
                    rpc::METHOD_NOT_FOUND,
                    format!("method `{method}` not found"),
                ));
            }
        };
        if stateless {
            result["resultType"] = json!("complete");
            if method == "tools/list" {
                // 2026-07-28 makes lists cacheable; this one changes only with the binary.
                result["ttlMs"] = json!(TOOLS_TTL_MS);
                result["cacheScope"] = json!("private");
            }
        }
        Ok(result)
    }

    /// `tools/call`: an unknown tool or a malformed request is a JSON-RPC error; the call
    /// itself runs on a thread of its own and answers when done.
    fn call(&self, id: Value, params: &Map<String, Value>, reply: Reply) {
        let stateless = match self.admitted("tools/call", params) {
            Ok(s) => s,
            Err(e) => return reply(rpc::error(id, e)),
        };
        let spec = match params.get("name").and_then(Value::as_str) {
            None => {
                return reply(rpc::error(
                    id,
                    RpcError::invalid_params("`name` (a string) is required"),
                ));
            }
            Some(name) => match self.tools.find(name) {
                Ok(s) => s,
                Err(known) => {
                    let why = if name == super::tools::hangs_check::NAME {
                        super::tools::hangs_check::not_offered()
                    } else {
                        format!("unknown tool `{name}`")
                    };
                    return reply(rpc::error(
                        id,
                        RpcError::invalid_params(format!(
                            "{why}; the tools are {}",
                            known.join(", ")
                        )),
                    ));
                }
            },
        };
        let args = match params.get("arguments") {
            None | Some(Value::Null) => json!({}),
            Some(v @ Value::Object(_)) => v.clone(),
            Some(_) => {
                return reply(rpc::error(
                    id,
                    RpcError::invalid_params("`arguments` must be an object"),
                ));
            }
        };
        let token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .cloned();
        if spec.needs_gui {
            // The WindowServer answers the main thread only, which reads stdin: the call
            // runs here, in the milliseconds a round takes.
            let mut r = (spec.call)(&self.tools, spec, &super::calls::Call::new(), args);
            if stateless {
                r["resultType"] = json!("complete");
            }
            return reply(rpc::result(id, r));
        }
        let tools = Arc::clone(&self.tools);
        let rid = id.clone();
        let rid_for_result = id.clone();
        let work = Box::new(move |call: &super::calls::Call| {
            let mut r = (spec.call)(&tools, spec, call, args);
            if stateless {
                r["resultType"] = json!("complete");
            }
            rpc::result(rid_for_result, r)
        });
        let progress = token.map(|t| (t, Arc::clone(&self.out)));
        if let Err((why, reply)) = self.calls.start(&rid, progress, work, reply) {
            reply(rpc::error(id, RpcError::new(rpc::INTERNAL_ERROR, why)));
        }
    }

    fn initialize(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let Some(asked) = params.get("protocolVersion").and_then(Value::as_str) else {
            return Err(RpcError::invalid_params(
                "`initialize` needs `protocolVersion` (a string)",
            ));
        };
        let mut session = self.session.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(v) = *session {
            return Err(RpcError::new(
                rpc::INVALID_REQUEST,
                format!("the session is initialized already (protocol version {v})"),
            ));
        }
        let version = HANDSHAKE_VERSIONS
            .iter()
            .copied()
            .find(|v| *v == asked)
            .unwrap_or(HANDSHAKE_VERSIONS[0]);
        *session = Some(version);
        Ok(json!({
            "protocolVersion": version,
            "capabilities": capabilities(),
            "serverInfo": server_info(),
            "instructions": instructions(&self.tools),
        }))
    }

    fn discover(&self) -> Value {
        json!({
            "resultType": "complete",
            "supportedVersions": supported_versions(),
            "capabilities": capabilities(),
            "instructions": instructions(&self.tools),
            "ttlMs": TOOLS_TTL_MS,
            "cacheScope": "private",
            "_meta": {META_SERVER_INFO: server_info()},
        })
    }

    /// The session ended (stdin closed, a stop signal): end every call (runs end their
    /// trees), stop watching resources, wait at most `bound`.
    pub(crate) fn end(&self, bound: Duration) {
        self.resources.stop();
        let deadline = std::time::Instant::now() + bound;
        // Tasks first: their trees get SIGTERM at once, beside the calls' below.
        let tasks = Arc::clone(&self.tools.tasks);
        let ending = std::thread::spawn(move || tasks.end_all(deadline));
        self.calls.end_all(bound);
        let _ = ending.join();
    }
}

/// A batch's answers, sent as one array when the last is in.
struct Batch {
    left: usize,
    answers: Vec<Value>,
}

impl Batch {
    fn answer(me: &Mutex<Batch>, out: &Outbox, v: Option<Value>) {
        let mut b = me.lock().unwrap_or_else(PoisonError::into_inner);
        b.answers.extend(v);
        b.left = b.left.saturating_sub(1);
        if b.left == 0 && !b.answers.is_empty() {
            out.send(&Value::Array(std::mem::take(&mut b.answers)));
        }
    }
}

fn capabilities() -> Value {
    json!({
        "tools": {"listChanged": false},
        "resources": {"subscribe": true, "listChanged": false},
        "prompts": {"listChanged": false},
    })
}

/// What the server tells the agent: exactly the tools this selection offers.
pub(crate) fn instructions(tools: &Tools) -> String {
    let sel = &tools.selection;
    let mut s = String::from(
        "headroom reports how much room this machine has left and acts within the same \
safety rules a person gets.",
    );
    let list = |g: ToolGroup| tools.names_of(g).join(", ");
    if sel.has(ToolGroup::Read) {
        s += &format!(
            " Reading (changes no process): {}. The resources hold the current reading, the \
evidence log, the hang events and the effective config; subscribe to be told when the slot \
level or a hang changes.",
            list(ToolGroup::Read)
        );
    }
    if sel.has(ToolGroup::Act) {
        s += &format!(
            " Acting under the safety rules: {}. Call explain_reap before reap. Refusals \
(pid <= 1, another user's process, headroom and its ancestors, including you) come back as \
errors naming the rule.",
            list(ToolGroup::Act)
        );
    }
    if sel.has(ToolGroup::Run) {
        s += &format!(
            " Running ({}): run_limited runs a program under a memory limit and a timeout \
and answers when it ends; run_start starts the same as a task and answers at once with its \
id, to poll with run_status and end with run_terminate. They run any program the user \
could{}, and no refusal rule applies to what that program does.",
            list(ToolGroup::Run),
            if sel.run_allow.is_some() {
                " among those the config allows"
            } else {
                ""
            }
        );
    }
    if !sel.may_start_processes() {
        s += " Nothing this server does starts a process.";
    }
    s
}

fn supported_versions() -> Vec<&'static str> {
    let mut v = vec![STATELESS_VERSION];
    v.extend_from_slice(HANDSHAKE_VERSIONS);
    v
}

fn server_info() -> Value {
    json!({
        "name": "headroom",
        "title": "headroom",
        "version": env!("CARGO_PKG_VERSION"),
        "description": "Keeps a developer's machine from running out of room",
    })
}
