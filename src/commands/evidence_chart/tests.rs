use super::*;
use crate::core::slot_reading::RecordedReading;
use crate::store::evidence::{ReadRow, read_file};

const GLYPHS_ASCII: &str = " #=-.|+^E?";

fn fixture() -> Chart {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/evidence-2026-08-29/evidence.csv");
    let (rows, anomalies) = read_file(&p).unwrap();
    assert!(anomalies.is_empty());
    Chart::build(&rows, &anomalies, 50.0, 75.0)
}

fn plot_rows(out: &str, title_lines: usize) -> Vec<Vec<char>> {
    out.lines()
        .skip(title_lines)
        .take(HEIGHT + 1)
        .map(|l| l.chars().collect())
        .collect()
}

fn title_lines(out: &str) -> usize {
    out.lines()
        .position(|l| l.contains(" ┤") || l.contains(" |"))
        .unwrap()
}

#[test]
fn every_line_fits_the_width_and_the_plot_fills_it() {
    let c = fixture();
    for width in [40, 80, 200] {
        for ascii in [false, true] {
            let out = render(&c, width, ascii);
            for l in out.lines() {
                assert!(l.chars().count() <= width, "{width}: `{l}`");
            }
            let t = title_lines(&out);
            let rows = plot_rows(&out, t);
            assert_eq!(rows.len(), HEIGHT + 1);
            assert!(rows.iter().all(|r| r.len() == width), "{width} {ascii}");
            if ascii {
                assert!(out.is_ascii(), "{out}");
            }
        }
    }
}

#[test]
fn the_fixture_at_80_columns_shows_both_limits_the_marks_and_the_gap() {
    let c = fixture();
    let out = render(&c, 80, false);
    let t = title_lines(&out);
    let rows = plot_rows(&out, t);
    let gutter = thousands(c.y_top()).len() + 2;
    let n = 80 - gutter;
    let col = |ts: &str| {
        let at = humantime::parse_rfc3339(ts)
            .unwrap()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        gutter + c.column(at, n)
    };
    let scale = Scale::new(c.y_top(), (HEIGHT * 8) as u32);
    let row_of = |v: u64| HEIGHT - 1 - (scale.level(v) as usize / 8).min(HEIGHT - 1);
    // The per-uid 4,000 the trap was measured against, mid-evening…
    assert_eq!(rows[row_of(4000)][col("2026-08-29T18:00:00Z")], '━');
    // …and the rlimit-nproc 2,666 that bound, after the re-read and after the restart.
    assert_eq!(rows[row_of(2666)][col("2026-08-29T22:55:00Z")], '━');
    assert_eq!(rows[row_of(2666)][col("2026-08-30T01:20:00Z")], '━');
    assert_ne!(rows[row_of(4000)][col("2026-08-29T22:55:00Z")], '━');
    // Critical at 75 % of 4,000 while that was the limit.
    assert_eq!(rows[row_of(3000)][col("2026-08-29T18:00:00Z")], '─');
    // The bar reaches 2,744 at 18:00: the cells under it are full.
    assert_eq!(rows[HEIGHT - 1][col("2026-08-29T18:00:00Z")], '█');
    let axis = &rows[HEIGHT];
    assert_eq!(axis[col("2026-08-29T22:42:06Z")], '▲');
    assert_eq!(axis[col("2026-08-30T01:25:38Z")], '◆');
    assert!(axis.contains(&'╌'), "the gap is marked on the axis");
    let gap_col = axis.iter().position(|&ch| ch == '╌').unwrap();
    assert!(
        rows[..HEIGHT].iter().all(|r| r[gap_col] == ' '),
        "nothing is drawn across the gap"
    );
    assert!(out.contains("per-uid 4,000 from 08-29 14:24"), "{out}");
    assert!(out.contains("rlimit-nproc 2,666 from 08-29 22:43"), "{out}");
    assert!(
        out.contains("◆ emergency cleanup (1, 295 slots freed)"),
        "{out}"
    );
    assert!(out.contains("gaps shortened"), "{out}");
    assert!(out.contains("08-29 13:00") && out.contains("08-30 01:28"));
}

#[test]
fn ascii_draws_the_same_chart_in_plain_characters() {
    let c = fixture();
    let uni = render(&c, 80, false);
    let asc = render(&c, 80, true);
    let t = title_lines(&asc);
    let rows = plot_rows(&asc, t);
    for r in &rows {
        for ch in &r[7..] {
            assert!(GLYPHS_ASCII.contains(*ch), "`{ch}` in {asc}");
        }
    }
    let count = |s: &str, ch: char| s.chars().filter(|&c| c == ch).count();
    assert_eq!(
        count(&asc, '='),
        count(&uni, '━') + count("━ limit", '━') - 1
    );
    assert_eq!(count(&rows[HEIGHT].iter().collect::<String>(), '^'), 1);
    assert_eq!(count(&rows[HEIGHT].iter().collect::<String>(), 'E'), 1);
    assert!(
        asc.contains("E emergency cleanup (1, 295 slots freed)"),
        "{asc}"
    );
    assert!(asc.contains("->") && !asc.contains('→'));
}

