//! The round pipeline (decide → act → report → events → state) with a fake actor: which
//! restarts are asked for, which notifications are sent, which events are logged.

use super::*;
use crate::actions::recover::{Recovery, Target};
use crate::commands::hangs::report::{ActionOutcome, NotificationReport, RoundStatus};
use crate::commands::hangs::round::{Actor, Planner, persisted_round, process_round};
use crate::core::hangs::Kind;
use crate::core::hangs::{
    AppObservation, CURSOR_SERVICE_ID, CURSOR_SERVICE_PATH, HangState, Policy,
};
use crate::core::snapshot::Identity;
use crate::store::hang_events::{self, HangEvent};

const T0: i64 = 1_796_032_800_000;
const EVERY: i64 = 15_000;

#[derive(Default)]
struct FakeActor {
    /// The outcome of every restart (`ok`, `signalled`).
    outcome: Option<(bool, bool)>,
    restarts: Vec<Target>,
    notifications: Vec<String>,
}

impl Actor for FakeActor {
    fn restart(&mut self, t: &Target) -> Option<Recovery> {
        self.restarts.push(t.clone());
        let (ok, signalled) = self.outcome.unwrap_or((true, true));
        Some(Recovery {
            ok,
            signalled,
            detail: (!ok)
                .then(|| "launchd accepted the kickstart but no replacement pid appeared".into()),
            new_pid: ok.then_some(4242),
            steps: vec![],
        })
    }

    fn notify(&mut self, message: &str) -> NotificationReport {
        self.notifications.push(message.to_string());
        NotificationReport {
            message: message.into(),
            sent: true,
            note: None,
        }
    }

    fn mode(&self) -> ActorMode {
        ActorMode::Live
    }
}

fn editor(pid: i32, responsive: bool) -> AppObservation {
    AppObservation {
        pid,
        start_time: Some(10),
        uid: Some(501),
        bundle_id: Some("com.example.Editor".into()),
        bundle_path: "/Applications/Editor.app".into(),
        name: "Editor".into(),
        policy: Policy::Regular,
        responsive,
    }
}

fn cursor(pid: i32, responsive: bool) -> AppObservation {
    AppObservation {
        pid,
        start_time: Some(20),
        uid: Some(501),
        bundle_id: Some(CURSOR_SERVICE_ID.into()),
        bundle_path: CURSOR_SERVICE_PATH.into(),
        name: "CursorUIViewService".into(),
        policy: Policy::Prohibited,
        responsive,
    }
}

fn round_at(i: i64, apps: Vec<AppObservation>) -> Round {
    Round {
        at_ms: T0 + i * EVERY,
        boot_ms: None,
        available: true,
        unavailable_reason: None,
        apps,
    }
}

fn settings() -> recover::Settings {
    recover::Settings {
        grace: Duration::from_secs(2),
        uid: 501,
    }
}

/// Run rounds through the pipeline with one in-memory state; return reports and events.
fn pipeline(
    actor: &mut dyn Actor,
    rounds: Vec<Vec<AppObservation>>,
) -> (Vec<RoundReport>, Vec<HangEvent>) {
    let mut state = MonitorState::default();
    let mut reports = Vec::new();
    let mut events = Vec::new();
    for (i, apps) in rounds.into_iter().enumerate() {
        let (r, e) = process_round(
            &mut state,
            &round_at(i as i64, apps),
            &MonitorConfig::default(),
            &settings(),
            actor,
        );
        reports.push(r);
        events.extend(e);
    }
    (reports, events)
}

fn types(events: &[HangEvent]) -> Vec<&'static str> {
    events.iter().map(|e| e.event.as_str()).collect()
}

#[test]
fn b07_a_confirmed_app_is_restarted_with_its_observed_identity() {
    let mut a = FakeActor::default();
    let (r, _) = pipeline(
        &mut a,
        vec![vec![editor(501, false)], vec![editor(501, false)]],
    );
    assert_eq!(a.restarts.len(), 1);
    let t = &a.restarts[0];
    assert_eq!(t.kind, Kind::App);
    assert_eq!(
        t.identity,
        Some(Identity {
            pid: 501,
            start_time: 10,
            uid: 501
        })
    );
    assert_eq!(t.bundle_path, "/Applications/Editor.app");
    assert_eq!(
        r[1].apps[0].action.as_ref().unwrap().outcome.as_str(),
        "restarted"
    );
    assert!(!r[1].unresolved());
}

