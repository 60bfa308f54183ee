//! The `run_limited` tool: `headroom run --limit` on a command, with a wall-clock timeout.
//! The command runs under a `headroom run` child (the same binary), never in the server's
//! own process: there stdin and stdout are the protocol. Its stdin is /dev/null; its stdout
//! and stderr are read through pipes of which only a bounded tail is kept; `run`'s own JSON
//! Lines (on the same stderr) are taken out of the tail, and its final `headroom.run/1`
//! summary is the result's `summary`. On the timeout headroom `run` gets SIGTERM, which it
//! passes to the command and follows with the end of the whole tree a grace later.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::rpc::RpcError;
use super::tools::{Effect, ErrorKind, Spec, Tools, error_result, schema_of, tool_error};
#[cfg(unix)]
use crate::actions::watchdog::Summary;
use crate::exit::ExitStatus;
use crate::output::human_bytes;
use crate::platform::Signal;

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
const DEFAULT_TAIL: usize = 8 << 10;
const MAX_TAIL: usize = 64 << 10;
/// The longest the server waits for anything once `run` was told to end.
const LAST_WAIT: Duration = Duration::from_secs(10);
/// A line of `run`'s stderr longer than this is the command's, not one of `run`'s records.
const MAX_EVENT_LINE: usize = 64 << 10;

/// A memory size: MiB as a number, or text with a unit as for `run --limit` (`512M`, `2G`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Size {
    Mib(u64),
    Text(String),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunLimitedArgs {
    /// The program and its arguments (no shell; `["sh", "-c", "…"]` for one).
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Memory limit for the whole process tree: MiB, or text with a unit (`512M`, `2G`).
    pub limit: Size,
    /// Wall-clock timeout, like `90s` or `10m` [default: 10m].
    pub timeout: Option<String>,
    /// Wait between SIGTERM and SIGKILL, like `5s` [default: 5s].
    pub grace: Option<String>,
    /// Working directory [default: the server's].
    pub cwd: Option<String>,
    /// Bytes of the end of stdout and of stderr returned [default: 8192, at most 65536].
    pub tail_bytes: Option<usize>,
}

/// The `headroom.run-limited/1` report.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunLimitedReport {
    pub command: Vec<String>,
    pub cwd: String,
    pub limit_bytes: u64,
    pub timeout_ms: u64,
    /// `run`'s exit code: the command's own, 143/137 when headroom ended the tree, 125 to
    /// 127 when it could not start it; null if `run` itself was killed.
    pub exit_code: Option<i32>,
    /// headroom ended the tree for being over its limit.
    pub capped: bool,
    /// The timeout passed and the tree was ended.
    pub timed_out: bool,
    /// `run` did not end within two graces of the timeout's SIGTERM and was killed.
    pub killed_after_timeout: bool,
    pub peak_footprint_bytes: Option<u64>,
    pub duration_ms: u64,
    pub stdout_tail: String,
    pub stdout_bytes: u64,
    /// The command's stderr, without `run`'s own records.
    pub stderr_tail: String,
    pub stderr_bytes: u64,
    /// `run`'s final `headroom.run/1` record, as it wrote it; null when it could not start
    /// the command.
    #[cfg_attr(unix, schemars(with = "Option<Summary>"))]
    pub summary: Option<Value>,
}

impl crate::schema::Document for RunLimitedReport {
    const SCHEMA: &'static str = "headroom.run-limited/1";
    const TYPE: Option<&'static str> = Some("run-limited");
}

pub const SPEC: Spec = Spec {
    name: "run_limited",
    title: "Run a command under a memory limit",
    description: "Run a command (no shell) under `headroom run --limit`: its whole process \
tree is held to the limit (idle subtrees parked first, then SIGTERM, grace, SIGKILL) and \
ended after the wall-clock timeout. Returns the exit code (143/137 when ended), whether it \
was capped, its peak footprint, and the tail of its output. Runs in the server's working \
directory unless cwd is given; stdin is empty.",
    effect: Effect::Acts {
        destructive: true,
        idempotent: false,
    },
    level_exit: false,
    input: schema_of::<RunLimitedArgs>,
    output: crate::schema::of::<RunLimitedReport>,
    call,
};

/// The last `max` bytes of a stream, and how many there were.
#[derive(Debug, Default)]
struct Tail {
    buf: VecDeque<u8>,
    total: u64,
    max: usize,
}

