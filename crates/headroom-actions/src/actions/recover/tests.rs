//! The recovery sequences against a fake world with a virtual clock: every signal, wait and
//! command is recorded in order, and nothing real is signalled or run.

use std::collections::VecDeque;

use super::*;
use crate::core::hangs::CURSOR_SERVICE_ID;

pub(super) const UID: u32 = 501;
pub(super) const GRACE: Duration = Duration::from_secs(2);

pub(super) fn id(pid: i32) -> Identity {
    Identity {
        pid,
        start_time: 1000,
        uid: UID,
    }
}

/// How the old process behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Old {
    /// Exits this long after SIGTERM.
    ExitsAfterTerm(Duration),
    /// Ignores SIGTERM, dies on SIGKILL.
    NeedsKill,
    /// Survives even SIGKILL (stuck in the kernel).
    Unkillable,
    /// Already gone before the restart.
    AlreadyGone,
    /// Its pid now belongs to another process.
    Reused,
    /// Ignores SIGTERM, and its pid is reused by another process during the grace period.
    ReusedDuringGrace,
}

pub(super) struct Fake {
    pub(super) clock: Duration,
    pub(super) old: Old,
    pub(super) term_at: Option<Duration>,
    pub(super) killed: bool,
    pub(super) exec_results: VecDeque<Result<ExecOutput, String>>,
    pub(super) kickstarted_at: Option<Duration>,
    /// The replacement appears this long after a successful kickstart.
    pub(super) replacement_after: Option<Duration>,
    pub(super) log: Vec<String>,
}

impl Fake {
    pub(super) fn new(old: Old) -> Self {
        Self {
            clock: Duration::ZERO,
            old,
            term_at: None,
            killed: false,
            exec_results: VecDeque::new(),
            kickstarted_at: None,
            replacement_after: Some(Duration::from_millis(300)),
            log: Vec::new(),
        }
    }

    pub(super) fn execs(mut self, results: Vec<Result<ExecOutput, String>>) -> Self {
        self.exec_results = results.into();
        self
    }

    pub(super) fn is_alive(&self) -> bool {
        match self.old {
            Old::AlreadyGone | Old::Reused => false,
            Old::Unkillable => true,
            Old::ExitsAfterTerm(d) => self.term_at.is_none_or(|t| self.clock < t + d),
            Old::NeedsKill => !self.killed,
            Old::ReusedDuringGrace => self.term_at.is_none_or(|t| self.clock < t + GRACE / 2),
        }
    }

    /// The log without the polling noise.
    pub(super) fn actions(&self) -> Vec<String> {
        self.log
            .iter()
            .filter(|l| !l.starts_with("alive") && !l.starts_with("sleep"))
            .cloned()
            .collect()
    }
}

pub(super) fn out(code: i32, stderr: &str) -> Result<ExecOutput, String> {
    Ok(ExecOutput {
        code: Some(code),
        stderr: stderr.into(),
    })
}

impl RecoveryOps for Fake {
    fn signal(&mut self, target: &Identity, sig: Signal) -> Result<Delivery, String> {
        assert_eq!(
            *target,
            id(target.pid),
            "always addressed to the full identity"
        );
        let d = match self.old {
            Old::AlreadyGone => Delivery::Gone,
            Old::Reused => Delivery::IdentityChanged,
            _ if !self.is_alive() => Delivery::IdentityChanged,
            _ => Delivery::Sent,
        };
        self.log.push(format!(
            "{} {} @{}ms -> {d:?}",
            sig.name(),
            target.pid,
            self.clock.as_millis()
        ));
        if d == Delivery::Sent {
            match sig {
                Signal::Term => self.term_at = Some(self.clock),
                Signal::Kill => self.killed = true,
                _ => panic!("unexpected {sig:?}"),
            }
        }
        Ok(d)
    }

    fn presence(&mut self, target: &Identity) -> Result<Presence, String> {
        let a = self.is_alive();
        self.log.push(format!(
            "alive {} @{}ms = {a}",
            target.pid,
            self.clock.as_millis()
        ));
        Ok(match self.old {
            _ if a => Presence::Alive,
            Old::Reused | Old::ReusedDuringGrace => Presence::Changed,
            _ => Presence::Gone,
        })
    }

    fn exec(&mut self, argv: &[String]) -> Result<ExecOutput, String> {
        assert!(
            !self.is_alive(),
            "`{}` ran while the old process was alive",
            argv.join(" ")
        );
        self.log.push(format!(
            "exec {} @{}ms",
            argv.join(" "),
            self.clock.as_millis()
        ));
        let res = self.exec_results.pop_front().unwrap_or_else(|| out(0, ""));
        if argv.get(1).map(String::as_str) == Some("kickstart")
            && res.as_ref().is_ok_and(ExecOutput::success)
        {
            self.kickstarted_at = Some(self.clock);
        }
        res
    }