#[test]
fn b08_no_notification_after_a_successful_automatic_restart() {
    let mut a = FakeActor::default();
    let (r, events) = pipeline(
        &mut a,
        vec![
            vec![editor(501, false), cursor(700, false)],
            vec![editor(501, false), cursor(700, false)],
        ],
    );
    assert_eq!(a.restarts.len(), 2);
    assert!(a.notifications.is_empty());
    assert!(r[1].apps.iter().all(|x| x.notification.is_none()));
    assert_eq!(
        types(&events),
        vec!["detected", "restarted", "detected", "restarted"]
    );
    assert_eq!(events[3].new_pid, Some(4242));
}

#[test]
fn b13_a_cursor_service_restart_failure_is_logged_without_notifying_the_user() {
    for signalled in [true, false] {
        let mut a = FakeActor {
            outcome: Some((false, signalled)),
            ..FakeActor::default()
        };
        let (r, events) = pipeline(
            &mut a,
            vec![vec![cursor(700, false)], vec![cursor(700, false)]],
        );
        assert!(a.notifications.is_empty(), "never notify for the service");
        assert_eq!(types(&events), vec!["detected", "restart-failed"]);
        assert!(
            events[1]
                .reason
                .as_deref()
                .unwrap()
                .contains("replacement pid")
        );
        assert_eq!(
            r[1].apps[0].action.as_ref().unwrap().outcome.as_str(),
            "restart-failed"
        );
        assert!(r[1].unresolved());
    }
}

#[test]
fn bdd01_then_service_recovery_never_sends_a_notification_including_when_confirmation_fails() {
    // Success, failure, and blocked-in-cooldown: never a notification for the service.
    for outcome in [(true, true), (false, true)] {
        let mut a = FakeActor {
            outcome: Some(outcome),
            ..FakeActor::default()
        };
        pipeline(
            &mut a,
            vec![
                vec![cursor(700, false)],
                vec![cursor(700, false)],
                vec![cursor(701, false)],
                vec![cursor(701, false)],
            ],
        );
        assert_eq!(a.restarts.len(), 1);
        assert_eq!(a.restarts[0].label, CURSOR_SERVICE_ID);
        assert!(a.notifications.is_empty());
    }
}

#[test]
fn a_third_party_app_killed_but_not_reopened_is_notified() {
    let mut a = FakeActor {
        outcome: Some((false, true)),
        ..FakeActor::default()
    };
    pipeline(
        &mut a,
        vec![vec![editor(501, false)], vec![editor(501, false)]],
    );
    assert_eq!(a.notifications.len(), 1);
    assert!(a.notifications[0].contains("could not reopen"));
    // Nothing signalled (it had already exited): nothing to tell.
    let mut a = FakeActor {
        outcome: Some((false, false)),
        ..FakeActor::default()
    };
    pipeline(
        &mut a,
        vec![vec![editor(501, false)], vec![editor(501, false)]],
    );
    assert!(a.notifications.is_empty());
}

#[test]
fn b18_notify_once_when_the_app_is_confirmed_unresponsive_again_during_cooldown() {
    let mut a = FakeActor::default();
    let (r, events) = pipeline(
        &mut a,
        vec![
            vec![editor(501, false)],
            vec![editor(501, false)],
            vec![editor(900, false)],
            vec![editor(900, false)],
            vec![editor(900, false)],
        ],
    );
    assert_eq!(a.restarts.len(), 1, "one restart an hour");
    assert_eq!(a.notifications.len(), 1, "{:?}", a.notifications);
    assert!(a.notifications[0].contains("Editor is not responding again"));
    assert_eq!(
        types(&events),
        vec!["detected", "restarted", "detected", "blocked"]
    );
    assert_eq!(r[3].apps[0].state, HangState::Blocked);
    assert!(r[3].unresolved() && r[4].unresolved());
    assert!(r[4].apps[0].notification.is_none());
}

