//! Levels, thresholds, the incident replays and the trend.

use super::*;
use crate::limits::fixture::mac;
use crate::snapshot::fixture::*;

fn th() -> Thresholds {
    Thresholds::default()
}

#[test]
fn levels_are_inclusive_at_50_and_75() {
    for (u, l) in [
        (49.0, Level::Normal),
        (50.0, Level::Warning),
        (74.9, Level::Warning),
        (75.0, Level::Critical),
        (150.0, Level::Critical),
    ] {
        assert_eq!(level(Some(u), th()), l, "{u}");
    }
    assert_eq!(level(None, th()), Level::Unknown);
}

#[test]
fn thresholds_reject_inverted_and_out_of_range() {
    assert!(Thresholds::new(90.0, 80.0).unwrap_err().contains("`90`"));
    assert!(
        Thresholds::new(150.0, 160.0)
            .unwrap_err()
            .contains("--warn `150`")
    );
    assert!(Thresholds::new(0.0, 10.0).is_err());
    assert!(Thresholds::new(f64::NAN, 10.0).is_err());
    assert!(Thresholds::new(80.0, 80.0).is_ok());
}

fn incident(n_procs: usize, zombies: usize, ceilings: Vec<crate::limits::Ceiling>) -> Snapshot {
    let mut procs = leaker(87537, zombies, 100_000);
    procs.extend((0..n_procs - zombies - 1).map(|i| proc(10_000 + i as i32, 1, "zsh")));
    let mut s = snapshot("macos", procs);
    s.ceilings = ceilings;
    s
}

#[test]
fn replay_2744_processes_against_rlimit_2666_is_critical_and_full() {
    let s = incident(2744, 2038, mac(Some(4000), Some(2666), Some(4000), 2744, 0));
    let r = read(&s, th());
    assert_eq!(r.limit.limit, Some(2666));
    assert_eq!(r.limit_source(), Some(LimitSource::RlimitNproc));
    assert_eq!(r.free_slots, Some(0));
    assert_eq!(format!("{:.1}", r.usage_pct.unwrap_or_default()), "102.9");
    assert_eq!(r.level, Level::Critical);
}

#[test]
fn replay_the_per_uid_only_regression_is_unknown_not_67_5_percent() {
    // What the watchdog showed that night from kern.maxprocperuid alone: 2701 of 4000,
    // 1299 free, never critical. fork never checks that sysctl (core::limits): with
    // nothing else read the limit is unknown, never a reassuring number.
    let s = incident(2701, 2038, mac(Some(4000), None, None, 2701, 0));
    let r = read(&s, th());
    assert_eq!((r.limit.limit, r.limit_source()), (None, None));
    assert_eq!((r.usage_pct, r.free_slots), (None, None));
    assert_eq!(r.level, Level::Unknown);
}

#[test]
fn first_incident_3869_of_4000_with_top_parent() {
    let s = incident(3869, 3326, mac(Some(4000), Some(4000), Some(6000), 3869, 0));
    let r = read(&s, th());
    assert_eq!(
        (r.usage.processes, r.usage.zombies, r.free_slots),
        (3869, 3326, Some(131))
    );
    assert_eq!(r.limit_source(), Some(LimitSource::RlimitNproc));
    assert_eq!(r.level, Level::Critical);
    assert_eq!(r.top_parents[0].pid, 87537);
    assert_eq!(r.top_parents[0].zombies, 3326);
}

#[test]
fn nothing_readable_reads_unknown() {
    let s = incident(3000, 10, mac(None, None, None, 3000, 0));
    let r = read(&s, th());
    assert_eq!(
        (r.limit.limit, r.usage_pct, r.free_slots, r.level),
        (None, None, None, Level::Unknown)
    );
}

