//! Tests of the monitor, one per Behavior line of seed 002 that the monitor owns (the
//! recovery sequences are tested in `actions/recover/`, the event log in
//! `core/hang_store.rs`, the round pipeline in `commands/hangs/`).

use super::*;

pub(super) const T0: i64 = 1_796_032_800_000; // 2026-11-30T10:00:00Z
pub(super) const EVERY: i64 = 15_000;

pub(super) fn app(id: &str, pid: i32, responsive: bool) -> AppObservation {
    let short = id.rsplit('.').next().unwrap_or(id).to_string();
    AppObservation {
        pid,
        start_time: Some((1000 + i64::from(pid)) as u64),
        uid: Some(501),
        bundle_id: Some(id.to_string()),
        bundle_path: format!("/Applications/{short}.app"),
        name: short,
        policy: ActivationPolicy::Regular,
        responsive,
        state: None,
    }
}

pub(super) fn service(pid: i32, responsive: bool) -> AppObservation {
    AppObservation {
        pid,
        start_time: Some(7),
        uid: Some(501),
        bundle_id: Some(CURSOR_SERVICE_ID.into()),
        bundle_path: CURSOR_SERVICE_PATH.into(),
        name: "CursorUIViewService".into(),
        policy: ActivationPolicy::Prohibited,
        responsive,
        state: None,
    }
}

pub(super) fn live(at_ms: i64, apps: Vec<AppObservation>) -> HangRound {
    HangRound {
        at_ms,
        boot_ms: None,
        available: true,
        unavailable_reason: None,
        apps,
    }
}

pub(super) fn unavailable(at_ms: i64) -> HangRound {
    HangRound {
        at_ms,
        boot_ms: None,
        available: false,
        unavailable_reason: Some("SLSEventIsAppUnresponsive not found".into()),
        apps: vec![],
    }
}

/// One round in which every restart decided is performed and recorded (`record_restart`),
/// as the round pipeline records a restart that signalled the app. Tests of a restart that
/// performed nothing call [`round`] and leave the record out.
pub(super) fn performed(
    state: &mut MonitorState,
    r: &HangRound,
    cfg: &MonitorConfig,
) -> RoundOutcome {
    let o = round(state, r, cfg);
    for d in o.decisions.iter().filter(|d| d.restart) {
        record_restart(state, &d.identity, r);
    }
    o
}

/// Run `rounds` (one list of apps each, `EVERY` apart from `T0`) and return the outcomes.
pub(super) fn rounds(
    state: &mut MonitorState,
    cfg: &MonitorConfig,
    rounds_: Vec<Vec<AppObservation>>,
) -> Vec<RoundOutcome> {
    rounds_
        .into_iter()
        .enumerate()
        .map(|(i, apps)| performed(state, &live(T0 + i as i64 * EVERY, apps), cfg))
        .collect()
}

pub(super) fn only(o: &RoundOutcome) -> &AppDecision {
    assert_eq!(o.decisions.len(), 1, "{:?}", o.decisions);
    &o.decisions[0]
}

pub(super) const ED: &str = "com.example.Editor";

/// The editor (`ED`) at `pid`, not responding.
pub(super) fn hung(pid: i32) -> AppObservation {
    app(ED, pid, false)
}

/// `apps` as they are in two rounds in a row.
pub(super) fn twice(apps: Vec<AppObservation>) -> Vec<Vec<AppObservation>> {
    vec![apps.clone(), apps]
}

/// [`rounds`] on a fresh state with the default config: the outcomes and the state after.
pub(super) fn fresh(rounds_: Vec<Vec<AppObservation>>) -> (Vec<RoundOutcome>, MonitorState) {
    let mut s = MonitorState::default();
    let o = rounds(&mut s, &MonitorConfig::default(), rounds_);
    (o, s)
}

// --- Behavior 1: the round reads the WindowServer's answer for each running GUI app.

#[test]
fn b01_the_round_judges_each_app_by_the_windowserver_responsiveness_it_was_given() {
    let mut s = MonitorState::default();
    let o = performed(
        &mut s,
        &live(T0, vec![hung(501), app("com.example.Mail", 502, true)]),
        &MonitorConfig::default(),
    );
    assert_eq!(o.checked, 2);
    assert_eq!(
        only(&o).identity,
        ED,
        "only the unresponsive app is reported"
    );
    assert_eq!(only(&o).state, HangState::Pending);
}

// --- Behavior 2 / "interface unavailable clears pending".

#[test]
fn b02_interface_unavailable_clears_pending_and_takes_no_action() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    performed(&mut s, &live(T0, vec![hung(501)]), &cfg);
    assert_eq!(s.observations.len(), 1);
    let o = performed(&mut s, &unavailable(T0 + EVERY), &cfg);
    assert!(!o.available);
    assert_eq!(o.cleared_pending, 1);
    assert!(o.decisions.is_empty());
    assert!(s.observations.is_empty());
    // The next unresponsive round starts over: pending, not confirmed.
    let o = performed(&mut s, &live(T0 + 2 * EVERY, vec![hung(501)]), &cfg);
    assert_eq!(only(&o).state, HangState::Pending);
    assert!(!only(&o).restart);
}

