//! `headroom mcp`: a Model Context Protocol server on stdio (newline-delimited JSON-RPC 2.0,
//! MCP 2025-11-25 with `initialize`, and the stateless 2026-07-28 style: `server/discover`
//! and the version in each request's `_meta`). stdout carries protocol messages only, each
//! written whole through the Printer; diagnostics go to stderr. One request at a time: a tool
//! runs to its end before the next line is read.
//!
//! `rpc` is the message layer, `tools` the tool table (every tool runs the command of the
//! same name through `commands::dispatch` and returns its `--json` report), `run_limited` the
//! one tool that starts a process.

pub mod rpc;
pub mod tools;

pub use tools::run_limited;

use std::io::BufRead;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use crate::cli::GlobalArgs;
use crate::exit::ExitStatus;
use crate::output::Printer;
use rpc::{Incoming, RpcError};

/// Revisions with the `initialize` handshake, newest first; a client asking for another
/// gets the newest (it may then disconnect, as the protocol says).
pub const HANDSHAKE_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
/// The stateless revision: no handshake, the version in every request's `_meta`.
pub const STATELESS_VERSION: &str = "2026-07-28";
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// How long a client may keep `server/discover` and `tools/list`: they change only with
/// the binary (or `--read-only`).
const TOOLS_TTL_MS: u64 = 3_600_000;

/// A message longer than this is answered with an error and skipped, not kept in memory.
pub const MAX_MESSAGE: usize = 1 << 20;

const INSTRUCTIONS: &str = "headroom reports how much room this machine has left (process \
slots: probe, limits, evidence; memory: top; GUI hangs: hangs_events) and acts within the \
same safety rules a person gets: reap zombie-leaking parents, park/wake processes and trees, \
run a command under a memory limit (run_limited). Call explain_reap before reap. Refusals \
(pid <= 1, another user's process, headroom and its ancestors, including you) come back as \
errors naming the rule.";

/// The server's state between messages.
#[derive(Debug)]
pub struct Server {
    tools: tools::Tools,
    /// The version agreed by `initialize`; None until then.
    session: Option<&'static str>,
}

impl Server {
    pub fn new(global: &GlobalArgs, read_only: bool) -> Self {
        Self {
            tools: tools::Tools::new(global, read_only),
            session: None,
        }
    }

    /// The answer to one line, if it needs one.
    pub fn handle_line(&mut self, line: &[u8]) -> Option<Value> {
        match rpc::parse(line) {
            Err((id, e)) => Some(rpc::error(id, e)),
            Ok(Incoming::Response) => None,
            // `notifications/initialized`, `notifications/cancelled` (a request is answered
            // before the next line is read, so there is nothing to cancel) and any other.
            Ok(Incoming::Notification { .. }) => None,
            Ok(Incoming::Request { id, method, params }) => {
                Some(match self.request(&method, &params) {
                    Ok(r) => rpc::result(id, r),
                    Err(e) => rpc::error(id, e),
                })
            }
        }
    }

    fn request(&mut self, method: &str, params: &Map<String, Value>) -> Result<Value, RpcError> {
        match method {
            "initialize" => return Ok(self.initialize(params)),
            "ping" => return Ok(json!({})),
            "server/discover" => return Ok(self.discover()),
            _ => {}
        }
        // Stateless style: the version rides in `_meta`, and no handshake is needed.
        let stateless = match params
            .get("_meta")
            .and_then(|m| m.get(META_VERSION))
            .and_then(Value::as_str)
        {
            Some(STATELESS_VERSION) => true,
            Some(v) if HANDSHAKE_VERSIONS.contains(&v) && self.session.is_some() => false,
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
        if !stateless && self.session.is_none() && is_known(method) {
            return Err(RpcError::new(
                rpc::INVALID_REQUEST,
                format!("`{method}` before `initialize`: initialize the session first"),
            ));
        }
        let mut result = match method {
            "tools/list" => self.tools.list(),
            "tools/call" => self.tools.call(params)?,
            _ => {
                return Err(RpcError::new(
                    rpc::METHOD_NOT_FOUND,
                    format!("method `{method}` not found (headroom serves tools only)"),
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

    fn initialize(&mut self, params: &Map<String, Value>) -> Value {
        let asked = params.get("protocolVersion").and_then(Value::as_str);
        let version = HANDSHAKE_VERSIONS
            .iter()
            .copied()
            .find(|v| Some(*v) == asked)
            .unwrap_or(HANDSHAKE_VERSIONS[0]);
        self.session = Some(version);
        json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": server_info(),
            "instructions": INSTRUCTIONS,
        })
    }

    fn discover(&self) -> Value {
        json!({
            "resultType": "complete",
            "supportedVersions": supported_versions(),
            "capabilities": {"tools": {"listChanged": false}},
            "instructions": INSTRUCTIONS,
            "ttlMs": TOOLS_TTL_MS,
            "cacheScope": "private",
            "_meta": {META_SERVER_INFO: server_info()},
        })
    }
}

fn is_known(method: &str) -> bool {
    matches!(method, "tools/list" | "tools/call")
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

/// One line of input, or what stood in its way.
#[derive(Debug, PartialEq)]
pub enum Line {
    Message(Vec<u8>),
    /// Longer than `MAX_MESSAGE`; the rest of it was skipped.
    TooLong,
    Eof,
}

/// Read up to the next newline, keeping at most `max` bytes. A last line without a newline
/// (stdin closed mid-message) is returned as it is: it is parsed, and answered if it can be.
pub fn read_line(r: &mut impl BufRead, max: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::Eof,
                (false, false) => Line::Message(line),
            });
        }
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        if done.is_some() {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Message(line)
            });
        }
    }
}

/// `headroom mcp`: the toolbox as a Model Context Protocol server on stdio; every tool runs
/// the command of the same name (`tools`).
pub fn run(ctx: &crate::commands::Ctx<'_>, args: &crate::cli::McpArgs) -> Result<ExitStatus> {
    serve(ctx.global, args.read_only, ctx.printer)
}

/// Serve stdin until it ends.
pub fn serve(global: &GlobalArgs, read_only: bool, printer: &Printer) -> Result<ExitStatus> {
    let mut server = Server::new(global, read_only);
    let mut input = std::io::stdin().lock();
    printer.stderr_line(&format!(
        "headroom mcp {}: serving on stdio{}",
        env!("CARGO_PKG_VERSION"),
        if read_only { " (read-only tools)" } else { "" }
    ));
    loop {
        let reply = match read_line(&mut input, MAX_MESSAGE).context("cannot read stdin")? {
            Line::Eof => return Ok(ExitStatus::Ok),
            Line::TooLong => Some(rpc::error(
                Value::Null,
                RpcError::new(
                    rpc::INVALID_REQUEST,
                    format!("message longer than {MAX_MESSAGE} bytes; skipped"),
                ),
            )),
            Line::Message(m) if m.iter().all(u8::is_ascii_whitespace) => None,
            Line::Message(m) => server.handle_line(&m),
        };
        if let Some(r) = reply {
            printer.json_protocol(&r)?;
        }
    }
}

#[cfg(test)]
mod tests;
