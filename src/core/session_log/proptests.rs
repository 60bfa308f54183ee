//! Properties over arbitrary input: nothing panics on any bytes, and a file whose lines are
//! all heartbeats never reads as work, whatever the chunk, budget, horizon or clock.

use crate::core::time::format_secs;
use std::io::{Cursor, Write};
use std::time::Instant;

use proptest::prelude::*;

use super::*;

const NOW: i64 = 1_787_995_307;

/// One heartbeat line: a timestamp `offset` seconds from NOW with `digits` fraction digits,
/// then arbitrary bytes (no newline) around a denylist entry in arbitrary ASCII case.
fn heartbeat_line() -> impl Strategy<Value = Vec<u8>> {
    let noise = || {
        proptest::collection::vec(
            any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
            0..30,
        )
    };
    (
        -30_000i64..3_000,
        0usize..8,
        noise(),
        0..HEARTBEATS.len(),
        any::<u64>(),
        noise(),
        any::<bool>(),
    )
        .prop_map(|(offset, digits, before, which, case, after, crlf)| {
            let ts = format_secs(NOW + offset);
            let mut line = ts.as_bytes()[..19].to_vec();
            if digits > 0 {
                line.push(b'.');
                line.extend(std::iter::repeat_n(b'7', digits));
            }
            line.push(b'Z');
            line.extend(before);
            line.extend(HEARTBEATS[which].iter().enumerate().map(|(i, b)| {
                if (case >> (i % 64)) & 1 == 1 {
                    b.to_ascii_uppercase()
                } else {
                    *b
                }
            }));
            line.extend(after);
            if crlf {
                line.push(b'\r');
            }
            line
        })
}

fn limits(chunk: usize, budget: u64, horizon: i64, ignore_future: bool) -> ReaderLimits {
    ReaderLimits {
        chunk,
        budget,
        horizon_secs: horizon,
        future: if ignore_future {
            FutureLines::Ignore
        } else {
            FutureLines::CountAsNow
        },
        ..ReaderLimits::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn line_functions_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse_timestamp(&bytes);
        let _ = is_heartbeat(&bytes);
        let upper = bytes.to_ascii_uppercase();
        prop_assert_eq!(is_heartbeat(&bytes), is_heartbeat(&upper));
        let plain = HEARTBEATS.iter().any(|p| super::line::contains_ignore_ascii_case(&bytes, p));
        prop_assert_eq!(is_heartbeat(&bytes), plain);
    }

    /// The reader searches only what follows the timestamp; that must never differ.
    #[test]
    fn searching_after_the_timestamp_finds_the_same(
        line in prop_oneof![
            heartbeat_line(),
            (heartbeat_line(), proptest::collection::vec(any::<u8>(), 0..60)).prop_map(|(h, tail)| {
                let mut l = h[..20].to_vec();
                l.extend(tail);
                l
            }),
        ]
    ) {
        if let Some((_, rest)) = super::line::split_timestamp(&line) {
            prop_assert_eq!(is_heartbeat(rest), is_heartbeat(&line));
        }
    }

    #[test]
    fn timestamps_round_trip(t in -62_167_219_200i64..253_402_300_800) {
        prop_assert_eq!(parse_timestamp(format_secs(t).as_bytes()), Some(t));
    }

    #[test]
    fn heartbeat_only_content_never_reads_as_work(
        lines in proptest::collection::vec(heartbeat_line(), 0..60),
        trailing_newline in any::<bool>(),
        chunk in 1usize..300,
        budget in 0u64..20_000,
        horizon in 0i64..40_000,
        ignore_future in any::<bool>(),
    ) {
        let mut content = lines.join(&b'\n');
        if trailing_newline {
            content.push(b'\n');
        }
        let l = limits(chunk, budget, horizon, ignore_future);
        let s = judge_reader(&mut Cursor::new(&content), content.len() as u64, NOW, &l);
        prop_assert!(
            !matches!(s.verdict, FileVerdict::Work { .. }),
            "{:?}",
            s.verdict
        );
    }

    #[test]
    fn arbitrary_content_never_panics_in_memory(
        content in proptest::collection::vec(any::<u8>(), 0..4000),
        chunk in 0usize..300,
        budget in 0u64..5000,
        now in any::<i64>(),
        horizon in any::<i64>(),
        ignore_future in any::<bool>(),
    ) {
        let l = limits(chunk, budget, horizon, ignore_future);
        let s = judge_reader(&mut Cursor::new(&content), content.len() as u64, now, &l);
        prop_assert!(s.error.is_none());
        prop_assert!(s.bytes_read <= content.len() as u64);
    }
}

proptest! {
    // Each case writes a real file: fewer cases.
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn arbitrary_files_never_panic_in_judge_file(
        content in proptest::collection::vec(any::<u8>(), 0..3000),
        heartbeats in proptest::collection::vec(heartbeat_line(), 0..10),
        chunk in 1usize..300,
        budget in 0u64..5000,
        ignore_future in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.log");
        let mut f = std::fs::File::create(&path).unwrap();
        f.write_all(&content).unwrap();
        drop(f);
        let l = limits(chunk, budget, 6 * 3600, ignore_future);
        let r = judge_file(&path, NOW, &l, Instant::now);
        prop_assert!(r.bytes_read <= content.len() as u64);

        // Heartbeats only, as a real file, judged through the directory too.
        let hb = heartbeats.join(&b'\n');
        std::fs::write(&path, &hb).unwrap();
        let r = judge_file(&path, NOW, &l, Instant::now);
        prop_assert!(!matches!(r.verdict, FileVerdict::Work { .. }), "{:?}", r.verdict);
        let d = judge_dir(dir.path(), NOW, &l, Instant::now).unwrap();
        prop_assert!(!matches!(d.verdict, DirVerdict::Work { .. }), "{:?}", d.verdict);
    }
}