    fn find_replacement(
        &mut self,
        dir: &str,
        uid: u32,
        old: &Identity,
    ) -> Result<Option<i32>, String> {
        assert_eq!(dir, format!("{CURSOR_SERVICE_PATH}/"));
        assert_eq!(uid, UID);
        assert_eq!(old.pid, 700);
        let found = match (self.kickstarted_at, self.replacement_after) {
            (Some(k), Some(after)) if self.clock >= k + after => Some(701),
            _ => None,
        };
        self.log.push(format!(
            "replacement? @{}ms = {found:?}",
            self.clock.as_millis()
        ));
        Ok(found)
    }

    fn sleep(&mut self, d: Duration) {
        assert!(d > Duration::ZERO);
        self.log.push(format!("sleep {}ms", d.as_millis()));
        self.clock += d;
    }

    fn now(&mut self) -> Duration {
        self.clock
    }
}

pub(super) fn settings() -> RecoverySettings {
    RecoverySettings {
        grace: GRACE,
        uid: UID,
    }
}

pub(super) fn app_target() -> RecoveryTarget {
    RecoveryTarget {
        kind: RecoveryKind::App,
        pid: 501,
        identity: Some(id(501)),
        bundle_path: "/Applications/Editor.app".into(),
        label: "com.example.Editor".into(),
    }
}

pub(super) fn service_target() -> RecoveryTarget {
    RecoveryTarget {
        kind: RecoveryKind::Service,
        pid: 700,
        identity: Some(id(700)),
        bundle_path: CURSOR_SERVICE_PATH.into(),
        label: CURSOR_SERVICE_ID.into(),
    }
}

pub(super) const KICK_GUI: &str =
    "exec /bin/launchctl kickstart gui/501/com.apple.TextInputUI.xpc.CursorUIViewService";
pub(super) const KICK_USER: &str =
    "exec /bin/launchctl kickstart user/501/com.apple.TextInputUI.xpc.CursorUIViewService";

// --- The seed's first failing test and its follow-ups.

#[test]
fn b11_first_failing_test_service_restart_asks_launchd_for_the_job_in_the_current_user_domain_only_after_the_old_pid_stopped()
 {
    let mut f = Fake::new(Old::ExitsAfterTerm(Duration::from_millis(250)));
    let r = recover(&mut f, &service_target(), &settings());
    assert!(r.ok, "{r:?}");
    let kick = f
        .log
        .iter()
        .position(|l| l.starts_with("exec"))
        .expect("a kickstart");
    assert!(f.log[kick].starts_with(KICK_GUI), "{}", f.log[kick]);
    // The last look before the kickstart saw the old pid gone.
    let last_alive = f.log[..kick]
        .iter()
        .rev()
        .find(|l| l.starts_with("alive"))
        .unwrap();
    assert!(last_alive.ends_with("= false"), "{:?}", f.log);
    // Exactly the job, no -s, no -k.
    assert!(!f.log[kick].contains(" -s") && !f.log[kick].contains(" -k"));
}

#[test]
fn b12_the_replacement_service_pid_is_accepted() {
    let mut f = Fake::new(Old::ExitsAfterTerm(Duration::from_millis(100)));
    let r = recover(&mut f, &service_target(), &settings());
    assert!(r.ok);
    assert_eq!(r.new_pid, Some(701));
    assert!(matches!(
        r.steps.last(),
        Some(RecoveryStep::WaitReplacement { result: Some(res), .. }) if res == "pid 701"
    ));
}

#[test]
fn b12_waits_up_to_five_seconds_for_the_replacement_service_pid() {
    let mut f = Fake::new(Old::ExitsAfterTerm(Duration::ZERO));
    f.replacement_after = Some(Duration::from_millis(4900));
    assert!(recover(&mut f, &service_target(), &settings()).ok);

    let mut f = Fake::new(Old::ExitsAfterTerm(Duration::ZERO));
    f.replacement_after = None;
    let r = recover(&mut f, &service_target(), &settings());
    assert!(!r.ok);
    assert!(r.detail.as_deref().unwrap().contains("within 5 s"), "{r:?}");
    let kicked = f.kickstarted_at.unwrap();
    let waited = f.clock - kicked;
    assert!(
        waited >= REPLACEMENT_WAIT && waited < REPLACEMENT_WAIT + POLL,
        "{waited:?}"
    );
}

// --- Behaviors 9, 10, 11 (fallback) and BDD-01 "then" clauses.

#[test]
fn b09_sends_sigterm_to_stop_the_current_cursor_service_instance() {
    let mut f = Fake::new(Old::ExitsAfterTerm(Duration::from_millis(100)));
    recover(&mut f, &service_target(), &settings());
    assert!(
        f.actions()[0].starts_with("SIGTERM 700 @0ms -> Sent"),
        "{:?}",
        f.log
    );
    assert!(!f.log.iter().any(|l| l.starts_with("SIGKILL")));
}

