//! The generators of the property test's worlds (process trees as specs, `build` makes
//! the records) and policies.

use super::*;

fn arb_child() -> impl Strategy<Value = ChildSpec> {
    let state = prop::sample::select(vec![
        ProcState::Sleeping,
        ProcState::Running,
        ProcState::Stopped,
        ProcState::Traced,
        ProcState::Zombie,
    ]);
    let age = prop::sample::select(vec![0i64, 60, 7199, 7200, 36_000]);
    let cpu = prop_oneof![
        1 => Just(Cpu::NoHistory),
        3 => age.clone().prop_map(|s| Cpu::Idle(s.max(60))),
        1 => Just(Cpu::Worked),
        1 => Just(Cpu::Unreadable),
    ];
    let log = prop_oneof![
        1 => Just(Log::None),
        3 => age.clone().prop_map(Log::Absolute),
        1 => age.prop_map(Log::Relative),
        1 => Just(Log::RelativeNoCwd),
    ];
    (0usize..4, 0usize..3, state, cpu, log).prop_map(|(name, exe, state, cpu, log)| ChildSpec {
        name,
        exe,
        state,
        cpu,
        log,
    })
}

fn arb_parent() -> impl Strategy<Value = ParentSpec> {
    (
        0u64..7,
        0usize..PARENT_NAMES.len(),
        0usize..PARENT_EXES.len(),
        prop::bool::weighted(0.85),
        prop::sample::select(vec![0u8, 0, 0, 0, 1, 2]),
        prop::bool::weighted(0.9),
        0usize..5,
        prop::collection::vec(arb_child(), 0..3),
    )
        .prop_map(
            |(zombies, name, exe, own, state, started, under, children)| ParentSpec {
                zombies,
                name,
                exe,
                own,
                state,
                started,
                under,
                children,
            },
        )
}

pub(super) fn arb_world() -> impl Strategy<Value = WorldSpec> {
    (
        prop::collection::vec((prop::bool::weighted(0.3), 0u64..4), 1..4),
        any::<bool>(),
        prop::collection::vec(arb_parent(), 1..8),
        0u64..5000,
        prop::option::of(prop_oneof![1 => 0u64..5000, 3 => 4u64..40]),
        prop::bool::weighted(0.5),
    )
        .prop_map(
            |(chain, count_missing, parents, used, limit, wall)| WorldSpec {
                chain,
                count_missing,
                parents,
                used,
                limit,
                wall,
            },
        )
}

pub(super) fn arb_policy() -> impl Strategy<Value = Policy> {
    let pats = prop::sample::subsequence(
        vec![
            "agency",
            "/.config/",
            "node",
            "x",
            "",
            "CurrentVersion",
            "python",
        ],
        0..4,
    );
    (
        pats.clone(),
        pats,
        1u64..4,
        1usize..4,
        prop::bool::weighted(0.8),
        prop::bool::weighted(0.8),
        0.0f64..0.7,
        0.0f64..1.2,
    )
        .prop_map(
            |(allow, deny, min_zombies, max_targets, spare, enabled, free, recovery)| Policy {
                allow_deny: AllowDeny {
                    allow: Patterns::new(allow),
                    deny: Patterns::new(deny),
                },
                min_zombies,
                max_targets,
                spare_sessions: spare,
                idle_threshold_s: THRESHOLD_S,
                emergency: Emergency {
                    enabled,
                    free_fraction: free,
                    recovery_fraction: recovery,
                },
            },
        )
}
