//! Tests of what a confirmed hang leads to: the automatic restart, the notification policy,
//! blocked in cooldown, BDD-01's monitor part, a restart not recorded, and a stopped or
//! traced app never recovered. The shared builders are in `tests.rs`.

use super::tests::*;
use super::*;

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
            (Some(RecoveryKind::App), true, HangState::Confirmed),
            (Some(RecoveryKind::Service), true, HangState::Confirmed)
        ]
    );
    assert_eq!(s.restarts.get(ED), Some(&(T0 + EVERY)));
    assert_eq!(s.restarts.get(CURSOR_SERVICE_ID), Some(&(T0 + EVERY)));
}

// --- Behaviors 8, 13, 18: the notification policy.

#[test]
fn b08_no_notification_after_a_successful_automatic_restart() {
    assert!(!should_notify(
        RecoveryKind::App,
        EventKind::Restarted,
        true
    ));
    assert!(!should_notify(
        RecoveryKind::Service,
        EventKind::Restarted,
        true
    ));
    assert!(!should_notify(
        RecoveryKind::App,
        EventKind::Detected,
        false
    ));
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
            assert!(!should_notify(RecoveryKind::Service, e, signalled), "{e:?}");
        }
    }
}

#[test]
fn notification_policy_for_third_party_apps() {
    assert!(should_notify(RecoveryKind::App, EventKind::Blocked, false));
    // Killed but not reopened: the user's app is gone, so say so.
    assert!(should_notify(
        RecoveryKind::App,
        EventKind::RestartFailed,
        true
    ));
    // Nothing was signalled (the app had already exited): nothing to tell.
    assert!(!should_notify(
        RecoveryKind::App,
        EventKind::RestartFailed,
        false
    ));
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
    assert_eq!(d, Ok(RecoveryKind::Service));
}

#[test]
fn bdd01_given_it_is_unresponsive_in_two_consecutive_rounds_when_the_second_is_evaluated_it_restarts()
 {
    let (o, _) = fresh(twice(vec![service(700, false)]));
    assert_eq!(only(&o[0]).state, HangState::Pending);
    assert!(!only(&o[0]).restart);
    let d = only(&o[1]);
    assert_eq!(d.kind, Some(RecoveryKind::Service));
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
