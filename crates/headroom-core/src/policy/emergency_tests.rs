//! Emergency-override tests (reference A.15 EmergencyOverrideTests, E1–E19) and the
//! pressure edge cases: an unknown limit is never pressure, only an unavailable session
//! signal is blind. The `World` builder is in `tests.rs`.

use super::tests::*;
use super::*;
use crate::snapshot::fixture::{OTHER_UID, proc, zombie};

// ----- emergency override (reference A.15 EmergencyOverrideTests) ----------------------

fn busy_28979(w: World) -> World {
    w.parent(28979, 526).busy(28979, 1607.0, 1560.0)
}

#[test]
fn e1_at_the_wall_the_busy_offender_is_overridden() {
    let s = busy_28979(World::wall()).select(&policy());
    assert!(s.pressure);
    assert_eq!((targets(&s), overrides(&s)), (vec![28979], vec![28979]));
    // The report says an override was used (reap's "EMERGENCY" prefix reads this).
    assert!(s.used_override());
}

#[test]
fn e2_with_room_the_busy_offender_is_spared() {
    let s = busy_28979(World::room()).select(&policy());
    assert_eq!(reasons(&s), vec![SkipReason::HasActiveSession]);
    assert!(!s.used_override());
}

#[test]
fn e3_override_disabled_at_the_wall() {
    let mut p = policy();
    p.emergency.enabled = false;
    let s = busy_28979(World::wall()).select(&p);
    assert_eq!(reasons(&s), vec![SkipReason::HasActiveSession]);
    // At the wall with the override off, none is used.
    assert!(!s.used_override());
}

#[test]
fn e4_a_blind_parent_stays_protected_at_zero_free_slots() {
    let s = World::wall()
        .parent(31261, 900)
        .session(31261, None, None)
        .select(&policy());
    assert_eq!(reasons(&s), vec![SkipReason::SessionSignalUnavailable]);
}

#[test]
fn e5_pressure_cannot_reach_init_foreign_or_ancestors() {
    let mut w = World::wall().parent(4242, 900).parent(87537, 600);
    for i in 0..50 {
        w.procs.push(zombie(700_000 + i, 1));
    }
    w.procs
        .iter_mut()
        .find(|x| x.pid == 4242)
        .unwrap_or_else(|| unreachable!())
        .uid = OTHER_UID;
    w.procs.push(proc(90000, 87537, "headroom"));
    w.self_pid = 90000;
    let s = w.select(&policy());
    assert!(targets(&s).is_empty());
    let mut r = reasons(&s);
    r.sort_by_key(|x| x.as_str());
    assert_eq!(
        r,
        vec![
            SkipReason::ForeignUid,
            SkipReason::InitProcess,
            SkipReason::ProtectedAncestor
        ]
    );
}

#[test]
fn e6_e7_policy_and_threshold_hold_under_pressure() {
    let x = World::wall()
        .named(
            20,
            900,
            "Xcode",
            Some("/Applications/Xcode.app/Contents/MacOS/Xcode"),
        )
        .busy(20, 1607.0, 1560.0);
    assert_eq!(
        reasons(&x.select(&policy())),
        vec![SkipReason::NotPermittedByPolicy]
    );
    let small = World::wall().parent(28979, 3).busy(28979, 1607.0, 1560.0);
    assert_eq!(
        reasons(&small.select(&policy())),
        vec![SkipReason::BelowZombieThreshold]
    );
}

#[test]
fn e8_a_rejected_candidate_earns_no_relief_credit() {
    let w = World::wall()
        .named(
            9999,
            5000,
            "Xcode",
            Some("/Applications/Xcode.app/Contents/MacOS/Xcode"),
        )
        .busy(9999, 9000.0, 9000.0);
    let s = busy_28979(w)
        .parent(31261, 402)
        .busy(31261, 1607.0, 1560.0)
        .select(&policy());
    assert_eq!(targets(&s), vec![28979, 31261]);
    assert_eq!(overrides(&s), vec![28979, 31261]);
    assert_eq!(reasons(&s), vec![SkipReason::NotPermittedByPolicy]);
}

#[test]
fn e9_e10_relief_stops_at_the_recovery_target() {
    let w = busy_28979(World::wall())
        .parent(31261, 402)
        .busy(31261, 1607.0, 1560.0)
        .parent(203, 203)
        .busy(203, 1607.0, 1560.0);
    let s = w.select(&policy());
    assert_eq!(targets(&s), vec![28979, 31261]);
    assert_eq!(reasons(&s), vec![SkipReason::EmergencyReliefReached]);
    let w = World::wall()
        .parent(28979, 800)
        .busy(28979, 1607.0, 1560.0)
        .parent(31261, 402)
        .busy(31261, 1607.0, 1560.0);
    let s = w.select(&policy());
    assert_eq!(targets(&s), vec![28979]);
    assert_eq!(reasons(&s), vec![SkipReason::EmergencyReliefReached]);
}

#[test]
fn e11_an_idle_target_counts_toward_relief_first() {
    let w = busy_28979(World::wall())
        .parent(15428, 800)
        .busy(15428, 9000.0, 20_000.0);
    let s = w.select(&policy());
    assert_eq!(targets(&s), vec![15428]);
    assert!(overrides(&s).is_empty());
    assert_eq!(reasons(&s), vec![SkipReason::EmergencyReliefReached]);
}