#[test]
fn b19_detection_restart_failure_and_blocked_events_carry_identity_name_pid_and_path() {
    let mut a = FakeActor {
        outcome: Some((false, true)),
        ..FakeActor::default()
    };
    let (_, events) = pipeline(
        &mut a,
        vec![
            vec![editor(501, false)],
            vec![editor(501, false)],
            vec![editor(501, false)],
        ],
    );
    assert_eq!(
        types(&events),
        vec!["detected", "restart-failed", "detected", "blocked"]
    );
    for e in &events {
        assert_eq!(
            (
                e.identity.as_str(),
                e.name.as_str(),
                e.pid,
                e.bundle_path.as_str()
            ),
            (
                "com.example.Editor",
                "Editor",
                501,
                "/Applications/Editor.app"
            )
        );
        assert!(!e.replayed);
    }
    assert_eq!(events[0].at, "2026-11-30T10:00:15Z");
}

#[test]
fn b02_interface_unavailable_is_reported_and_nothing_is_done() {
    let mut a = FakeActor::default();
    let mut state = MonitorState::default();
    let cfg = MonitorConfig::default();
    process_round(
        &mut state,
        &round_at(0, vec![editor(501, false)]),
        &cfg,
        &settings(),
        &mut a,
    );
    let (r, events) = process_round(
        &mut state,
        &Round {
            at_ms: T0 + EVERY,
            boot_ms: None,
            available: false,
            unavailable_reason: Some("no WindowServer connection".into()),
            apps: vec![],
        },
        &cfg,
        &settings(),
        &mut a,
    );
    assert_eq!(r.status, RoundStatus::InterfaceUnavailable);
    assert_eq!(r.cleared_pending, 1);
    assert!(events.is_empty() && a.restarts.is_empty() && a.notifications.is_empty());
    let text = human_round(
        &r,
        &crate::output::Printer::new(false, false, crate::output::ColorChoice::Never),
    );
    assert!(
        text.contains("interface unavailable: no WindowServer connection"),
        "{text}"
    );
}

#[test]
fn planned_restarts_list_their_steps_and_perform_nothing() {
    let mut p = Planner::new(ActorMode::Replay);
    let (r, events) = pipeline(
        &mut p,
        vec![vec![cursor(700, false)], vec![cursor(700, false)]],
    );
    let action = r[1].apps[0].action.as_ref().unwrap();
    assert_eq!(action.outcome, ActionOutcome::Planned);
    assert!(!action.performed);
    assert_eq!(action.steps.len(), 7);
    assert!(r[1].unresolved());
    assert!(events.iter().all(|e| e.replayed));
    assert_eq!(events[1].reason.as_deref(), Some("replay: not performed"));
}

#[test]
fn persisted_rounds_are_consecutive_across_runs_and_dry_runs_write_nothing() {
    let d = tempfile::tempdir().unwrap();
    let cfg = MonitorConfig::default();
    // A dry run sees the app but leaves no trace.
    let mut planner = Planner::new(ActorMode::DryRun);
    let (r, w, f) = persisted_round(
        d.path(),
        true,
        &round_at(0, vec![editor(501, false)]),
        &cfg,
        &settings(),
        &mut planner,
    )
    .unwrap();
    assert!(w.is_empty() && f.is_none());
    assert_eq!(r.apps[0].state, HangState::Pending);
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    // Two separate live runs (as from cron) confirm together.
    let mut a = FakeActor::default();
    for i in 0..2 {
        let (r, _, f) = persisted_round(
            d.path(),
            false,
            &round_at(i, vec![editor(501, false)]),
            &cfg,
            &settings(),
            &mut a,
        )
        .unwrap();
        assert!(f.is_none());
        assert_eq!(r.apps[0].rounds, i as u32 + 1);
    }
    assert_eq!(a.restarts.len(), 1);
    let (events, _) = hang_events::read_events(d.path(), None).unwrap();
    assert_eq!(types(&events), vec!["detected", "restarted"]);
    // A dry run after that reads the state (the cooldown is active) and still writes nothing.
    let before = std::fs::read(d.path().join(hang_events::STATE_FILE)).unwrap();
    let (r, _, _) = persisted_round(
        d.path(),
        true,
        &round_at(2, vec![editor(900, false)]),
        &cfg,
        &settings(),
        &mut planner,
    )
    .unwrap();
    assert_eq!(r.apps[0].state, HangState::CoolingDown);
    assert_eq!(
        std::fs::read(d.path().join(hang_events::STATE_FILE)).unwrap(),
        before
    );
}

