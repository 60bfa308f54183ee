//! The chart's axes: the value scale and its round top, gaps' share of the time axis, the
//! axis placing and inverting times, and round time ticks in the reader's clock.

use super::fixture::{T0, chart, poll};
use super::ticks::{TickStep, Unit, step_for, ticks};
use super::*;

fn utc(_: i64) -> i32 {
    0
}

#[test]
fn scale_maps_values_to_levels_and_clamps() {
    let s = Scale::new(4000, 80);
    assert_eq!(s.level(0), 0);
    assert_eq!(s.level(2000), 40);
    assert_eq!(s.level(4000), 80);
    assert_eq!(s.level(u64::MAX), 80, "clamped, never overflowing");
    assert_eq!(s.level_pct(4000, 75.0), 60);
    assert_eq!(Scale::new(0, 10).level(5), 10, "a zero top is treated as 1");
    assert!((s.frac(1000) - 0.25).abs() < 1e-12);
}

#[test]
fn the_axis_top_is_a_round_number_above_everything_but_an_off_scale_limit() {
    assert_eq!(nice_ceiling(0), 10);
    assert_eq!(nice_ceiling(2744), 3000);
    assert_eq!(nice_ceiling(4001), 5000);
    assert_eq!(nice_ceiling(u64::MAX), u64::MAX);
    let c = chart(&[poll(T0, 2744, 2666, "rlimit-nproc")]);
    assert_eq!(c.y_top(), 3000);
    // RLIMIT_INFINITY written as a number does not flatten the readings to the axis.
    let c = chart(&[
        poll(T0, 2744, u64::MAX, "rlimit-nproc"),
        poll(T0 + 60, 2750, 4000, "per-uid"),
    ]);
    assert_eq!(c.y_top(), 5000);
    let c = chart(&[poll(T0, 99_999_999_999_999_999, 10, "pid-max")]);
    assert_eq!(c.y_top(), MAX_TOP, "a corrupt count is capped");
}

#[test]
fn many_gaps_take_a_quarter_of_the_axis_at_most_and_say_so_exactly() {
    // A laptop asleep every night: 8 h awake at a reading a minute, 16 h asleep, 90 nights.
    let mut rows = Vec::new();
    for day in 0..90 {
        for m in (0..8 * 60).step_by(10) {
            rows.push(poll(T0 + day * 86_400 + m * 60, 100, 4000, "per-uid"));
        }
    }
    let c = chart(&rows);
    assert_eq!(c.axis.gaps.len(), 89);
    let with_readings = 90.0 * (8 * 3600 - 600) as f64;
    let s = c.axis.shortened();
    assert_eq!(s.gaps, 89);
    assert_eq!(s.real_secs, 89 * (16 * 3600 + 600));
    assert!(
        (s.shown_secs as f64 - with_readings * 0.25).abs() < 100.0,
        "{s:?}"
    );
    // Control: one short gap below the cap is drawn as it lasted, and said to be so.
    let mut rows: Vec<String> = (0..600)
        .map(|i| poll(T0 + i * 60, 5, 10, "per-uid"))
        .collect();
    rows.push(poll(T0 + 599 * 60 + 1200, 5, 10, "per-uid"));
    let c = chart(&rows);
    assert_eq!(c.axis.gaps.len(), 1);
    assert_eq!(c.axis.shortened(), Shortened::default());
}

#[test]
fn the_axis_inverts_and_places_by_binary_search() {
    let mut rows: Vec<String> = Vec::new();
    for k in 0..40 {
        for i in 0..10 {
            rows.push(poll(T0 + k * 7200 + i * 60, 5, 10, "per-uid"));
        }
    }
    let c = chart(&rows);
    assert_eq!(c.axis.gaps.len(), 39);
    let a = &c.axis;
    let mut prev = -1.0;
    for t in (a.start..=a.end).step_by(97) {
        let x = a.x(t);
        assert!(x >= prev, "monotonic at {t}");
        prev = x;
        if a.gap_at(t).is_none() {
            assert!((a.time_at(x) - t).abs() <= 1, "{t}");
        }
    }
    assert_eq!((a.x(a.start), a.x(a.end)), (0.0, 1.0));
    assert_eq!(a.stretch(T0 + 9 * 60), 0);
    assert_eq!(
        a.stretch(T0 + 7200),
        1,
        "a reading at a gap's end starts the next stretch"
    );
}

