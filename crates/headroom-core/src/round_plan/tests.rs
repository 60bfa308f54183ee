use proptest::prelude::*;

use super::*;
use crate::limits::LimitSource;
use crate::limits::fixture::{shared, user};
use crate::reading::level;

const T: Thresholds = Thresholds {
    warn_pct: 50.0,
    crit_pct: 75.0,
};

/// RLIMIT_NPROC of 10,000 and `threads-max` of 100,000 with `tasks` on the machine.
fn bound(tasks: Option<u64>) -> Bound {
    Bound {
        slots: tasks,
        ceilings: vec![
            user(LimitSource::RlimitNproc, Some(10_000)),
            shared(LimitSource::ThreadsMax, Some(100_000), tasks.unwrap_or(0)),
        ],
        uid: 501,
    }
}

fn facts(b: &Bound) -> RoundFacts<'_> {
    RoundFacts {
        bound: Some(b),
        thresholds: T,
        last_exact: Some((1_000, Level::Normal)),
        confirmed: Level::Normal,
        table_needed: false,
        exact_every_ms: EXACT_EVERY_MS,
    }
}

/// Far: 3,000 tasks on the machine is 30 % of the user's 10,000, under 40 % (the margin
/// below 50 %): the round waits. The control, 4,000 (exactly the margin) and above, reads.
#[test]
fn a_far_bound_waits_and_one_at_the_margin_reads() {
    let far = bound(Some(3_000));
    assert_eq!(plan(&facts(&far)), Round::Wait { bound_pct: 30.0 });
    let edge = bound(Some(3_999));
    assert!(matches!(plan(&facts(&edge)), Round::Wait { .. }));
    for near in [4_000, 6_000, 20_000] {
        let b = bound(Some(near));
        assert_eq!(plan(&facts(&b)), Round::Exact(Why::Near), "{near}");
    }
}

/// A bound that cannot be read proves nothing: the round reads (control: the same facts
/// with a bound wait).
#[test]
fn an_unreadable_bound_reads_the_table() {
    let none = bound(None);
    assert_eq!(plan(&facts(&none)), Round::Exact(Why::NoBound));
    let f = RoundFacts {
        bound: None,
        ..facts(&none)
    };
    assert_eq!(plan(&f), Round::Exact(Why::NoBound));
    let b = bound(Some(100));
    assert!(matches!(plan(&facts(&b)), Round::Wait { .. }));
}

/// An enforced ceiling that could not be read may be the tightest: a bound far from the
/// others proves nothing, and the round reads (control: the same bound with it read waits).
#[test]
fn an_unread_ceiling_at_the_bound_reads_the_table() {
    let mut b = bound(Some(100));
    b.ceilings.push(user(LimitSource::CgroupPids, None));
    assert_eq!(plan(&facts(&b)), Round::Exact(Why::NoLimit));
    b.ceilings[2] = user(LimitSource::CgroupPids, Some(50_000));
    assert!(matches!(plan(&facts(&b)), Round::Wait { .. }));
}

/// A bound of 0 (a file that lies low) is taken as 1: this process holds a slot. With no
/// ceiling that gives a limit, nothing can be proved far.
#[test]
fn a_zero_bound_counts_this_process_and_no_limit_reads() {
    let zero = bound(Some(0));
    assert_eq!(plan(&facts(&zero)), Round::Wait { bound_pct: 0.01 });
    let unlimited = Bound {
        slots: Some(10),
        ceilings: vec![user(LimitSource::RlimitNproc, None)],
        uid: 501,
    };
    assert_eq!(plan(&facts(&unlimited)), Round::Exact(Why::NoLimit));
}

/// A shared ceiling binds at the bound: `threads-max` 5,000 with 3,000 tasks on the
/// machine leaves the user 5,000 − (3,000 − 3,000) at the bound: 60 %, near. The control
/// with `threads-max` 100,000: the user's own limit binds, 30 %, far.
#[test]
fn a_shared_ceiling_is_judged_at_the_bound() {
    let mut b = bound(Some(3_000));
    b.ceilings[1] = shared(LimitSource::ThreadsMax, Some(5_000), 3_000);
    assert_eq!(plan(&facts(&b)), Round::Exact(Why::Near));
    assert!(matches!(
        plan(&facts(&bound(Some(3_000)))),
        Round::Wait { .. }
    ));
}

