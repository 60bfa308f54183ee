//! `headroom mcp`: a Model Context Protocol server on stdio (newline-delimited JSON-RPC 2.0,
//! MCP 2025-11-25 with `initialize`, and the stateless 2026-07-28 style: `server/discover`
//! and the version in each request's `_meta`). stdout carries protocol messages only, each
//! written whole (`calls::Outbox`); diagnostics go to stderr.
//!
//! The main thread reads stdin and answers at once everything but `tools/call`, which runs
//! on a thread of its own (`calls`: bounded, cancellable, with progress). `rpc` is the
//! message layer, `session` the protocol's state (handshake, versions, batches), `tools`
//! the tool table, `run_limited` the one tool that starts a process, `resources` and
//! `prompts` the rest of what a server offers.

pub(crate) mod args;
pub(crate) mod calls;
pub(crate) mod prompts;
pub(crate) mod resources;
pub(crate) mod results;
pub(crate) mod rpc;
pub(crate) mod session;
pub(crate) mod summaries;
pub(crate) mod tools;

use std::io::BufRead;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;

use crate::cli::GlobalArgs;
use crate::exit::{ExitStatus, Failure};
use crate::output::Printer;
pub(crate) use session::Server;
// Re-exported for the unit tests only (they name it by this path).
#[cfg(test)]
pub(crate) use session::{HANDSHAKE_VERSIONS, STATELESS_VERSION};
pub(crate) use tools::ToolSelection;

/// A message longer than this is answered with an error and skipped, not kept in memory.
pub(crate) const MAX_MESSAGE: usize = 1 << 20;
/// How much of a too-long message is kept to find its id in.
const ID_PREFIX: usize = 4 << 10;
/// The longest the server waits, once the session ended, for its calls to end (a run
/// ends its tree within two of its graces; past this, each run still ends its tree when
/// the server has gone: `--die-with-parent`).
const END_WAIT: Duration = Duration::from_secs(30);

/// One line of input, or what stood in its way.
#[derive(Debug, PartialEq)]
pub(crate) enum InputLine {
    Message(Vec<u8>),
    /// Longer than `MAX_MESSAGE`; the rest of it was skipped. The first bytes are kept, to
    /// answer with the request's id when it can be read there.
    TooLong(Vec<u8>),
    Eof,
}

/// Read up to the next newline, keeping at most `max` bytes. A last line without a newline
/// (stdin closed mid-message) is returned as it is: it is parsed, and answered if it can be.
pub(crate) fn read_line(r: &mut impl BufRead, max: usize) -> std::io::Result<InputLine> {
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
                (true, _) => InputLine::TooLong(line),
                (false, true) => InputLine::Eof,
                (false, false) => InputLine::Message(line),
            });
        }
        let (chunk, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line.extend_from_slice(
                    &chunk[..chunk.len().min(ID_PREFIX.saturating_sub(line.len()))],
                );
                line.truncate(ID_PREFIX);
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        r.consume(used);
        if done.is_some() {
            return Ok(if too_long {
                InputLine::TooLong(line)
            } else {
                InputLine::Message(line)
            });
        }
    }
}

/// stdin, read in `poll` beside the stop signals' self-pipe: SIGTERM ends the read.
#[cfg(unix)]
struct Input;

#[cfg(unix)]
impl std::io::Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match crate::platform::stop_flag::read_unless_stopped(
            std::os::fd::AsFd::as_fd(&std::io::stdin()),
            buf,
        )? {
            Some(n) => Ok(n),
            // A stop reads as the end of input: the session ends the same way.
            None => Ok(0),
        }
    }
}

/// `headroom mcp`: the toolbox as a Model Context Protocol server on stdio; every tool runs
/// the command of the same name (`tools`), from the tool groups `--read-only`, `--tools` or
/// `[mcp] tools` select.
pub fn run(ctx: &crate::commands::Ctx<'_>, args: &crate::cli::McpArgs) -> Result<ExitStatus> {
    use crate::config::ToolGroup;
    let groups = if args.read_only {
        vec![ToolGroup::Read]
    } else {
        args.tools
            .clone()
            .unwrap_or_else(|| ctx.settings.mcp.tools.value.clone())
    };
    let selection = ToolSelection {
        groups,
        run_allow: ctx.settings.mcp.run_allow.value.clone(),
    };
    serve(ctx.global, selection, ctx.printer)
}

/// Serve stdin until it ends or a stop signal arrives.
pub(crate) fn serve(
    global: &GlobalArgs,
    selection: ToolSelection,
    printer: &Printer,
) -> Result<ExitStatus> {
    crate::platform::stop_flag::install()
        .map_err(|e| Failure::Failed(format!("cannot catch SIGTERM: {e}")))?;
    let out = Arc::new(calls::Outbox::new(printer.clone()));
    let server = Server::new(global, selection, Arc::clone(&out));
    printer.stderr_line(&format!(
        "headroom mcp {}: serving on stdio (tools: {})",
        env!("CARGO_PKG_VERSION"),
        server.groups_text()
    ));
    #[cfg(unix)]
    let mut input = std::io::BufReader::with_capacity(64 << 10, Input);
    #[cfg(not(unix))]
    let mut input = std::io::stdin().lock();
    let read_error = loop {
        if out.failure().is_some() {
            break None;
        }
        match read_line(&mut input, MAX_MESSAGE) {
            Ok(InputLine::Eof) => break None,
            Ok(InputLine::TooLong(prefix)) => server.too_long(&prefix),
            Ok(InputLine::Message(m)) if m.iter().all(u8::is_ascii_whitespace) => {}
            Ok(InputLine::Message(m)) => server.handle_line(&m),
            Err(e) => break Some(e),
        }
    };
    server.end(END_WAIT);
    if let Some(e) = read_error {
        return Err(Failure::Failed(format!("cannot read stdin: {e}")).into());
    }
    if let Some(e) = out.failure() {
        return Err(Failure::Failed(format!("cannot write to stdout: {e}")).into());
    }
    Ok(ExitStatus::Ok)
}

#[cfg(test)]
mod tests;