fn args(argv: &[&str]) -> HangsArgs {
    use clap::Parser;
    let mut full = vec!["headroom", "hangs"];
    full.extend_from_slice(argv);
    match crate::cli::Cli::try_parse_from(full).unwrap().command {
        crate::cli::Command::Hangs(a) => a,
        _ => unreachable!(),
    }
}

#[test]
fn conflicting_flags_are_usage_errors() {
    let printer = crate::output::Printer::new(false, false, crate::output::ColorChoice::Never);
    let global = crate::cli::GlobalArgs {
        json: false,
        snapshot: None,
        config: None,
        quiet: false,
        color: crate::output::ColorChoice::Never,
        proc_root: None,
        sys_root: None,
    };
    let ctx = Ctx {
        printer: &printer,
        global: &global,
        settings: crate::config::Settings::default(),
    };
    for (argv, says) in [
        (vec!["--events", "--watch"], "--watch"),
        (vec!["--events", "--dry-run"], "--dry-run"),
        (vec!["--since", "1h"], "--since"),
        (vec!["--every", "5s"], "--interval"),
        (
            vec!["--watch", "--observations", "f.json"],
            "--observations",
        ),
        (vec!["--watch", "--every", "500ms"], "between 1s and 10m"),
        (vec!["--watch", "--every", "11m"], "between 1s and 10m"),
    ] {
        let e = resolve(&ctx, &args(&argv)).unwrap_err();
        assert!(e.downcast_ref::<exit::UsageError>().is_some(), "{argv:?}");
        assert!(format!("{e}").contains(says), "{argv:?}: {e}");
    }
    let with_snapshot = crate::cli::GlobalArgs {
        json: false,
        snapshot: Some("snap.json".into()),
        config: None,
        quiet: false,
        color: crate::output::ColorChoice::Never,
        proc_root: None,
        sys_root: None,
    };
    let e = resolve(
        &Ctx {
            printer: &printer,
            global: &with_snapshot,
            settings: crate::config::Settings::default(),
        },
        &args(&[]),
    )
    .unwrap_err();
    assert!(format!("{e}").contains("--observations"));
    let p = resolve(&ctx, &args(&["--watch"])).unwrap();
    assert_eq!(p.every, DEFAULT_EVERY);
    assert_eq!(p.recovery.grace, Duration::from_secs(3));
    assert_eq!(p.monitor.cooldown_ms, 3_600_000);
    assert_eq!(
        resolve(&ctx, &args(&["--events", "--since", "2h"]))
            .unwrap()
            .mode,
        Mode::Events(Some(Duration::from_secs(7200)))
    );
}