/// What `watch` short of descriptors read on 7f29497: `pid_max` (32,768, the tightest)
/// unopenable, RLIMIT_NPROC 96,362 read. Against the looser limit 100 tasks are "normal";
/// the unread ceiling may be nearly full, so the level is unknown (exit 3), never normal.
/// Warning and critical stand (the real usage is at least that). Control: `pid_max` read.
#[test]
fn an_unread_ceiling_leaves_no_confident_normal() {
    use crate::limits::fixture::{shared, user};
    let ceilings = |pid_max: Option<i64>| {
        vec![
            user(LimitSource::RlimitNproc, Some(96_362)),
            shared(LimitSource::PidMax, pid_max, 100),
        ]
    };
    let linux = |used: usize, c| {
        let mut s = snapshot(
            "linux",
            (0..used).map(|i| proc(100 + i as i32, 1, "sh")).collect(),
        );
        s.ceilings = c;
        s
    };
    let r = read(&linux(100, ceilings(None)), th());
    assert_eq!(r.limit_source(), Some(LimitSource::RlimitNproc));
    assert!(r.limit.incomplete());
    assert_eq!(r.level, Level::Unknown);
    let control = read(&linux(100, ceilings(Some(32_768))), th());
    assert_eq!(control.limit_source(), Some(LimitSource::PidMax));
    assert_eq!(control.level, Level::Normal);
    for (pct, want) in [
        (49.0, Level::Unknown),
        (50.0, Level::Warning),
        (80.0, Level::Critical),
    ] {
        assert_eq!(judged_level(Some(pct), th(), true), want, "{pct}");
    }
    assert_eq!(judged_level(Some(49.0), th(), false), Level::Normal);
    assert_eq!(judged_level(None, th(), true), Level::Unknown);
}

fn samples(pairs: &[(i64, u64)]) -> Vec<HistorySample> {
    pairs
        .iter()
        .map(|&(s, used)| HistorySample {
            at_ms: s * 1000,
            used,
        })
        .collect()
}

#[test]
fn trend_needs_three_samples() {
    let t = trend(&samples(&[(0, 3839), (60, 3849)]), Some(4000));
    assert_eq!((t.growth_per_min, t.eta_seconds), (None, None));
}

#[test]
fn trend_at_ten_per_minute_gives_the_incident_eta() {
    let t = trend(
        &samples(&[(0, 3839), (60, 3849), (120, 3859), (180, 3869)]),
        Some(4000),
    );
    let rate = t.growth_per_min.unwrap_or_default();
    assert!((rate - 10.0).abs() < 1e-9, "{rate}");
    let eta = t.eta_seconds.unwrap_or_default();
    assert!((eta - 786.0).abs() < 1.0, "{eta}"); // ≈ 13.1 min
}

#[test]
fn flat_or_falling_has_no_eta_and_at_limit_eta_is_zero() {
    let flat = trend(&samples(&[(0, 10), (60, 10), (120, 10)]), Some(100));
    assert_eq!(flat.eta_seconds, None);
    // A slow decline (no single fall is a drop) is a negative rate.
    let falling = trend(&samples(&[(0, 1000), (60, 999), (120, 998)]), Some(2000));
    assert!(falling.growth_per_min.unwrap_or_default() < 0.0);
    assert_eq!(falling.eta_seconds, None);
    let at = trend(&samples(&[(0, 80), (60, 90), (120, 100)]), Some(100));
    assert_eq!(at.eta_seconds, Some(0.0));
}

#[test]
fn trend_ignores_samples_older_than_ten_minutes_and_identical_times() {
    let t = trend(
        &samples(&[(0, 5000), (700, 10), (760, 20), (820, 30)]),
        Some(100),
    );
    assert_eq!(t.samples, 3);
    assert!((t.growth_per_min.unwrap_or_default() - 10.0).abs() < 1e-9);
    let same = trend(&samples(&[(5, 1), (5, 2), (5, 3)]), Some(100));
    assert_eq!(same.growth_per_min, None);
}

#[test]
fn unknown_limit_has_rate_but_no_eta() {
    let t = trend(&samples(&[(0, 1), (60, 2), (120, 3)]), None);
    assert!(t.growth_per_min.is_some());
    assert_eq!(t.eta_seconds, None);
}

/// 1 s readings, as a `watch --interval 1s` takes them.
fn every_second(start_s: i64, used: &[u64]) -> Vec<HistorySample> {
    used.iter()
        .enumerate()
        .map(|(i, &u)| HistorySample {
            at_ms: (start_s + i as i64) * 1000,
            used: u,
        })
        .collect()
}

