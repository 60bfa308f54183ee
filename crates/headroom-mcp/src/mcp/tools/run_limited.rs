//! The `run_limited` tool: `headroom run --limit` on a command, under a timeout `run` itself
//! enforces (`--timeout`). The command runs under a `headroom run` child (the same binary),
//! never in the server's own process: there stdin and stdout are the protocol. Its stdin is
//! /dev/null; its stdout and stderr are read through pipes of which only a bounded tail is
//! kept, byte for byte; `run`'s records come on a pipe of their own (`--records-fd 3`), so
//! no line of the command's is ever mistaken for one.
//!
//! How long the tree may live is `run`'s to enforce, so that it holds whatever happens to
//! the server: `--timeout`, and `--die-with-parent` (the server killed, even by SIGKILL).
//! `run` gets a process group of its own, so a client that kills the server's group (the
//! Python SDK does, after its grace) does not kill `run` before it has ended the tree.
//! When the call is cancelled or the session ends, the server sends `run` SIGTERM through
//! the shared escalation (`actions::escalate`): `run` passes it on and ends the tree within
//! two graces; SIGKILL to `run` is the escalation's last step, only if it has not ended by
//! then (and a run's own backstop past its timeout, the same way).

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::run_output::{Records, SharedTail, Tail, exit_code_of, lock, read_records, tail_thread};
use super::{Effect, Spec, Tools, schema_of};
use crate::actions::escalate::{self, Escalation, EscalationStep};
use crate::config::ToolGroup;
use crate::exit::ExitStatus;
use crate::mcp::args::Int;
use crate::mcp::calls::Call;
use crate::mcp::results;

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
const DEFAULT_GRACE: Duration = Duration::from_secs(5);
const DEFAULT_TAIL: usize = 8 << 10;
const MAX_TAIL: usize = 64 << 10;
/// The longest the server waits for a pipe once `run` has ended.
const LAST_WAIT: Duration = Duration::from_secs(10);
/// How often the wait loop looks at the call (cancelled?) and the escalation.
const TICK: Duration = Duration::from_millis(100);
/// The descriptor `run` writes its records to.
const RECORDS_FD: i32 = 3;

/// A memory size: MiB as a number, or text with a unit as for `run --limit` (`512M`, `2G`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum Size {
    Mib(u64),
    Text(String),
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunLimitedArgs {
    /// The program and its arguments (no shell; `["sh", "-c", "…"]` for one).
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// Memory limit for the whole process tree: MiB, or text with a unit (`512M`, `2G`).
    pub limit: Size,
    /// Wall-clock timeout, like `90s` or `10m` [default: 10m].
    #[serde(default)]
    pub timeout: Option<String>,
    /// Wait between SIGTERM and SIGKILL, like `5s` [default: 5s].
    #[serde(default)]
    pub grace: Option<String>,
    /// Working directory [default: the server's].
    #[serde(default)]
    pub cwd: Option<String>,
    /// Bytes of the end of stdout and of stderr returned [default: 8192, at most 65536].
    #[serde(default)]
    pub tail_bytes: Option<Int<usize>>,
}

pub(crate) use crate::commands::run_limited_report::RunLimitedReport;

pub(crate) const SPEC: Spec = Spec {
    name: "run_limited",
    title: "Run a command under a memory limit",
    description: "Run a program (no shell) under `headroom run --limit`: its whole process \
tree is held to the limit (idle subtrees parked first, then SIGTERM, grace, SIGKILL) and \
ended after the wall-clock timeout, or when this call is cancelled or the session ends. \
It runs any program the user could, with the user's rights (only those of `[mcp] run_allow` \
when that is set); the refusal rules of park and reap do not apply to what it runs. Returns \
the exit code (143/137 when ended), whether it was capped or timed out, its peak footprint, \
and the tail of its stdout and stderr. Runs in the server's working directory unless cwd is \
given; stdin is empty.",
    group: ToolGroup::Run,
    effect: Effect::Acts {
        destructive: true,
        idempotent: false,
    },
    level_exit: false,
    needs_gui: false,
    input: schema_of::<RunLimitedArgs>,
    output: report_schema,
    call,
};

fn report_schema() -> Value {
    let mut v = crate::schema::of::<RunLimitedReport>();
    crate::mcp::args::clean(&mut v, false);
    v
}

fn parse_duration(what: &str, s: Option<&str>, default: Duration) -> Result<Duration, String> {
    s.map_or(Ok(default), |s| {
        crate::cli::parse_duration(s).map_err(|e| format!("{what} of `run_limited`: {e}"))
    })
}

