//! Tests of the monitor's remembered state: the cooldown and its pruning, the bounds on its
//! maps, the JSON round trip, and clock jumps (the cooldown runs on the boot clock). The
//! shared builders are in `tests.rs`.

use super::tests::*;
use super::*;

// --- Cooldown and pruning.

#[test]
fn cooldown_allows_one_automatic_restart_an_hour() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    let hung = |pid| vec![app(ED, pid, false)];
    let mut restarted_at = Vec::new();
    let mut t = T0;
    let mut i: i64 = 0;
    // A new hung instance every two rounds for three hours, with a responsive round after
    // each pair so that blocked never latches.
    while t < T0 + 3 * COOLDOWN_MS {
        let pid = 1000 + (i / 2) as i32;
        let o = performed(&mut s, &live(t, hung(pid)), &cfg);
        if only(&o).restart {
            restarted_at.push(t);
        }
        if i % 2 == 1 {
            t += EVERY;
            performed(&mut s, &live(t, vec![app(ED, pid, true)]), &cfg);
        }
        t += EVERY;
        i += 1;
    }
    assert_eq!(restarted_at.len(), 3, "{restarted_at:?}");
    assert!(restarted_at.windows(2).all(|w| w[1] - w[0] >= COOLDOWN_MS));
    // And never two within an hour: replay the restart times from the state's point of view.
    let mut s = MonitorState::default();
    s.restarts.insert(ED.into(), T0);
    let o = performed(&mut s, &live(T0 + COOLDOWN_MS - 1, hung(5)), &cfg);
    assert_eq!(only(&o).state, HangState::CoolingDown);
    assert_eq!(only(&o).cooldown_until_ms, Some(T0 + COOLDOWN_MS));
    let mut s = MonitorState::default();
    s.restarts.insert(ED.into(), T0);
    performed(&mut s, &live(T0 + COOLDOWN_MS, hung(6)), &cfg);
    let o = performed(&mut s, &live(T0 + COOLDOWN_MS + EVERY, hung(6)), &cfg);
    assert!(only(&o).restart, "the hour has passed");
}

#[test]
fn a_configured_cooldown_below_an_hour_is_raised_to_the_hour() {
    let cfg = MonitorConfig {
        cooldown_ms: 60_000,
        ..MonitorConfig::default()
    };
    let mut s = MonitorState::default();
    s.restarts.insert(ED.into(), T0);
    let o = performed(&mut s, &live(T0 + 120_000, vec![app(ED, 5, false)]), &cfg);
    assert_eq!(only(&o).state, HangState::CoolingDown);
}

#[test]
fn restart_times_older_than_24_hours_are_pruned() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    s.restarts.insert("old".into(), T0 - RESTART_RETENTION_MS);
    s.restarts
        .insert("recent".into(), T0 - RESTART_RETENTION_MS + 1);
    s.restarts
        .insert("wrong-clock".into(), T0 + 2 * RESTART_RETENTION_MS);
    performed(&mut s, &live(T0, vec![]), &cfg);
    assert_eq!(s.restarts.keys().collect::<Vec<_>>(), vec!["recent"]);
}

// --- Bounded maps.

