//! Restart sequences for a hang the monitor confirmed (`core::hangs`), behind the
//! `RecoveryOps` trait so the exact order of signals, waits and commands is unit-tested with
//! a fake; `LiveOps` is the real thing.
//!
//! Third-party app: SIGTERM → wait the grace period → SIGKILL only if the *same* process is
//! still running → wait for the old pid to go → `open -g <bundle path>`. The
//! TERM → grace → KILL is the one escalation (`actions::escalate`), driven on the ops' clock
//! through the ops' identity checks (`Bridge`): nothing here escalates on its own.
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

pub(crate) mod live;
pub(crate) mod steps;

use std::cell::RefCell;
use std::time::{Duration, Instant};

use crate::actions::clock::Clock;
use crate::actions::escalate::{self, EscalationOutcome};
use crate::actions::exec::ExecOutput;
pub(crate) use crate::actions::recover::live::LiveOps;
pub(crate) use crate::actions::recover::steps::RecoveryStep;
use crate::actions::recover::steps::{ms, secs};
use crate::core::hangs::{CURSOR_SERVICE_PATH, RecoveryKind};
use crate::core::snapshot::Identity;
use crate::platform::{Delivery, PlatformError, Presence, ProcessControl, Signal};

/// Absolute paths: a restart must not depend on `PATH`.
pub(crate) const OPEN: &str = "/usr/bin/open";
pub(crate) const LAUNCHCTL: &str = "/bin/launchctl";
/// How long a process may take to go after SIGKILL before the restart is abandoned.
pub(crate) const KILL_WAIT: Duration = Duration::from_secs(5);
/// How long to wait for launchd to start a replacement service process.
pub(crate) const REPLACEMENT_WAIT: Duration = Duration::from_secs(5);
/// Poll interval while waiting.
pub(crate) const POLL: Duration = Duration::from_millis(100);
/// launchctl's exit code for "Could not find service … in domain" (reference notes §1f).
const LAUNCHCTL_NOT_FOUND: i32 = 113;

/// What to recover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryTarget {
    pub kind: RecoveryKind,
    pub pid: i32,
    /// pid + start time + uid; `None` when the start time could not be read, and then
    /// nothing is signalled.
    pub identity: Option<Identity>,
    pub bundle_path: String,
    /// The launchd label (the service's bundle id).
    pub label: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecoverySettings {
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
    pub steps: Vec<RecoveryStep>,
}

