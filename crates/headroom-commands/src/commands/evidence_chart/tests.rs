use super::wrap::push_wrapped;
use super::*;
use crate::core::chart::fixture::{HEADER, T0, chart, poll, polls_then_a_late_cleanup, survey};

const UTC: Zone = Zone::UTC;

pub(crate) fn fixture() -> Chart {
    // The workspace's fixtures, two levels above this crate.
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/evidence-2026-08-29/evidence.csv");
    survey(&std::fs::read_to_string(p).unwrap()).finish(50.0, 75.0)
}

fn draw(c: &Chart, width: usize) -> String {
    render(c, width, false, &UTC)
}

/// The plot rows and the axis line.
fn plot_rows(out: &str) -> Vec<Vec<char>> {
    let first = out
        .lines()
        .position(|l| l.contains(" ┤") || l.contains(" |"))
        .unwrap();
    out.lines()
        .skip(first)
        .take(HEIGHT + 1)
        .map(|l| l.chars().collect())
        .collect()
}

/// The gutter and the columns of a chart `width` wide.
fn geometry(c: &Chart, width: usize) -> (usize, usize) {
    let gutter = y_label(c.y_top()).chars().count().max(4) + 2;
    (gutter, width - gutter)
}

fn secs(ts: &str) -> i64 {
    crate::core::time::parse_secs(ts).unwrap()
}

#[test]
fn every_line_fits_the_width_and_the_plot_fills_it() {
    let c = fixture();
    for width in [30, 40, 80, 200] {
        for ascii in [false, true] {
            let out = render(&c, width, ascii, &UTC);
            for l in out.lines() {
                assert!(l.chars().count() <= width, "{width}: `{l}`");
            }
            let rows = plot_rows(&out);
            assert_eq!(rows.len(), HEIGHT + 1);
            assert!(
                rows[..HEIGHT].iter().all(|r| r.len() == width),
                "{width} {ascii}"
            );
            if ascii {
                assert!(out.is_ascii(), "{out}");
            }
        }
    }
}

#[test]
fn the_legend_at_width_30_breaks_between_words_only() {
    let c = fixture();
    let words = |s: &str| -> std::collections::BTreeSet<String> {
        s.lines()
            .skip_while(|l| !l.contains('└'))
            .skip(3)
            .flat_map(|l| l.split(' ').map(str::to_string).collect::<Vec<_>>())
            .filter(|w| !w.is_empty())
            .collect()
    };
    let wide = words(&draw(&c, 1000));
    let narrow = words(&draw(&c, 30));
    let cut: Vec<&String> = narrow.difference(&wide).collect();
    assert!(cut.is_empty(), "words cut at 30 columns: {cut:?}");
    assert!(narrow.contains("emergency"), "control: the legend is there");
}

