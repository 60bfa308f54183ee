use super::fixture::{T0, chart, kill, poll, polls_then_a_late_cleanup, survey};
use super::ticks::{TickStep, Unit, step_for, ticks};
use super::*;

fn utc(_: i64) -> i32 {
    0
}

#[test]
fn no_rows_make_an_empty_chart_with_a_usable_axis() {
    let c = chart(&[]);
    assert!(c.is_empty());
    assert!(
        c.axis.end > c.axis.start,
        "a zero-width axis would divide by zero"
    );
    assert_eq!(c.y_top(), 10);
    let cols = c.columns(40);
    assert_eq!(cols.len(), 40);
    assert!(
        cols.iter()
            .all(|c| c.kind == ColumnKind::Empty && c.readings == 0)
    );
}

#[test]
fn one_row_sits_mid_axis_with_its_limit_and_round_second_ticks() {
    let c = chart(&[poll(T0, 801, 4000, "per-uid")]);
    assert_eq!((c.axis.start, c.axis.end), (T0 - 30, T0 + 30));
    let cols = c.columns(10);
    assert_eq!(cols[5].readings, 1);
    assert_eq!(cols[5].used.map(|e| e.max), Some(801));
    assert_eq!(cols[5].binding_limit(), Some((4000, Some(0))));
    assert_eq!(
        cols.iter().filter(|c| c.kind != ColumnKind::Empty).count(),
        1,
        "one reading is one column: nothing held either side"
    );
    assert_eq!(c.changes.len(), 1);
    // A minute of axis: ticks at round seconds, each a different instant.
    let step = step_for(&c.axis, 0.2);
    assert_eq!(
        step,
        TickStep {
            unit: Unit::Second,
            n: 15
        }
    );
    let t = ticks(&c.axis, step, 0.2, &utc);
    assert!(t.len() >= 3, "{t:?}");
    assert!(t.iter().all(|t| t.at % 15 == 0));
    assert!(t.windows(2).all(|w| w[0].at < w[1].at));
}

#[test]
fn columns_keep_the_envelope_of_each_column() {
    let rows: Vec<String> = (0..60)
        .map(|i| poll(T0 + i * 60, 1000 + (i as u64 % 7) * 100, 4000, "per-uid"))
        .collect();
    let c = chart(&rows);
    let cols = c.columns(6);
    assert_eq!(cols.iter().map(|c| c.readings).sum::<u32>(), 60);
    assert_eq!(cols[0].readings, 10);
    // Minutes 0..9 hold 1000..1600 then 1000..1200: low, high, first, last.
    let e = cols[0].used.unwrap();
    assert_eq!((e.min, e.max, e.first, e.last), (1000, 1600, 1000, 1200));
    assert!(e.min_first);
    assert_eq!(cols[0].zombies.map(|e| e.max), Some(800));
    assert_eq!(cols[0].from, T0);
    assert_eq!(cols[5].to, T0 + 59 * 60);
    assert!(
        cols.windows(2).all(|w| w[0].to == w[1].from),
        "columns tile the axis"
    );
    assert_eq!(c.column_of(c.axis.end, 6), 5);
    assert_eq!(c.column_of(c.axis.start - 1000, 6), 0);
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
    assert_eq!((c.axis.start, c.axis.end), (T0, T0 + 120));
}

#[test]
fn a_gap_of_hours_breaks_the_series_and_is_drawn_shorter() {
    let mut rows: Vec<String> = (0..10)
        .map(|i| poll(T0 + i * 60, 2000, 2666, "per-uid"))
        .collect();
    let later = T0 + 4 * 3600;
    rows.extend((0..10).map(|i| poll(later + i * 60, 2100, 2666, "per-uid")));
    let c = chart(&rows);
    assert_eq!(
        c.axis.gaps,
        vec![Gap {
            from: T0 + 9 * 60,
            to: later
        }]
    );
    // Four hours drawn as 5 % of the 18 minutes with readings: 54 s.
    assert_eq!(
        c.axis.shortened(),
        Shortened {
            gaps: 1,
            real_secs: 4 * 3600 - 9 * 60,
            shown_secs: 54
        }
    );
    let cols = c.columns(80);
    let gap_cols = cols.iter().filter(|c| c.kind == ColumnKind::Gap).count();
    assert!((2..=5).contains(&gap_cols), "{gap_cols}");
    assert!(
        cols.iter()
            .filter(|c| c.kind == ColumnKind::Gap)
            .all(|c| c.binding_limit().is_none())
    );
    assert_eq!(
        (cols[0].kind, cols[79].kind),
        (ColumnKind::Readings, ColumnKind::Readings)
    );
    // Control: the same limit after the gap is no change to name.
    assert_eq!(c.changes.len(), 1);
    assert!(c.axis.gap_at(T0 + 3600).is_some() && c.axis.gap_at(T0 + 60).is_none());
}

