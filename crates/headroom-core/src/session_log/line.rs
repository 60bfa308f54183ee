//! One log line at a time: the leading UTC timestamp and the heartbeat denylist. Pure byte
//! logic, no I/O, compiled and tested on every OS.

use super::bytes;
use crate::time::{days_from_civil, digits};

/// Substrings (ASCII, lower case) that mark a line as housekeeping rather than work. Every
/// entry was found by measuring the incident machine's logs (reference A.7), not by reading
/// the writers' code:
///
/// - `send_telemetry_events`: the wrapper's telemetry flush, the leak itself (300 of the last
///   400 lines of the dead wrapper's log);
/// - `signal=/v1/metrics`: the OTLP metrics push (the other 100);
/// - `[telemetry-queue]`, `github_telemetry`: the session runtime's telemetry retry worker;
/// - `hyper_util::client::legacy`, `reqwest::connect`: HTTP connection churn (~99 % of the
///   253 MB log tail);
/// - `[managedsettings]`, `[mdm]`: the hourly policy self-fetch, which alone would cap the
///   measured age at one hour;
/// - `managed_settings_resolved`: the session event that fetch emits downstream (the only
///   non-heartbeat content for seven hours of the incident log).
///
/// It is a denylist on purpose: a line nobody recognises counts as work and protects. OTLP
/// trace batches (`received Copilot trace batch … sample=["execute_tool bash", …]`) are
/// deliberately absent: they appear only when a session works.
pub const HEARTBEATS: [&[u8]; 9] = [
    b"send_telemetry_events",
    b"signal=/v1/metrics",
    b"[telemetry-queue]",
    b"github_telemetry",
    b"hyper_util::client::legacy",
    b"reqwest::connect",
    b"[managedsettings]",
    b"[mdm]",
    b"managed_settings_resolved",
];

/// Whether `line` is a known heartbeat: it contains one of [`HEARTBEATS`], ignoring ASCII
/// case. Only ASCII letters are folded, so a non-ASCII look-alike never matches; a missed
/// match reads as work, which is the protective direction.
///
/// This runs on every line of a log tail, and the tail is what the guard pays for on a
/// machine out of slots, so it does not try every entry at every byte: each entry holds a
/// punctuation byte (its anchor, which no case folding changes), a vectorised search finds
/// those bytes, and only there are the entries compared.
pub fn is_heartbeat(line: &[u8]) -> bool {
    // `=` first: it is rare, and the metrics push carries its marker at the very end.
    anchored(line, |h| bytes::find(b'=', h))
        || anchored(line, |h| bytes::find3(b'_', b'[', b':', h))
}

/// Whether an entry sits at one of the anchors `next` finds, one after another.
fn anchored(line: &[u8], next: impl Fn(&[u8]) -> Option<usize>) -> bool {
    let mut from = 0;
    while let Some(i) = line.get(from..).and_then(&next) {
        let pos = from + i;
        for (entry, &(anchor, offset)) in HEARTBEATS.iter().zip(&ANCHORS) {
            if line[pos] == anchor && pos >= offset && contains_at(line, pos - offset, entry) {
                return true;
            }
        }
        from = pos + 1;
    }
    false
}

/// Per entry of [`HEARTBEATS`]: its first byte among `_ [ : =` and that byte's offset.
const ANCHORS: [(u8, usize); HEARTBEATS.len()] = {
    let mut anchors = [(0u8, 0usize); HEARTBEATS.len()];
    let mut i = 0;
    while i < HEARTBEATS.len() {
        let entry = HEARTBEATS[i];
        let mut j = 0;
        while !matches!(entry[j], b'_' | b'[' | b':' | b'=') {
            // Out of bounds here fails the build: every entry needs an anchor.
            j += 1;
        }
        anchors[i] = (entry[j], j);
        i += 1;
    }
    anchors
};

/// Whether `needle` (lower case) is at `hay[pos..]`, ignoring ASCII case.
fn contains_at(hay: &[u8], pos: usize, needle: &[u8]) -> bool {
    hay.get(pos..pos + needle.len())
        .is_some_and(|w| w.eq_ignore_ascii_case(needle))
}