/// The checked arguments of one call.
pub(super) struct Plan {
    pub(super) command: Vec<String>,
    pub(super) limit_text: String,
    pub(super) limit_bytes: u64,
    pub(super) timeout: Duration,
    pub(super) grace: Duration,
    pub(super) tail: usize,
    pub(super) cwd: std::path::PathBuf,
}

pub(super) fn plan(tools: &Tools, args: Value) -> Result<Plan, Value> {
    let a: RunLimitedArgs = serde_json::from_value(args)
        .map_err(|e| results::usage(&format!("arguments of `run_limited`: {e}")))?;
    if let Some(refusal) = tools.refuse_acting() {
        return Err(refusal);
    }
    if a.command.first().is_none_or(String::is_empty) {
        return Err(results::usage("`command` of `run_limited` needs a program"));
    }
    let limit_text = match &a.limit {
        Size::Mib(n) => format!("{n}M"),
        Size::Text(t) => t.clone(),
    };
    let limit_bytes = crate::cli::parse_size(&limit_text)
        .map_err(|e| results::usage(&format!("`limit` of `run_limited`: {e}")))?;
    let timeout = parse_duration("`timeout`", a.timeout.as_deref(), DEFAULT_TIMEOUT)
        .map_err(|e| results::usage(&e))?;
    let grace = parse_duration("`grace`", a.grace.as_deref(), DEFAULT_GRACE)
        .map_err(|e| results::usage(&e))?;
    let cwd = match &a.cwd {
        Some(d) => std::path::PathBuf::from(d),
        None => std::env::current_dir().map_err(|e| {
            results::error(&anyhow::anyhow!("the server has no working directory: {e}"))
        })?,
    };
    if !cwd.is_dir() {
        return Err(results::usage(&format!(
            "`cwd` `{}` is not a directory",
            cwd.display()
        )));
    }
    if let Some(allowed) = &tools.selection.run_allow {
        allowlisted(&a.command[0], &cwd, allowed).map_err(|why| {
            results::failure(
                "refused",
                Some("not-in-run-allow"),
                &why,
                ExitStatus::Refused,
            )
        })?;
    }
    Ok(Plan {
        command: a.command,
        limit_text,
        limit_bytes,
        timeout,
        grace,
        tail: a.tail_bytes.map_or(DEFAULT_TAIL, |t| t.0).min(MAX_TAIL),
        cwd,
    })
}

/// Whether `program` (as `run` would start it from `cwd`) is one `[mcp] run_allow` names:
/// both sides resolved to the file they name (a name in PATH, a path from `cwd`) and
/// compared canonical, so a script of the same name elsewhere is not the allowed program.
#[cfg(unix)]
fn allowlisted(program: &str, cwd: &std::path::Path, allowed: &[String]) -> Result<(), String> {
    use crate::platform::path_lookup::resolve;
    let file = |p: &str, base: &std::path::Path| -> Option<std::path::PathBuf> {
        let found = resolve(std::ffi::OsStr::new(p)).ok()?;
        base.join(found).canonicalize().ok()
    };
    let wanted = file(program, cwd);
    let ok = wanted.as_ref().is_some_and(|w| {
        allowed
            .iter()
            .any(|a| file(a, std::path::Path::new("/")).as_ref() == Some(w))
    });
    if ok {
        return Ok(());
    }
    Err(format!(
        "`{program}` is not among the programs `[mcp] run_allow` lets run_limited start ({})",
        allowed.join(", ")
    ))
}

#[cfg(not(unix))]
fn allowlisted(program: &str, _cwd: &std::path::Path, _allowed: &[String]) -> Result<(), String> {
    Err(format!("`{program}`: run_limited is unsupported here"))
}

fn call(tools: &Tools, _spec: &Spec, call: &Call, args: Value) -> Value {
    match plan(tools, args) {
        Ok(p) => result(run(tools, call, p, &Live::default())),
        Err(e) => e,
    }
}

/// A run as it goes: `run`'s pid once started (0 before), the tails of its output so far.
#[derive(Debug, Default)]
pub(crate) struct Live {
    pub pid: AtomicI32,
    pub(super) stdout: SharedTail,
    pub(super) stderr: SharedTail,
}

impl Live {
    pub(crate) fn pid(&self) -> Option<i32> {
        Some(self.pid.load(Ordering::SeqCst)).filter(|p| *p > 0)
    }

