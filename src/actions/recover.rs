//! Restart sequences for a hang the monitor confirmed (`core::hangs`), behind the
//! `RecoveryOps` trait so the exact order of signals, waits and commands is unit-tested with
//! a fake; `LiveOps` is the real thing.
//!
//! Third-party app: SIGTERM → wait the grace period → SIGKILL only if the *same* process is
//! still running (every signal goes through `ProcessControl`, which re-reads pid + start
//! time + uid first) → wait for the old pid to go → `open -g <bundle path>`.
//!
//! The allowlisted service: SIGTERM → SIGKILL after the grace period → only once the old pid
//! is gone, `launchctl kickstart gui/<uid>/<label>` → wait up to 5 s for a replacement pid.
//! The domain: `gui/<uid>` first, because CursorUIViewService belongs to the Aqua login
//! session (it draws the text-insertion UI, and headroom only gets here when the
//! WindowServer answered, i.e. inside that session), and launchctl(1) calls `gui/` the
//! convenient form of that session's domain. Public scripts disagree (one uses `user/<uid>`,
//! reference notes §1f), so when launchd says the service is not found in `gui/<uid>`
//! (exit 113, "Could not find service") the same kickstart goes to `user/<uid>`. Never `-s`
//! (it leaves the job suspended before its first instruction), never `-k` (the old pid
//! must already be gone, and headroom checked that itself).
//!
//! Nothing here decides *whether* to restart, and nothing here notifies.

use std::time::Duration;

use crate::actions::exec::ExecOutput;
pub use crate::actions::recover_live::LiveOps;
pub use crate::actions::steps::Step;
use crate::actions::steps::{ms, secs};
use crate::core::hangs::{CURSOR_SERVICE_PATH, Kind};
use crate::core::snapshot::Identity;
use crate::platform::{Delivery, Signal};

/// Absolute paths: a restart must not depend on `PATH`.
pub const OPEN: &str = "/usr/bin/open";
pub const LAUNCHCTL: &str = "/bin/launchctl";
/// How long a process may take to go after SIGKILL before the restart is abandoned.
pub const KILL_WAIT: Duration = Duration::from_secs(5);
/// How long to wait for launchd to start a replacement service process.
pub const REPLACEMENT_WAIT: Duration = Duration::from_secs(5);
/// Poll interval while waiting.
pub const POLL: Duration = Duration::from_millis(100);
/// launchctl's exit code for "Could not find service … in domain" (reference notes §1f).
const LAUNCHCTL_NOT_FOUND: i32 = 113;

/// What to recover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub kind: Kind,
    pub pid: i32,
    /// pid + start time + uid; `None` when the start time could not be read, and then
    /// nothing is signalled.
    pub identity: Option<Identity>,
    pub bundle_path: String,
    /// The launchd label (the service's bundle id).
    pub label: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    pub grace: Duration,
    /// The current user, whose launchd domain is asked.
    pub uid: u32,
}

/// The outcome of a recovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovery {
    pub ok: bool,
    /// Whether any signal was delivered (something changed).
    pub signalled: bool,
    /// Why it failed.
    pub detail: Option<String>,
    /// The service's replacement pid.
    pub new_pid: Option<i32>,
    pub steps: Vec<Step>,
}

/// What the sequence needs from the world. `LiveOps` is the real one; tests use a fake
/// with a virtual clock.
pub trait RecoveryOps {
    /// Signal `target` if it is still exactly that process.
    fn signal(&mut self, target: &Identity, sig: Signal) -> Result<Delivery, String>;
    /// Whether `target` is still exactly that process, alive (a zombie is not).
    fn alive(&mut self, target: &Identity) -> Result<bool, String>;
    fn exec(&mut self, argv: &[String]) -> Result<ExecOutput, String>;
    /// A live process of `uid`, other than `old`, whose executable is under `dir`.
    fn find_replacement(
        &mut self,
        dir: &str,
        uid: u32,
        old: &Identity,
    ) -> Result<Option<i32>, String>;
    fn sleep(&mut self, d: Duration);
    /// A monotonic clock.
    fn now(&mut self) -> Duration;
}

pub fn open_argv(bundle_path: &str) -> Vec<String> {
    vec![OPEN.into(), "-g".into(), bundle_path.into()]
}

/// When the kickstart in the user domain runs: the same words in the plan (`--dry-run`)
/// and in the steps performed.
fn fallback_condition(gui: &str) -> String {
    format!("only if launchd reports the service not found in {gui}")
}

pub fn kickstart_argv(domain: &str, label: &str) -> Vec<String> {
    vec![
        LAUNCHCTL.into(),
        "kickstart".into(),
        format!("{domain}/{label}"),
    ]
}

/// `gui/<uid>` first, then `user/<uid>` (see the module docs for why).
pub fn domains(uid: u32) -> [String; 2] {
    [format!("gui/{uid}"), format!("user/{uid}")]
}

