//! Across runs and modes: rounds persisted between runs, conflicting flags, a replay planning
//! what live does, the stable names of round states, bundle symlinks resolved on the disk.

use super::tests::*;
use super::*;
use crate::actions::hang_round::persisted_round;
use crate::actions::hang_round::report::{ActionOutcome, RoundStatus};
use crate::core::hangs::{AppObservation, HangState, RecoveryKind};
use crate::store::hang_events;

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
    let global = crate::cli::GlobalArgs::plain();
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
        snapshot: Some("snap.json".into()),
        ..crate::cli::GlobalArgs::plain()
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
        HangsMode::Events(Some(Duration::from_secs(7200)))
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
    let (cfg, _) = hang_round_settings(&section);
    let mut app = editor(501, false);
    app.bundle_id = None;
    app.bundle_path = path(&real);
    // The symlink named in deny protects its target: `hangs` and `watch` read the disk.
    assert_eq!(eligibility(&app, &cfg), Err(Ineligible::Denied));
    let blind = MonitorConfig {
        resolve_path: lexical_only,
        ..cfg.clone()
    };
    assert_eq!(
        eligibility(&app, &blind),
        Ok(RecoveryKind::App),
        "control: no disk"
    );
    // A bundle symlinked into a system path is the system's.
    app.bundle_path = path(&notes);
    let e = eligibility(&app, &cfg).unwrap_err().to_string();
    assert!(e.contains("system path `/usr/`"), "{e}");
    // Control: a real third-party bundle is still an app under the same settings.
    let tool = dir.path().join("Tool.app");
    std::fs::create_dir(&tool).unwrap();
    app.bundle_path = path(&tool);
    assert_eq!(eligibility(&app, &cfg), Ok(RecoveryKind::App));
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