/// What the sequence needs from the world. `LiveOps` is the real one; tests use a fake
/// with a virtual clock.
pub trait RecoveryOps {
    /// Signal `target` if it is still exactly that process.
    fn signal(&mut self, target: &Identity, sig: Signal) -> Result<Delivery, String>;
    /// Whether `target` is still exactly that process, alive (a zombie is not), confirmed
    /// gone, or its pid names another process now.
    fn presence(&mut self, target: &Identity) -> Result<Presence, String>;
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

pub(crate) fn open_argv(bundle_path: &str) -> Vec<String> {
    vec![OPEN.into(), "-g".into(), bundle_path.into()]
}

/// When the kickstart in the user domain runs: the same words in the plan (`--dry-run`)
/// and in the steps performed.
fn fallback_condition(gui: &str) -> String {
    format!("only if launchd reports the service not found in {gui}")
}

pub(crate) fn kickstart_argv(domain: &str, label: &str) -> Vec<String> {
    vec![
        LAUNCHCTL.into(),
        "kickstart".into(),
        format!("{domain}/{label}"),
    ]
}

/// `gui/<uid>` first, then `user/<uid>` (see the module docs for why).
pub(crate) fn domains(uid: u32) -> [String; 2] {
    [format!("gui/{uid}"), format!("user/{uid}")]
}

fn service_dir() -> String {
    format!("{CURSOR_SERVICE_PATH}/")
}

const KILL_CONDITION: &str = "only if the same process is still running after the grace period";

/// The exact steps a recovery would take, for `--dry-run` and `--observations`.
pub(crate) fn plan(t: &RecoveryTarget, s: &RecoverySettings) -> Vec<RecoveryStep> {
    let mut steps = vec![
        RecoveryStep::Signal {
            signal: Signal::Term.name().into(),
            pid: t.pid,
            condition: None,
            result: None,
        },
        RecoveryStep::WaitExit {
            pid: t.pid,
            up_to_ms: ms(s.grace),
            result: None,
        },
        RecoveryStep::Signal {
            signal: Signal::Kill.name().into(),
            pid: t.pid,
            condition: Some(KILL_CONDITION.into()),
            result: None,
        },
        RecoveryStep::WaitExit {
            pid: t.pid,
            up_to_ms: ms(KILL_WAIT),
            result: None,
        },
    ];
    match t.kind {
        RecoveryKind::App => steps.push(RecoveryStep::Exec {
            argv: open_argv(&t.bundle_path),
            condition: None,
            result: None,
        }),
        RecoveryKind::Service => {
            let [gui, user] = domains(s.uid);
            steps.push(RecoveryStep::Exec {
                argv: kickstart_argv(&gui, &t.label),
                condition: None,
                result: None,
            });
            steps.push(RecoveryStep::Exec {
                argv: kickstart_argv(&user, &t.label),
                condition: Some(fallback_condition(&gui)),
                result: None,
            });
            steps.push(RecoveryStep::WaitReplacement {
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
pub(crate) fn refusal(t: &RecoveryTarget) -> Option<String> {
    t.identity.is_none().then(|| {
        format!(
            "the start time of pid `{}` could not be read, so its identity cannot be checked; \
             nothing was signalled",
            t.pid
        )
    })
}

/// Perform the recovery of `t`.
pub fn recover(ops: &mut dyn RecoveryOps, t: &RecoveryTarget, s: &RecoverySettings) -> Recovery {
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
            RecoveryKind::App => reopen(ops, t, &mut r),
            RecoveryKind::Service => kickstart(ops, t, &id, s, &mut r),
        }),
    };
    match result {
        Ok(()) => r.ok = true,
        Err(e) => r.detail = Some(e),
    }
    r
}

/// The ops seen as the escalation's control and clock.
struct Bridge<'o> {
    ops: RefCell<&'o mut dyn RecoveryOps>,
    base: Instant,
}

impl ProcessControl for Bridge<'_> {
    fn signal(&self, target: &Identity, sig: Signal) -> Result<Delivery, PlatformError> {
        self.ops
            .borrow_mut()
            .signal(target, sig)
            .map_err(PlatformError::Invalid)
    }
    fn alive(&self, target: &Identity) -> Result<bool, PlatformError> {
        Ok(self.presence(target)? == Presence::Alive)
    }
    fn presence(&self, target: &Identity) -> Result<Presence, PlatformError> {
        self.ops
            .borrow_mut()
            .presence(target)
            .map_err(PlatformError::Invalid)
    }
}

impl Clock for Bridge<'_> {
    fn now(&self) -> Instant {
        self.base + self.ops.borrow_mut().now()
    }
    fn sleep(&self, d: Duration) {
        self.ops.borrow_mut().sleep(d);
    }
}

