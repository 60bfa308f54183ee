//! Fuzz the session-log line classifier, the timestamp parser and the backwards reader with
//! arbitrary bytes: nothing may panic, and each answer must agree with a plain restatement
//! of its rule.

#![no_main]

use std::io::Cursor;

use headroom_core::session_log::{
    FileVerdict, HEARTBEATS, ReaderLimits, is_heartbeat, judge_reader, parse_timestamp,
};
use headroom_core::time::format_secs;
use libfuzzer_sys::fuzz_target;

/// 2026-08-29T09:21:47Z, the incident capture instant.
const NOW: i64 = 1_787_995_307;

fuzz_target!(|data: &[u8]| {
    // The classifier: case-blind, and exactly a substring search of the denylist.
    let heartbeat = is_heartbeat(data);
    assert_eq!(heartbeat, is_heartbeat(&data.to_ascii_uppercase()));
    let plain = HEARTBEATS
        .iter()
        .any(|p| data.windows(p.len()).any(|w| w.eq_ignore_ascii_case(p)));
    assert_eq!(heartbeat, plain);

    // The parser: a timestamp it accepts has the fixed shape, and the second it names
    // formats back to itself (the last second of 9999 plus a leap second leaves the range).
    if let Some(t) = parse_timestamp(data) {
        assert!(data.len() >= 20 && data[10] == b'T');
        match parse_timestamp(format_secs(t).as_bytes()) {
            Some(back) => assert_eq!(back, t),
            None => assert!(t >= 253_402_300_800),
        }
    }

    // The reader over the rest, with a chunk size and budget from the first two bytes.
    if let [c, b, content @ ..] = data {
        let limits = ReaderLimits {
            chunk: 1 + usize::from(*c),
            budget: u64::from(*b) * 16,
            ..ReaderLimits::default()
        };
        let scan = judge_reader(
            &mut Cursor::new(content),
            content.len() as u64,
            NOW,
            &limits,
        );
        assert!(scan.error.is_none());
        assert!(scan.bytes_read <= content.len() as u64);
        if let FileVerdict::Work { at } = scan.verdict {
            assert!(at <= NOW, "live, a line from the future counts as now");
        }
    }
});