/// The incident: a `watch` at 1 s climbing 3 → 164 of 200 over 14 s, a cleanup freeing 161,
/// and the reading two seconds later at 3/200. The old fit over the whole window said
/// `+428/min, wall in 28 s` (the issue saw `+426.4/min, wall in 28 s`). After the drop there
/// is one reading: no rate and no ETA; a minute of flat readings after it: rate 0, no ETA.
#[test]
fn replay_two_seconds_after_freeing_161_slots_has_no_rate_and_no_eta() {
    let climb: Vec<u64> = (0..15u64).map(|i| 3 + (161 * i + 7) / 14).collect();
    assert_eq!((climb[0], climb[14]), (3, 164));
    let mut h = every_second(0, &climb);
    h.push(HistorySample {
        at_ms: 16_000,
        used: 3,
    });
    let t = trend(&h, Some(200));
    assert_eq!(t, Trend::none(1), "{t:?}");
    // A minute of flat readings after the cleanup: a rate of 0, still no ETA.
    h.extend((17..=76).map(|s| HistorySample {
        at_ms: s * 1000,
        used: 3,
    }));
    let t = trend(&h, Some(200));
    assert_eq!((t.samples, t.eta_seconds), (61, None));
    assert!(t.growth_per_min.is_some_and(|g| g.abs() < 1e-9), "{t:?}");
}

/// `probe` after a manual reap: a climb of 20 a minute for six minutes (1,000 → 1,120), a
/// reap of 100, then three probes a minute apart on the flat table at 1,020 of 2,666. The
/// old fit said `+1.7/min, wall in 16 h`. The fit restarts at the drop: flat, no ETA.
#[test]
fn replay_a_flat_table_after_a_manual_reap_has_no_eta() {
    let mut pairs: Vec<(i64, u64)> = (0..7).map(|i| (i * 60, 1000 + 20 * i as u64)).collect();
    pairs.extend([(420, 1020), (480, 1020), (540, 1020)]);
    let t = trend(&samples(&pairs), Some(2666));
    assert_eq!((t.samples, t.eta_seconds), (3, None), "{t:?}");
    assert!(t.growth_per_min.is_some_and(|g| g.abs() < 1e-9), "{t:?}");
    // Control: the leak resumes after the reap at 10 a minute; the fit (after the drop only)
    // gets its rate right and gives the ETA.
    let mut resumed: Vec<(i64, u64)> = (0..7).map(|i| (i * 60, 1000 + 20 * i as u64)).collect();
    resumed.extend([(420, 1020), (480, 1030), (540, 1040)]);
    let t = trend(&samples(&resumed), Some(2666));
    assert_eq!(t.samples, 3);
    assert!(
        (t.growth_per_min.unwrap_or_default() - 10.0).abs() < 1e-9,
        "{t:?}"
    );
    let eta = t.eta_seconds.unwrap_or_default();
    assert!((eta - 1626.0 * 6.0).abs() < 1e-6, "{eta}");
}

/// Three readings within seconds are no trend, however steep; a minute is.
#[test]
fn the_fit_needs_a_minute_of_readings() {
    let quick = trend(&every_second(0, &[100, 130, 160]), Some(1000));
    assert_eq!(quick, Trend::none(3));
    let just_short = trend(&samples(&[(0, 100), (30, 110), (59, 120)]), Some(1000));
    assert_eq!(just_short, Trend::none(3));
    // Control: the same climb over exactly a minute has its rate and ETA.
    let minute = trend(&samples(&[(0, 100), (30, 110), (60, 120)]), Some(1000));
    assert!((minute.growth_per_min.unwrap_or_default() - 20.0).abs() < 1e-9);
    assert!(minute.eta_seconds.is_some());
}

