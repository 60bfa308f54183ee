//! The backwards reader: one file (or any `Read + Seek`), newest line first, in fixed-size
//! chunks from the end, stopping at the first line of work, the horizon or the byte budget.
//! A log tail of heartbeats costs tens of kilobytes however large the file is, which is what
//! makes the signal affordable on a machine that is already out of process slots.

use std::io::{self, Read, Seek, SeekFrom};

use super::bytes;
use super::line::{is_heartbeat, split_timestamp};
use super::{FileVerdict, FutureLines, ReaderLimits};

/// What a scan found, what it cost, and the I/O error that cut it short, if any.
#[derive(Debug)]
pub struct BackwardScan {
    pub verdict: FileVerdict,
    pub bytes_read: u64,
    pub error: Option<io::Error>,
}

/// The per-line rules, newest line first (reference A.7).
#[derive(Debug)]
struct LineJudge {
    now: i64,
    cutoff: i64,
    future: FutureLines,
    /// The timestamp of the earliest heartbeat read so far, by position in the file.
    earliest: Option<i64>,
}

impl LineJudge {
    fn new(now: i64, limits: &ReaderLimits) -> Self {
        Self {
            now,
            cutoff: now.saturating_sub(limits.horizon_secs.max(0)),
            future: limits.future,
            earliest: None,
        }
    }

    /// The verdict, when this line settles the file.
    fn line(&mut self, line: &[u8]) -> Option<FileVerdict> {
        // No timestamp: a continuation of the entry above it (a stack trace, a wrapped
        // message), which that entry's own line decides.
        let (ts, rest) = split_timestamp(line)?;
        let ts = if ts > self.now {
            match self.future {
                FutureLines::Ignore => return None,
                FutureLines::CountAsNow => self.now,
            }
        } else {
            ts
        };
        if !is_heartbeat(rest) {
            return Some(FileVerdict::Work { at: ts });
        }
        // By position, not the minimum: the unread part of the file was written before the
        // earliest line read, so that line bounds the last activity. With out-of-order
        // timestamps this bound is the later, protective one.
        self.earliest = Some(ts);
        (ts <= self.cutoff).then_some(FileVerdict::HeartbeatOnly { since_at_least: ts })
    }

    /// The budget ran out or the file began before anything settled it.
    fn end(&self) -> FileVerdict {
        match self.earliest {
            Some(t) => FileVerdict::HeartbeatOnly { since_at_least: t },
            None => FileVerdict::Unknown,
        }
    }
}

/// Judge the first `len` bytes of `src`, reading backwards from `len`.
///
/// Reads at most `max(budget, chunk)` bytes, `chunk` at a time (at least one byte). The
/// line a chunk starts in the middle of is carried into the next, earlier read; the line
/// the budget cuts is never judged, because its timestamp was not read. The last line need
/// not end in a newline: a line still being written is judged as it stands (a heartbeat cut
/// before its marker reads as work, which protects). A read error ends the scan with what
/// was seen so far: the earliest heartbeat, or unknown.
pub fn judge_reader<R: Read + Seek>(
    src: &mut R,
    len: u64,
    now: i64,
    limits: &ReaderLimits,
) -> BackwardScan {
    let chunk = limits.chunk.max(1);
    let budget = limits.budget.max(chunk as u64);
    let mut judge = LineJudge::new(now, limits);
    let mut buf = vec![0u8; usize::try_from(len).map_or(chunk, |l| l.min(chunk))];
    let mut pos = len;
    let mut read = 0u64;
    // The end of a line that starts before `pos`, as pieces in reverse file order. It is
    // joined once, when its start is found, so a long line costs linear time.
    let mut tail: Vec<Vec<u8>> = Vec::new();
    let done = |verdict, read, error| BackwardScan {
        verdict,
        bytes_read: read,
        error,
    };
    while pos > 0 {
        let want = (chunk as u64).min(pos).min(budget - read);
        if want == 0 {
            return done(judge.end(), read, None);
        }
        pos -= want;
        // `want` ≤ chunk, a usize.
        let n = want as usize;
        let data = &mut buf[..n];
        if let Err(e) = src
            .seek(SeekFrom::Start(pos))
            .and_then(|_| src.read_exact(data))
        {
            return done(judge.end(), read, Some(e));
        }
        read += want;
        let mut end = n;
        while let Some(nl) = bytes::rfind(b'\n', &data[..end]) {
            let verdict = if end == n && !tail.is_empty() {
                let line = join(&data[nl + 1..end], &tail);
                tail.clear();
                judge.line(&line)
            } else {
                judge.line(&data[nl + 1..end])
            };
            if let Some(v) = verdict {
                return done(v, read, None);
            }
            end = nl;
        }
        tail.push(data[..end].to_vec());
    }
    // The file's first line.
    let first = join(&[], &tail);
    match judge.line(&first) {
        Some(v) => done(v, read, None),
        None => done(judge.end(), read, None),
    }
}