#[test]
fn the_fixture_at_80_columns_answers_the_incident_s_questions() {
    let c = fixture();
    let out = draw(&c, 80);
    let rows = plot_rows(&out);
    let (gutter, n) = geometry(&c, 80);
    let col = |ts: &str| gutter + c.column_of(secs(ts), n);
    let scale = Scale::new(c.y_top(), (HEIGHT * 8) as u32);
    let row_of = |v: u64| HEIGHT - 1 - (scale.level(v) as usize / 8).min(HEIGHT - 1);
    // The per-uid 4,000 the trap was measured against, mid-evening…
    assert_eq!(rows[row_of(4000)][col("2026-08-29T18:00:00Z")], '━');
    // …and the rlimit-nproc 2,666 that bound after the restart.
    assert_eq!(rows[row_of(2666)][col("2026-08-30T01:20:00Z")], '━');
    assert_eq!(rows[row_of(3000)][col("2026-08-29T18:00:00Z")], '─');
    // Zombies fill the bar's lower part, live processes its top.
    assert_eq!(rows[HEIGHT - 1][col("2026-08-29T18:00:00Z")], '▒');
    let axis = &rows[HEIGHT];
    assert_eq!(axis[col("2026-08-29T22:42:06Z")], '▲');
    assert_eq!(axis[col("2026-08-30T01:25:38Z")], '◆');
    assert!(axis.contains(&'╌'), "the gap is marked on the axis");
    // 102.9 % of rlimit-nproc at 22:43-23:01: marked over, and the bar breaks the limit line.
    let over: Vec<char> = out
        .lines()
        .find(|l| l.trim_start().starts_with("over"))
        .unwrap()
        .chars()
        .collect();
    let at = col("2026-08-29T22:50:06Z");
    assert_eq!(over[at], '▼');
    assert_ne!(rows[row_of(2666)][at], '━');
    assert_ne!(
        over[col("2026-08-29T18:00:00Z")],
        '▼',
        "control: 68 % of 4,000 is not"
    );
    // Numbered cleanups, each footnote naming what it ended.
    let notes: Vec<char> = out
        .lines()
        .nth(out.lines().position(|l| l.contains('└')).unwrap() + 1)
        .unwrap()
        .chars()
        .collect();
    assert_eq!(notes[col("2026-08-29T22:42:06Z")], '1');
    assert_eq!(notes[col("2026-08-30T01:25:38Z")], '2');
    let text = out.replace('\n', " ");
    for said in [
        "1 08-29 22:42 cleanup: no target; top parent pid 28979 agency (526 zombies) spared",
        "2 08-30 01:25 emergency cleanup: ended pid 9126 agency (265 zombies); 265 reaped, 295 slots freed",
        "fork fails ≈ 08-30 01:30 at 94 slots/min",
        "per-uid 4,000 from 08-29 14:24",
        "rlimit-nproc 2,666 from 08-29 22:43",
        "peak 2,744 of 2,666 (rlimit-nproc), 102.9 %",
        "1 gap drawn shorter (2 h 14 min as 30 min)",
        "no readings 08-29 23:01–08-30 01:15 (2 h 14 min, drawn as 30 min)",
    ] {
        assert!(text.contains(said), "missing `{said}`:\n{out}");
    }
}

#[test]
fn a_column_over_the_limit_is_marked_and_one_under_it_is_not() {
    // 12.5 % over a 4,000 limit, which the limit glyph used to cover.
    let over = chart(&[
        poll(T0, 3000, 4000, "per-uid"),
        poll(T0 + 60, 4500, 4000, "per-uid"),
        poll(T0 + 120, 3000, 4000, "per-uid"),
    ]);
    let out = draw(&over, 40);
    let marks = out
        .lines()
        .find(|l| l.trim_start().starts_with("over"))
        .unwrap();
    assert_eq!(
        marks.matches('▼').count(),
        over.columns(geometry(&over, 40).1)
            .iter()
            .filter(|c| c.over)
            .count()
    );
    assert!(out.contains("▼ at or over the limit"));
    let under = chart(&[
        poll(T0, 3000, 4000, "per-uid"),
        poll(T0 + 60, 3999, 4000, "per-uid"),
        poll(T0 + 120, 3000, 4000, "per-uid"),
    ]);
    let out = draw(&under, 40);
    assert!(!out.contains('▼'), "{out}");
}

#[test]
fn ascii_draws_the_same_chart_in_plain_characters() {
    let c = fixture();
    let asc = render(&c, 80, true, &UTC);
    assert!(asc.is_ascii(), "{asc}");
    let rows = plot_rows(&asc);
    let axis: String = rows[HEIGHT].iter().collect();
    assert_eq!(axis.matches('^').count(), 1);
    assert_eq!(axis.matches('E').count(), 1);
    assert!(asc.contains("E emergency cleanup") && asc.contains("v at or over the limit"));
    assert!(asc.contains("->") && !asc.contains('→'));
}

#[test]
fn time_ticks_fall_on_round_hours() {
    let c = fixture();
    let out = draw(&c, 80);
    let line = out
        .lines()
        .nth(out.lines().position(|l| l.contains('└')).unwrap() + 2)
        .unwrap();
    let labels: Vec<&str> = line.split_whitespace().collect();
    assert!(labels.len() >= 4, "{line}");
    for l in &labels {
        let hm = l.rsplit(' ').next().unwrap();
        assert!(hm.ends_with(":00"), "{line}");
        let h: u32 = hm[..2].parse().unwrap();
        assert_eq!(h % 2, 0, "two-hour ticks: {line}");
    }
    // The control is the old chart's 08-29 17:25: a tick at a time nobody would pick.
    assert!(!line.contains("17:25"));
    // One reading: no label repeated.
    let one = chart(&[poll(T0, 801, 4000, "per-uid")]);
    let out = draw(&one, 80);
    let line = out
        .lines()
        .nth(out.lines().position(|l| l.contains('└')).unwrap() + 1)
        .unwrap();
    let labels: Vec<&str> = line.split_whitespace().collect();
    let mut unique = labels.clone();
    unique.dedup();
    assert!(labels.len() >= 2 && unique.len() == labels.len(), "{line}");
}