#[test]
fn a_few_missed_polls_are_not_a_gap_and_between_columns_hold_the_last_value() {
    let mut rows: Vec<String> = (0..10)
        .map(|i| poll(T0 + i * 60, 2000 + i as u64, 2666, "per-uid"))
        .collect();
    rows.push(poll(T0 + 9 * 60 + 600, 2500, 2666, "per-uid"));
    let c = chart(&rows);
    assert!(c.axis.gaps.is_empty());
    let cols = c.columns(40);
    let between: Vec<&Column> = cols
        .iter()
        .filter(|c| c.kind == ColumnKind::Between && c.from > T0 + 9 * 60)
        .collect();
    assert!(between.len() > 5, "{cols:?}");
    assert!(
        between.iter().all(|c| c.used_peak() == Some(2009)),
        "the machine held 2,009 until the next reading"
    );
}

#[test]
fn nothing_is_drawn_after_the_last_reading_up_to_a_later_cleanup() {
    // Polls end at T0 + 9 min; a cleanup is logged an hour later.
    let rows = polls_then_a_late_cleanup();
    let c = chart(&rows);
    let cols = c.columns(60);
    let last = c.column_of(T0 + 9 * 60, 60);
    assert!(last < 20, "{last}");
    assert!(
        cols[last + 1..]
            .iter()
            .all(|c| c.used_peak().is_none() && c.kind == ColumnKind::Empty),
        "an hour of bars that never happened"
    );
    assert_eq!(cols[59].cleanups, 1, "the cleanup is still marked");
    // Control: before the last reading, every column is a reading (one a minute, 10 cols).
    assert!(cols[..=last].iter().all(|c| c.used_peak() == Some(2000)));
}

#[test]
fn a_reading_at_or_over_its_limit_marks_its_column() {
    let c = chart(&[
        poll(T0, 3999, 4000, "per-uid"),
        poll(T0 + 60, 4000, 4000, "per-uid"),
        poll(T0 + 120, 4500, 4000, "per-uid"),
        poll(T0 + 180, 3000, 4000, "per-uid"),
    ]);
    let cols = c.columns(4);
    assert_eq!(
        cols.iter().map(|c| c.over).collect::<Vec<_>>(),
        [false, true, true, false],
        "control: 3,999 of 4,000 is not over"
    );
    let w = c.worst.unwrap();
    assert_eq!((w.used, w.limit, w.at), (4500, 4000, T0 + 120));
    assert!((w.pct() - 112.5).abs() < 1e-9);
}

#[test]
fn a_limit_changing_source_or_per_user_value_is_named() {
    let mut rows: Vec<String> = (0..5)
        .map(|i| poll(T0 + i * 60, 2701, 2666, "per-uid"))
        .collect();
    rows.extend((5..10).map(|i| poll(T0 + i * 60, 2701, 4000, "per-uid")));
    rows.extend((10..15).map(|i| poll(T0 + i * 60, 2744, 2666, "rlimit-nproc")));
    let c = chart(&rows);
    let got: Vec<(i64, u64, Option<&str>)> = c
        .changes
        .iter()
        .map(|ch| (ch.at - T0, ch.limit, c.source_name(ch.source)))
        .collect();
    assert_eq!(
        got,
        [
            (0, 2666, Some("per-uid")),
            (300, 4000, Some("per-uid")),
            (600, 2666, Some("rlimit-nproc"))
        ]
    );
    // The column holding the change shows the binding (lower) limit and its source.
    let cols = c.columns(3);
    assert_eq!(cols[0].binding_limit(), Some((2666, Some(0))));
    assert_eq!(cols[1].binding_limit().map(|l| l.0), Some(4000));
    assert_eq!(
        c.source_name(cols[2].binding_limit().unwrap().1),
        Some("rlimit-nproc")
    );
}