impl Tail {
    fn new(max: usize) -> Self {
        Self {
            max,
            ..Self::default()
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let keep = &bytes[bytes.len().saturating_sub(self.max)..];
        self.buf.extend(keep);
        let over = self.buf.len().saturating_sub(self.max);
        self.buf.drain(..over);
    }

    fn text(&self) -> String {
        let (a, b) = self.buf.as_slices();
        String::from_utf8_lossy(&[a, b].concat()).into_owned()
    }
}

/// `run`'s records are JSON objects with a `type` it writes; anything else is the command's.
fn run_record(line: &[u8]) -> Option<Value> {
    if line.len() > MAX_EVENT_LINE || line.first() != Some(&b'{') {
        return None;
    }
    let v: Value = serde_json::from_slice(line).ok()?;
    let t = v.get("type")?.as_str()?;
    record_types().iter().any(|k| k == t).then_some(v)
}

/// Every `type` `run` writes, read once from the types that write them: the watchdog's
/// `Event` (its `type` tag, from the enum's schema) and `run_enforce::RecordType`. A record
/// type added to either is here without a list to keep in step.
fn record_types() -> &'static [String] {
    static TYPES: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    TYPES.get_or_init(|| {
        let mut v = Vec::new();
        #[cfg(unix)]
        v.extend(tag_values(
            &schema_of::<crate::actions::watchdog::Event>(),
            "type",
        ));
        v.extend(tag_values(
            &schema_of::<crate::commands::run_enforce::RecordType>(),
            "type",
        ));
        v
    })
}

/// The values a schema allows for an object's `tag` property (an internally tagged enum:
/// `oneOf` of objects whose `tag` is a `const`), or for the value itself (a unit-variant
/// enum: `enum`, or `oneOf` of `const`s).
fn tag_values(schema: &Value, tag: &str) -> Vec<String> {
    let strings = |v: Option<&Value>| -> Vec<String> {
        match v {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect(),
            _ => Vec::new(),
        }
    };
    let mut out = strings(schema.get("const"));
    out.extend(strings(schema.get("enum")));
    if let Some(p) = schema.get("properties").and_then(|p| p.get(tag)) {
        out.extend(strings(p.get("const")));
        out.extend(strings(p.get("enum")));
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        for sub in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            out.extend(tag_values(sub, tag));
        }
    }
    out.dedup();
    out
}

#[cfg(unix)]
fn exit_code_of(s: std::process::ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    s.code().or_else(|| s.signal().map(|n| 128 + n))
}

#[cfg(not(unix))]
fn exit_code_of(s: std::process::ExitStatus) -> Option<i32> {
    s.code()
}

fn parse_duration(what: &str, s: Option<&str>, default: Duration) -> Result<Duration, RpcError> {
    s.map_or(Ok(default), |s| {
        crate::cli::parse_duration(s)
            .map_err(|e| RpcError::invalid_params(format!("{what} of `run_limited`: {e}")))
    })
}