#[test]
fn b10_sends_sigkill_if_the_service_does_not_stop_within_the_grace_period() {
    let mut f = Fake::new(Old::NeedsKill);
    let r = recover(&mut f, &service_target(), &settings());
    assert!(r.ok, "{r:?}");
    let a = f.actions();
    assert!(a[0].starts_with("SIGTERM 700 @0ms"));
    assert!(a[1].starts_with("SIGKILL 700 @2000ms -> Sent"), "{a:?}");
    assert!(a[2].starts_with(KICK_GUI), "{a:?}");
}

#[test]
fn b11_falls_back_to_the_user_domain_only_when_gui_reports_the_service_not_found() {
    let not_found = "Could not find service \"com.apple.TextInputUI.xpc.CursorUIViewService\" in domain for user gui: 501";
    let mut f =
        Fake::new(Old::ExitsAfterTerm(Duration::ZERO)).execs(vec![out(113, not_found), out(0, "")]);
    let r = recover(&mut f, &service_target(), &settings());
    assert!(r.ok, "{r:?}");
    let execs: Vec<_> = f
        .actions()
        .into_iter()
        .filter(|l| l.starts_with("exec"))
        .collect();
    assert!(
        execs[0].starts_with(KICK_GUI) && execs[1].starts_with(KICK_USER),
        "{execs:?}"
    );

    // Any other failure is not a reason to try another domain.
    let mut f =
        Fake::new(Old::ExitsAfterTerm(Duration::ZERO)).execs(vec![out(5, "Input/output error")]);
    let r = recover(&mut f, &service_target(), &settings());
    assert!(!r.ok);
    assert_eq!(
        f.actions().iter().filter(|l| l.starts_with("exec")).count(),
        1
    );
    assert!(r.detail.unwrap().contains("exit 5: Input/output error"));

    // Not found in either: a failure naming both domains.
    let mut f =
        Fake::new(Old::ExitsAfterTerm(Duration::ZERO)).execs(vec![out(113, ""), out(113, "")]);
    let r = recover(&mut f, &service_target(), &settings());
    let d = r.detail.unwrap();
    assert!(d.contains("gui/501") && d.contains("user/501"), "{d}");
}

#[test]
fn missing_or_failing_launchctl_is_a_restart_failure_not_a_panic() {
    let mut f = Fake::new(Old::ExitsAfterTerm(Duration::ZERO)).execs(vec![Err(
        "cannot run `/bin/launchctl`: No such file or directory".into(),
    )]);
    let r = recover(&mut f, &service_target(), &settings());
    assert!(!r.ok && r.signalled);
    assert!(r.detail.unwrap().contains("/bin/launchctl"));
}

#[test]
fn bdd01_then_it_automatically_stops_the_old_pid() {
    let mut f = Fake::new(Old::NeedsKill);
    let r = recover(&mut f, &service_target(), &settings());
    assert!(r.ok);
    let a = f.actions();
    assert!(a[0].starts_with("SIGTERM 700"));
    assert!(a[1].starts_with("SIGKILL 700"));
    let kinds: Vec<_> = r
        .steps
        .iter()
        .map(|s| match s {
            RecoveryStep::Signal { signal, .. } => signal.clone(),
            RecoveryStep::WaitExit { .. } => "wait-exit".into(),
            RecoveryStep::Exec { .. } => "exec".into(),
            RecoveryStep::WaitReplacement { .. } => "wait-replacement".into(),
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "SIGTERM",
            "wait-exit",
            "SIGKILL",
            "wait-exit",
            "exec",
            "wait-replacement"
        ]
    );
}

#[test]
fn bdd01_then_it_requests_the_exact_launchd_job_in_the_current_user_domain() {
    let mut f = Fake::new(Old::ExitsAfterTerm(Duration::ZERO));
    recover(&mut f, &service_target(), &settings());
    let execs: Vec<_> = f
        .actions()
        .into_iter()
        .filter(|l| l.starts_with("exec"))
        .collect();
    assert_eq!(execs.len(), 1);
    assert!(execs[0].starts_with(&format!("{KICK_GUI} @")), "{execs:?}");
}

#[test]
fn bdd01_then_it_waits_for_a_replacement_pid() {
    let mut f = Fake::new(Old::ExitsAfterTerm(Duration::ZERO));
    f.replacement_after = Some(Duration::from_millis(1200));
    let r = recover(&mut f, &service_target(), &settings());
    assert_eq!(r.new_pid, Some(701));
    let asked = f
        .log
        .iter()
        .filter(|l| l.starts_with("replacement?"))
        .count();
    assert!(asked > 1, "polled until it appeared: {:?}", f.log);
    assert!(f.log.last().unwrap().ends_with("Some(701)"));
}