#[test]
fn a_shared_ceiling_moving_at_every_reading_is_named_once() {
    // pid-max less what other users hold: a day of per-minute readings, each a little off.
    let rows: Vec<String> = (0..1440)
        .map(|i| {
            let jitter = (i * 37 % 101) as u64;
            poll(T0 + i * 60, 800, 4_190_000 + jitter * 30, "pid-max")
        })
        .collect();
    let c = chart(&rows);
    assert_eq!(
        c.changes.len(),
        1,
        "{:?}",
        &c.changes[..c.changes.len().min(5)]
    );
    // Control: a move of more than 5 % is named; a per-user ceiling's smallest change too.
    let mut rows = rows[..10].to_vec();
    rows.push(poll(T0 + 3600, 800, 3_700_000, "pid-max"));
    rows.push(poll(T0 + 3660, 800, 2666, "rlimit-nproc"));
    rows.push(poll(T0 + 3720, 800, 2667, "rlimit-nproc"));
    let c = chart(&rows);
    assert_eq!(
        c.changes.iter().map(|ch| ch.limit).collect::<Vec<_>>(),
        [c.changes[0].limit, 3_700_000, 2666, 2667]
    );
}

#[test]
fn readings_without_a_limit_are_readings_with_a_hole_in_the_limit() {
    let c = chart(&[
        poll(T0, 5, 10, "per-uid"),
        format!("{},5,2,,,,,,,,poll,,", crate::time::format_secs(T0 + 60)),
        poll(T0 + 120, 5, 10, "per-uid"),
    ]);
    assert_eq!(c.points.len(), 3, "the reading still counts");
    let cols = c.columns(3);
    assert_eq!(cols[1].binding_limit(), None);
    assert_eq!(
        c.changes.len(),
        1,
        "the same limit after the hole is no change"
    );
}

#[test]
fn cleanups_are_marks_naming_what_they_ended() {
    let c = chart(&[
        poll(T0, 2744, 2666, "rlimit-nproc"),
        kill(
            T0 + 60,
            2744,
            "sigkill;reaped=526;freed=527;verified=true",
            true,
        ),
        kill(
            T0 + 61,
            2744,
            "sigkill;reaped=264;freed=265;verified=true",
            false,
        ),
        format!(
            "{},2038,1000,2666,rlimit-nproc,,,28979,agency,526,cleanup,no-targets;unreadable=2,",
            crate::time::format_secs(T0 + 120)
        ),
        poll(T0 + 180, 1900, 2666, "rlimit-nproc"),
    ]);
    assert_eq!(c.points.len(), 2, "cleanup rows are not readings");
    let m = &c.cleanups[0];
    assert_eq!(
        (
            m.at,
            m.emergency,
            m.killed,
            m.freed,
            m.reaped,
            m.pid,
            m.name.as_deref(),
            m.zombies
        ),
        (
            T0 + 60,
            true,
            true,
            Some(527),
            Some(526),
            Some(9126),
            Some("agency"),
            Some(265)
        )
    );
    let none = &c.cleanups[2];
    assert_eq!(
        (none.killed, none.freed, none.pid, none.result.as_str()),
        (false, None, Some(28979), "no-targets;unreadable=2")
    );
    assert_eq!(freed_total(&c.cleanups), 792);
    let cols = c.columns(3);
    assert_eq!((cols[1].emergency, cols[1].cleanups), (1, 1));
    assert_eq!((cols[2].emergency, cols[2].cleanups), (0, 1));
}

#[test]
fn a_result_without_freed_or_with_garbage_has_no_freed_figure() {
    assert_eq!(result_field("sigterm;reaped=3;freed=4", "freed"), Some(4));
    assert_eq!(result_field("sigterm;reaped=3", "freed"), None);
    assert_eq!(result_field("freed=lots", "freed"), None);
    assert_eq!(result_field("unfreed=4", "freed"), None);
}