fn service_dir() -> String {
    format!("{CURSOR_SERVICE_PATH}/")
}

const KILL_CONDITION: &str = "only if the same process is still running after the grace period";

/// The exact steps a recovery would take, for `--dry-run` and `--observations`.
pub fn plan(t: &Target, s: &Settings) -> Vec<Step> {
    let mut steps = vec![
        Step::Signal {
            signal: Signal::Term.name().into(),
            pid: t.pid,
            condition: None,
            result: None,
        },
        Step::WaitExit {
            pid: t.pid,
            up_to_ms: ms(s.grace),
            result: None,
        },
        Step::Signal {
            signal: Signal::Kill.name().into(),
            pid: t.pid,
            condition: Some(KILL_CONDITION.into()),
            result: None,
        },
        Step::WaitExit {
            pid: t.pid,
            up_to_ms: ms(KILL_WAIT),
            result: None,
        },
    ];
    match t.kind {
        Kind::App => steps.push(Step::Exec {
            argv: open_argv(&t.bundle_path),
            condition: None,
            result: None,
        }),
        Kind::Service => {
            let [gui, user] = domains(s.uid);
            steps.push(Step::Exec {
                argv: kickstart_argv(&gui, &t.label),
                condition: None,
                result: None,
            });
            steps.push(Step::Exec {
                argv: kickstart_argv(&user, &t.label),
                condition: Some(fallback_condition(&gui)),
                result: None,
            });
            steps.push(Step::WaitReplacement {
                executable_under: service_dir(),
                up_to_ms: ms(REPLACEMENT_WAIT),
                result: None,
            });
        }
    }
    steps
}

/// Why `t` is not signalled at all, decided before anything is done, so that a replay or a
/// dry run plans exactly what live does with the same data.
pub fn refusal(t: &Target) -> Option<String> {
    t.identity.is_none().then(|| {
        format!(
            "the start time of pid `{}` could not be read, so its identity cannot be checked; \
             nothing was signalled",
            t.pid
        )
    })
}

/// Perform the recovery of `t`.
pub fn recover(ops: &mut dyn RecoveryOps, t: &Target, s: &Settings) -> Recovery {
    let mut r = Recovery {
        ok: false,
        signalled: false,
        detail: None,
        new_pid: None,
        steps: Vec::new(),
    };
    let result = match t.identity {
        None => Err(refusal(t).unwrap_or_default()),
        Some(id) => stop(ops, &id, s, &mut r).and_then(|()| match t.kind {
            Kind::App => reopen(ops, t, &mut r),
            Kind::Service => kickstart(ops, t, &id, s, &mut r),
        }),
    };
    match result {
        Ok(()) => r.ok = true,
        Err(e) => r.detail = Some(e),
    }
    r
}

/// SIGTERM, the grace period, SIGKILL only for the same process, and the old pid gone.
fn stop(
    ops: &mut dyn RecoveryOps,
    id: &Identity,
    s: &Settings,
    r: &mut Recovery,
) -> Result<(), String> {
    let term = send(ops, id, Signal::Term, None, r)?;
    match term {
        Delivery::Sent => {}
        Delivery::Gone => {
            return Err(format!(
                "pid `{}` had already exited before the restart; nothing was signalled or reopened",
                id.pid
            ));
        }
        Delivery::IdentityChanged => {
            return Err(format!(
                "pid `{}` now belongs to another process; nothing was signalled",
                id.pid
            ));
        }
    }
    if wait_exit(ops, id, s.grace, r)? {
        return Ok(());
    }
    // Still the same process after the grace period (wait_exit re-checked the identity).
    let kill = send(ops, id, Signal::Kill, Some(KILL_CONDITION), r)?;
    if kill != Delivery::Sent {
        // It went (or its pid was reused) between the check and the signal: either way the
        // old process is gone and nothing else was signalled.
        return Ok(());
    }
    if wait_exit(ops, id, KILL_WAIT, r)? {
        return Ok(());
    }
    Err(format!(
        "pid `{}` was still running {} after SIGKILL; not restarted",
        id.pid,
        secs(ms(KILL_WAIT))
    ))
}

fn send(
    ops: &mut dyn RecoveryOps,
    id: &Identity,
    sig: Signal,
    condition: Option<&str>,
    r: &mut Recovery,
) -> Result<Delivery, String> {
    let res = ops.signal(id, sig);
    let text = match &res {
        Ok(Delivery::Sent) => "sent".to_string(),
        Ok(Delivery::Gone) => "already gone".to_string(),
        Ok(Delivery::IdentityChanged) => "not sent: the pid is another process now".to_string(),
        Err(e) => format!("failed: {e}"),
    };
    r.steps.push(Step::Signal {
        signal: sig.name().into(),
        pid: id.pid,
        condition: condition.map(str::to_string),
        result: Some(text),
    });
    let d = res.map_err(|e| format!("{} to pid `{}` failed: {e}", sig.name(), id.pid))?;
    if d == Delivery::Sent {
        r.signalled = true;
    }
    Ok(d)
}

