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
        policy: Policy::Regular,
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
        policy: Policy::Prohibited,
        responsive,
        state: None,
    }
}

pub(super) fn live(at_ms: i64, apps: Vec<AppObservation>) -> Round {
    Round {
        at_ms,
        boot_ms: None,
        available: true,
        unavailable_reason: None,
        apps,
    }
}

pub(super) fn unavailable(at_ms: i64) -> Round {
    Round {
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
pub(super) fn performed(state: &mut MonitorState, r: &Round, cfg: &MonitorConfig) -> RoundOutcome {
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
fn hung(pid: i32) -> AppObservation {
    app(ED, pid, false)
}

/// `apps` as they are in two rounds in a row.
fn twice(apps: Vec<AppObservation>) -> Vec<Vec<AppObservation>> {
    vec![apps.clone(), apps]
}

/// [`rounds`] on a fresh state with the default config: the outcomes and the state after.
fn fresh(rounds_: Vec<Vec<AppObservation>>) -> (Vec<RoundOutcome>, MonitorState) {
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
    assert_eq!(eligibility(&a, &MonitorConfig::default()), Ok(Kind::App));
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

// --- Behavior 7: a confirmed app or service restarts automatically.

#[test]
fn b07_restarts_a_confirmed_third_party_app_or_allowlisted_service_automatically() {
    let (o, s) = fresh(twice(vec![hung(501), service(700, false)]));
    let kinds: Vec<_> = o[1]
        .decisions
        .iter()
        .map(|d| (d.kind, d.restart, d.state))
        .collect();
    assert_eq!(
        kinds,
        vec![
            (Some(Kind::App), true, HangState::Confirmed),
            (Some(Kind::Service), true, HangState::Confirmed)
        ]
    );
    assert_eq!(s.restarts.get(ED), Some(&(T0 + EVERY)));
    assert_eq!(s.restarts.get(CURSOR_SERVICE_ID), Some(&(T0 + EVERY)));
}

// --- Behaviors 8, 13, 18: the notification policy.

#[test]
fn b08_no_notification_after_a_successful_automatic_restart() {
    assert!(!should_notify(Kind::App, EventKind::Restarted, true));
    assert!(!should_notify(Kind::Service, EventKind::Restarted, true));
    assert!(!should_notify(Kind::App, EventKind::Detected, false));
}

#[test]
fn b13_service_restart_failure_is_never_notified() {
    for signalled in [false, true] {
        for e in [
            EventKind::Detected,
            EventKind::Restarted,
            EventKind::RestartFailed,
            EventKind::Blocked,
        ] {
            assert!(!should_notify(Kind::Service, e, signalled), "{e:?}");
        }
    }
}

#[test]
fn notification_policy_for_third_party_apps() {
    assert!(should_notify(Kind::App, EventKind::Blocked, false));
    // Killed but not reopened: the user's app is gone, so say so.
    assert!(should_notify(Kind::App, EventKind::RestartFailed, true));
    // Nothing was signalled (the app had already exited): nothing to tell.
    assert!(!should_notify(Kind::App, EventKind::RestartFailed, false));
}

#[test]
fn b18_notifies_once_when_a_third_party_app_is_confirmed_unresponsive_again_during_cooldown() {
    // Confirm and restart; the restarted app (new pid) hangs again at once.
    let mut seq = twice(vec![hung(501)]);
    seq.extend(std::iter::repeat_n(vec![hung(900)], 4));
    let (o, _) = fresh(seq);
    assert!(only(&o[1]).restart);
    assert_eq!(only(&o[2]).state, HangState::CoolingDown);
    let b = only(&o[3]);
    assert_eq!(b.state, HangState::Blocked);
    assert!(b.newly_blocked && b.detected && !b.restart);
    assert!(should_notify(b.kind.unwrap(), EventKind::Blocked, false));
    for later in &o[4..] {
        let d = only(later);
        assert_eq!(d.state, HangState::Blocked);
        assert!(
            !d.newly_blocked && !d.detected && !d.restart,
            "notified once"
        );
    }
}

#[test]
fn a_responsive_or_gone_app_clears_its_blocked_state() {
    let cfg = MonitorConfig::default();
    for between in [vec![app(ED, 900, true)], vec![]] {
        let mut s = MonitorState::default();
        s.restarts.insert(ED.into(), T0 - 60_000);
        let o = rounds(
            &mut s,
            &cfg,
            vec![
                vec![hung(900)],
                vec![hung(900)],
                between,
                vec![hung(900)],
                vec![hung(900)],
            ],
        );
        assert!(only(&o[1]).newly_blocked);
        assert!(s.blocked.contains_key(ED));
        assert!(
            only(&o[4]).newly_blocked,
            "blocked was cleared, so it notifies again"
        );
    }
}

#[test]
fn blocked_survives_a_gap_between_rounds_and_is_not_notified_again() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    s.restarts.insert(ED.into(), T0 - 60_000);
    performed(&mut s, &live(T0, vec![hung(900)]), &cfg);
    let o = performed(&mut s, &live(T0 + EVERY, vec![hung(900)]), &cfg);
    assert!(only(&o).newly_blocked);
    // The machine slept: the next round is not consecutive, but the app never responded.
    let o = performed(&mut s, &live(T0 + 3_600_000, vec![hung(900)]), &cfg);
    assert_eq!(only(&o).state, HangState::Blocked);
    assert!(!only(&o).newly_blocked && !only(&o).restart);
}

#[test]
fn the_service_blocks_in_cooldown_without_a_notification() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    s.restarts.insert(CURSOR_SERVICE_ID.into(), T0 - 60_000);
    let o = rounds(&mut s, &cfg, twice(vec![service(701, false)]));
    let d = only(&o[1]);
    assert_eq!(d.state, HangState::Blocked);
    assert!(!should_notify(d.kind.unwrap(), EventKind::Blocked, false));
}

// --- BDD-01 (monitor part): given/when.

#[test]
fn bdd01_given_the_service_matches_the_allowlisted_identity_and_system_xpc_path() {
    let d = eligibility(&service(700, false), &MonitorConfig::default());
    assert_eq!(d, Ok(Kind::Service));
}

#[test]
fn bdd01_given_it_is_unresponsive_in_two_consecutive_rounds_when_the_second_is_evaluated_it_restarts()
 {
    let (o, _) = fresh(twice(vec![service(700, false)]));
    assert_eq!(only(&o[0]).state, HangState::Pending);
    assert!(!only(&o[0]).restart);
    let d = only(&o[1]);
    assert_eq!(d.kind, Some(Kind::Service));
    assert_eq!(d.state, HangState::Confirmed);
    assert!(d.restart);
}

/// Issue 25 item 14, in the core: a restart decided but not recorded (it performed nothing)
/// leaves no cooldown. The next counted round decides it again, as a retry (not a second
/// detection); a look within the minimum gap does not. Control: recorded, the next round
/// blocks.
#[test]
fn an_unrecorded_restart_is_retried_at_the_next_counted_round_only() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    round(&mut s, &live(T0, vec![hung(501)]), &cfg);
    let o = round(&mut s, &live(T0 + EVERY, vec![hung(501)]), &cfg);
    assert!(only(&o).restart && only(&o).detected);
    assert!(s.restarts.is_empty(), "decided, not recorded");
    let soon = round(&mut s, &live(T0 + EVERY + 1_000, vec![hung(501)]), &cfg);
    let d = only(&soon);
    assert!(!d.restart && d.state == HangState::Confirmed, "{d:?}");
    let o = round(&mut s, &live(T0 + 2 * EVERY, vec![hung(501)]), &cfg);
    let d = only(&o);
    assert!(
        d.restart && !d.detected && d.cooldown_until_ms.is_none(),
        "{d:?}"
    );
    assert_eq!(s.observations[ED].attempts, 2);
    // Control: the restart recorded (performed) starts the cooldown.
    let mut s = MonitorState::default();
    performed(&mut s, &live(T0, vec![hung(501)]), &cfg);
    performed(&mut s, &live(T0 + EVERY, vec![hung(501)]), &cfg);
    let o = round(&mut s, &live(T0 + 2 * EVERY, vec![hung(501)]), &cfg);
    assert_eq!(only(&o).state, HangState::Blocked);
    assert!(only(&o).newly_blocked && !only(&o).restart);
}

// --- Issue 25 item 13: a stopped or traced app is never recovered.

/// The editor at `pid`, not responding, in scheduling state `state`.
fn hung_in(pid: i32, state: ProcState) -> AppObservation {
    AppObservation {
        state: Some(state),
        ..hung(pid)
    }
}

/// Parked (SIGSTOP) or at a breakpoint, the editor stays unresponsive round after round:
/// it is reported as such, never confirmed, never restarted, and the pending observation of
/// the round before it was parked is cleared (seed 002: "a responsive or stopped app clears
/// its pending observation"). Control: the same app in the same rounds, unresponsive and
/// running (or sleeping, or with no state read), is confirmed and restarted at round two.
#[test]
fn a_stopped_or_traced_app_is_never_recovered_and_clears_its_pending_observation() {
    for (held, state) in [
        (ProcState::Stopped, HangState::Stopped),
        (ProcState::Traced, HangState::Traced),
    ] {
        let (o, s) = fresh(vec![
            vec![hung(501)],
            vec![hung_in(501, held)],
            vec![hung_in(501, held)],
            vec![hung_in(501, held)],
        ]);
        assert_eq!(only(&o[0]).state, HangState::Pending);
        for r in &o[1..] {
            let d = only(r);
            assert_eq!(d.state, state, "{d:?}");
            assert!(!d.restart && !d.detected && !d.newly_blocked, "{d:?}");
            assert!(d.reason.as_deref().unwrap().contains("never restarted"));
        }
        assert!(s.observations.is_empty(), "pending cleared");
        assert!(s.restarts.is_empty());
        // Continued and still hung: it starts over, one round pending.
        let mut s = s;
        let o = performed(
            &mut s,
            &live(T0 + 4 * EVERY, vec![hung(501)]),
            &MonitorConfig::default(),
        );
        assert_eq!((only(&o).state, only(&o).rounds), (HangState::Pending, 1));
    }
    for running in [
        Some(ProcState::Running),
        Some(ProcState::Sleeping),
        Some(ProcState::Unknown),
        None,
    ] {
        let app = AppObservation {
            state: running,
            ..hung(501)
        };
        let (o, _) = fresh(twice(vec![app]));
        assert!(only(&o[1]).restart, "{running:?}");
    }
}

/// A blocked app that is then parked loses its blocked state, like one that responds.
#[test]
fn a_stopped_app_clears_its_blocked_state() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    s.restarts.insert(ED.into(), T0 - 60_000);
    s.blocked.insert(ED.into(), T0 - 30_000);
    let o = performed(
        &mut s,
        &live(T0, vec![hung_in(501, ProcState::Stopped)]),
        &cfg,
    );
    assert_eq!(only(&o).state, HangState::Stopped);
    assert!(s.blocked.is_empty(), "blocked cleared");
    // Control: running and still unresponsive, it stays blocked (and is not notified again).
    let mut s = MonitorState::default();
    s.restarts.insert(ED.into(), T0 - 60_000);
    s.blocked.insert(ED.into(), T0 - 30_000);
    let o = performed(&mut s, &live(T0, vec![hung(501)]), &cfg);
    assert_eq!(only(&o).state, HangState::Blocked);
    assert!(!only(&o).newly_blocked);
    assert!(s.blocked.contains_key(ED));
}

/// The held states come from either OS's reading: Linux's `T` (stopped) and `t` (tracing
/// stop) as macOS's SSTOP and P_TRACED (`platform::macos::kinfo::state`); every other
/// letter is not held.
#[test]
fn held_states_from_the_linux_letters() {
    let held = |c| {
        AppObservation {
            state: Some(ProcState::from_linux(c)),
            ..hung(501)
        }
        .held()
    };
    assert_eq!(held('T'), Some(HangState::Stopped));
    assert_eq!(held('t'), Some(HangState::Traced));
    for c in ['R', 'S', 'D', 'I', 'Z', '?'] {
        assert_eq!(held(c), None, "{c}");
    }
}
