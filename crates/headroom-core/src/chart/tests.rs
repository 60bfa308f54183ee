use super::*;
use crate::slot_reading::RecordedReading;

const T0: i64 = 1_787_997_600; // 2026-08-29T10:00:00Z

fn poll(at: i64, used: u64, limit: u64, source: &str) -> ReadRow {
    ReadRow {
        at_secs: Some(at),
        reading: RecordedReading {
            used: Some(used),
            zombies: Some(used / 2),
            limit: Some(limit),
            limit_source: Some(source.into()),
            ..RecordedReading::default()
        },
        action: "poll".into(),
        ..ReadRow::default()
    }
}

fn kill_row(at: i64, used: u64, result: &str, emergency: bool) -> ReadRow {
    ReadRow {
        action: "kill:15+9".into(),
        result: result.into(),
        override_: emergency.then(|| "emergency".into()),
        ..poll(at, used, 2666, "rlimit-nproc")
    }
}

fn chart(rows: &[ReadRow]) -> Chart {
    Chart::build(rows, &[], 50.0, 75.0)
}

#[test]
fn no_rows_make_an_empty_chart_with_a_usable_axis() {
    let c = chart(&[]);
    assert!(c.is_empty());
    assert!(c.end > c.start, "a zero-width axis would divide by zero");
    assert_eq!(c.y_top(), 10);
    let b = c.buckets(40);
    assert_eq!(b.len(), 40);
    assert!(
        b.iter()
            .all(|b| b.readings == 0 && !b.gap && b.limit.is_none())
    );
}

#[test]
fn one_row_sits_mid_axis_with_its_limit() {
    let c = chart(&[poll(T0, 801, 4000, "per-uid")]);
    assert_eq!((c.start, c.end), (T0 - 30, T0 + 30));
    assert_eq!(
        c.limits,
        vec![LimitStep {
            from: T0,
            to: T0,
            limit: 4000,
            source: Some("per-uid".into())
        }]
    );
    let b = c.buckets(10);
    assert_eq!(b[5].readings, 1);
    assert_eq!(b[5].used_max, Some(801));
    assert_eq!(b[5].limit, Some(4000));
    assert_eq!(b.iter().filter(|b| b.limit.is_some()).count(), 1);
    assert!(c.gaps.is_empty());
}

#[test]
fn buckets_keep_the_peak_and_the_trough_of_each_column() {
    let rows: Vec<ReadRow> = (0..60)
        .map(|i| poll(T0 + i * 60, 1000 + (i as u64 % 7) * 100, 4000, "per-uid"))
        .collect();
    let c = chart(&rows);
    let b = c.buckets(6);
    assert_eq!(b.iter().map(|b| b.readings).sum::<usize>(), 60);
    assert_eq!(b[0].readings, 10);
    // Minutes 0..9 hold 1000..1600 and 1000..1200.
    assert_eq!((b[0].used_min, b[0].used_max), (Some(1000), Some(1600)));
    assert_eq!(b[0].zombies_max, Some(800));
    assert_eq!(b[0].from, T0);
    assert_eq!(b[5].to, T0 + 59 * 60);
    // Adjacent buckets tile the axis.
    assert!(b.windows(2).all(|w| w[0].to == w[1].from));
    // The last reading lands in the last column, not past it.
    assert_eq!(c.column(c.end, 6), 5);
    assert_eq!(c.column(c.start - 1000, 6), 0);
}