fn join(head: &[u8], tail: &[Vec<u8>]) -> Vec<u8> {
    let mut line = Vec::with_capacity(head.len() + tail.iter().map(Vec::len).sum::<usize>());
    line.extend_from_slice(head);
    for piece in tail.iter().rev() {
        line.extend_from_slice(piece);
    }
    line
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use proptest::prelude::*;

    use super::*;

    const NOW: i64 = 1_787_995_307; // 2026-08-29T09:21:47Z

    fn limits(chunk: usize, budget: u64) -> ReaderLimits {
        ReaderLimits {
            chunk,
            budget,
            ..ReaderLimits::default()
        }
    }

    fn scan(content: &[u8], l: &ReaderLimits) -> BackwardScan {
        judge_reader(&mut Cursor::new(content), content.len() as u64, NOW, l)
    }

    /// The same rules over the whole file split forwards: what the chunked reader must
    /// agree with, whatever the chunk size.
    fn model(content: &[u8], l: &ReaderLimits) -> FileVerdict {
        let chunk = l.chunk.max(1) as u64;
        let budget = l.budget.max(chunk);
        let mut judge = LineJudge::new(NOW, l);
        let (window, whole) = if (content.len() as u64) <= budget {
            (content, true)
        } else {
            (&content[content.len() - budget as usize..], false)
        };
        let mut lines: Vec<&[u8]> = window.split(|&b| b == b'\n').collect();
        if !whole {
            lines.remove(0);
        }
        for line in lines.into_iter().rev() {
            if let Some(v) = judge.line(line) {
                return v;
            }
        }
        judge.end()
    }

    fn ts(t: i64) -> String {
        crate::time::format_secs(t)
    }

    #[test]
    fn a_line_split_over_many_chunks_is_joined_before_it_is_judged() {
        let long = "x".repeat(100);
        let content = format!(
            "{} work {long}\n{} agency::send_telemetry_events: {long}\n",
            ts(NOW - 60),
            ts(NOW - 30)
        );
        for chunk in [1, 2, 3, 7, 64, 4096] {
            let s = scan(content.as_bytes(), &limits(chunk, 1 << 20));
            assert_eq!(
                s.verdict,
                FileVerdict::Work { at: NOW - 60 },
                "chunk {chunk}"
            );
            assert!(s.error.is_none());
        }
    }

    #[test]
    fn the_line_the_budget_cuts_is_not_judged() {
        let heartbeat = format!("{} [MDM] poll\n", ts(NOW - 30));
        let content = format!("{} work\n{heartbeat}", ts(NOW - 60));
        // The heartbeat and the newline before it: its start is known, so it is judged.
        let enough = heartbeat.len() as u64 + 1;
        let s = scan(content.as_bytes(), &limits(4, enough));
        assert_eq!(
            s.verdict,
            FileVerdict::HeartbeatOnly {
                since_at_least: NOW - 30
            }
        );
        assert_eq!(s.bytes_read, enough);
        // Without that newline the line might be the tail of a longer one: not judged.
        let s = scan(content.as_bytes(), &limits(4, enough - 1));
        assert_eq!(s.verdict, FileVerdict::Unknown);
        assert_eq!(s.bytes_read, enough - 1);
    }

    #[test]
    fn out_of_order_heartbeats_are_bounded_by_the_earliest_line_not_the_oldest_stamp() {
        // A stray line stamped 3 h ago sits between lines from 1 h and 10 min ago. Work, if
        // any, came before the first line, so the bound is 1 h ago, not 3 h.
        let content = format!(
            "{} [MDM] a\n{} [MDM] stray\n{} [MDM] c\n",
            ts(NOW - 3600),
            ts(NOW - 3 * 3600),
            ts(NOW - 600)
        );
        let s = scan(content.as_bytes(), &limits(64, 1 << 20));
        assert_eq!(
            s.verdict,
            FileVerdict::HeartbeatOnly {
                since_at_least: NOW - 3600
            }
        );
    }

    #[test]
    fn a_read_error_keeps_what_was_seen() {
        /// Reads fail below `self.1`.
        struct Failing(Cursor<Vec<u8>>, u64);
        impl Read for Failing {
            fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
                if self.0.position() < self.1 {
                    return Err(io::Error::other("disk on fire"));
                }
                self.0.read(b)
            }
        }
        impl Seek for Failing {
            fn seek(&mut self, p: SeekFrom) -> io::Result<u64> {
                self.0.seek(p)
            }
        }
        let heartbeat = format!("{} [MDM] poll\n", ts(NOW - 30));
        let content = format!("{} work\n{heartbeat}", ts(NOW - 60));
        let len = content.len() as u64;
        let chunk = heartbeat.len() + 1;
        // The first chunk holds the whole heartbeat; the read before it fails.
        let mut f = Failing(Cursor::new(content.clone().into_bytes()), 1);
        let s = judge_reader(&mut f, len, NOW, &limits(chunk, 1 << 20));
        assert_eq!(
            s.verdict,
            FileVerdict::HeartbeatOnly {
                since_at_least: NOW - 30
            }
        );
        assert!(s.error.is_some());
        // Nothing read at all: unknown.
        let mut f = Failing(Cursor::new(content.into_bytes()), len);
        let s = judge_reader(&mut f, len, NOW, &limits(chunk, 1 << 20));
        assert_eq!(s.verdict, FileVerdict::Unknown);
        assert!(s.error.is_some());
        // A file shorter than it claimed to be (truncated under the reader) is a read error.
        let s = judge_reader(&mut Cursor::new(b"abc".to_vec()), 10, NOW, &limits(4, 64));
        assert_eq!(s.verdict, FileVerdict::Unknown);
        assert!(s.error.is_some());
    }

    /// One line of a generated log: its kind and how far from NOW its timestamp lies.
    fn arb_line() -> impl Strategy<Value = String> {
        let offset = -30_000i64..200;
        prop_oneof![
            offset.clone().prop_map(|o| format!(
                "{}.499123Z DEBUG agency::send_telemetry_events: telem flush",
                &ts(NOW + o)[..19]
            )),
            offset
                .clone()
                .prop_map(|o| format!("{} [DEBUG] [mdm] Read 3 managed setting(s)", ts(NOW + o))),
            offset.clone().prop_map(|o| format!(
                "{}.5Z [DEBUG] Forwarding event for session 4da0d54f: assistant.turn_end",
                &ts(NOW + o)[..19]
            )),
            "[a-z {}\":,]{0,40}",
            proptest::collection::vec(
                any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
                0..40
            )
            .prop_map(|v| String::from_utf8_lossy(&v).into_owned()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Chunk boundaries never change the verdict: the chunked reader agrees with the
        /// whole-file model for every chunk size, budget, horizon and future-line policy.
        #[test]
        fn chunking_is_invisible(
            lines in proptest::collection::vec(arb_line(), 0..40),
            trailing_newline in any::<bool>(),
            chunk in 1usize..80,
            budget in 0u64..4000,
            horizon in 0i64..40_000,
            ignore_future in any::<bool>(),
        ) {
            let mut content = lines.join("\n");
            if trailing_newline {
                content.push('\n');
            }
            let l = ReaderLimits {
                chunk,
                budget,
                horizon_secs: horizon,
                future: if ignore_future { FutureLines::Ignore } else { FutureLines::CountAsNow },
                ..ReaderLimits::default()
            };
            let s = scan(content.as_bytes(), &l);
            prop_assert!(s.error.is_none());
            prop_assert_eq!(s.verdict, model(content.as_bytes(), &l));
            prop_assert!(s.bytes_read <= budget.max(chunk as u64).min(content.len() as u64));
        }
    }
}