/// SIGTERM, the grace period, SIGKILL only for the same process, and the old pid gone: the
/// one escalation, with the grace of `s` and `KILL_WAIT` to go after SIGKILL.
fn stop(
    ops: &mut dyn RecoveryOps,
    id: &Identity,
    s: &RecoverySettings,
    r: &mut Recovery,
) -> Result<(), String> {
    let bridge = Bridge {
        ops: RefCell::new(ops),
        base: Instant::now(),
    };
    let settings = escalate::EscalationTiming {
        grace: s.grace,
        settle: KILL_WAIT,
        poll: POLL,
    };
    let start = bridge.now();
    let ended = escalate::run(&bridge, &[*id], settings, &bridge, &mut escalate::kill_all);
    let elapsed = bridge.now().saturating_duration_since(start);
    let Some(e) = ended.into_iter().next() else {
        return Err(format!("pid `{}` was not escalated", id.pid));
    };
    let termed = e.signals.contains(&Signal::Term);
    let killed = e.signals.contains(&Signal::Kill);
    let error = e.error.clone().unwrap_or_default();
    // The steps as they happened.
    let term_result = match e.outcome {
        _ if termed => "sent".to_string(),
        EscalationOutcome::AlreadyGone => "already gone".into(),
        EscalationOutcome::IdentityChanged if e.error.is_some() => format!("not sent: {error}"),
        EscalationOutcome::IdentityChanged => "not sent: the pid is another process now".into(),
        _ => format!("failed: {error}"),
    };
    r.steps
        .push(signal_step(id, Signal::Term, None, term_result));
    if termed {
        r.signalled = true;
        let in_grace = !killed && e.outcome != EscalationOutcome::SignalFailed;
        r.steps
            .push(wait_step(id, s.grace, in_grace.then_some(elapsed)));
    }
    let kill_attempted = killed || (termed && e.outcome == EscalationOutcome::SignalFailed);
    if kill_attempted {
        let result = if killed {
            "sent".to_string()
        } else {
            format!("failed: {error}")
        };
        r.steps
            .push(signal_step(id, Signal::Kill, Some(KILL_CONDITION), result));
    }
    if killed {
        let gone =
            (e.outcome == EscalationOutcome::Killed).then(|| elapsed.saturating_sub(s.grace));
        r.steps.push(wait_step(id, KILL_WAIT, gone));
    }
    match e.outcome {
        EscalationOutcome::ExitedAfterTerm | EscalationOutcome::Killed => Ok(()),
        EscalationOutcome::AlreadyGone => Err(format!(
            "pid `{}` had already exited before the restart; nothing was signalled or reopened",
            id.pid
        )),
        EscalationOutcome::IdentityChanged if e.error.is_some() => {
            Err(format!("cannot check pid `{}`: {error}", id.pid))
        }
        // After SIGTERM: the old process is gone and nothing else was signalled.
        EscalationOutcome::IdentityChanged if termed => Ok(()),
        EscalationOutcome::IdentityChanged => Err(format!(
            "pid `{}` now belongs to another process; nothing was signalled",
            id.pid
        )),
        EscalationOutcome::SignalFailed => {
            let sig = if termed { Signal::Kill } else { Signal::Term };
            Err(format!(
                "{} to pid `{}` failed: {error}",
                sig.name(),
                id.pid
            ))
        }
        EscalationOutcome::Survived | EscalationOutcome::Spared => Err(format!(
            "pid `{}` was still running {} after SIGKILL; not restarted",
            id.pid,
            secs(ms(KILL_WAIT))
        )),
    }
}

fn signal_step(
    id: &Identity,
    sig: Signal,
    condition: Option<&str>,
    result: String,
) -> RecoveryStep {
    RecoveryStep::Signal {
        signal: sig.name().into(),
        pid: id.pid,
        condition: condition.map(str::to_string),
        result: Some(result),
    }
}

/// A wait of up to `up_to` for `id` to go; `gone` after how long it went, if it did.
fn wait_step(id: &Identity, up_to: Duration, gone: Option<Duration>) -> RecoveryStep {
    RecoveryStep::WaitExit {
        pid: id.pid,
        up_to_ms: ms(up_to),
        result: Some(match gone {
            Some(w) => format!("exited after {}", secs(ms(w))),
            None => "still running".into(),
        }),
    }
}

fn run_exec(
    ops: &mut dyn RecoveryOps,
    argv: Vec<String>,
    condition: Option<String>,
    r: &mut Recovery,
) -> Result<ExecOutput, String> {
    let res = ops.exec(&argv);
    r.steps.push(RecoveryStep::Exec {
        argv: argv.clone(),
        condition,
        result: Some(match &res {
            Ok(out) => out.describe(),
            Err(e) => e.clone(),
        }),
    });
    res
}

fn reopen(ops: &mut dyn RecoveryOps, t: &RecoveryTarget, r: &mut Recovery) -> Result<(), String> {
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
    t: &RecoveryTarget,
    old: &Identity,
    s: &RecoverySettings,
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
    r.steps.push(RecoveryStep::WaitReplacement {
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
mod app_tests;
#[cfg(test)]
mod tests;