#[test]
fn rows_out_of_order_are_placed_by_time() {
    let c = chart(&[
        poll(T0 + 120, 3, 10, "per-uid"),
        poll(T0, 1, 10, "per-uid"),
        poll(T0 + 60, 2, 10, "per-uid"),
    ]);
    assert_eq!(
        c.points.iter().map(|p| p.used).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(c.limits.len(), 1);
    assert_eq!((c.limits[0].from, c.limits[0].to), (T0, T0 + 120));
}

#[test]
fn a_gap_of_hours_breaks_the_series_and_the_limit() {
    let mut rows: Vec<ReadRow> = (0..10)
        .map(|i| poll(T0 + i * 60, 2000, 2666, "per-uid"))
        .collect();
    let later = T0 + 4 * 3600;
    rows.extend((0..10).map(|i| poll(later + i * 60, 2100, 2666, "per-uid")));
    let c = chart(&rows);
    assert_eq!(
        c.gaps,
        vec![Gap {
            from: T0 + 9 * 60,
            to: later
        }]
    );
    assert_eq!(c.limits.len(), 2, "no limit is drawn across the gap");
    assert_eq!(c.limits[0].to, T0 + 9 * 60);
    assert_eq!(c.limits[1].from, later);
    // Four hours shown as 5 % of the ten minutes with readings: about 4 of 80 columns.
    let b = c.buckets(80);
    let gap_cols = b.iter().filter(|b| b.gap).count();
    assert!((2..=4).contains(&gap_cols), "{gap_cols}");
    assert!(b[0].readings > 0 && !b[0].gap && b[79].readings > 0);
    assert!(b.iter().filter(|b| b.gap).all(|b| b.limit.is_none()));
    assert!(c.in_gap(T0 + 3600) && !c.in_gap(T0 + 60));
}

#[test]
fn a_few_missed_polls_are_not_a_gap() {
    let mut rows: Vec<ReadRow> = (0..10)
        .map(|i| poll(T0 + i * 60, 2000, 2666, "per-uid"))
        .collect();
    rows.push(poll(T0 + 9 * 60 + 600, 2000, 2666, "per-uid"));
    assert!(chart(&rows).gaps.is_empty());
}

#[test]
fn a_limit_changing_mid_series_is_two_adjacent_steps_with_their_sources() {
    let mut rows: Vec<ReadRow> = (0..5)
        .map(|i| poll(T0 + i * 60, 2701, 4000, "per-uid"))
        .collect();
    rows.extend((5..10).map(|i| poll(T0 + i * 60, 2744, 2666, "rlimit-nproc")));
    let c = chart(&rows);
    assert_eq!(
        c.limits,
        vec![
            LimitStep {
                from: T0,
                to: T0 + 5 * 60,
                limit: 4000,
                source: Some("per-uid".into())
            },
            LimitStep {
                from: T0 + 5 * 60,
                to: T0 + 9 * 60,
                limit: 2666,
                source: Some("rlimit-nproc".into())
            },
        ]
    );
    assert_eq!(c.limit_at(T0 + 60).map(|s| s.limit), Some(4000));
    assert_eq!(c.limit_at(T0 + 8 * 60).map(|s| s.limit), Some(2666));
    // The column holding the change shows the binding (lower) limit.
    let b = c.buckets(3);
    assert_eq!(b[0].limit, Some(4000));
    assert_eq!(
        (b[1].limit, b[1].source.as_deref()),
        (Some(2666), Some("rlimit-nproc"))
    );
    // Usage above the limit stays above it: the axis is not clipped to the limit.
    assert!(c.y_top() >= 4000);
}

#[test]
fn the_same_limit_from_another_source_is_a_new_step() {
    let c = chart(&[
        poll(T0, 2000, 2666, "per-uid"),
        poll(T0 + 60, 2000, 2666, "rlimit-nproc"),
    ]);
    assert_eq!(c.limits.len(), 2);
}

#[test]
fn readings_without_a_limit_leave_a_hole_in_the_step_line() {
    let mut no_limit = poll(T0 + 60, 5, 0, "");
    no_limit.reading.limit = None;
    no_limit.reading.limit_source = None;
    let c = chart(&[
        poll(T0, 5, 10, "per-uid"),
        no_limit,
        poll(T0 + 120, 5, 10, "per-uid"),
    ]);
    assert_eq!(c.limits.len(), 2);
    assert_eq!((c.limits[0].from, c.limits[0].to), (T0, T0 + 60));
    assert_eq!(c.limits[1].from, T0 + 120);
    assert_eq!(c.points.len(), 3, "the reading still counts");
}

#[test]
fn cleanups_are_marks_with_freed_slots_and_emergency_apart() {
    let c = chart(&[
        poll(T0, 2744, 2666, "rlimit-nproc"),
        kill_row(
            T0 + 60,
            2744,
            "sigkill;reaped=526;freed=527;verified=true",
            true,
        ),
        kill_row(
            T0 + 61,
            2744,
            "sigkill;reaped=264;freed=265;verified=true",
            false,
        ),
        ReadRow {
            action: "cleanup".into(),
            result: "no-targets;unreadable=2".into(),
            ..poll(T0 + 120, 2038, 2666, "rlimit-nproc")
        },
        poll(T0 + 180, 1900, 2666, "rlimit-nproc"),
    ]);
    assert_eq!(c.points.len(), 2, "cleanup rows are not readings");
    assert_eq!(
        c.cleanups,
        vec![
            CleanupMark {
                at: T0 + 60,
                used: Some(2744),
                emergency: true,
                freed: Some(527),
                no_targets: false
            },
            CleanupMark {
                at: T0 + 61,
                used: Some(2744),
                emergency: false,
                freed: Some(265),
                no_targets: false
            },
            CleanupMark {
                at: T0 + 120,
                used: Some(2038),
                emergency: false,
                freed: None,
                no_targets: true
            },
        ]
    );
    let b = c.buckets(3);
    assert_eq!((b[1].emergency, b[1].cleanups, b[1].freed), (1, 1, 792));
    assert_eq!((b[2].emergency, b[2].cleanups, b[2].freed), (0, 1, 0));
}

#[test]
fn a_result_without_freed_or_with_garbage_has_no_freed_figure() {
    assert_eq!(result_field("sigterm;reaped=3;freed=4", "freed"), Some(4));
    assert_eq!(result_field("sigterm;freed=x", "freed"), None);
    assert_eq!(result_field("no-targets", "freed"), None);
    assert_eq!(result_field("unfreed=3", "freed"), None);
}

#[test]
fn the_archived_14_field_row_is_a_mark_at_its_own_time() {
    // The file's bytes as the store reads them (`store::evidence::read_file` is `parse`
    // over the file's content).
    let p = std::path::Path::new("evidence.1.csv");
    let text = crate::evidence_csv::fixture::archived_14_field_row();
    let (rows, anomalies) = crate::evidence_csv::parse(p, text.as_bytes()).unwrap();
    let c = Chart::build(&rows, &anomalies, 50.0, 75.0);
    assert_eq!(c.points.len(), 86);
    let at = 1_787_940_593; // 2026-08-28T18:09:53Z
    assert_eq!(
        c.unread,
        vec![Unread {
            at: Some(at),
            file: p.display().to_string(),
            line: 88
        }]
    );
    // It extends the axis to its time and is counted in the last column.
    assert_eq!(c.end, at);
    let b = c.buckets(20);
    assert_eq!(b[19].unread, 1);
    assert_eq!(b.iter().map(|b| b.unread).sum::<usize>(), 1);
    // The old layout has no limit_source: the step is there, without a source.
    assert_eq!(c.limits[0].source, None);
    assert_eq!(c.limits[0].limit, 4000);
}

#[test]
fn rows_without_a_readable_time_are_unread_without_a_place() {
    let mut r = poll(T0, 5, 10, "per-uid");
    r.at_secs = None;
    let broken = Anomaly {
        file: "f".into(),
        line: 3,
        fields: 0,
        expected: 16,
        text: "CSV error: invalid UTF-8".into(),
    };
    let c = Chart::build(&[r, poll(T0, 5, 10, "per-uid")], &[broken], 50.0, 75.0);
    assert_eq!(c.points.len(), 1);
    assert_eq!(c.unread.len(), 2);
    assert!(c.unread.iter().all(|u| u.at.is_none()));
    assert_eq!(c.buckets(4).iter().map(|b| b.unread).sum::<usize>(), 0);
}

#[test]
fn scale_maps_values_to_levels_and_clamps() {
    let s = Scale::new(3000, 80);
    assert_eq!(s.level(0), 0);
    assert_eq!(s.level(3000), 80);
    assert_eq!(s.level(9999), 80, "above the top is clamped, not wrapped");
    assert_eq!(s.level(1500), 40);
    assert_eq!(s.level(2666), 71);
    assert_eq!(s.level_pct(2666, 75.0), 53);
    assert_eq!(s.level_pct(4000, 50.0), 53);
    assert_eq!(
        Scale::new(0, 8).level(0),
        0,
        "a zero top does not divide by zero"
    );
}

#[test]
fn the_axis_top_is_a_round_number_above_everything() {
    assert_eq!(nice_ceiling(0), 10);
    assert_eq!(nice_ceiling(10), 10);
    assert_eq!(nice_ceiling(11), 20);
    assert_eq!(nice_ceiling(2881), 3000);
    assert_eq!(nice_ceiling(4200), 5000);
    assert_eq!(nice_ceiling(7000), 8000);
    assert_eq!(nice_ceiling(8001), 10_000);
    assert_eq!(nice_ceiling(u64::MAX), u64::MAX);
    let c = chart(&[poll(T0, 2744, 2666, "rlimit-nproc")]);
    assert_eq!(c.y_top(), 3000);
}

#[test]
fn columns_between_readings_hold_the_last_value_but_not_across_a_gap() {
    let c = chart(&[
        poll(T0, 100, 4000, "per-uid"),
        poll(T0 + 60, 300, 4000, "per-uid"),
        poll(T0 + 120, 200, 4000, "per-uid"),
    ]);
    let b = c.buckets(12);
    assert_eq!(b[0].value(), Some(100));
    assert_eq!(b[3].held, Some(100));
    assert_eq!(b[6].used_max, Some(300));
    assert_eq!(b[8].value(), Some(300));
    assert_eq!(b[11].value(), Some(200));
    assert!(b.iter().all(|b| b.value().is_some()));

    let mut rows: Vec<ReadRow> = (0..10)
        .map(|i| poll(T0 + i * 60, 2000, 2666, "per-uid"))
        .collect();
    rows.extend((0..10).map(|i| poll(T0 + 4 * 3600 + i * 60, 2100, 2666, "per-uid")));
    let b = chart(&rows).buckets(40);
    assert!(b.iter().filter(|b| b.gap).all(|b| b.value().is_none()));
    assert!(b.iter().filter(|b| !b.gap).all(|b| b.value().is_some()));
}

#[test]
fn a_gap_of_hours_is_shrunk_on_the_axis_and_the_axis_inverts() {
    let mut rows: Vec<ReadRow> = (0..=60)
        .map(|i| poll(T0 + i * 60, 2000, 2666, "per-uid"))
        .collect();
    let later = T0 + 10 * 3600;
    rows.extend((0..=60).map(|i| poll(later + i * 60, 2100, 2666, "per-uid")));
    let c = chart(&rows);
    // Two hours of readings and a 9-hour gap shown as 5 % of them.
    let len = 7200.0 + 7200.0 * 0.05;
    assert!((c.x(T0 + 3600) - 3600.0 / len).abs() < 1e-9);
    assert!((c.x(later) - (3600.0 + 360.0) / len).abs() < 1e-9);
    assert_eq!(c.x(c.start), 0.0);
    assert_eq!(c.x(c.end), 1.0);
    assert_eq!(c.x(c.end + 999), 1.0, "outside the axis is clamped");
    for t in [
        T0,
        T0 + 1800,
        T0 + 3600,
        T0 + 5 * 3600,
        later,
        later + 1800,
        c.end,
    ] {
        assert!((c.time_at(c.x(t)) - t).abs() <= 1, "{t}");
    }
    // Monotonic across the gap.
    let xs: Vec<f64> = (0..100).map(|i| c.x(T0 + i * 660)).collect();
    assert!(xs.windows(2).all(|w| w[0] <= w[1]));
    let b = c.buckets(80);
    let gap_cols = b.iter().filter(|b| b.gap).count();
    assert!((2..=4).contains(&gap_cols), "{gap_cols}");
    assert_eq!(b.iter().map(|b| b.readings).sum::<usize>(), 122);
}

#[test]
fn without_gaps_the_axis_is_plain_time() {
    let c = chart(&[poll(T0, 1, 10, "per-uid"), poll(T0 + 100, 1, 10, "per-uid")]);
    assert!((c.x(T0 + 25) - 0.25).abs() < 1e-9);
    assert_eq!(c.time_at(0.5), T0 + 50);
}