/// Whether `hay` contains `needle` ignoring ASCII case; `needle` must be lower case.
pub(super) fn contains_ignore_ascii_case(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || (0..hay.len()).any(|pos| contains_at(hay, pos, needle))
}

/// The leading `YYYY-MM-DDTHH:MM:SS[.fraction]Z` of `line` as unix seconds, or `None`.
///
/// Only this one shape is accepted, because it is what both writers on the incident machine
/// emit (the wrapper with microseconds, the session with milliseconds): a space for the `T`,
/// a numeric zone (`+02:00`), syslog dates (`Aug 29 …`) and out-of-range fields are
/// rejected, and such a line reads as the continuation of the entry above it. The fraction
/// may have any number of digits (at least one after a `.`) and is dropped: whole seconds.
/// Ranges: month 1–12, day 1–31 (not checked against the month), hour < 24, minute < 60,
/// second ≤ 60 (a leap second reads as the next minute's first).
pub fn parse_timestamp(line: &[u8]) -> Option<i64> {
    split_timestamp(line).map(|(t, _)| t)
}

/// The timestamp and the rest of the line after its `Z`. No heartbeat entry can start
/// inside a timestamp (they start with a letter or `[` that a timestamp never holds), so a
/// caller that has the timestamp need only search the rest.
pub(super) fn split_timestamp(line: &[u8]) -> Option<(i64, &[u8])> {
    if line.len() < 20 {
        return None;
    }
    let sep = |i: usize, c: u8| line[i] == c;
    if !(sep(4, b'-') && sep(7, b'-') && sep(10, b'T') && sep(13, b':') && sep(16, b':')) {
        return None;
    }
    let year = digits(&line[0..4])?;
    let month = digits(&line[5..7])?;
    let day = digits(&line[8..10])?;
    let hour = digits(&line[11..13])?;
    let minute = digits(&line[14..16])?;
    let second = digits(&line[17..19])?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    if hour >= 24 || minute >= 60 || second > 60 {
        return None;
    }
    let mut i = 19;
    if line[i] == b'.' {
        i += 1;
        let frac = line[i..].iter().take_while(|b| b.is_ascii_digit()).count();
        if frac == 0 {
            return None;
        }
        i += frac;
    }
    if line.get(i) != Some(&b'Z') {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some((
        days * 86_400 + hour * 3600 + minute * 60 + second,
        &line[i + 1..],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::format_secs;

    /// S14: the three precisions the incident machine writes all read as the same second.
    #[test]
    fn s14_timestamp_table() {
        for line in [
            "2026-08-29T09:23:13.499123Z DEBUG tokio-runtime-worker",
            "2026-08-29T09:23:13.499Z [DEBUG] Forwarding event",
            "2026-08-29T09:23:13Z x",
            "2026-08-29T09:23:13Z",
            "2026-08-29T09:23:13.4Z",
            "2026-08-29T09:23:13.4991234567890123456789Z longer than any clock",
        ] {
            assert_eq!(
                parse_timestamp(line.as_bytes()),
                Some(1_787_995_393),
                "{line}"
            );
        }
        for bad in [
            "",
            "2026-08-29 09:23:13.499Z space instead of T",
            "2026-08-29T09:23:13.499+02:00 numeric zone",
            "2026-08-29T09:23:13+00:00 numeric zone",
            "Aug 29 09:23:13 host agency[86183]: syslog",
            "2026-13-29T09:23:13Z month 13",
            "2026-00-29T09:23:13Z month 0",
            "2026-08-00T09:23:13Z day 0",
            "2026-08-32T09:23:13Z day 32",
            "2026-08-29T24:00:00Z hour 24",
            "2026-08-29T09:60:00Z minute 60",
            "2026-08-29T09:23:61Z second 61",
            "2026-08-29T09:23:13.Z no fraction digits",
            "2026-08-29T09:23:13 no zone",
            "2026-08-29T09:23:13z lower-case zone",
            "2026-08-29T09:23:1Z",
            " 2026-08-29T09:23:13Z leading space",
            "+026-08-29T09:23:13Z",
            "2026-08-29T09:23:13.499",
            "{\"ts\":\"2026-08-29T09:23:13Z\"}",
        ] {
            assert_eq!(parse_timestamp(bad.as_bytes()), None, "{bad}");
        }
        // A leap second is the next minute's first second.
        assert_eq!(
            parse_timestamp(b"2016-12-31T23:59:60Z"),
            parse_timestamp(b"2017-01-01T00:00:00Z")
        );
        assert_eq!(parse_timestamp(b"1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_timestamp(b"1969-12-31T23:59:59Z"), Some(-1));
    }

    #[test]
    fn formats_back_what_it_parses() {
        for s in [
            "2026-08-29T09:23:13Z",
            "1970-01-01T00:00:00Z",
            "2000-02-29T12:00:00Z",
            "0000-03-01T00:00:00Z",
            "9999-12-31T23:59:59Z",
            "1969-07-20T20:17:40Z",
        ] {
            let t = parse_timestamp(s.as_bytes()).unwrap();
            assert_eq!(format_secs(t), s);
        }
        // Nothing panics at the extremes.
        assert!(format_secs(i64::MIN).starts_with('-'));
        assert!(format_secs(i64::MAX).starts_with('+'));
    }

    /// The anchored search finds exactly what a plain search of every entry finds.
    #[test]
    fn anchored_search_agrees_with_a_plain_search() {
        let plain = |l: &[u8]| HEARTBEATS.iter().any(|p| contains_ignore_ascii_case(l, p));
        let mut lines: Vec<Vec<u8>> = Vec::new();
        for p in HEARTBEATS {
            for cut in 0..=p.len() {
                lines.push(p[..cut].to_vec());
                lines.push(p[cut..].to_vec());
                lines.push([b"xx".as_slice(), &p.to_ascii_uppercase(), b"yy"].concat());
            }
            lines.push([b"2026-08-29T09:23:13Z ".as_slice(), p].concat());
            lines.push([p, b" tail" as &[u8]].concat());
        }
        for l in &lines {
            assert_eq!(is_heartbeat(l), plain(l), "{}", String::from_utf8_lossy(l));
        }
    }

    #[test]
    fn heartbeats_are_the_measured_denylist_in_any_case() {
        for hb in [
            "DEBUG tokio-runtime-worker ThreadId(09) agency::send_telemetry_events: client/agency/src/send_telemetry_events.rs:427: telem periodic flush: queue empty, nothing to commit",
            "DEBUG tokio-runtime-worker ThreadId(11) otel_receiver::server: client/otel_receiver/src/server.rs:136: accepted OTLP signal (not yet processed) signal=/v1/metrics",
            "[INFO] [managedSettings] self-fetch starting for account",
            "[DEBUG] [MDM] Read 3 managed setting(s) from plist",
            "[DEBUG] Forwarding event for session 4da0d54f: session.managed_settings_resolved (ephemeral)",
            "[WARN] [Telemetry-Queue] retrying 3 events",
            "DEBUG GITHUB_TELEMETRY upload",
            "TRACE hyper_util::client::legacy::pool: reuse idle connection",
            "DEBUG reqwest::connect: starting new connection",
        ] {
            assert!(is_heartbeat(hb.as_bytes()), "{hb}");
        }
        for work in [
            "[DEBUG] Forwarding event for session 4da0d54f: assistant.turn_end",
            "[DEBUG] Forwarding event for session 4da0d54f: tool.execution_start",
            "DEBUG otel_receiver::server: received Copilot trace batch span_count=3 sample=[\"execute_tool bash\", \"chat\"]",
            "INFO some_new_module: something nobody has seen before",
            "",
            "send_telemetry",
            // A full-width look-alike is not folded: no match, so it reads as work.
            "\u{ff53}end_telemetry_events",
        ] {
            assert!(!is_heartbeat(work.as_bytes()), "{work}");
        }
    }
}
