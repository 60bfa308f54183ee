//! `doctor`'s burn child: a copy of headroom that touches CHILD_MIB and burns CHILD_CPU of
//! CPU time, measured by headroom and by `ps -o time=,rss=`. It ends when its stdin
//! closes, so nothing is ever signalled; one that does not say `ready` within READY_WITHIN
//! is left to end on its own (its stdin closed), not waited for.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::Result;

use crate::commands::doctor_tools::tool;
use crate::core::doctor::{self as dr, Check};
use crate::exit::ExitStatus;
use crate::platform::{self, ProcessSource};

/// What the burn child allocates and touches, and how much CPU it burns.
const CHILD_MIB: usize = 64;
const CHILD_CPU: Duration = Duration::from_millis(1_200);
/// How long doctor waits for the burn child's `ready`: its work is 1.2 s of CPU, so this is
/// a machine too loaded (or a child stuck) for the check to mean anything.
const READY_WITHIN: Duration = Duration::from_secs(30);

/// What the burn child said on its stdout before the bound.
#[derive(Debug, PartialEq, Eq)]
enum ChildSaid {
    Ready,
    /// It closed its stdout or said something else.
    Other,
    /// Nothing within the bound.
    Nothing,
}

/// Reads the first line on a thread so that a child that never writes cannot hold doctor.
fn await_ready(out: impl Read + Send + 'static, bound: Duration) -> ChildSaid {
    let said_ready = move || {
        let mut line = String::new();
        BufReader::new(out).read_line(&mut line).is_ok() && line.trim() == "ready"
    };
    match crate::commands::doctor_tools::within(bound, said_ready) {
        Ok(true) => ChildSaid::Ready,
        Ok(false) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => ChildSaid::Other,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => ChildSaid::Nothing,
    }
}

/// Start a copy of headroom that touches CHILD_MIB and burns CHILD_CPU, then compare
/// headroom's reading of it with `ps -o time=,rss=`. The child waits on its stdin and ends
/// when that closes, so nothing is signalled.
pub(crate) fn child(source: &dyn ProcessSource) -> Vec<Check> {
    let skip = |why: String| {
        vec![
            Check::skipped("child.cpu", why.clone()),
            Check::skipped("child.footprint", why),
        ]
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return skip(format!("cannot find headroom's own executable: {e}")),
    };
    let mut c = match Command::new(exe)
        .args(["doctor", "--burn-child"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return skip(format!("cannot start the burn child: {e}")),
    };
    let pid = c.id() as i32;
    let ready = match c.stdout.take() {
        Some(out) => await_ready(out, READY_WITHIN),
        None => ChildSaid::Other,
    };
    let checks = if ready == ChildSaid::Nothing {
        // Not waited for: with its stdin closed it ends once its burn does, and is reaped
        // by whoever inherits it when doctor exits. Nothing is signalled.
        drop(c.stdin.take());
        return skip(format!(
            "the burn child did not report ready within {} s (a machine this loaded cannot \
             time it)",
            READY_WITHIN.as_secs()
        ));
    } else if ready == ChildSaid::Other {
        skip("the burn child did not report ready".into())
    } else {
        let rec = source.process(pid).ok().flatten();
        let pid_s = pid.to_string();
        match tool("ps", &["-o", "time=,rss=", "-p", &pid_s]) {
            Ok(text) => {
                let mut w = text.split_whitespace();
                let (time, rss) = (w.next().unwrap_or(""), w.next().unwrap_or(""));
                vec![
                    dr::cpu(rec.as_ref().and_then(|r| r.cpu_ns), time),
                    dr::footprint(rec.as_ref().and_then(|r| r.footprint_bytes), rss),
                ]
            }
            Err(e) => skip(e),
        }
    };
    // Closing its stdin ends it; then it is reaped.
    drop(c.stdin.take());
    let _ = c.wait();
    checks
}

/// The burn child's side: touch CHILD_MIB, burn CHILD_CPU of CPU time, say `ready`, wait
/// for stdin to close.
pub(crate) fn burn_child() -> Result<ExitStatus> {
    let mut mem = vec![0u8; CHILD_MIB << 20];
    for (i, b) in mem.iter_mut().enumerate().step_by(4096) {
        *b = (i / 4096) as u8 | 1;
    }
    let start = platform::own_cpu_ns().unwrap_or(0);
    let mut x = 0u64;
    while platform::own_cpu_ns()
        .unwrap_or(u64::MAX)
        .saturating_sub(start)
        < CHILD_CPU.as_nanos() as u64
    {
        for _ in 0..10_000 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")?;
    out.flush()?;
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    std::hint::black_box(&mem);
    Ok(ExitStatus::Ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connected pair standing in for the child's stdout (`std::io::pipe` is newer than
    /// the Rust the macOS check builds with).
    fn pipe() -> (
        std::os::unix::net::UnixStream,
        std::os::unix::net::UnixStream,
    ) {
        std::os::unix::net::UnixStream::pair().unwrap()
    }

    #[test]
    fn a_child_that_never_says_ready_does_not_hold_doctor() {
        let (reader, writer) = pipe();
        // The writer stays open and silent: the read can only end by the bound.
        let got = await_ready(reader, Duration::from_millis(50));
        assert_eq!(got, ChildSaid::Nothing);
        drop(writer);
    }

    #[test]
    fn ready_is_ready_and_anything_else_is_not() {
        let (reader, mut writer) = pipe();
        writer.write_all(b"ready\n").unwrap();
        assert_eq!(
            await_ready(reader, Duration::from_secs(10)),
            ChildSaid::Ready
        );
        let (reader, mut writer) = pipe();
        writer.write_all(b"oops\n").unwrap();
        assert_eq!(
            await_ready(reader, Duration::from_secs(10)),
            ChildSaid::Other
        );
        let (reader, writer) = pipe();
        drop(writer);
        assert_eq!(
            await_ready(reader, Duration::from_secs(10)),
            ChildSaid::Other
        );
    }
}