#[test]
fn wide_charts_label_more_times_and_narrow_ones_the_ends() {
    let c = fixture();
    let labels = |w: usize| {
        let out = render(&c, w, false);
        let t = title_lines(&out);
        out.lines()
            .nth(t + HEIGHT + 1)
            .unwrap()
            .matches(':')
            .count()
    };
    assert_eq!(labels(40), 2);
    assert!(labels(80) >= 3);
    assert!(labels(200) > labels(80));
}

fn poll(at: i64, used: u64, limit: u64) -> ReadRow {
    ReadRow {
        at_secs: Some(at),
        reading: RecordedReading {
            used: Some(used),
            limit: Some(limit),
            limit_source: Some("per-uid".into()),
            ..RecordedReading::default()
        },
        action: "poll".into(),
        ..ReadRow::default()
    }
}

#[test]
fn a_bar_at_a_quarter_of_the_top_fills_two_and_a_half_rows() {
    // Thresholds inside the full cells, where they hide behind the bar.
    let c = Chart::build(&[poll(0, 500, 1000), poll(60, 500, 1000)], &[], 10.0, 20.0);
    assert_eq!(c.y_top(), 2000);
    let out = render(&c, 40, false);
    let rows = plot_rows(&out, title_lines(&out));
    let col = 20;
    // 500 of 2,000 = a quarter of 10 rows = 2.5 rows: two full cells and a half one.
    assert_eq!(rows[HEIGHT - 1][col], '█');
    assert_eq!(rows[HEIGHT - 2][col], '█');
    assert_eq!(rows[HEIGHT - 3][col], '▄');
    assert_eq!(rows[HEIGHT - 4][col], ' ');
    assert_eq!(
        rows[HEIGHT - 6][col],
        '━',
        "the limit 1,000 is at half height"
    );
    assert!(!out.lines().any(|l| l.contains('─') && l.contains('┤')));
}

#[test]
fn one_reading_and_an_unread_row_are_drawn_and_named() {
    let broken = crate::store::evidence::Anomaly {
        file: "evidence.1.csv".into(),
        line: 88,
        fields: 14,
        expected: 13,
        text: "1970-01-01T00:00:50Z,801,239".into(),
        reason: crate::core::evidence_csv::AnomalyKind::FieldCount,
        column: None,
        through_line: None,
    };
    let c = Chart::build(&[poll(30, 801, 4000)], &[broken], 50.0, 75.0);
    let out = render(&c, 40, false);
    assert!(out.contains("? row not interpreted (1)"), "{out}");
    let rows = plot_rows(&out, title_lines(&out));
    assert!(rows[HEIGHT].contains(&'?'), "{out}");
    assert!(
        rows[HEIGHT - 1].contains(&'█') || rows[HEIGHT - 1].contains(&'▂'),
        "{out}"
    );
}

#[test]
fn clock_styles() {
    let t = 1_788_043_361; // 2026-08-29T22:42:41Z
    assert_eq!(clock(t, Clock::Full), "2026-08-29 22:42");
    assert_eq!(clock(t, Clock::Day), "08-29 22:42");
    assert_eq!(clock(t, Clock::Time), "22:42");
}

#[test]
fn wrapping_breaks_between_items_and_cuts_an_overlong_one() {
    let mut s = String::new();
    push_wrapped(
        &mut s,
        &["aaaa".into(), "bbbb".into(), "cccccccccccc".into()],
        10,
        " ",
    );
    assert_eq!(s, "aaaa bbbb\ncccccccccc\n");
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn row() -> impl Strategy<Value = ReadRow> {
        (
            prop_oneof![Just(None), (0i64..4_000_000_000).prop_map(Some)],
            prop_oneof![
                Just(None),
                any::<u64>().prop_map(Some),
                (0u64..5000).prop_map(Some)
            ],
            prop_oneof![
                Just(None),
                any::<u64>().prop_map(Some),
                (1u64..5000).prop_map(Some)
            ],
            prop_oneof![Just("poll"), Just("kill:15+9"), Just("cleanup"), Just("")],
            prop_oneof![
                Just(""),
                Just("sigkill;freed=18446744073709551615"),
                Just("no-targets")
            ],
            any::<bool>(),
        )
            .prop_map(|(at, used, limit, action, result, emergency)| ReadRow {
                at_secs: at,
                reading: RecordedReading {
                    used,
                    zombies: used.map(|u| u / 2),
                    limit,
                    limit_source: Some("per-uid".into()),
                    ..RecordedReading::default()
                },
                action: action.into(),
                result: result.into(),
                override_: emergency.then(|| "emergency".into()),
                ..ReadRow::default()
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn any_log_draws_without_panic_and_fits(
            rows in proptest::collection::vec(row(), 0..40),
            width in MIN_WIDTH..250usize,
            ascii in any::<bool>(),
        ) {
            let c = Chart::build(&rows, &[], 50.0, 75.0);
            let out = render(&c, width, ascii);
            for l in out.lines() {
                prop_assert!(l.chars().count() <= width, "{}", l);
            }
            prop_assert!(crate::commands::evidence_svg::render(&c).is_ok());
        }
    }
}
