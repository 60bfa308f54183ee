//! Properties over arbitrary input: nothing panics on any bytes, and a file whose lines are
//! all heartbeats never reads as work, whatever the chunk, budget, horizon or clock.

use crate::time::format_secs;
use std::io::Cursor;
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

/// One directory held in memory: the property is about the rules, not the disk
/// (`headroom::store::log_files` tests the reader on real directories).
struct MemDir {
    dir: PathBuf,
    files: Vec<(OsString, Vec<u8>)>,
}

impl MemDir {
    fn one(name: &str, content: &[u8]) -> Self {
        Self {
            dir: PathBuf::from("/logs"),
            files: vec![(name.into(), content.to_vec())],
        }
    }

    fn get(&self, path: &Path) -> Option<&Vec<u8>> {
        let name = path.strip_prefix(&self.dir).ok()?;
        self.files
            .iter()
            .find(|(n, _)| Path::new(n) == name)
            .map(|(_, c)| c)
    }

    fn meta(&self, path: &Path) -> io::Result<FileMeta> {
        if path == self.dir {
            return Ok(FileMeta {
                kind: FileKind::Directory,
                len: 0,
                mtime: Some(NOW),
            });
        }
        let c = self.get(path).ok_or(io::ErrorKind::NotFound)?;
        Ok(FileMeta {
            kind: FileKind::File,
            len: c.len() as u64,
            mtime: Some(NOW),
        })
    }
}

impl LogFiles for MemDir {
    type File = Cursor<Vec<u8>>;

    fn metadata(&self, path: &Path) -> io::Result<FileMeta> {
        self.meta(path)
    }

    fn is_symlink(&self, _: &Path) -> bool {
        false
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        if dir != self.dir {
            return Err(io::ErrorKind::NotFound.into());
        }
        Ok(self.files.iter().map(|(n, _)| n.clone()).collect())
    }

    fn open(&self, path: &Path) -> io::Result<(Self::File, FileMeta)> {
        let meta = self.meta(path)?;
        let c = self.get(path).ok_or(io::ErrorKind::NotFound)?;
        Ok((Cursor::new(c.clone()), meta))
    }
}

proptest! {
    #[test]
    fn arbitrary_files_never_panic_in_judge_file(
        content in proptest::collection::vec(any::<u8>(), 0..3000),
        heartbeats in proptest::collection::vec(heartbeat_line(), 0..10),
        chunk in 1usize..300,
        budget in 0u64..5000,
        ignore_future in any::<bool>(),
    ) {
        let fs = MemDir::one("session.log", &content);
        let path = fs.dir.join("session.log");
        let l = limits(chunk, budget, 6 * 3600, ignore_future);
        let r = judge_file(&fs, &path, NOW, &l, Instant::now);
        prop_assert!(r.bytes_read <= content.len() as u64);

        // Heartbeats only, judged through the directory too.
        let hb = heartbeats.join(&b'\n');
        let fs = MemDir::one("session.log", &hb);
        let r = judge_file(&fs, &path, NOW, &l, Instant::now);
        prop_assert!(!matches!(r.verdict, FileVerdict::Work { .. }), "{:?}", r.verdict);
        let d = judge_dir(&fs, &fs.dir, NOW, &l, Instant::now).unwrap();
        prop_assert!(!matches!(d.verdict, DirVerdict::Work { .. }), "{:?}", d.verdict);
    }
}