/// Every other reason to read, each against the far bound that would otherwise wait.
#[test]
fn first_round_guards_alerts_and_the_period_read_the_table() {
    let far = bound(Some(100));
    let f = facts(&far);
    let cases = [
        (
            RoundFacts {
                last_exact: None,
                ..f
            },
            Why::First,
        ),
        (
            RoundFacts {
                table_needed: true,
                ..f
            },
            Why::TableNeeded,
        ),
        (
            RoundFacts {
                last_exact: Some((1_000, Level::Warning)),
                ..f
            },
            Why::NotNormal,
        ),
        (
            RoundFacts {
                last_exact: Some((1_000, Level::Unknown)),
                ..f
            },
            Why::NotNormal,
        ),
        (
            RoundFacts {
                confirmed: Level::Critical,
                ..f
            },
            Why::NotNormal,
        ),
        (
            RoundFacts {
                last_exact: Some((EXACT_EVERY_MS, Level::Normal)),
                ..f
            },
            Why::Due,
        ),
    ];
    for (facts, why) in cases {
        assert_eq!(plan(&facts), Round::Exact(why));
    }
    let just_before = RoundFacts {
        last_exact: Some((EXACT_EVERY_MS - 1, Level::Normal)),
        ..f
    };
    assert!(matches!(plan(&just_before), Round::Wait { .. }));
    // A period of 0 (`--table-every 0s`): every round reads, however far.
    let every = RoundFacts {
        exact_every_ms: 0,
        last_exact: Some((0, Level::Normal)),
        ..f
    };
    assert_eq!(plan(&every), Round::Exact(Why::Due));
}

/// A ceiling as the platforms report it: per-user, or shared with what everybody holds.
fn ceiling() -> impl Strategy<Value = (bool, Option<i64>, u64)> {
    (any::<bool>(), prop::option::of(-5i64..20_000), 0u64..20_000)
}

proptest! {
    /// The rule's promise: whenever a round waits, every exact reading the bound allows
    /// (any count of the user's slots up to it, the ceilings as read) is normal, and its
    /// usage is below the margin too.
    #[test]
    fn a_round_that_waits_could_not_have_read_a_warning(
        slots in 0u64..20_000,
        ceilings in prop::collection::vec(ceiling(), 1..4),
        warn in 1.0f64..100.0,
        used_frac in 0.0f64..=1.0,
    ) {
        let ceilings: Vec<Ceiling> = ceilings
            .into_iter()
            .enumerate()
            .map(|(i, (per_user, value, in_use))| {
                let source = [LimitSource::RlimitNproc, LimitSource::CgroupPids,
                    LimitSource::ThreadsMax, LimitSource::PidMax][i];
                if per_user { user(source, value) } else { shared(source, value, in_use) }
            })
            .collect();
        let b = Bound { slots: Some(slots), ceilings: ceilings.clone(), uid: 501 };
        let t = Thresholds { warn_pct: warn, crit_pct: warn };
        let f = RoundFacts { thresholds: t, ..facts(&b) };
        if let Round::Wait { bound_pct } = plan(&f) {
            prop_assert!(bound_pct < warn * MARGIN);
            let used = (slots.max(1) as f64 * used_frac) as u64;
            let limit = effective_limit(&ceilings, used, 501).limit;
            let pct = limit.map(|l| used as f64 * 100.0 / l as f64);
            prop_assert_eq!(level(pct, t), Level::Normal);
            prop_assert!(pct.is_some_and(|p| p <= bound_pct));
        }
    }
}

/// The default period of exact rounds leaves the trend its minimum of readings inside its
/// window while the wall is far (a longer one would leave `watch` without a trend there).
#[test]
fn the_default_period_keeps_the_trend_s_minimum_in_its_window() {
    use crate::reading::{TREND_MIN_SAMPLES, TREND_WINDOW_MS};
    let in_window = TREND_WINDOW_MS as u64 / EXACT_EVERY_MS + 1;
    assert!(
        in_window >= TREND_MIN_SAMPLES as u64,
        "{in_window} readings in the window"
    );
}