#[test]
fn two_hour_ticks_fall_on_even_hours_in_the_reader_s_clock() {
    // 13:00 to 01:28 the next day, as the README incident.
    let start = T0 + 3 * 3600;
    let rows: Vec<String> = (0..150)
        .map(|i| poll(start + i * 300, 2700, 4000, "per-uid"))
        .collect();
    let c = chart(&rows);
    let step = step_for(&c.axis, 0.13);
    assert_eq!(
        step,
        TickStep {
            unit: Unit::Hour,
            n: 2
        }
    );
    let t = ticks(&c.axis, step, 0.13, &utc);
    assert!(t.iter().all(|t| t.at % 7200 == 0), "{t:?}");
    assert_eq!(t[0].at, start + 3600, "14:00, not 13:00 + a step");
    // Local time five and a half hours ahead: ticks on the local even hours.
    let ist = |_: i64| 5 * 3600 + 1800;
    let t = ticks(&c.axis, step, 0.13, &ist);
    assert!(t.iter().all(|t| (t.at + 19_800) % 7200 == 0), "{t:?}");
    // Days and months.
    let long: Vec<String> = (0..400)
        .map(|d| poll(T0 + d * 86_400, 5, 10, "per-uid"))
        .collect();
    let c = chart(&long);
    let step = step_for(&c.axis, 0.1);
    assert_eq!(
        step,
        TickStep {
            unit: Unit::Month,
            n: 3
        }
    );
    let t = ticks(&c.axis, step, 0.1, &utc);
    for tick in &t {
        let s = crate::time::format_secs(tick.at);
        assert!(s.ends_with("-01T00:00:00Z"), "{s}");
        let month: u32 = s[5..7].parse().unwrap();
        assert_eq!((month - 1) % 3, 0, "{s}");
    }
}

#[test]
fn a_laptop_asleep_every_night_still_has_its_dates_on_the_axis() {
    // 90 days of readings from 08:00 to 22:00, asleep every night: every midnight, and
    // so every day, week and month tick, falls in a gap.
    let day0 = T0 - 2 * 3600; // 2026-08-29T08:00:00Z
    let awake: Vec<String> = (0..90)
        .flat_map(|d| (0..29).map(move |h| poll(day0 + d * 86_400 + h * 1800, 5, 10, "per-uid")))
        .collect();
    let c = chart(&awake);
    assert_eq!(c.axis.gaps.len(), 89);
    let step = step_for(&c.axis, 0.1);
    let t = ticks(&c.axis, step, 0.1, &utc);
    assert!(t.len() >= 5, "{step:?}: {t:?}");
    assert!(t[0].x < 0.2 && t[t.len() - 1].x > 0.8, "{t:?}");
    for w in t.windows(2) {
        assert!(w[1].x - w[0].x >= 0.1 && w[1].at > w[0].at, "{t:?}");
    }
    for tick in &t {
        assert!(
            crate::time::format_secs(tick.at).ends_with("T00:00:00Z"),
            "round: {t:?}"
        );
    }
    // Control: awake day and night (no gaps; 90 days drawn, not 66: monthly ticks).
    let always: Vec<String> = (0..90 * 48)
        .map(|i| poll(day0 + i * 1800, 5, 10, "per-uid"))
        .collect();
    let c = chart(&always);
    let t2 = ticks(&c.axis, step_for(&c.axis, 0.1), 0.1, &utc);
    assert!(t2.len() >= 3 && t2[0].x < 0.2, "{t2:?}");
}
