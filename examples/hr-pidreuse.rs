//! Test helper for the real-process pid-reuse test (Linux, root): run ONLY as pid 1 of a
//! private pid namespace, e.g. `unshare --pid --fork --mount-proc hr-pidreuse HR_FIXTURE`.
//! It refuses to run anywhere else, so everything it signals lives in that namespace (which
//! the kernel empties when it exits).
//!
//! 1. start a leaker (`HR_FIXTURE leak --zombies 120`) and let `reap`'s selection pick it,
//!    keeping the identity the selection read;
//! 2. end it, then make the kernel hand its pid to a new process (`ns_last_pid`);
//! 3. run the termination with the stale identity: it must report `identity-changed` and
//!    leave the new process alive;
//! 4. control: the same termination with the new process's own identity ends it.
//!
//! Prints one JSON line with what happened; exit 0 when it ran, 2 when it refused.

// A test tool, not part of headroom: it prints and exits directly, and it may SIGKILL, but
// only processes it started inside its own pid namespace.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::exit,
    clippy::disallowed_methods
)]

#[cfg(target_os = "linux")]
fn main() {
    if let Err(e) = linux::run() {
        eprintln!("hr-pidreuse: {e}");
        std::process::exit(2);
    }
}

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("hr-pidreuse: Linux only");
    std::process::exit(2);
}

#[cfg(target_os = "linux")]
mod linux {
    use std::collections::HashMap;
    use std::io::BufRead;
    use std::process::{Child, Command, Stdio};
    use std::time::Duration;

    use headroom::testing::{
        ProcessSource, RealClock, native, native_control, signal_delivery, terminate,
    };
    use headroom_core::emergency::Emergency;
    use headroom_core::liveness::Session;
    use headroom_core::patterns::{AllowDeny, Patterns};
    use headroom_core::policy::{Policy, Situation, select};
    use headroom_core::process_table::ProcessTable;
    use headroom_core::snapshot::{Detail, Identity};

    const GRACE: Duration = Duration::from_millis(200);

    fn identity_of(source: &dyn ProcessSource, pid: i32) -> Result<Identity, String> {
        source
            .process(pid)
            .map_err(|e| e.to_string())?
            .and_then(|p| p.identity())
            .ok_or_else(|| format!("no identity for pid {pid}"))
    }

    /// A `sleep` child that takes `pid`: ns_last_pid is set to `pid - 1` first (nothing else
    /// runs in this namespace, so the next fork gets `pid`).
    fn spawn_at(pid: i32) -> Result<Child, String> {
        for _ in 0..20 {
            std::fs::write("/proc/sys/kernel/ns_last_pid", (pid - 1).to_string())
                .map_err(|e| format!("cannot write ns_last_pid: {e}"))?;
            let child = Command::new("sleep")
                .arg("600")
                .spawn()
                .map_err(|e| format!("cannot start sleep: {e}"))?;
            if child.id() as i32 == pid {
                return Ok(child);
            }
            end(child);
        }
        Err(format!("pid {pid} was never handed out again"))
    }

    fn end(mut child: Child) {
        let _ = child.kill();
        let _ = child.wait();
    }

    pub(super) fn run() -> Result<(), String> {
        if std::process::id() != 1 {
            return Err(
                "must run as pid 1 of a private pid namespace (unshare --pid --fork --mount-proc)"
                    .into(),
            );
        }
        let fixture = std::env::args()
            .nth(1)
            .ok_or("usage: hr-pidreuse HR_FIXTURE")?;
        let mut leaker = Command::new(&fixture)
            .args(["leak", "--zombies", "120"])
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {fixture}: {e}"))?;
        let out = leaker.stdout.take().ok_or("no stdout")?;
        let mut line = String::new();
        std::io::BufReader::new(out)
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        if !line.starts_with("ready") {
            return Err(format!("leaker not ready: {line:?}"));
        }
        let leaker_pid = leaker.id() as i32;

        // reap's selection over the namespace's live table.
        let source = native();
        let snap = source.snapshot(Detail::Full).map_err(|e| e.to_string())?;
        let table = ProcessTable::new(&snap);
        let sessions: HashMap<i32, Session> = table
            .zombie_parents(snap.uid)
            .iter()
            .map(|z| (z.pid, Session::none()))
            .collect();
        let policy = Policy {
            allow_deny: AllowDeny {
                allow: Patterns::new(["hr-fixture"]),
                deny: Patterns::default(),
            },
            min_zombies: 100,
            max_targets: 10,
            spare_sessions: true,
            idle_threshold_s: 7200.0,
            emergency: Emergency::default(),
        };
        let selection = select(
            Situation {
                table: &table,
                uid: snap.uid,
                self_pid: 1,
                ancestry: &[1],
                used: 0,
                limit: None,
                sessions: &sessions,
            },
            &policy,
        );
        let targets: Vec<_> = selection.targets().collect();
        let [target] = targets[..] else {
            return Err(format!(
                "expected the leaker as the one target: {targets:?}"
            ));
        };
        if target.pid != leaker_pid {
            return Err(format!("selected {} instead of {leaker_pid}", target.pid));
        }
        let stale = target.identity.ok_or("the target has no identity")?;

        // End it, and give its pid to a new process.
        end(leaker);
        let newcomer = spawn_at(stale.pid)?;
        let fresh = identity_of(source.as_ref(), stale.pid)?;
        let control = native_control(source.as_ref());
        let t = terminate(control.as_ref(), &stale, GRACE, &RealClock);
        let mut newcomer = newcomer;
        let alive_after = newcomer.try_wait().map_err(|e| e.to_string())?.is_none()
            && identity_of(source.as_ref(), stale.pid) == Ok(fresh);
        // Control: with its own identity the same termination ends the new process.
        let control_t = terminate(control.as_ref(), &fresh, GRACE, &RealClock);
        let control_gone = newcomer.wait().is_ok();
        println!(
            "{}",
            serde_json::json!({
                "pid": stale.pid,
                "stale_start_time": stale.start_time,
                "new_start_time": fresh.start_time,
                "outcome": t.outcome.as_str(),
                "signals": t.signals.iter().map(|s| s.name()).collect::<Vec<_>>(),
                "new_process_alive_after": alive_after,
                "control_outcome": control_t.outcome.as_str(),
                "control_gone": control_gone,
                "delivery": signal_delivery(),
            })
        );
        Ok(())
    }
}
