//! Run a helper program (`open`, `launchctl`, a notifier) with a deadline, keeping the first
//! line of what it said on stderr. Only called off the polling path: a round first decides,
//! then acts.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a helper may take before it is stopped.
pub(crate) const TIMEOUT: Duration = Duration::from_secs(10);
/// Bytes of stderr kept.
const STDERR_CAP: usize = 4096;

/// How a helper ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutput {
    /// Exit code; `None` when it died by a signal.
    pub code: Option<i32>,
    /// The first non-empty line of its stderr, trimmed.
    pub stderr: String,
}

impl ExecOutput {
    pub(crate) fn success(&self) -> bool {
        self.code == Some(0)
    }

    /// `exit 0`, `exit 113: Could not find service …`, `killed by a signal`.
    pub(crate) fn describe(&self) -> String {
        let code = match self.code {
            Some(c) => format!("exit {c}"),
            None => "killed by a signal".to_string(),
        };
        if self.stderr.is_empty() {
            code
        } else {
            format!("{code}: {}", self.stderr)
        }
    }
}

/// Run `argv` (no shell) with stdin and stdout closed. `Err` when it cannot be started (the
/// message names the program) or did not finish within `timeout` (it is then stopped: it is
/// our own child).
pub(crate) fn run(argv: &[String], timeout: Duration) -> Result<ExecOutput, String> {
    let (prog, args) = argv.split_first().ok_or("empty command line")?;
    let mut child = Command::new(prog)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{prog}`: {e}"))?;
    let (tx, rx) = mpsc::channel();
    if let Some(mut err) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            let mut chunk = [0u8; 1024];
            // Read to the end (so the child never blocks on a full pipe), keep the start.
            while let Ok(n) = err.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                let room = STDERR_CAP.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
            let _ = tx.send(kept);
        });
    }
    // Checked: a deadline past what `Instant` holds is "no deadline" in practice.
    let now = Instant::now();
    let deadline = now
        .checked_add(timeout)
        .unwrap_or(now + Duration::from_secs(86_400));
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`{prog}` did not finish within {}; stopped it",
                    humantime::format_duration(timeout)
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("cannot wait for `{prog}`: {e}")),
        }
    };
    // A grandchild could hold stderr open: do not wait for it long.
    let stderr = rx.recv_timeout(Duration::from_secs(1)).unwrap_or_default();
    Ok(ExecOutput {
        code: status.code(),
        stderr: first_line(&stderr),
    })
}

fn first_line(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty());
    line.unwrap_or("").chars().take(300).collect()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["/bin/sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn exit_code_and_first_stderr_line_are_kept() {
        let out = run(
            &sh("echo; echo ' oops ' >&2; echo more >&2; exit 3"),
            TIMEOUT,
        )
        .unwrap();
        assert_eq!(out.code, Some(3));
        assert_eq!(out.stderr, "oops");
        assert_eq!(out.describe(), "exit 3: oops");
        assert!(run(&sh("exit 0"), TIMEOUT).unwrap().success());
    }

    #[test]
    fn a_missing_program_is_an_error_naming_it() {
        let e = run(&["/nonexistent/open".to_string()], TIMEOUT).unwrap_err();
        assert!(e.contains("cannot run `/nonexistent/open`"), "{e}");
        assert!(run(&[], TIMEOUT).is_err());
    }

    #[test]
    fn a_helper_past_its_deadline_is_stopped() {
        let t = Instant::now();
        let e = run(&sh("exec sleep 30"), Duration::from_millis(200)).unwrap_err();
        assert!(e.contains("did not finish"), "{e}");
        assert!(t.elapsed() < Duration::from_secs(10));
    }
}