fn call(tools: &Tools, args: Value) -> Result<Value, RpcError> {
    let a: RunLimitedArgs = serde_json::from_value(args)
        .map_err(|e| RpcError::invalid_params(format!("arguments of `run_limited`: {e}")))?;
    if let Some(refusal) = tools.refuse_acting() {
        return Ok(refusal);
    }
    if a.command.first().is_none_or(String::is_empty) {
        return Err(RpcError::invalid_params(
            "`command` of `run_limited` needs a program",
        ));
    }
    let limit_text = match &a.limit {
        Size::Mib(n) => format!("{n}M"),
        Size::Text(t) => t.clone(),
    };
    let limit_bytes = crate::cli::parse_size(&limit_text)
        .map_err(|e| RpcError::invalid_params(format!("`limit` of `run_limited`: {e}")))?;
    let timeout = parse_duration("`timeout`", a.timeout.as_deref(), DEFAULT_TIMEOUT)?;
    let grace = parse_duration("`grace`", a.grace.as_deref(), Duration::from_secs(5))?;
    let tail_max = a.tail_bytes.unwrap_or(DEFAULT_TAIL).min(MAX_TAIL);
    let cwd = match &a.cwd {
        Some(d) => std::path::PathBuf::from(d),
        None => match std::env::current_dir() {
            Ok(d) => d,
            Err(e) => return Ok(error_result(&anyhow::anyhow!("no working directory: {e}"))),
        },
    };
    if !cwd.is_dir() {
        return Ok(tool_error(
            ErrorKind::Usage,
            None,
            &format!("`cwd` `{}` is not a directory", cwd.display()),
            ExitStatus::Usage,
        ));
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return Ok(error_result(&anyhow::anyhow!(
                "cannot find headroom's own executable to run `run`: {e}"
            )));
        }
    };
    let mut cmd = Command::new(exe);
    if let Some(c) = &tools.global().config {
        cmd.arg("--config").arg(c);
    }
    cmd.args(["--json", "run", "--limit", &limit_text, "--grace"])
        .arg(humantime::format_duration(grace).to_string())
        .arg("--")
        .args(&a.command)
        .current_dir(&cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            return Ok(error_result(&anyhow::anyhow!(
                "cannot start `headroom run`: {e}"
            )));
        }
    };
    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    // Our own child, unreaped until the waiter below: its pid cannot name another process
    // until then, and the identity (start time) guards the signals after.
    let source = crate::platform::native();
    let identity = source
        .process(pid)
        .ok()
        .flatten()
        .and_then(|p| p.identity());

    let (out_tx, out_rx) = mpsc::channel();
    if let Some(mut out) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut tail = Tail::new(tail_max);
            let mut buf = [0u8; 8192];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 {
                    break;
                }
                tail.push(&buf[..n]);
            }
            let _ = out_tx.send(tail);
        });
    }
    let (err_tx, err_rx) = mpsc::channel();
    if let Some(err) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut tail = Tail::new(tail_max);
            let mut summary = None;
            let mut r = BufReader::new(err);
            let mut line = Vec::new();
            loop {
                line.clear();
                match r.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                let body = line.strip_suffix(b"\n").unwrap_or(&line);
                match run_record(body) {
                    Some(v) if v.get("type").and_then(Value::as_str) == Some("summary") => {
                        summary = Some(v);
                    }
                    Some(_) => {}
                    None => tail.push(&line),
                }
            }
            let _ = err_tx.send((tail, summary));
        });
    }
    let (wait_tx, wait_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = wait_tx.send(child.wait());
    });

    let control = crate::platform::native_control(source.as_ref());
    let signal = |sig: Signal| {
        if let Some(id) = &identity {
            let _ = control.signal(id, sig);
        }
    };
    let mut timed_out = false;
    let mut killed = false;
    let status = match wait_rx.recv_timeout(timeout) {
        Ok(s) => s,
        Err(_) => {
            timed_out = true;
            signal(Signal::Term);
            // `run` passes SIGTERM on, and ends the tree a grace later if it is still there;
            // with the tree's own SIGTERM-to-SIGKILL grace, two graces and a margin.
            match wait_rx.recv_timeout(grace * 2 + Duration::from_secs(5)) {
                Ok(s) => s,
                Err(_) => {
                    killed = true;
                    signal(Signal::Kill);
                    // Bounded even if the identity could not be read and nothing was sent.
                    wait_rx.recv_timeout(LAST_WAIT).unwrap_or_else(|_| {
                        Err(std::io::Error::other(format!(
                            "pid {pid} did not end within {} of SIGKILL",
                            humantime::format_duration(LAST_WAIT)
                        )))
                    })
                }
            }
        }
    };
    let exit_code = match status {
        Ok(s) => exit_code_of(s).filter(|_| !killed),
        Err(e) => {
            return Ok(error_result(&anyhow::anyhow!(
                "cannot wait for `headroom run`: {e}"
            )));
        }
    };
    // `run` ended: its tree is gone, so the pipes close; bounded all the same, in case
    // something that escaped it still holds one.
    let stdout = out_rx.recv_timeout(LAST_WAIT).unwrap_or_default();
    let (stderr, summary) = err_rx.recv_timeout(LAST_WAIT).unwrap_or_default();
    let capped = summary
        .as_ref()
        .is_some_and(|s| s.get("ended_by").and_then(Value::as_str) == Some("limit"));
    let peak = summary
        .as_ref()
        .and_then(|s| s.get("peak_footprint_bytes"))
        .and_then(Value::as_u64);
    let report = RunLimitedReport {
        command: a.command,
        cwd: cwd.display().to_string(),
        limit_bytes,
        timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        exit_code,
        capped,
        timed_out,
        killed_after_timeout: killed,
        peak_footprint_bytes: peak,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        stdout_tail: stdout.text(),
        stdout_bytes: stdout.total,
        stderr_tail: stderr.text(),
        stderr_bytes: stderr.total,
        summary,
    };
    let mut text = match (peak, report.exit_code) {
        (Some(p), Some(code)) => format!(
            "exit {code}; peak {} of {}",
            human_bytes(p),
            human_bytes(limit_bytes)
        ),
        (None, Some(code)) => format!("`headroom run` could not run the command (exit {code})"),
        (_, None) => "`headroom run` was killed".to_string(),
    };
    if capped {
        text += "; capped: headroom ended the tree for being over its limit";
    }
    if timed_out {
        text += &format!(
            "; timed out after {}: the tree was ended",
            humantime::format_duration(timeout)
        );
    }
    if report.summary.is_none() && !report.stderr_tail.is_empty() {
        text += &format!("\n{}", report.stderr_tail.trim_end());
    }
    let failed = report.summary.is_none();
    let value = crate::schema::to_line(&report)
        .and_then(|line| serde_json::from_str::<Value>(&line))
        .map_err(|e| RpcError::new(super::rpc::INTERNAL_ERROR, e.to_string()))?;
    Ok(json!({
        "content": [{"type": "text", "text": text}],
        "structuredContent": value,
        "isError": failed,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_bytes_and_counts_all() {
        let mut t = Tail::new(4);
        t.push(b"abc");
        t.push(b"defgh");
        assert_eq!((t.text().as_str(), t.total), ("efgh", 8));
        t.push(b"0123456789");
        assert_eq!((t.text().as_str(), t.total), ("6789", 18));
    }

    /// The list is read from the types, and misses none of their variants: as many tags as
    /// the schema has alternatives (a schema shape the reader did not understand fails
    /// here, not by letting a record through into the command's output).
    #[test]
    fn the_record_types_are_every_variant_of_runs_own_types() {
        let types = record_types();
        let event = schema_of::<crate::actions::watchdog::Event>();
        let variants = event["oneOf"].as_array().map_or(0, Vec::len);
        let kinds = schema_of::<crate::commands::run_enforce::RecordType>();
        let own = kinds["enum"].as_array().map_or(0, Vec::len)
            + kinds["oneOf"].as_array().map_or(0, Vec::len);
        assert!(variants >= 11 && own >= 2, "{event}\n{kinds}");
        assert_eq!(types.len(), variants + own, "{types:?}");
        for t in [
            "start",
            "approaching_limit",
            "breach",
            "park",
            "park_result",
            "signal",
            "spared",
            "forward",
            "job_control",
            "warning",
            "summary",
            "enforcement",
            "kernel_outcome",
        ] {
            assert!(types.iter().any(|k| k == t), "`{t}` missing from {types:?}");
        }
        // Records as `run` serializes them are recognised.
        let spared = crate::actions::watchdog::Event::Spared {
            at: "2026-12-01T00:00:00Z".into(),
            reason: crate::actions::watchdog::EndReason::Limit,
            pids: vec![7],
        };
        let enforcement =
            crate::commands::run_enforce::Enforcement::poll(crate::cli::Enforce::Auto, None);
        for line in [
            serde_json::to_vec(&spared).unwrap(),
            serde_json::to_vec(&enforcement).unwrap(),
        ] {
            assert!(
                run_record(&line).is_some(),
                "{}",
                String::from_utf8_lossy(&line)
            );
        }
    }

    #[test]
    fn only_runs_own_records_leave_the_command_output() {
        assert!(run_record(br#"{"type":"summary","schema":"headroom.run/1"}"#).is_some());
        assert!(run_record(br#"{"type":"breach","footprint_bytes":1}"#).is_some());
        assert!(run_record(br#"{"type":"enforcement","by":"poll"}"#).is_some());
        assert!(run_record(br#"{"type":"approaching_limit"}"#).is_some());
        assert!(run_record(br#"{"type":"mine"}"#).is_none());
        assert!(run_record(br#"{"kind":"summary"}"#).is_none());
        assert!(run_record(b"plain text").is_none());
        assert!(run_record(b"{broken").is_none());
    }
}