#[test]
fn maps_stay_bounded_whatever_the_apps_are_called() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    let many = |n: usize| {
        (0..n)
            .map(|i| app(&format!("org.example.app{i}"), 10 + i as i32, false))
            .collect::<Vec<_>>()
    };
    let o = rounds(&mut s, &cfg, vec![many(600), many(600)]);
    assert!(s.observations.len() <= MAX_TRACKED);
    assert!(s.restarts.len() <= MAX_TRACKED);
    assert_eq!(
        o[1].decisions.iter().filter(|d| d.restart).count(),
        MAX_TRACKED
    );
    // Identities seen once and never again disappear from observations and blocked.
    performed(&mut s, &live(T0 + 2 * EVERY, vec![]), &cfg);
    assert!(s.observations.is_empty() && s.blocked.is_empty());
    // An absurdly long identity is never tracked.
    let mut long = app(&"x".repeat(MAX_IDENTITY_LEN + 1), 9, false);
    long.bundle_path = "/Applications/Long.app".into();
    assert!(
        eligibility(&long, &cfg)
            .unwrap_err()
            .to_string()
            .contains("longer")
    );
    // A state file stuffed by hand: times past the cooldown go, oldest first, down to the
    // cap; the newest are kept.
    let mut s = MonitorState::default();
    for i in 0..1000 {
        s.restarts.insert(format!("id{i}"), T0 - COOLDOWN_MS - i);
    }
    performed(&mut s, &live(T0, vec![]), &cfg);
    assert!(s.restarts.len() < MAX_TRACKED);
    assert!(s.restarts.contains_key("id0"), "the newest are kept");
}

#[test]
fn the_restart_cap_never_forgets_a_time_within_the_cooldown_it_refuses_instead() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    // The editor was restarted 10 minutes ago; then 255 other apps within the hour.
    s.restarts.insert(ED.into(), T0 - 600_000);
    for i in 0..(MAX_TRACKED - 1) {
        s.restarts
            .insert(format!("org.example.app{i}"), T0 - 1_000 - i as i64);
    }
    // A new app hangs: there is no room to record its restart without forgetting one.
    let o = rounds(
        &mut s,
        &cfg,
        vec![vec![app("org.example.New", 600, false)]; 2],
    );
    let d = only(&o[1]);
    assert!(!d.restart && d.state == HangState::Ignored, "{d:?}");
    assert!(d.reason.as_deref().unwrap().contains("no room"), "{d:?}");
    assert_eq!(s.restarts.get(ED), Some(&(T0 - 600_000)), "not forgotten");
    // ... so the editor, hanging again within its hour, is blocked, not restarted twice.
    let o = rounds(&mut s, &cfg, vec![vec![app(ED, 501, false)]; 2]);
    assert_eq!(only(&o[1]).state, HangState::Blocked);
    // Control: once the old times pass the cooldown they make room, and the new app is
    // restarted.
    let later = T0 + COOLDOWN_MS + 60_000;
    performed(
        &mut s,
        &live(later, vec![app("org.example.New", 600, false)]),
        &cfg,
    );
    let o = performed(
        &mut s,
        &live(later + EVERY, vec![app("org.example.New", 600, false)]),
        &cfg,
    );
    assert!(only(&o).restart, "{o:?}");
}

#[test]
fn rounds_closer_than_the_minimum_gap_count_once() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    let hung = || vec![app(ED, 501, false)];
    // Two rounds with the same `at`, then a manual round a second after watch's.
    let o1 = performed(&mut s, &live(T0, hung()), &cfg);
    let o2 = performed(&mut s, &live(T0, hung()), &cfg);
    let o3 = performed(&mut s, &live(T0 + 1_000, hung()), &cfg);
    for o in [&o1, &o2, &o3] {
        let d = only(o);
        assert!(!d.restart && d.state == HangState::Pending, "{d:?}");
        assert_eq!(d.rounds, 1);
    }
    // Control: a round the minimum gap after the first observation confirms it.
    let o = performed(&mut s, &live(T0 + MIN_ROUND_GAP_MS, hung()), &cfg);
    assert!(only(&o).restart, "{o:?}");
    // The gap is configurable within bounds: 20 s asks for 20 s ...
    let slow = MonitorConfig {
        min_gap_ms: 20_000,
        ..MonitorConfig::default()
    };
    let mut s = MonitorState::default();
    let o = rounds(&mut s, &slow, vec![hung(), hung()]);
    assert!(!only(&o[1]).restart, "15 s apart is too close for 20 s");
    let o = performed(&mut s, &live(T0 + 20_000, hung()), &slow);
    assert!(only(&o).restart);
    // ... and 0 is raised to the lower bound: same-instant rounds never confirm.
    let zero = MonitorConfig {
        min_gap_ms: 0,
        ..MonitorConfig::default()
    };
    let mut s = MonitorState::default();
    performed(&mut s, &live(T0, hung()), &zero);
    assert!(!only(&performed(&mut s, &live(T0, hung()), &zero)).restart);
}