#[test]
fn a_replay_plans_exactly_what_live_does_without_start_time_or_uid() {
    let anon = |pid| AppObservation {
        start_time: None,
        uid: None,
        ..editor(pid, false)
    };
    let mut live = FakeActor::default();
    let (lr, le) = pipeline(&mut live, vec![vec![anon(501)], vec![anon(501)]]);
    let mut replay = Planner::new(ActorMode::Replay);
    let (rr, re) = pipeline(&mut replay, vec![vec![anon(501)], vec![anon(501)]]);
    assert!(live.restarts.is_empty(), "live signals nothing");
    let (la, ra) = (
        lr[1].apps[0].action.as_ref().unwrap(),
        rr[1].apps[0].action.as_ref().unwrap(),
    );
    // The replay used to plan `SIGTERM pid 501` here.
    assert!(ra.steps.is_empty(), "{:?}", ra.steps);
    assert_eq!(
        (ra.outcome, ra.performed, &ra.detail),
        (la.outcome, la.performed, &la.detail)
    );
    assert_eq!(ra.outcome.as_str(), "restart-failed");
    assert!(
        ra.detail
            .as_deref()
            .unwrap()
            .contains("nothing was signalled")
    );
    assert_eq!(types(&le), types(&re));
    assert!(
        lr[1].apps[0].notification.is_none(),
        "nothing signalled: not notified"
    );
    // Control: with the identity, the replay plans the SIGTERM live would send.
    let mut replay = Planner::new(ActorMode::Replay);
    let (rr, _) = pipeline(
        &mut replay,
        vec![vec![editor(501, false)], vec![editor(501, false)]],
    );
    let steps = &rr[1].apps[0].action.as_ref().unwrap().steps;
    assert!(
        steps[0].describe().starts_with("SIGTERM pid 501"),
        "{steps:?}"
    );
}

#[test]
fn round_states_serialize_under_their_stable_names() {
    let json = |v: serde_json::Value| v.as_str().unwrap_or_default().to_string();
    for (o, name) in [
        (ActionOutcome::Restarted, "restarted"),
        (ActionOutcome::RestartFailed, "restart-failed"),
        (ActionOutcome::Planned, "planned"),
    ] {
        assert_eq!(
            (json(serde_json::json!(o)).as_str(), o.as_str()),
            (name, name)
        );
    }
    for (m, name) in [
        (ActorMode::Live, "live"),
        (ActorMode::DryRun, "dry-run"),
        (ActorMode::Replay, "replay"),
    ] {
        assert_eq!(
            (json(serde_json::json!(m)).as_str(), m.as_str()),
            (name, name)
        );
    }
    for (s, name) in [
        (RoundStatus::Ok, "ok"),
        (RoundStatus::InterfaceUnavailable, "interface unavailable"),
    ] {
        assert_eq!(
            (json(serde_json::json!(s)), s.to_string()),
            (name.into(), name.into())
        );
    }
}

#[cfg(unix)]
#[test]
fn rounds_resolve_bundle_symlinks_on_the_disk_the_core_never_reads() {
    use crate::core::hangs::{Ineligible, eligibility, lexical_only};
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("Real.app");
    std::fs::create_dir(&real).unwrap();
    let link = dir.path().join("Link.app");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let notes = dir.path().join("Notes.app");
    std::os::unix::fs::symlink("/usr/bin", &notes).unwrap();
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let mut section = crate::config::HangsSection::default();
    section.deny.value = vec![path(&link)];
    let (cfg, _) = round_settings(&section);
    let mut app = editor(501, false);
    app.bundle_id = None;
    app.bundle_path = path(&real);
    // The symlink named in deny protects its target: `hangs` and `watch` read the disk.
    assert_eq!(eligibility(&app, &cfg), Err(Ineligible::Denied));
    let blind = MonitorConfig {
        resolve_path: lexical_only,
        ..cfg.clone()
    };
    assert_eq!(eligibility(&app, &blind), Ok(Kind::App), "control: no disk");
    // A bundle symlinked into a system path is the system's.
    app.bundle_path = path(&notes);
    let e = eligibility(&app, &cfg).unwrap_err().to_string();
    assert!(e.contains("system path `/usr/`"), "{e}");
    // Control: a real third-party bundle is still an app under the same settings.
    let tool = dir.path().join("Tool.app");
    std::fs::create_dir(&tool).unwrap();
    app.bundle_path = path(&tool);
    assert_eq!(eligibility(&app, &cfg), Ok(Kind::App));
    let canonical = std::fs::canonicalize(&real).unwrap();
    assert_eq!(
        platform::canonical_path(&path(&link)),
        Some(path(&canonical))
    );
    assert_eq!(
        platform::canonical_path(&path(&dir.path().join("No.app"))),
        None
    );
}