#[test]
fn the_archived_14_field_row_is_a_mark_at_its_own_time() {
    let text = crate::evidence_csv::fixture::archived_14_field_row();
    let c = survey(&text).finish(50.0, 75.0);
    assert_eq!(c.points.len(), 86);
    assert_eq!(c.unread.len(), 1);
    assert_eq!(
        c.unread[0].at,
        crate::time::parse_secs("2026-08-28T18:09:53Z").ok()
    );
    assert_eq!(
        c.axis.end,
        c.unread[0].at.unwrap(),
        "the mark extends the axis"
    );
    let cols = c.columns(20);
    assert_eq!(cols[19].unread, 1);
}

#[test]
fn rows_without_a_readable_time_are_unread_without_a_place() {
    let c = chart(&[
        poll(T0, 5, 10, "per-uid"),
        "yesterday,5,2,10,per-uid,,,,,,poll,,".into(),
    ]);
    assert_eq!(c.points.len(), 1);
    assert_eq!(c.unread.len(), 1);
    assert_eq!(c.unread[0].at, None);
    assert!(c.columns(10).iter().all(|c| c.unread == 0));
}

#[test]
fn an_unreadable_count_is_a_mark_not_a_silent_hole() {
    let c = chart(&[
        poll(T0, 5, 10, "per-uid"),
        format!(
            "{},NaN,2,10,per-uid,,,,,,poll,,",
            crate::time::format_secs(T0 + 60)
        ),
        poll(T0 + 120, 5, 10, "per-uid"),
    ]);
    assert_eq!(c.points.len(), 2);
    assert_eq!(
        c.unread.iter().map(|u| u.at).collect::<Vec<_>>(),
        [Some(T0 + 60)]
    );
    assert_eq!(c.columns(3)[1].unread, 1);
}

#[test]
fn the_projection_runs_from_the_last_reading_to_the_limit() {
    let g = |at: i64, used: u64, growth: &str, eta: &str| {
        format!(
            "{},{used},1,2666,rlimit-nproc,{growth},{eta},,,,poll,,",
            crate::time::format_secs(at)
        )
    };
    let rows = vec![
        g(T0 - 600, 2200, "", ""),
        g(T0, 2300, "", ""),
        g(T0 + 60, 2394, "94.00", "173"),
        g(T0 + 120, 2488, "94.00", "114"),
    ];
    let c = chart(&rows);
    let p = c.projection.unwrap();
    assert_eq!(
        (p.from_at, p.from_used, p.at, p.limit),
        (T0 + 120, 2488, T0 + 234, 2666)
    );
    assert_eq!(p.value_at(T0 + 234), 2666);
    assert_eq!(c.axis.end, T0 + 234, "the axis reaches the projected time");
    // Without a recorded ETA it is worked out from the growth.
    let mut r2 = rows.clone();
    r2[3] = g(T0 + 120, 2488, "89.00", "");
    assert_eq!(chart(&r2).projection.unwrap().at, T0 + 120 + 120);
    // Controls: not growing, at the limit, or a cleanup after the last reading: none.
    for last in [
        g(T0 + 120, 2488, "-3.00", ""),
        g(T0 + 120, 2666, "94.00", "0"),
    ] {
        let mut r = rows.clone();
        r[3] = last;
        assert_eq!(chart(&r).projection, None);
    }
    let mut r = rows.clone();
    r.push(kill(T0 + 130, 2488, "sigkill;reaped=3;freed=4", false));
    assert_eq!(chart(&r).projection, None);
    assert_eq!(c.drawn_projection(), c.projection, "near: drawn");
    // Far away (beyond a quarter of the record past its end): said, not drawn, and the
    // axis (the title's range) stays the record's instead of running on past it.
    let mut r = rows.clone();
    r[3] = g(T0 + 120, 2488, "0.01", "");
    let c = chart(&r);
    assert!(c.projection.unwrap().at > T0 + 100_000);
    assert_eq!(c.axis.end, T0 + 120, "the record's end");
    assert_eq!(c.drawn_projection(), None);
    // Control: just inside the quarter (12 min of record: 3 min of room), drawn whole.
    let mut r = rows;
    r[3] = g(T0 + 120, 2488, "94.00", "180");
    let c = chart(&r);
    assert_eq!(c.axis.end, T0 + 300);
    assert!(c.drawn_projection().is_some());
}