#[test]
fn blocked_lasts_through_a_round_with_a_second_instance_and_is_notified_once() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    let hung = || vec![app(ED, 501, false)];
    // Restarted, hung again within the hour: blocked, notified.
    let mut o = rounds(&mut s, &cfg, vec![hung(), hung()]);
    assert!(only(&o[1]).restart);
    let mut at = T0 + 2 * EVERY;
    let mut next = |s: &mut MonitorState, apps: Vec<AppObservation>| {
        let r = performed(s, &live(at, apps), &cfg);
        at += EVERY;
        r
    };
    next(&mut s, vec![app(ED, 601, false)]);
    o.push(next(&mut s, vec![app(ED, 601, false)]));
    let d = only(&o[2]);
    assert!(d.newly_blocked && d.state == HangState::Blocked);
    // `open -n`: a second, responsive instance for one round. The hung one is still hung.
    let r = next(&mut s, vec![app(ED, 601, false), app(ED, 602, true)]);
    assert_eq!(
        only(&r).state,
        HangState::Ignored,
        "two instances: not acted on"
    );
    assert!(
        s.blocked.contains_key(ED),
        "blocked lasts while it is unresponsive"
    );
    // The extra instance goes: still blocked, not notified again (it was, before the fix).
    for _ in 0..3 {
        let r = next(&mut s, vec![app(ED, 601, false)]);
        let d = only(&r);
        assert_eq!(d.state, HangState::Blocked);
        assert!(!d.newly_blocked && !d.restart, "{d:?}");
    }
    // Control: it responds, which clears blocked.
    next(&mut s, vec![app(ED, 601, true)]);
    assert!(s.blocked.is_empty());
}

#[test]
fn state_round_trips_through_json() {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    rounds(
        &mut s,
        &cfg,
        vec![vec![app(ED, 501, false)], vec![app(ED, 501, false)]],
    );
    let text = serde_json::to_string(&s).unwrap();
    assert!(text.contains(STATE_SCHEMA));
    let back: MonitorState = serde_json::from_str(&text).unwrap();
    assert_eq!(back, s);
}

// --- Clock jumps: the cooldown is measured on the boot clock, not the wall.

const HOUR: i64 = 3_600_000;
/// The boot clock at T0: 50 h after boot.
const B0: i64 = 50 * HOUR;

fn at(wall: i64, boot: i64, apps: Vec<AppObservation>) -> HangRound {
    HangRound {
        boot_ms: Some(boot),
        ..live(wall, apps)
    }
}

/// ED confirmed and restarted at (T0, B0), by two live rounds.
fn restarted() -> MonitorState {
    let cfg = MonitorConfig::default();
    let mut s = MonitorState::default();
    performed(
        &mut s,
        &at(T0 - EVERY, B0 - EVERY, vec![app(ED, 5, false)]),
        &cfg,
    );
    let o = performed(&mut s, &at(T0, B0, vec![app(ED, 5, false)]), &cfg);
    assert!(only(&o).restart);
    assert_eq!(s.restarts_boot.get(ED), Some(&B0));
    s
}

/// The reopened app hangs again: two rounds `EVERY` apart from (wall, boot); the second
/// round's verdict.
fn hangs_again(s: &mut MonitorState, wall: i64, boot: i64) -> AppDecision {
    let cfg = MonitorConfig::default();
    performed(s, &at(wall, boot, vec![app(ED, 6, false)]), &cfg);
    let o = performed(
        s,
        &at(wall + EVERY, boot + EVERY, vec![app(ED, 6, false)]),
        &cfg,
    );
    only(&o).clone()
}