    /// The tails so far: (stdout, stderr).
    pub(crate) fn tails(&self) -> (String, String) {
        (lock(&self.stdout).text(), lock(&self.stderr).text())
    }
}

/// How a run ended: its report, the summary line, whether it is an error (`run` could not
/// run the command). Err: the tool error that stood in its way.
pub(crate) type RunLimitedEnd = Result<(RunLimitedReport, String, bool), Value>;

/// The tool result of a run that ended.
pub(crate) fn result(ended: RunLimitedEnd) -> Value {
    match ended {
        Ok((report, text, failed)) => match crate::schema::to_value(&report) {
            Ok(v) => results::with_report(v, text, failed),
            Err(e) => results::error(&anyhow::anyhow!("cannot serialize the report: {e}")),
        },
        Err(e) => e,
    }
}

/// `headroom run` as started: its pid, identity and start, the source its identity was read
/// from, and the receivers of the threads that read its pipes and wait for it.
#[cfg(unix)]
struct StartedRun {
    pid: i32,
    identity: Option<crate::core::snapshot::Identity>,
    at: Instant,
    source: Box<dyn crate::platform::ProcessSource>,
    stdout_done: mpsc::Receiver<()>,
    stderr_done: mpsc::Receiver<()>,
    records: mpsc::Receiver<Records>,
    waited: mpsc::Receiver<std::io::Result<std::process::ExitStatus>>,
}

#[cfg(unix)]
pub(super) fn run(tools: &Tools, call: &Call, p: Plan, live: &Live) -> RunLimitedEnd {
    let s = start(tools, &p, live)?;
    let control = crate::platform::native_control(s.source.as_ref());
    let (status, killed) = wait(call, &p, &s, control.as_ref());
    let exit_code = match status {
        Ok(st) => exit_code_of(st).filter(|_| !killed),
        Err(e) => {
            return Err(results::error(&anyhow::anyhow!(
                "cannot wait for `headroom run`: {e}"
            )));
        }
    };
    // `run` ended: its tree is gone, so the pipes close; bounded all the same, in case
    // something that escaped it still holds one.
    let _ = s.stdout_done.recv_timeout(LAST_WAIT);
    let _ = s.stderr_done.recv_timeout(LAST_WAIT);
    let stdout = std::mem::take(&mut *lock(&live.stdout));
    let stderr = std::mem::take(&mut *lock(&live.stderr));
    let records = s.records.recv_timeout(LAST_WAIT).unwrap_or_default();
    let ended = report::Finished {
        exit_code,
        killed,
        duration: s.at.elapsed(),
        stdout,
        stderr,
        records,
    };
    Ok(report::report(p, ended))
}

/// The `headroom run` command line for the plan (`run` enforces the limit, the grace, the
/// timeout and its parent's death; its records come on `RECORDS_FD`).
#[cfg(unix)]
fn command(tools: &Tools, p: &Plan, exe: std::path::PathBuf) -> Command {
    use std::os::unix::process::CommandExt;

    let mut cmd = Command::new(exe);
    if let Some(c) = &tools.global.config {
        cmd.arg("--config").arg(c);
    }
    cmd.args(["--json", "run", "--limit", &p.limit_text, "--grace"])
        .arg(humantime::format_duration(p.grace).to_string())
        .arg("--timeout")
        .arg(humantime::format_duration(p.timeout).to_string())
        .args(["--die-with-parent", "--records-fd", &RECORDS_FD.to_string()])
        .arg("--")
        .args(&p.command)
        .current_dir(&p.cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd
}

/// Start `headroom run`, read its identity, and start the threads that read its output,
/// its records and its end. Err: the tool error that stood in the way.
#[cfg(unix)]
fn start(tools: &Tools, p: &Plan, live: &Live) -> Result<StartedRun, Value> {
    use std::os::fd::AsRawFd;

    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            return Err(results::error(&anyhow::anyhow!(
                "cannot find headroom's own executable to run `run`: {e}"
            )));
        }
    };
    let (records_r, records_w) = match crate::platform::pipe_pair() {
        Ok(p) => p,
        Err(e) => return Err(results::error(&anyhow::anyhow!("cannot make a pipe: {e}"))),
    };
    let mut cmd = command(tools, p, exe);
    crate::platform::pass_fd(&mut cmd, records_w.as_raw_fd(), RECORDS_FD);
    let at = Instant::now();
    let spawned = cmd.spawn();
    // Only the child holds the write end now: the reader sees the end when `run` ends.
    drop(records_w);
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            return Err(results::error(&anyhow::anyhow!(
                "cannot start `headroom run`: {e}"
            )));
        }
    };
    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    // Our own child, unreaped until the waiter below: its pid cannot name another process
    // until then, and the identity (start time) guards every signal after.
    let source = crate::platform::native();
    let identity = source
        .process(pid)
        .ok()
        .flatten()
        .and_then(|r| r.identity());
    live.pid.store(pid, Ordering::SeqCst);
    *lock(&live.stdout) = Tail::new(p.tail);
    *lock(&live.stderr) = Tail::new(p.tail);
    let stdout_done = tail_thread(child.stdout.take(), Arc::clone(&live.stdout));
    let stderr_done = tail_thread(child.stderr.take(), Arc::clone(&live.stderr));
    let (rec_tx, records) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = rec_tx.send(read_records(records_r));
    });
    let (wait_tx, waited) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = wait_tx.send(child.wait());
    });
    Ok(StartedRun {
        pid,
        identity,
        at,
        source,
        stdout_done,
        stderr_done,
        records,
        waited,
    })
}