#[test]
fn a_laptop_asleep_every_night_says_once_what_was_shortened() {
    let mut rows = Vec::new();
    for day in 0..90 {
        for m in (0..8 * 60).step_by(10) {
            rows.push(poll(T0 + day * 86_400 + m * 60, 100, 4000, "per-uid"));
        }
    }
    let c = chart(&rows);
    let out = draw(&c, 100);
    assert_eq!(
        out.matches("no readings").count(),
        2,
        "the key and one sentence: {out}"
    );
    assert!(
        out.contains("no readings: 89 gaps, 59 days 22 h in all"),
        "{out}"
    );
    assert!(out.contains("89 gaps drawn shorter ("), "{out}");
    // Control: a gap drawn as long as it lasted is not said to be shortened.
    let mut rows: Vec<String> = (0..600)
        .map(|i| poll(T0 + i * 60, 5, 10, "per-uid"))
        .collect();
    rows.push(poll(T0 + 599 * 60 + 1200, 5, 10, "per-uid"));
    let out = draw(&chart(&rows), 100);
    assert!(
        !out.contains("shorter") && !out.contains("drawn as"),
        "{out}"
    );
    assert!(out.contains("(20 min)"), "{out}");
}

#[test]
fn a_month_long_gap_says_how_long() {
    let c = chart(&[
        poll(T0, 5, 10, "per-uid"),
        poll(T0 + 60, 5, 10, "per-uid"),
        poll(T0 + 60 + 31 * 86_400 + 4 * 3600, 5, 10, "per-uid"),
        poll(T0 + 120 + 31 * 86_400 + 4 * 3600, 5, 10, "per-uid"),
    ]);
    let out = draw(&c, 80).replace('\n', " ");
    assert!(out.contains("(31 days 4 h, drawn as"), "{out}");
    assert!(!out.contains("over 2 days"));
}

#[test]
fn log_text_reaches_the_terminal_escaped() {
    let hostile = [
        "per\u{1b}[31m-uid",
        "\u{1b}]8;;https://evil.example\u{7}click\u{1b}]8;;\u{7}",
        "rlimit\nlimit: forged 1 from 00:00",
        "\u{202e}dinu-rep",
        "x\u{FFFE}\u{FFFF}",
    ];
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(vec![]);
    for (i, h) in hostile.iter().enumerate() {
        let at = crate::core::time::format_secs(T0 + i as i64 * 60);
        let limit = (100 + i).to_string();
        let poll = [&at, "5", "2", &limit, h, "", "", "", "", "", "poll", "", ""];
        w.write_record(poll).unwrap();
        let name = "agen\u{1b}[2Jcy";
        let result = "sigkill;freed=1\u{1b}[1A";
        let kill = [
            &at,
            "5",
            "2",
            "",
            "",
            "",
            "",
            "7",
            name,
            "3",
            "kill:15+9",
            result,
            "",
        ];
        w.write_record(kill).unwrap();
    }
    let body = String::from_utf8(w.into_inner().unwrap()).unwrap();
    let text = format!("{HEADER}\n{body}{}\n", poll(T0 + 600, 5, 200, "per-uid"));
    let c = survey(&text).finish(50.0, 75.0);
    let out = draw(&c, 200);
    for raw in ['\u{1b}', '\u{7}', '\u{202e}'] {
        assert!(!out.contains(raw), "{raw:?} in {out:?}");
    }
    assert_eq!(
        out.lines().filter(|l| l.starts_with("limit:")).count(),
        1,
        "no forged legend line: {out}"
    );
    assert!(out.contains("rlimit\\nlimit: forged"), "{out}");
    assert!(out.contains("agen\\u{1b}[2Jcy"), "{out}");
    assert!(
        out.contains("per-uid 200 from"),
        "control: a plain name as it is"
    );
}