#[test]
fn a_wall_clock_set_forward_does_not_end_the_cooldown_early() {
    // 5 h later by the wall, 1 min by the boot clock: the same hour, so no second restart.
    let mut s = restarted();
    let d = hangs_again(&mut s, T0 + 5 * HOUR, B0 + 60_000);
    assert!(!d.restart);
    assert_eq!(d.state, HangState::Blocked);
    assert_eq!(
        d.cooldown_until_ms,
        Some(T0 + 5 * HOUR + COOLDOWN_MS - 60_000),
        "the rest of the hour, from the wall's now"
    );
    // 25 h forward, past the retention: the restart is not forgotten either.
    let mut s = restarted();
    let d = hangs_again(&mut s, T0 + 25 * HOUR, B0 + 60_000);
    assert_eq!(d.state, HangState::Blocked);
    // Control: an hour later by the boot clock, the app is restarted again.
    let mut s = restarted();
    assert!(hangs_again(&mut s, T0 + 5 * HOUR, B0 + COOLDOWN_MS).restart);
}

#[test]
fn a_wall_clock_set_back_neither_stretches_the_cooldown_nor_forgets_it() {
    let mut s = restarted();
    let d = hangs_again(&mut s, T0 - 5 * HOUR, B0 + 60_000);
    assert_eq!(d.state, HangState::Blocked);
    // Set back 25 h: the restart is "in the future" past the retention, and still kept.
    let mut s = restarted();
    let d = hangs_again(&mut s, T0 - 25 * HOUR, B0 + 60_000);
    assert_eq!(d.state, HangState::Blocked);
    assert!(s.restarts.contains_key(ED));
    // An hour later by the boot clock, 5 h earlier by the wall: restarted, not frozen for 6 h.
    let mut s = restarted();
    assert!(hangs_again(&mut s, T0 - 5 * HOUR, B0 + COOLDOWN_MS).restart);
}

#[test]
fn after_a_reboot_the_cooldown_counts_only_the_new_boots_uptime_as_passed() {
    // The boot clock starts again near 0; at 10 min of uptime no more than that is known
    // to have passed, whatever the wall says.
    let mut s = restarted();
    let d = hangs_again(&mut s, T0 + 5 * HOUR, 600_000);
    assert_eq!(d.state, HangState::Blocked);
    let mut s = restarted();
    assert!(hangs_again(&mut s, T0 + 5 * HOUR, COOLDOWN_MS).restart);
}

#[test]
fn a_recorded_round_measures_the_cooldown_on_its_wall_clock() {
    // A restart stamped on the boot clock, replayed by rounds that have none: the wall.
    let cfg = MonitorConfig::default();
    let mut s = restarted();
    performed(&mut s, &live(T0 + 60_000, vec![app(ED, 6, false)]), &cfg);
    let o = performed(
        &mut s,
        &live(T0 + 60_000 + EVERY, vec![app(ED, 6, false)]),
        &cfg,
    );
    assert_eq!(only(&o).state, HangState::Blocked);
    let mut s = restarted();
    performed(
        &mut s,
        &live(T0 + COOLDOWN_MS, vec![app(ED, 6, false)]),
        &cfg,
    );
    let o = performed(
        &mut s,
        &live(T0 + COOLDOWN_MS + EVERY, vec![app(ED, 6, false)]),
        &cfg,
    );
    assert!(only(&o).restart);
    // A restart made by a recorded round has no boot stamp left to mislead a live one.
    assert!(!s.restarts_boot.contains_key(ED));
    // The boot stamps survive the state file.
    let s = restarted();
    let text = serde_json::to_string(&s).unwrap();
    let back: MonitorState = serde_json::from_str(&text).unwrap();
    assert_eq!(back, s);
}