/// Wait for `run` to end, ending it through the escalation once the call is cancelled or
/// `run` is past its own timeout and graces; and whether it took a SIGKILL.
#[cfg(unix)]
fn wait(
    call: &Call,
    p: &Plan,
    s: &StartedRun,
    control: &dyn crate::platform::ProcessControl,
) -> (std::io::Result<std::process::ExitStatus>, bool) {
    let pid = s.pid;
    // `run` past its own timeout, or told to end: it ends the tree within two graces (the
    // forwarded signal's, then the tree's own) and a margin; only then SIGKILL to `run`.
    let settings = escalate::EscalationTiming {
        grace: p.grace * 2 + Duration::from_secs(5),
        settle: LAST_WAIT,
        poll: TICK,
    };
    let backstop = p.timeout + p.grace * 2 + Duration::from_secs(5);
    let mut ending: Option<Escalation> = None;
    let mut killed = false;
    let status = loop {
        match s.waited.recv_timeout(TICK) {
            Ok(st) => break st,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                break Err(std::io::Error::other("the waiter thread ended"));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        call.set_status(format!(
            "`{}` under `headroom run` (pid {pid})",
            p.command[0]
        ));
        if ending.is_none() && (call.cancelled() || now.duration_since(s.at) > backstop) {
            if let Some(id) = s.identity {
                let mut esc = Escalation::new(&[id], settings);
                let _ = esc.start(control, now);
                ending = Some(esc);
            }
        }
        if let Some(esc) = ending.as_mut() {
            let step = esc.on_tick(control, now, &mut escalate::kill_all);
            if esc.past_grace() {
                killed |= !esc.delivered(crate::platform::Signal::Kill).0.is_empty();
            }
            if let EscalationStep::Done(_) = step {
                // Everything sent that could be; the waiter says when it is gone.
                match s.waited.recv_timeout(LAST_WAIT) {
                    Ok(st) => break st,
                    Err(_) => {
                        break Err(std::io::Error::other(format!(
                            "pid {pid} did not end after SIGTERM and SIGKILL"
                        )));
                    }
                }
            }
        }
    };
    (status, killed)
}

#[cfg(not(unix))]
pub(super) fn run(_tools: &Tools, _call: &Call, _p: Plan, _live: &Live) -> RunLimitedEnd {
    Err(results::error(&anyhow::anyhow!(
        "run_limited: unsupported on {}",
        std::env::consts::OS
    )))
}

#[cfg(unix)]
mod report;

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn the_allowlist_compares_the_files_named_not_the_names() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        let allowed = vec!["sh".to_string()];
        assert!(allowlisted("sh", cwd, &allowed).is_ok());
        assert!(allowlisted("kill", cwd, &allowed).is_err());
        // A file named `sh` elsewhere is not the `sh` of PATH.
        let fake = cwd.join("sh");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        assert!(allowlisted(fake.to_str().unwrap(), cwd, &allowed).is_err());
        assert!(allowlisted("./sh", cwd, &allowed).is_err());
        // An absolute path to the allowed file is that file.
        let real = crate::platform::path_lookup::resolve(std::ffi::OsStr::new("sh")).unwrap();
        assert!(allowlisted(real.to_str().unwrap(), cwd, &allowed).is_ok());
    }
}
