//! One hang round, as `hangs` runs it and `watch` runs it every round (macOS): the core
//! decides, an `Actor` carries out (or only plans) the restarts and notifications it
//! decided, and the round's report (`report.rs`) and events are built. With the persisted
//! state (`persisted_round`), the whole round runs under the state lock, so a cron run and
//! a `--watch` loop never restart the same app twice.

pub(crate) mod report;

use std::path::Path;

use anyhow::Result;

use crate::actions::hang_round::report::{
    ActionOutcome, ActionReport, ActorMode, AppReport, NotificationReport, RoundReport, RoundStatus,
};
use crate::actions::notify;
use crate::actions::recover::{self, LiveOps, Recovery, RecoveryTarget};
use crate::core::hangs::{
    self, AppDecision, EventKind, HangRound, MonitorConfig, MonitorState, RecoveryKind,
    RoundOutcome, should_notify,
};
use crate::core::snapshot::Identity;
use crate::core::time::format_ms;
use crate::exit::usage;
use crate::platform::{self, AppScan, ProcessControl, ProcessSource};
use crate::store::hang_events::{self, HangEvent};

/// Carries out what the core decided, or only plans it.
pub(crate) trait Actor {
    /// Restart `t`; `None` when the restart is only planned (nothing performed).
    fn restart(&mut self, t: &RecoveryTarget) -> Option<Recovery>;
    fn notify(&mut self, message: &str) -> NotificationReport;
    fn mode(&self) -> ActorMode;
}

/// `--dry-run` and `--observations`: plans, performs nothing.
#[derive(Debug)]
pub(crate) struct Planner(ActorMode);

impl Planner {
    pub(crate) fn new(mode: ActorMode) -> Self {
        Self(mode)
    }
}

impl Actor for Planner {
    fn restart(&mut self, _t: &RecoveryTarget) -> Option<Recovery> {
        None
    }

    fn notify(&mut self, message: &str) -> NotificationReport {
        NotificationReport {
            message: message.to_string(),
            sent: false,
            note: Some(format!("{}: not sent", self.0.as_str())),
        }
    }

    fn mode(&self) -> ActorMode {
        self.0
    }
}

/// The real thing: signals through `ProcessControl`, `open`/`launchctl`, notifications.
pub(crate) struct LiveActor<'a> {
    source: &'a dyn ProcessSource,
    control: &'a dyn ProcessControl,
    settings: recover::RecoverySettings,
}

impl<'a> LiveActor<'a> {
    pub(crate) fn new(
        source: &'a dyn ProcessSource,
        control: &'a dyn ProcessControl,
        settings: recover::RecoverySettings,
    ) -> Self {
        Self {
            source,
            control,
            settings,
        }
    }
}

impl Actor for LiveActor<'_> {
    fn restart(&mut self, t: &RecoveryTarget) -> Option<Recovery> {
        let mut ops = LiveOps::new(self.source, self.control);
        Some(recover::recover(&mut ops, t, &self.settings))
    }

    fn notify(&mut self, message: &str) -> NotificationReport {
        let res = notify::send("headroom", message);
        NotificationReport {
            message: message.to_string(),
            sent: res.is_ok(),
            note: res.err(),
        }
    }

    fn mode(&self) -> ActorMode {
        ActorMode::Live
    }
}

fn target(d: &AppDecision, kind: RecoveryKind) -> RecoveryTarget {
    let a = &d.app;
    RecoveryTarget {
        kind,
        pid: a.pid,
        identity: match (a.start_time, a.uid) {
            (Some(start_time), Some(uid)) => Some(Identity {
                pid: a.pid,
                start_time,
                uid,
            }),
            _ => None,
        },
        bundle_path: a.bundle_path.clone(),
        label: d.identity.clone(),
    }
}

fn blocked_message(name: &str) -> String {
    format!(
        "{name} is not responding again, less than an hour after headroom restarted it. \
         headroom will leave it alone: use Force Quit (Option-Command-Esc) if it stays stuck."
    )
}

fn failed_message(name: &str, detail: &str) -> String {
    format!("{name} stopped responding. headroom stopped it but could not reopen it: {detail}")
}