/// Poll until `id` is gone or `up_to` passed; `Ok(true)` when it is gone.
fn wait_exit(
    ops: &mut dyn RecoveryOps,
    id: &Identity,
    up_to: Duration,
    r: &mut Recovery,
) -> Result<bool, String> {
    let start = ops.now();
    let gone = loop {
        let alive = ops
            .alive(id)
            .map_err(|e| format!("cannot check pid `{}`: {e}", id.pid))?;
        let waited = ops.now().saturating_sub(start);
        if !alive {
            break Some(waited);
        }
        if waited >= up_to {
            break None;
        }
        ops.sleep(POLL.min(up_to - waited));
    };
    r.steps.push(Step::WaitExit {
        pid: id.pid,
        up_to_ms: ms(up_to),
        result: Some(match gone {
            Some(w) => format!("exited after {}", secs(ms(w))),
            None => "still running".into(),
        }),
    });
    Ok(gone.is_some())
}

fn run_exec(
    ops: &mut dyn RecoveryOps,
    argv: Vec<String>,
    condition: Option<String>,
    r: &mut Recovery,
) -> Result<ExecOutput, String> {
    let res = ops.exec(&argv);
    r.steps.push(Step::Exec {
        argv: argv.clone(),
        condition,
        result: Some(match &res {
            Ok(out) => out.describe(),
            Err(e) => e.clone(),
        }),
    });
    res
}

fn reopen(ops: &mut dyn RecoveryOps, t: &Target, r: &mut Recovery) -> Result<(), String> {
    let argv = open_argv(&t.bundle_path);
    let shown = argv.join(" ");
    match run_exec(ops, argv, None, r) {
        Ok(out) if out.success() => Ok(()),
        Ok(out) => Err(format!(
            "stopped pid `{}` but `{shown}` failed ({})",
            t.pid,
            out.describe()
        )),
        Err(e) => Err(format!(
            "stopped pid `{}` but could not reopen it: {e}",
            t.pid
        )),
    }
}

fn not_found(out: &ExecOutput) -> bool {
    out.code == Some(LAUNCHCTL_NOT_FOUND)
        || out
            .stderr
            .to_ascii_lowercase()
            .contains("could not find service")
}

fn kickstart(
    ops: &mut dyn RecoveryOps,
    t: &Target,
    old: &Identity,
    s: &Settings,
    r: &mut Recovery,
) -> Result<(), String> {
    let [gui, user] = domains(s.uid);
    let first = run_exec(ops, kickstart_argv(&gui, &t.label), None, r)
        .map_err(|e| format!("stopped pid `{}` but {e}", t.pid))?;
    if !first.success() {
        if !not_found(&first) {
            return Err(format!(
                "stopped pid `{}` but `launchctl kickstart {gui}/{}` failed ({})",
                t.pid,
                t.label,
                first.describe()
            ));
        }
        let cond = Some(fallback_condition(&gui));
        let second = run_exec(ops, kickstart_argv(&user, &t.label), cond, r)
            .map_err(|e| format!("stopped pid `{}` but {e}", t.pid))?;
        if !second.success() {
            return Err(format!(
                "stopped pid `{}` but launchd has no job `{}` in {gui} or {user} ({})",
                t.pid,
                t.label,
                second.describe()
            ));
        }
    }
    let dir = service_dir();
    let start = ops.now();
    let found = loop {
        let found = ops.find_replacement(&dir, s.uid, old);
        let waited = ops.now().saturating_sub(start);
        match found {
            Ok(Some(pid)) => break Ok(pid),
            Ok(None) if waited >= REPLACEMENT_WAIT => break Err(None),
            Err(e) if waited >= REPLACEMENT_WAIT => break Err(Some(e)),
            _ => ops.sleep(POLL.min(REPLACEMENT_WAIT - waited)),
        }
    };
    r.steps.push(Step::WaitReplacement {
        executable_under: dir,
        up_to_ms: ms(REPLACEMENT_WAIT),
        result: Some(match &found {
            Ok(pid) => format!("pid {pid}"),
            Err(None) => "none".into(),
            Err(Some(e)) => format!("failed: {e}"),
        }),
    });
    match found {
        Ok(pid) => {
            r.new_pid = Some(pid);
            Ok(())
        }
        Err(e) => Err(format!(
            "launchd accepted the kickstart but no replacement pid appeared within {}{}",
            secs(ms(REPLACEMENT_WAIT)),
            e.map(|e| format!(" ({e})")).unwrap_or_default()
        )),
    }
}

#[cfg(test)]
#[path = "recover_tests.rs"]
mod tests;