#[test]
fn interface_unavailable_keeps_restart_times_and_blocked() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    s.restarts.insert(ED.into(), T0 - 60_000);
    s.blocked.insert(ED.into(), T0 - 30_000);
    performed(&mut s, &unavailable(T0), &cfg);
    assert_eq!(s.restarts.len(), 1);
    assert_eq!(s.blocked.len(), 1);
}

#[test]
fn identity_is_the_bundle_id_else_the_absolute_bundle_path() {
    let mut a = hung(501);
    assert_eq!(a.identity(), ED);
    a.bundle_id = None;
    assert_eq!(a.identity(), "/Applications/Editor.app");
    a.bundle_id = Some(String::new());
    assert_eq!(a.identity(), "/Applications/Editor.app");
    assert_eq!(
        eligibility(&a, &MonitorConfig::default()),
        Ok(RecoveryKind::App)
    );
}

// --- Behavior 6: two consecutive rounds confirm.

#[test]
fn b06_confirms_an_unresponsive_process_in_two_consecutive_rounds() {
    let (o, _) = fresh(twice(vec![hung(501)]));
    assert_eq!(only(&o[0]).state, HangState::Pending);
    assert!(!only(&o[0]).restart && !only(&o[0]).detected);
    assert_eq!(only(&o[1]).state, HangState::Confirmed);
    assert_eq!(only(&o[1]).rounds, 2);
    assert!(only(&o[1]).detected);
}

#[test]
fn a_responsive_round_between_two_unresponsive_ones_is_not_a_confirmation() {
    let (o, _) = fresh(vec![
        vec![hung(501)],
        vec![app(ED, 501, true)],
        vec![hung(501)],
    ]);
    assert!(o[1].decisions.is_empty());
    assert_eq!(only(&o[2]).state, HangState::Pending);
}

#[test]
fn a_gone_app_clears_its_pending_observation() {
    let (o, _) = fresh(vec![vec![hung(501)], vec![], vec![hung(501)]]);
    assert_eq!(only(&o[2]).state, HangState::Pending);
}

#[test]
fn another_process_under_the_same_identity_starts_over() {
    let mut reused = hung(501);
    reused.start_time = Some(99_999);
    let (o, _) = fresh(vec![
        vec![hung(501)],
        vec![app(ED, 777, false)],
        vec![reused],
    ]);
    assert_eq!(only(&o[1]).state, HangState::Pending, "new pid");
    assert_eq!(only(&o[2]).state, HangState::Pending, "same pid, new start");
    assert!(o.iter().all(|r| r.decisions.iter().all(|d| !d.restart)));
}

#[test]
fn rounds_further_apart_than_the_gap_are_not_consecutive() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    performed(&mut s, &live(T0, vec![hung(501)]), &cfg);
    let o = performed(
        &mut s,
        &live(T0 + MAX_ROUND_GAP_MS + 1, vec![hung(501)]),
        &cfg,
    );
    assert_eq!(only(&o).state, HangState::Pending);
    // A clock that went backwards is a gap too.
    let o = performed(&mut s, &live(T0, vec![hung(501)]), &cfg);
    assert_eq!(only(&o).state, HangState::Pending);
    let o = performed(&mut s, &live(T0 + MAX_ROUND_GAP_MS, vec![hung(501)]), &cfg);
    assert_eq!(
        only(&o).state,
        HangState::Confirmed,
        "exactly the gap is consecutive"
    );
}

#[test]
fn several_instances_of_one_identity_are_never_acted_on() {
    let (o, s) = fresh(twice(vec![hung(501), app(ED, 502, true)]));
    let d = only(&o[1]);
    assert_eq!(d.state, HangState::Ignored);
    assert!(d.reason.as_deref().unwrap().contains("2 running instances"));
    assert!(s.observations.is_empty());
}

#[test]
fn an_ineligible_lookalike_does_not_shadow_the_eligible_instance() {
    let mut fake = service(800, false);
    fake.bundle_path = "/Users/me/CursorUIViewService.xpc".into();
    let (o, _) = fresh(twice(vec![service(700, false), fake]));
    let real = o[1].decisions.iter().find(|d| d.app.pid == 700).unwrap();
    assert!(real.restart);
    let other = o[1].decisions.iter().find(|d| d.app.pid == 800).unwrap();
    assert_eq!(other.state, HangState::Ignored);
}

#[test]
fn ignored_apps_are_reported_but_never_tracked_or_restarted() {
    let mut finder = app("com.apple.finder", 300, false);
    finder.bundle_path = "/System/Library/CoreServices/Finder.app".into();
    let (o, s) = fresh(twice(vec![finder]));
    for r in &o {
        assert_eq!(only(r).state, HangState::Ignored);
        assert!(!only(r).restart && !only(r).detected);
    }
    assert!(s.observations.is_empty() && s.restarts.is_empty());
}