/// Decide one round and act on it. Returns the report and the events to log.
pub(crate) fn process_round(
    state: &mut MonitorState,
    round: &HangRound,
    cfg: &MonitorConfig,
    settings: &recover::RecoverySettings,
    actor: &mut dyn Actor,
) -> (RoundReport, Vec<HangEvent>) {
    let outcome = hangs::round(state, round, cfg);
    let replayed = actor.mode() == ActorMode::Replay;
    let mut events = Vec::new();
    let mut apps = Vec::new();
    for d in &outcome.decisions {
        let mut report = app_report(d);
        let Some(kind) = d.kind else {
            apps.push(report);
            continue;
        };
        let event = |e: EventKind| {
            let mut ev = HangEvent::new(e, outcome.at_ms, d, kind);
            ev.replayed = replayed;
            ev
        };
        if d.detected {
            events.push(event(EventKind::Detected));
        }
        if d.restart {
            let t = target(d, kind);
            let decided = restart(state, round, d, &t, actor);
            let (action, ev, notification) =
                restart_report(decided, &t, settings, d, kind, &event, actor);
            if notification.is_some() {
                report.notification = notification;
            }
            report.action = Some(action);
            events.push(ev);
        }
        if d.newly_blocked {
            let mut ev = event(EventKind::Blocked);
            ev.reason = d.reason.clone();
            events.push(ev);
            if should_notify(kind, EventKind::Blocked, false) {
                report.notification = Some(actor.notify(&blocked_message(&d.app.name)));
            }
        }
        apps.push(report);
    }
    (round_report(outcome, actor.mode(), apps), events)
}

/// What the round found of one app, before anything is done about it.
fn app_report(d: &AppDecision) -> AppReport {
    AppReport {
        identity: d.identity.clone(),
        name: d.app.name.clone(),
        pid: d.app.pid,
        bundle_id: d.app.bundle_id.clone(),
        bundle_path: d.app.bundle_path.clone(),
        policy: d.app.policy,
        kind: d.kind,
        state: d.state,
        reason: d.reason.clone(),
        rounds: d.rounds,
        cooldown_until: d.cooldown_until_ms.map(format_ms),
        action: None,
        notification: None,
    }
}

/// Restart `t` unless it is refused, and start the cooldown when the restart counts as done.
/// `Err` is the refusal; `Ok(None)` a restart only planned (dry run, replay).
fn restart(
    state: &mut MonitorState,
    round: &HangRound,
    d: &AppDecision,
    t: &RecoveryTarget,
    actor: &mut dyn Actor,
) -> Result<Option<Recovery>, String> {
    // Refused before anything is done: the same report live, dry run or replayed.
    let decided = match recover::refusal(t) {
        Some(why) => Err(why),
        None => Ok(actor.restart(t)),
    };
    // Only a performed restart starts the cooldown (`record_restart`): one refused
    // before acting, or one that signalled nothing, is tried again next round. A
    // planned one (dry run, replay) stands for the restart it plans.
    let performed = match &decided {
        Err(_) => false,
        Ok(None) => true,
        Ok(Some(r)) => r.signalled,
    };
    if performed {
        hangs::record_restart(state, &d.identity, round);
    }
    decided
}

/// The action report and the event of a restart `restart` decided, and the notification a
/// failed one sends (sent here, so it follows the restart as before).
fn restart_report(
    decided: Result<Option<Recovery>, String>,
    t: &RecoveryTarget,
    settings: &recover::RecoverySettings,
    d: &AppDecision,
    kind: RecoveryKind,
    event: &dyn Fn(EventKind) -> HangEvent,
    actor: &mut dyn Actor,
) -> (ActionReport, HangEvent, Option<NotificationReport>) {
    match decided {
        Err(why) => {
            let mut ev = event(EventKind::RestartFailed);
            ev.reason = Some(why.clone());
            let action = ActionReport {
                outcome: ActionOutcome::RestartFailed,
                performed: false,
                detail: Some(why),
                new_pid: None,
                steps: Vec::new(),
            };
            (action, ev, None)
        }
        Ok(None) => {
            let mut ev = event(EventKind::Restarted);
            ev.reason = Some(format!("{}: not performed", actor.mode().as_str()));
            let action = ActionReport {
                outcome: ActionOutcome::Planned,
                performed: false,
                detail: None,
                new_pid: None,
                steps: recover::plan(t, settings),
            };
            (action, ev, None)
        }
        Ok(Some(r)) => {
            let kind_of = if r.ok {
                EventKind::Restarted
            } else {
                EventKind::RestartFailed
            };
            let mut ev = event(kind_of);
            ev.reason = r.detail.clone();
            ev.new_pid = r.new_pid;
            let notification = should_notify(kind, kind_of, r.signalled).then(|| {
                actor.notify(&failed_message(
                    &d.app.name,
                    r.detail.as_deref().unwrap_or(""),
                ))
            });
            let action = ActionReport {
                outcome: if r.ok {
                    ActionOutcome::Restarted
                } else {
                    ActionOutcome::RestartFailed
                },
                performed: true,
                detail: r.detail,
                new_pid: r.new_pid,
                steps: r.steps,
            };
            (action, ev, notification)
        }
    }
}