#[test]
fn e12_the_run_limit_is_a_hard_ceiling_under_pressure() {
    let mut p = policy();
    p.max_targets = 2;
    let mut w = World::wall();
    for (pid, z) in [(200, 200), (190, 190), (180, 180), (170, 170)] {
        w = w.parent(pid, z).busy(pid, 1607.0, 1560.0);
    }
    let s = w.select(&p);
    assert_eq!(targets(&s).len(), 2);
    assert!(
        reasons(&s)
            .iter()
            .all(|r| *r == SkipReason::RunLimitReached)
    );
}

#[test]
fn e13_relief_reached_is_not_reported_as_an_ordinary_busy_session() {
    let w = World::wall()
        .parent(28979, 900)
        .busy(28979, 1607.0, 1560.0)
        .parent(31261, 402)
        .busy(31261, 1607.0, 1560.0);
    assert_eq!(
        reasons(&w.select(&policy())),
        vec![SkipReason::EmergencyReliefReached]
    );
}

#[test]
fn e14_idle_first_then_the_override() {
    let w = busy_28979(World::wall())
        .parent(15428, 318)
        .busy(15428, 9515.0, 9480.0);
    let s = w.select(&policy());
    assert_eq!(
        (targets(&s), overrides(&s)),
        (vec![15428, 28979], vec![28979])
    );
}

#[test]
fn e15_oldest_sign_of_life_first_never_the_biggest() {
    let w = World::wall()
        .parent(9126, 262)
        .busy(9126, 16.0, 0.0)
        .parent(14515, 257)
        .busy(14515, 4736.0, 6.0)
        .parent(18251, 249)
        .busy(18251, 5206.0, 0.0);
    assert_eq!(targets(&w.select(&policy())), vec![18251, 14515, 9126]);
}

#[test]
fn e16_the_live_session_is_spared_when_the_stale_one_suffices() {
    let w = World::wall()
        .parent(9126, 900)
        .busy(9126, 16.0, 0.0)
        .parent(18251, 900)
        .busy(18251, 5206.0, 0.0);
    let s = w.select(&policy());
    assert_eq!(targets(&s), vec![18251]);
    assert_eq!(
        reason_of(&s, 9126),
        Some(SkipReason::EmergencyReliefReached)
    );
    let alone = World::wall().parent(9126, 900).busy(9126, 16.0, 0.0);
    assert_eq!(targets(&alone.select(&policy())), vec![9126]);
}

#[test]
fn e17_finished_sessions_need_no_override() {
    let w = World::room()
        .parent(100, 150)
        .busy(100, 9000.0, 9000.0)
        .parent(200, 400)
        .busy(200, 9000.0, 9000.0);
    let s = w.select(&policy());
    assert_eq!(targets(&s), vec![200, 100]);
    assert!(overrides(&s).is_empty());
}

#[test]
fn e19_the_2026_08_30_machine_is_resolved_in_one_run() {
    let mut w = World {
        used: 2534,
        ..World::wall()
    };
    for (pid, z, log) in [
        (9126, 265, 7.0),
        (14515, 262, 4891.0),
        (18251, 254, 5206.0),
        (35106, 232, 4.0),
        (48751, 221, 60.0),
        (3679, 142, 3600.0),
        (3363, 142, 3500.0),
        (19414, 131, 120.0),
    ] {
        w = w.parent(pid, z).busy(pid, log, 0.0);
    }
    let s = w.select(&policy());
    let t = targets(&s);
    assert!(s.pressure);
    assert!(t.len() > 1 && t.len() < 8, "{t:?}");
    assert_eq!(&t[..3], &[18251, 14515, 3679]);
    assert!(
        (s.projected_used as f64) / 2666.0 < 0.75,
        "{}",
        s.projected_used
    );
}

#[test]
fn an_unknown_limit_is_never_pressure() {
    let w = World {
        limit: None,
        ..busy_28979(World::wall())
    };
    assert_eq!(
        reasons(&w.select(&policy())),
        vec![SkipReason::HasActiveSession]
    );
}

#[test]
fn only_an_unavailable_session_signal_is_blind_and_every_reason_is_described() {
    use SkipReason::*;
    let all = [
        InitProcess,
        ForeignUid,
        ProtectedAncestor,
        ParentIsZombie,
        ParentUnreadable,
        SessionSignalUnavailable,
        HasActiveSession,
        EmergencyReliefReached,
        NotPermittedByPolicy,
        BelowZombieThreshold,
        RunLimitReached,
    ];
    let blind: Vec<SkipReason> = all.iter().copied().filter(|r| r.is_blind()).collect();
    assert_eq!(blind, vec![SessionSignalUnavailable]);
    let texts: std::collections::HashSet<&str> = all.iter().map(|r| r.describe()).collect();
    assert_eq!(texts.len(), all.len(), "one distinct text each");
    assert_eq!(
        ProtectedAncestor.describe(),
        "headroom itself or one of its ancestors"
    );
}