#[test]
fn a_shared_ceiling_s_jitter_makes_one_legend_line() {
    let rows: Vec<String> = (0..1440)
        .map(|i| {
            poll(
                T0 + i * 60,
                800,
                4_190_000 + (i as u64 * 37 % 101) * 30,
                "pid-max",
            )
        })
        .collect();
    let out = draw(&chart(&rows), 80);
    let limit_lines = out
        .lines()
        .skip_while(|l| !l.starts_with("limit:"))
        .take_while(|l| !l.starts_with("no ") && !l.contains("projection"))
        .count();
    assert_eq!(limit_lines, 1, "{out}");
    // A source flapping at every row: the first and last named, the rest counted.
    let rows: Vec<String> = (0..1000)
        .map(|i| {
            poll(
                T0 + i * 60,
                800,
                2666,
                if i % 2 == 0 {
                    "per-uid"
                } else {
                    "rlimit-nproc"
                },
            )
        })
        .collect();
    let out = draw(&chart(&rows), 80);
    assert!(out.contains("… 994 more changes …"), "{out}");
    assert!(out.lines().count() < 30, "{out}");
}

#[test]
fn an_off_scale_limit_is_drawn_at_the_top_and_said_to_be() {
    let c = chart(&[
        poll(T0, 2700, u64::MAX, "rlimit-nproc"),
        poll(T0 + 60, 2744, u64::MAX, "rlimit-nproc"),
    ]);
    let out = draw(&c, 60);
    let rows = plot_rows(&out);
    assert!(rows[0].contains(&'━'), "the top row: {out}");
    assert!(out.replace('\n', " ").contains("(off the scale)"), "{out}");
}

#[test]
fn wrapping_breaks_between_items_and_words() {
    let mut s = String::new();
    push_wrapped(
        &mut s,
        &["aaaa".into(), "bbbb".into(), "cccc".into()],
        10,
        "  ",
    );
    assert_eq!(s, "aaaa  bbbb\ncccc\n");
    let mut s = String::new();
    push_wrapped(&mut s, &["one two three four".into()], 9, "  ");
    assert_eq!(s, "one two\nthree\nfour\n");
    let mut s = String::new();
    push_wrapped(&mut s, &["abcdefghijkl".into()], 5, "");
    assert_eq!(
        s, "abcde\n",
        "a word longer than the line is cut, there being no other way"
    );
}

#[test]
fn nothing_is_drawn_after_the_last_reading() {
    let rows = polls_then_a_late_cleanup();
    let c = chart(&rows);
    let out = draw(&c, 70);
    let rows_ = plot_rows(&out);
    let (gutter, n) = geometry(&c, 70);
    let last = gutter + c.column_of(T0 + 9 * 60, n);
    for r in &rows_[..HEIGHT] {
        assert!(r[last + 1..].iter().all(|&ch| ch == ' '), "{out}");
    }
    assert!(
        "█▒".contains(rows_[HEIGHT - 1][last]),
        "control: the last reading is drawn"
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn row() -> impl Strategy<Value = String> {
        (
            0i64..200_000,
            prop_oneof![
                Just("".to_string()),
                (0u64..u64::MAX).prop_map(|v| v.to_string()),
                Just("NaN".into())
            ],
            prop_oneof![Just(None), (0u64..10_000).prop_map(Some)],
            prop_oneof![
                Just(""),
                Just("per-uid"),
                Just("rlimit-nproc"),
                Just("pid-max")
            ],
            prop_oneof![Just("poll"), Just("kill:15+9"), Just("cleanup")],
        )
            .prop_map(|(dt, used, limit, source, action)| {
                format!(
                    "{},{used},1,{},{source},,,,,,{action},freed=3,",
                    crate::core::time::format_secs(T0 + dt),
                    limit.map_or(String::new(), |l| l.to_string())
                )
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn any_log_draws_without_panic_and_fits(rows in proptest::collection::vec(row(), 0..60), width in 30usize..200) {
            let c = chart(&rows);
            for ascii in [false, true] {
                let out = render(&c, width, ascii, &UTC);
                for l in out.lines() {
                    prop_assert!(l.chars().count() <= width, "{}", l);
                }
            }
        }
    }
}