/// A climb that stopped: the fit over the window is still positive, but the newest minute is
/// flat, so there is no ETA; the control keeps climbing and keeps its ETA.
#[test]
fn flat_newest_readings_have_no_eta_whatever_came_before() {
    let mut stopped: Vec<(i64, u64)> = (0..6).map(|i| (i * 60, 1000 + 10 * i as u64)).collect();
    stopped.extend([(360, 1050), (420, 1050)]);
    let t = trend(&samples(&stopped), Some(2000));
    assert!(t.growth_per_min.unwrap_or_default() > 0.0, "{t:?}");
    assert_eq!(t.eta_seconds, None);
    let climbing: Vec<(i64, u64)> = (0..8).map(|i| (i * 60, 1000 + 10 * i as u64)).collect();
    let t = trend(&samples(&climbing), Some(2000));
    assert!(t.eta_seconds.is_some(), "{t:?}");
    // Falling newest readings (not steep enough to be a drop): no ETA either.
    let mut dipping = climbing.clone();
    dipping.extend([(480, 1068), (540, 1066)]);
    assert_eq!(trend(&samples(&dipping), Some(2000)).eta_seconds, None);
}

/// What counts as a drop: at least 5 slots and 2 % of the earlier reading.
#[test]
fn a_drop_is_five_slots_and_two_percent() {
    assert!(is_drop(164, 3));
    assert!(is_drop(250, 245), "5 slots, 2 % of 250");
    assert!(!is_drop(250, 246), "4 slots");
    assert!(!is_drop(1000, 981), "19 slots, under 2 % of 1,000");
    assert!(is_drop(1000, 980));
    assert!(!is_drop(10, 20) && !is_drop(10, 10));
    // A noisy climb whose dips are no drops keeps its whole window (and its ETA).
    let noisy: Vec<(i64, u64)> = [1000, 1012, 1008, 1021, 1017, 1030]
        .iter()
        .enumerate()
        .map(|(i, &u)| (i as i64 * 60, u))
        .collect();
    let t = trend(&samples(&noisy), Some(2000));
    assert_eq!(t.samples, 6);
    assert!(t.eta_seconds.is_some(), "{t:?}");
}

mod props {
    use proptest::prelude::*;

    use super::super::*;

    fn series() -> impl Strategy<Value = Vec<HistorySample>> {
        prop::collection::vec((1i64..120_000, 0u64..400), 0..40).prop_map(|steps| {
            let mut at = 0;
            let mut used = 1000u64;
            steps
                .into_iter()
                .map(|(gap, v)| {
                    at += gap;
                    used = (used + v).saturating_sub(200);
                    HistorySample { at_ms: at, used }
                })
                .collect()
        })
    }

    proptest! {
        /// An ETA only ever comes from readings spanning a minute, after the last drop, with
        /// the newest reading above the one a minute before it.
        #[test]
        fn an_eta_needs_a_span_no_drop_and_a_rising_newest_minute(h in series()) {
            let t = trend(&h, Some(5000));
            if t.eta_seconds.is_some() {
                let seg = segment(&h);
                prop_assert_eq!(seg.len(), t.samples);
                prop_assert!(seg.len() >= TREND_MIN_SAMPLES);
                let (first, last) = (seg[0], seg[seg.len() - 1]);
                prop_assert!(last.at_ms - first.at_ms >= TREND_MIN_SPAN_MS);
                prop_assert!(seg.windows(2).all(|w| !is_drop(w[0].used, w[1].used)));
                let before = seg.iter().rev().find(|s| s.at_ms <= last.at_ms - TREND_MIN_SPAN_MS);
                prop_assert!(before.is_some_and(|b| last.used > b.used));
                prop_assert!(t.growth_per_min.is_some_and(|g| g > 0.0));
            }
        }

        /// Control: a strictly rising table read at least every minute for two minutes or
        /// more (no drops, by construction) always has its ETA while under the limit.
        #[test]
        fn a_steady_climb_always_has_its_eta(
            gaps in prop::collection::vec(1_000i64..60_000, 3..30),
            rise in 1u64..50,
        ) {
            let mut at = 0;
            let mut h = vec![HistorySample { at_ms: 0, used: 1000 }];
            for (i, g) in gaps.iter().enumerate() {
                at += g;
                h.push(HistorySample { at_ms: at, used: 1000 + rise * (i as u64 + 1) });
            }
            prop_assume!((2 * TREND_MIN_SPAN_MS..=TREND_WINDOW_MS).contains(&at));
            let t = trend(&h, Some(100_000));
            prop_assert!(t.eta_seconds.is_some(), "{:?}", t);
        }
    }
}
