use super::*;
use crate::commands::evidence_chart::tests::fixture;
use crate::core::chart::fixture::{HEADER, T0, chart, kill, poll, survey};

const UTC: Zone = Zone::UTC;

fn svg(c: &Chart) -> String {
    render(c, &UTC).unwrap()
}

/// The document is XML: it parses, and every character is one XML 1.0 allows.
fn assert_well_formed(svg: &str) {
    let mut r = quick_xml::Reader::from_str(svg);
    loop {
        match r.read_event() {
            Ok(quick_xml::events::Event::Eof) => break,
            Ok(_) => {}
            Err(e) => panic!("not XML at {}: {e}", r.buffer_position()),
        }
    }
    let bad: Vec<char> = svg
        .chars()
        .filter(|&c| !matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..))
        .collect();
    assert!(bad.is_empty(), "characters XML forbids: {bad:?}");
}

fn attr(line: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let i = line.find(&key)? + key.len();
    Some(line[i..].split('"').next()?.to_string())
}

/// The points of every polyline of `class`.
fn polylines(svg: &str, class: &str) -> Vec<Vec<(f64, f64)>> {
    let tag = format!("<polyline class=\"{class}\" ");
    svg.lines()
        .filter(|l| l.starts_with(&tag))
        .map(|l| {
            attr(l, "points")
                .unwrap()
                .split(' ')
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

fn circles(svg: &str, class: &str) -> Vec<(f64, f64)> {
    let tag = format!("<circle class=\"{class}\" ");
    svg.lines()
        .filter(|l| l.starts_with(&tag))
        .map(|l| {
            (
                attr(l, "cx").unwrap().parse().unwrap(),
                attr(l, "cy").unwrap().parse().unwrap(),
            )
        })
        .collect()
}

/// Texts of `class`: their box (estimated as the drawing does) and content.
fn texts(svg: &str, class: &str) -> Vec<(Box2, String)> {
    let tag = format!("<text class=\"{class}\" ");
    svg.lines()
        .filter(|l| l.starts_with(&tag))
        .map(|l| {
            let x: f64 = attr(l, "x").unwrap().parse().unwrap();
            let y: f64 = attr(l, "y").unwrap().parse().unwrap();
            let px: f64 = attr(l, "font-size").unwrap().parse().unwrap();
            let content = l[l.find('>').unwrap() + 1..l.rfind("</text>").unwrap()].to_string();
            let w = text_width(&content, px);
            let x0 = match attr(l, "text-anchor").as_deref() {
                Some("end") => x - w,
                Some("middle") => x - w / 2.0,
                _ => x,
            };
            (
                Box2 {
                    x0,
                    y0: y - px * 0.8,
                    x1: x0 + w,
                    y1: y + px * 0.2,
                },
                content,
            )
        })
        .collect()
}

/// The plot's frame: left, top, right, bottom.
fn plot(svg: &str) -> (f64, f64, f64, f64) {
    let l = svg
        .lines()
        .find(|l| l.starts_with("<rect class=\"plot\""))
        .unwrap();
    let v = |k| attr(l, k).unwrap().parse::<f64>().unwrap();
    (v("x"), v("y"), v("x") + v("width"), v("y") + v("height"))
}

#[test]
fn the_replay_is_well_formed_self_contained_and_says_itself_in_a_sentence() {
    let text = svg(&fixture());
    assert_well_formed(&text);
    for banned in [
        "<script",
        "href",
        "url(",
        "@import",
        "<image",
        "<foreignObject",
        "<style",
    ] {
        assert!(!text.contains(banned), "{banned}");
    }
    assert!(text.contains(r##"fill="#FFFFFF""##), "an opaque ground");
    assert!(text.contains(
        "<title id=\"title\">headroom evidence: process slots, 2026-08-29 13:00 → 08-30 01:30 UTC</title>"
    ));
    let desc = text.lines().find(|l| l.starts_with("<desc")).unwrap();
    for said in [
        "peak 2,744 of 2,666 rlimit-nproc at 08-29 22:43 (102.9 %)",
        "fork fails ≈ 08-30 01:30 at 94 slots/min",
        "2 cleanups (1 emergency), 295 slots freed",
    ] {
        assert!(desc.contains(said), "{said}: {desc}");
    }
    assert_eq!(polylines(&text, "used").len(), 2, "broken at the gap");
    assert_eq!(
        polylines(&text, "limit").len(),
        3,
        "per-uid, then rlimit-nproc before and after the gap"
    );
    assert_eq!(text.matches("<polygon class=\"cleanup\"").count(), 1);
    assert_eq!(text.matches("<polygon class=\"emergency\"").count(), 1);
    assert!(text.contains("<rect class=\"over\""));
    assert_eq!(polylines(&text, "projection").len(), 1);
    let numbers: Vec<String> = texts(&text, "cleanup-number")
        .into_iter()
        .map(|t| t.1)
        .collect();
    assert_eq!(numbers, ["1", "2"]);
    let panel: Vec<String> = texts(&text, "panel-text")
        .into_iter()
        .map(|t| t.1)
        .collect();
    assert!(
        panel
            .join(" ")
            .contains("ended pid 9126 agency (265 zombies)"),
        "{panel:?}"
    );
}

#[test]
fn no_label_sits_on_a_line() {
    let c = fixture();
    let text = svg(&c);
    let mut lines = polylines(&text, "used");
    lines.extend(polylines(&text, "zombies"));
    lines.extend(polylines(&text, "limit"));
    let labels: Vec<(Box2, String)> = ["limit-label", "projection-label", "cleanup-number"]
        .iter()
        .flat_map(|c| texts(&text, c))
        .collect();
    assert!(labels.len() >= 4, "{labels:?}");
    for (b, label) in &labels {
        for line in &lines {
            for w in line.windows(2) {
                // Sample each segment every half pixel.
                let len = ((w[1].0 - w[0].0).abs() + (w[1].1 - w[0].1).abs()).max(1.0);
                for k in 0..=(len * 2.0) as usize {
                    let t = k as f64 / (len * 2.0);
                    let (x, y) = (
                        w[0].0 + (w[1].0 - w[0].0) * t,
                        w[0].1 + (w[1].1 - w[0].1) * t,
                    );
                    assert!(
                        !(x > b.x0 && x < b.x1 && y > b.y0 && y < b.y1),
                        "`{label}` at {b:?} is crossed at ({x}, {y})"
                    );
                }
            }
        }
    }
    for (i, (a, la)) in labels.iter().enumerate() {
        for (b, lb) in &labels[i + 1..] {
            let apart = a.x1 <= b.x0 || b.x1 <= a.x0 || a.y1 <= b.y0 || b.y1 <= a.y0;
            assert!(apart, "`{la}` and `{lb}` overlap");
        }
    }
}

#[test]
fn hostile_text_makes_a_well_formed_svg() {
    let mut rows = Vec::new();
    for (i, h) in [
        "x\u{FFFE}y\u{FFFF}",
        "<script>alert(1)</script>",
        "a\u{1b}]8;;x\u{7}b\nc",
        "&amp;\"'",
    ]
    .iter()
    .enumerate()
    {
        let at = crate::core::time::format_secs(T0 + i as i64 * 60);
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(vec![]);
        let limit = (100 + i).to_string();
        w.write_record([
            at.as_str(),
            "5",
            "2",
            limit.as_str(),
            h,
            "",
            "",
            "7",
            h,
            "3",
            "kill:15+9",
            "freed=1",
            "",
        ])
        .unwrap();
        rows.push(
            String::from_utf8(w.into_inner().unwrap())
                .unwrap()
                .trim_end()
                .to_string(),
        );
    }
    rows.push(poll(T0 + 600, 5, 200, "per-uid"));
    let c = survey(&format!("{HEADER}\n{}\n", rows.join("\n"))).finish(50.0, 75.0);
    let text = svg(&c);
    assert_well_formed(&text);
    assert!(text.contains("x\\u{fffe}y\\u{ffff}"), "replaced, visibly");
    assert!(!text.contains("<script"));
    assert!(text.contains("&lt;script&gt;"));
    assert!(!text.contains('\u{1b}'));
    assert!(text.contains("per-uid"), "control: a plain name as it is");
}

#[test]
fn a_million_points_worth_of_log_stays_small() {
    // 60,000 readings with 400 gaps: each series is four points a pixel column at most.
    let mut rows = Vec::with_capacity(60_000);
    let mut t = T0;
    for i in 0..60_000u64 {
        t += if i % 150 == 149 { 7200 } else { 60 };
        rows.push(poll(t, 1000 + i % 977, 4000 + i % 3, "pid-max"));
    }
    let c = chart(&rows);
    assert_eq!(c.axis.gaps.len(), 400);
    let text = svg(&c);
    assert!(text.len() < 500 * 1024, "{} bytes", text.len());
    let (x0, _, x1, _) = plot(&text);
    let points: usize = polylines(&text, "used").iter().map(Vec::len).sum();
    assert!(points <= 4 * (x1 - x0) as usize, "{points}");
    assert_well_formed(&text);
}

#[test]
fn a_single_reading_is_a_dot_not_a_one_pixel_line() {
    let text = svg(&chart(&[poll(T0, 801, 4000, "per-uid")]));
    assert_eq!(circles(&text, "used-dot").len(), 1);
    let limit = &polylines(&text, "limit")[0];
    assert!(limit[limit.len() - 1].0 - limit[0].0 >= 8.0, "{limit:?}");
    // Control: a run of readings is a line, without a dot.
    let rows: Vec<String> = (0..30)
        .map(|i| poll(T0 + i * 60, 801, 4000, "per-uid"))
        .collect();
    let text = svg(&chart(&rows));
    assert!(circles(&text, "used-dot").is_empty());
    assert_eq!(polylines(&text, "used").len(), 1);
}

/// The times the terminal chart draws a bar in, and those the SVG draws the used line over,
/// agree to a terminal column: both are drawings of one model.
#[test]
fn the_terminal_chart_and_the_svg_draw_the_same_readings() {
    let mut rows: Vec<String> = (0..30)
        .map(|i| poll(T0 + i * 60, 2000 + i as u64 * 10, 2666, "rlimit-nproc"))
        .collect();
    let later = T0 + 29 * 60 + 3 * 3600;
    rows.extend((0..20).map(|i| poll(later + i * 60, 2300, 2666, "rlimit-nproc")));
    // A cleanup an hour after the last reading: neither drawing may hold a value to it.
    rows.push(kill(
        later + 19 * 60 + 3600,
        2300,
        "sigkill;reaped=5;freed=6",
        false,
    ));
    let c = chart(&rows);
    let width = 100;
    let term = crate::commands::evidence_chart::render(&c, width, false, &UTC);
    let gutter = term
        .lines()
        .find(|l| l.contains('┤'))
        .unwrap()
        .chars()
        .position(|ch| ch == '┤')
        .unwrap()
        + 1;
    let n = width - gutter;
    let cols = c.columns(n);
    let bars: Vec<bool> = (0..n)
        .map(|j| {
            term.lines().filter(|l| l.contains('┤')).any(|l| {
                l.chars()
                    .nth(gutter + j)
                    .is_some_and(|ch| "▁▂▃▄▅▆▇█▒".contains(ch))
            })
        })
        .collect();
    let text = svg(&c);
    let (x0, _, x1, _) = plot(&text);
    let time = |x: f64| c.axis.time_at((x - x0) / (x1 - x0));
    let runs: Vec<(i64, i64)> = polylines(&text, "used")
        .iter()
        .map(|r| (time(r[0].0), time(r[r.len() - 1].0)))
        .collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let term_col = |t: i64| c.column_of(t, n);
    // Every stretch the SVG draws, the terminal draws (to a column either side)…
    for &(a, b) in &runs {
        for t in [a, (a + b) / 2, b] {
            let j = term_col(t);
            assert!(
                bars[j.saturating_sub(1)..=(j + 1).min(n - 1)]
                    .iter()
                    .any(|&x| x),
                "{t}"
            );
        }
    }
    // …and every column the terminal draws, the SVG draws through.
    for (j, _) in bars.iter().enumerate().filter(|(_, b)| **b) {
        let (from, to) = (cols[j].from, cols[j].to);
        let slack = to - from;
        assert!(
            runs.iter()
                .any(|&(a, b)| from <= b + slack && to >= a - slack),
            "column {j} ({from}–{to}) drawn in the terminal only"
        );
    }
    // The hour after the last reading is empty in both (the old terminal chart held 2,300).
    let last = later + 19 * 60;
    assert!(bars[term_col(last) + 2..].iter().all(|b| !b));
    assert!(runs.iter().all(|&(_, b)| b <= last + 60));
}

#[test]
fn an_off_scale_limit_is_at_the_top_in_both_drawings() {
    let c = chart(&[
        poll(T0, 2700, u64::MAX, "rlimit-nproc"),
        poll(T0 + 60, 2744, u64::MAX, "rlimit-nproc"),
    ]);
    let text = svg(&c);
    let (_, top, _, _) = plot(&text);
    let limit = &polylines(&text, "limit")[0];
    assert!(
        limit.iter().all(|p| (p.1 - top).abs() < 0.5),
        "{limit:?} vs {top}"
    );
    let term = crate::commands::evidence_chart::render(&c, 60, false, &UTC);
    let first_row = term.lines().find(|l| l.contains('┤')).unwrap();
    assert!(first_row.contains('━'), "{term}");
}

#[test]
fn a_projection_far_past_the_record_is_said_with_its_year_and_not_drawn() {
    let g = |at: i64, used: u64, growth: &str| {
        format!(
            "{},{used},1,4194304,pid-max,{growth},,,,,poll,,",
            crate::core::time::format_secs(at)
        )
    };
    // A day of readings growing 1.5 slots a minute: the limit is years away.
    let mut rows: Vec<String> = (0..1440)
        .map(|i| g(T0 + i * 60, 1_500_000 + i as u64, ""))
        .collect();
    rows.push(g(T0 + 1440 * 60, 1_501_440, "1.50"));
    let far = chart(&rows);
    let term = crate::commands::evidence_chart::render(&far, 100, false, &UTC);
    let text = svg(&far);
    assert!(
        term.contains("\nprojection: fork fails ≈ 2030-01-28 02:42 (in 1,246 days 16 h) at 1.5"),
        "the year and how long, no glyph of a line not drawn: {term}"
    );
    assert!(!term.contains('·'), "{term}");
    assert_eq!(far.axis.end, T0 + 1440 * 60, "the axis is the record's");
    assert_eq!(polylines(&text, "projection").len(), 0);
    assert!(
        text.contains("fork fails ≈ 2030-"),
        "said in the SVG's words"
    );
    assert!(!text.contains("projection to the limit"), "no key for it");
    // Control: growing 300 a minute, it is reached within the picture and drawn in both.
    let last = rows.len() - 1;
    rows[last] = g(T0 + 1440 * 60, 4_100_000, "300");
    let near = chart(&rows);
    let term = crate::commands::evidence_chart::render(&near, 100, false, &UTC);
    assert!(term.contains("· projection: fork fails"), "{term}");
    assert_eq!(polylines(&svg(&near), "projection").len(), 1);
}

#[test]
fn a_shared_ceiling_s_jitter_labels_its_line_once() {
    // A day of per-minute readings under pid-max less what other users hold.
    let jitter = |i: i64| 4_190_000 + (i as u64 * 37 % 101) * 30;
    let rows: Vec<String> = (0..1440)
        .map(|i| poll(T0 + i * 60, 800, jitter(i), "pid-max"))
        .collect();
    let text = svg(&chart(&rows));
    assert_eq!(texts(&text, "limit-label").len(), 1, "one label, not 1,399");
    // Control: a per-user ceiling that really changes, twice, is labelled at each change.
    let rows: Vec<String> = (0..1440)
        .map(|i| {
            poll(
                T0 + i * 60,
                800,
                [2666, 4000, 2666][i as usize / 480],
                "per-uid",
            )
        })
        .collect();
    assert_eq!(texts(&svg(&chart(&rows)), "limit-label").len(), 3);
}

#[test]
fn seven_digit_and_longer_y_labels_keep_clear_of_the_axis_title() {
    let title = |text: &str| {
        let l = text
            .lines()
            .find(|l| l.starts_with("<text class=\"y-title\""))
            .unwrap();
        // Turned a quarter: its glyphs stand within a font-size of x.
        let x: f64 = attr(l, "x").unwrap().parse().unwrap();
        x + 14.0 * 0.3
    };
    for limit in [2_666, 4_194_304, 4_000_000_000_000] {
        let rows: Vec<String> = (0..60)
            .map(|i| poll(T0 + i * 60, limit / 2, limit, "pid-max"))
            .collect();
        let text = svg(&chart(&rows));
        let labels = texts(&text, "y-label");
        assert!(
            labels.iter().any(|(_, s)| s.len() >= 9) || limit < 10_000_000,
            "{labels:?}"
        );
        let left = labels.iter().map(|(b, _)| b.x0).fold(f64::MAX, f64::min);
        assert!(left >= title(&text) + 4.0, "{limit}: {left} vs {labels:?}");
        let (x0, ..) = plot(&text);
        let right = labels.iter().map(|(b, _)| b.x1).fold(f64::MIN, f64::max);
        assert!(right <= x0 - 4.0, "{limit}: into the plot: {right} vs {x0}");
    }
}

#[test]
fn a_laptop_asleep_every_night_has_no_pile_of_gap_labels() {
    // 90 days awake 08:00-22:00: 89 nights without readings.
    let day0 = T0 - 2 * 3600;
    let rows: Vec<String> = (0..90)
        .flat_map(|d| (0..29).map(move |h| poll(day0 + d * 86_400 + h * 1800, 5, 10, "per-uid")))
        .collect();
    let c = chart(&rows);
    assert_eq!(c.axis.gaps.len(), 89);
    let text = svg(&c);
    let labels = texts(&text, "gap-label");
    // Turned a quarter, each stands in a column about its font size wide.
    let cols: Vec<f64> = labels.iter().map(|(b, _)| b.x0).collect();
    for (i, a) in cols.iter().enumerate() {
        for b in &cols[i + 1..] {
            assert!(
                (a - b).abs() >= 14.0,
                "gap labels on top of each other: {cols:?}"
            );
        }
    }
    assert!(labels.len() <= 10, "{}", labels.len());
    assert!(
        text.contains("no readings: 89 gaps"),
        "said once, in the panel"
    );
    // Control: one long gap is labelled on the plot.
    let mut one: Vec<String> = (0..60)
        .map(|i| poll(T0 + i * 60, 5, 10, "per-uid"))
        .collect();
    one.extend((0..60).map(|i| poll(T0 + 6 * 3600 + i * 60, 5, 10, "per-uid")));
    assert_eq!(texts(&svg(&chart(&one)), "gap-label").len(), 1);
}