/// The round's report from what the core decided and the apps' reports.
fn round_report(outcome: RoundOutcome, mode: ActorMode, apps: Vec<AppReport>) -> RoundReport {
    RoundReport {
        at: format_ms(outcome.at_ms),
        status: if outcome.available {
            RoundStatus::Ok
        } else {
            RoundStatus::InterfaceUnavailable
        },
        unavailable_reason: outcome.unavailable_reason,
        mode,
        checked: outcome.checked,
        cleared_pending: outcome.cleared_pending,
        apps,
    }
}

/// One live (or dry-run) round against the persisted state: lock, load, decide, act, save,
/// log. With `dry_run` nothing is locked or written. Warnings and persistence failures are
/// returned beside the report, so what was done is always reported.
pub(crate) fn persisted_round(
    dir: &Path,
    plan_dry_run: bool,
    round: &HangRound,
    cfg: &MonitorConfig,
    settings: &recover::RecoverySettings,
    actor: &mut dyn Actor,
) -> Result<(RoundReport, Vec<String>, Option<anyhow::Error>)> {
    let mut warnings = Vec::new();
    let lock = if plan_dry_run {
        None
    } else {
        Some(hang_events::lock_state(dir)?)
    };
    let (mut state, warning) = if plan_dry_run && !dir.join(hang_events::STATE_FILE).exists() {
        (MonitorState::default(), None)
    } else if plan_dry_run {
        // Read without setting a corrupt file aside: a dry run changes nothing.
        match std::fs::read(dir.join(hang_events::STATE_FILE))
            .ok()
            .and_then(|b| serde_json::from_slice::<MonitorState>(&b).ok())
        {
            Some(s) if s.schema == hangs::STATE_SCHEMA => (s, None),
            _ => (
                MonitorState::default(),
                Some("the hang monitor state is unreadable; the dry run started fresh".into()),
            ),
        }
    } else {
        hang_events::load_state(dir)?
    };
    warnings.extend(warning);
    let (report, events) = process_round(&mut state, round, cfg, settings, actor);
    let mut failure = None;
    if !plan_dry_run {
        if let Err(e) = hang_events::save_state(dir, &state) {
            failure = Some(e.context("the hang monitor state was not saved"));
        }
        match hang_events::append_events(dir, &events, round.at_ms) {
            Ok(w) => warnings.extend(w),
            Err(e) => failure = Some(e.context("hang events were not logged")),
        }
    }
    drop(lock);
    Ok((report, warnings, failure))
}

/// A round restarts real apps: never against a redirected process table (`redirected` is
/// `Ctx::redirected`; a `--snapshot` replays recorded rounds instead, which act on nothing).
pub(crate) fn refuse_redirected(redirected: Option<&str>) -> Result<()> {
    match redirected.filter(|f| *f != "--snapshot") {
        Some(flag) => Err(usage(format!(
            "`hangs` restarts real apps; it cannot run against `{flag}`"
        ))),
        None => Ok(()),
    }
}

/// Add each app's start time, uid and state, read from the process table, so a signal can
/// be addressed to exactly the process that was observed, and a stopped or traced one is
/// never recovered (`core::hangs`).
pub(crate) fn with_identities(scan: AppScan, source: &dyn ProcessSource, at_ms: i64) -> HangRound {
    let mut apps = scan.apps;
    for a in &mut apps {
        if let Ok(Some(p)) = source.process(a.pid) {
            a.start_time = p.start_time;
            a.uid = Some(p.uid);
            a.state = Some(p.state);
        }
    }
    HangRound {
        at_ms,
        boot_ms: platform::boot_ms(),
        available: scan.available,
        unavailable_reason: scan.unavailable_reason,
        apps,
    }
}

/// One live round for `watch` (macOS): `Ok(None)` where there is no WindowServer to ask.
/// Warnings (a state file set aside, a failed write) come back with the report.
pub(crate) fn watch_round(
    redirected: Option<&str>,
    monitor: &MonitorConfig,
    recovery: recover::RecoverySettings,
) -> Result<Option<(RoundReport, Vec<String>)>> {
    let Ok(apps) = platform::native_apps() else {
        return Ok(None);
    };
    refuse_redirected(redirected)?;
    let source = platform::native();
    let control = platform::native_control(&*source);
    let dir = crate::store::paths::ensure_state_dir()?;
    let mut actor = LiveActor::new(&*source, &*control, recovery);
    let round = with_identities(apps.scan(), &*source, platform::now_ms());
    let (report, mut warnings, failure) =
        persisted_round(&dir, false, &round, monitor, &recovery, &mut actor)?;
    if let Some(e) = failure {
        warnings.push(format!("{e:#}"));
    }
    Ok(Some((report, warnings)))
}
