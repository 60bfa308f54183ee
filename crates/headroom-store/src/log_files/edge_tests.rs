//! The reader items of the reference's PartialEvidenceTests and MatchingAndOrderingTests,
//! bad input (binary garbage, empty files, lines without timestamps, a 10 MB line, stamps
//! from the future), odd directory entries and the `--log-dir` argument.

use super::fixtures::*;
use super::{Disk, judge_dir, judge_file};
use crate::core::session_log;
use crate::core::session_log::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

// ----- PartialEvidenceTests / MatchingAndOrderingTests (reader items) ------------------

/// Issue 25 item 15, the breaking input: a session writing work every second, its log's
/// mtime set three days back (`touch -d '3 days ago'`, `cp -p`, `rsync -a`, `tar x`, a
/// network mount whose clock lags). The content decides: it is active. (Judged by its mtime
/// it read "no write for at least 3 days", released.) Control: the same old mtime over old
/// content is idle, by the content; and an old file of garbage is opened, so unknown.
#[test]
fn an_old_mtime_never_skips_reading_the_content() {
    let three_days = NOW - 72 * HOUR;
    let d = LogDir::new();
    let fresh: String = (0..60)
        .map(|k| work(NOW - 60 + k, "tool.execution_start"))
        .collect();
    d.file(SESSION_LOG, fresh, three_days);
    let r = d.judge();
    let f = file(&r, SESSION_LOG);
    assert!(f.bytes_read > 0 && !f.tail_only, "{f:#?}");
    assert_eq!(f.verdict, FileVerdict::Work { at: NOW - 1 });
    assert!(age(&r) < 120, "{r:#?}");
    // Control: old content under the same old mtime is idle, and says so by its content.
    let d = LogDir::new();
    d.file(SESSION_LOG, session_log(NOW - 72 * HOUR - 60), three_days);
    let r = d.judge();
    assert!(file(&r, SESSION_LOG).bytes_read > 0);
    assert!(age(&r) > 6 * HOUR, "{r:#?}");
    // Garbage with an old mtime is read like any file: unknown, which protects.
    let d = LogDir::new();
    d.file("old.log", "no timestamps in here\n", NOW - 7 * HOUR);
    let r = d.judge();
    assert_eq!(file(&r, "old.log").verdict, FileVerdict::Unknown);
    assert_eq!(r.last_activity, None);
}

/// The mtime may only make a file count as more recent: past `max_files`, the files with
/// the newest mtimes get the full budget and the rest are read at their end, so fresh work
/// under an old mtime is still found; more files than both caps make the directory unknown
/// without opening any. (The limits are shrunk to 2 + 3 files here; the defaults are 32 +
/// 992.)
#[test]
fn past_the_cap_the_newest_mtimes_are_read_in_full_and_the_rest_at_their_end() {
    let d = LogDir::new();
    for i in 0..4 {
        d.file(
            &format!("old-{i}.log"),
            heartbeats(NOW - 31 * HOUR, NOW - 30 * HOUR),
            NOW - 30 * HOUR + i,
        );
    }
    // The one that matters: work a minute ago, mtime a day old, among the oldest mtimes.
    let fresh = heartbeats(NOW - 40 * HOUR, NOW - 2 * MIN) + &work(NOW - MIN, "assistant.turn_end");
    d.file("touched.log", fresh, NOW - 40 * HOUR);
    let limits = ReaderLimits {
        max_files: 2,
        max_tail_files: 3,
        ..ReaderLimits::default()
    };
    let r = d.judge_with(&limits);
    let touched = file(&r, "touched.log");
    assert!(touched.tail_only, "{touched:#?}");
    assert!(touched.bytes_read <= limits.tail, "{touched:#?}");
    assert_eq!(touched.verdict, FileVerdict::Work { at: NOW - MIN });
    assert!((age(&r) - MIN).abs() <= 1, "{r:#?}");
    let full: Vec<&str> = r
        .files
        .iter()
        .filter(|f| !f.tail_only)
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(full, ["old-2.log", "old-3.log"], "the two newest mtimes");
    // Control: every file old in content and mtime, the directory is idle (by content:
    // the newest line of each, read at its end, is 30 h old).
    let d = LogDir::new();
    for i in 0..5 {
        d.file(
            &format!("old-{i}.log"),
            heartbeats(NOW - 31 * HOUR, NOW - 30 * HOUR),
            NOW - 30 * HOUR,
        );
    }
    assert!(age(&d.judge_with(&limits)) > 6 * HOUR);
    // One file more than both caps: unknown, nothing opened, whatever the mtimes.
    d.file(
        "old-5.log",
        heartbeats(NOW - 31 * HOUR, NOW - 30 * HOUR),
        NOW - 30 * HOUR,
    );
    let r = d.judge_with(&limits);
    assert_eq!(
        r.verdict,
        DirVerdict::Unknown(UnknownWhy::TooManyFiles { files: 6, cap: 5 })
    );
    assert!(r.files.iter().all(|f| f.bytes_read == 0));
}

#[test]
fn a_recent_file_dominates_a_ten_hour_old_one() {
    let d = LogDir::new();
    d.file(
        "old.log",
        work(NOW - 10 * HOUR, "assistant.turn_end"),
        NOW - 10 * HOUR,
    )
    .file(SESSION_LOG, work(NOW - 60, "assistant.turn_end"), NOW - 60);
    assert!(age(&d.judge()) < 120);
}

/// The disk, with each file removed between the look at its metadata and its opening.
struct VanishesOnOpen;

impl LogFiles for VanishesOnOpen {
    type File = std::fs::File;

    fn metadata(&self, path: &Path) -> std::io::Result<FileMeta> {
        Disk.metadata(path)
    }

    fn is_symlink(&self, path: &Path) -> bool {
        Disk.is_symlink(path)
    }

    fn list(&self, dir: &Path) -> std::io::Result<Vec<std::ffi::OsString>> {
        Disk.list(dir)
    }

    fn open(&self, path: &Path) -> std::io::Result<(Self::File, FileMeta)> {
        std::fs::remove_file(path)?;
        Disk.open(path)
    }
}

#[test]
fn a_file_that_vanishes_before_it_is_read_is_unknown() {
    let d = LogDir::new();
    d.file(SESSION_LOG, work(NOW - 60, "assistant.turn_end"), NOW - 60);
    let l = ReaderLimits::default();
    let r = session_log::judge_dir(&VanishesOnOpen, d.path(), NOW, &l, Instant::now).unwrap();
    let f = file(&r, SESSION_LOG);
    assert_eq!(f.verdict, FileVerdict::Unknown);
    assert!(f.error.is_some());
    assert!(!d.path().join(SESSION_LOG).exists(), "control: it vanished");
    assert!(matches!(
        r.verdict,
        DirVerdict::Unknown(UnknownWhy::FileUnknown { .. })
    ));
}

#[test]
fn more_files_than_the_cap_make_the_directory_unknown_unread() {
    let d = LogDir::new();
    for i in 0..5 {
        d.file(
            &format!("process-{i}.log"),
            work(NOW - 30, "assistant.turn_end"),
            NOW - 30,
        );
    }
    d.file(
        "old.log",
        work(NOW - 9 * HOUR, "assistant.turn_end"),
        NOW - 9 * HOUR,
    );
    let r = d.judge();
    assert!((age(&r) - 30).abs() <= 2);
    let capped = d.judge_with(&ReaderLimits {
        max_files: 4,
        max_tail_files: 1,
        ..ReaderLimits::default()
    });
    assert_eq!(capped.last_activity, None);
    // An old mtime counts towards the cap like any other: it is no reason not to read.
    assert_eq!(
        capped.verdict,
        DirVerdict::Unknown(UnknownWhy::TooManyFiles { files: 6, cap: 5 })
    );
    assert!(capped.files.iter().all(|f| f.bytes_read == 0));
}

// ----- bad input --------------------------------------------------------------------

/// Deterministic noise (a linear congruential generator): no seed to chase in a failure.
fn noise(n: usize) -> Vec<u8> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect()
}

#[test]
fn binary_garbage_is_unknown_and_garbage_under_heartbeats_is_a_continuation() {
    let d = LogDir::new();
    d.file("core.bin", noise(300_000), NOW - 1);
    assert_eq!(file(&d.judge(), "core.bin").verdict, FileVerdict::Unknown);

    let d = LogDir::new();
    let mut log = noise(10_000);
    log.extend_from_slice(heartbeats(NOW - 10 * MIN, NOW - 3).as_bytes());
    d.file(WRAPPER_LOG, log, NOW - 3);
    let f = file(&d.judge(), WRAPPER_LOG).clone();
    assert_eq!(
        f.verdict,
        FileVerdict::HeartbeatOnly {
            since_at_least: NOW - 10 * MIN
        }
    );
}

#[test]
fn lines_without_timestamps_alone_are_unknown_and_an_empty_directory_too() {
    let d = LogDir::new();
    assert_eq!(
        d.judge().verdict,
        DirVerdict::Unknown(UnknownWhy::NoUsableFiles)
    );
    d.file("only-empty.log", "", NOW);
    assert_eq!(
        d.judge().verdict,
        DirVerdict::Unknown(UnknownWhy::NoUsableFiles)
    );
    d.file("plain.log", "hello\nworld\n\n\n", NOW - 1);
    assert_eq!(file(&d.judge(), "plain.log").verdict, FileVerdict::Unknown);
}

#[test]
fn a_10_mb_line_without_a_newline_is_unknown_within_the_budget() {
    let d = LogDir::new();
    let mut line = ms(NOW - 5).into_bytes();
    line.extend(std::iter::repeat_n(b'a', 10 << 20));
    d.file("huge.log", &line, NOW - 1);
    // A work line before a 10 MB continuation is out of reach too: unknown, never idle.
    let mut after_work = work(NOW - 5, "assistant.turn_end").into_bytes();
    after_work.extend(std::iter::repeat_n(b'{', 10 << 20));
    d.file("dump.log", &after_work, NOW - 1);
    let r = d.judge();
    for name in ["huge.log", "dump.log"] {
        let f = file(&r, name);
        assert_eq!(f.verdict, FileVerdict::Unknown, "{name}");
        assert_eq!(f.bytes_read, 4 << 20, "{name}: the budget, not the file");
    }
    assert_eq!(r.last_activity, None);
}

#[test]
fn future_timestamps_count_as_now_live_and_are_ignored_in_a_replay() {
    let d = LogDir::new();
    let log = heartbeats(NOW - 3 * HOUR, NOW - 60)
        + &work(NOW - 3 * HOUR - 60, "assistant.turn_end")
        + &work(NOW + HOUR, "assistant.turn_end")
        + &triplet(NOW + 2 * HOUR);
    d.file(SESSION_LOG, log, NOW - 1);
    // Live: a clock ahead of ours; the work was written by now.
    assert_eq!(d.judge().verdict, DirVerdict::Work { at: NOW });
    // Replay: written after the instant judged, so it did not exist yet.
    let replay = ReaderLimits {
        future: FutureLines::Ignore,
        ..ReaderLimits::default()
    };
    assert_eq!(
        d.judge_with(&replay).verdict,
        DirVerdict::Work {
            at: NOW - 3 * HOUR - 60
        }
    );
    // Heartbeats from the future alone: active now, never idle.
    let d = LogDir::new();
    d.file(WRAPPER_LOG, heartbeats(NOW + 60, NOW + 600), NOW - 1);
    assert_eq!(age(&d.judge()), 0);
    assert_eq!(d.judge_with(&replay).last_activity, None);
}

#[cfg(unix)]
#[test]
fn directories_sockets_and_dangling_links_are_skipped() {
    let d = LogDir::new();
    d.file(SESSION_LOG, work(NOW - 60, "assistant.turn_end"), NOW - 60);
    std::fs::create_dir(d.path().join("archive")).unwrap();
    let _sock = std::os::unix::net::UnixListener::bind(d.path().join("agent.sock")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/headroom-test", d.path().join("latest.log")).unwrap();
    std::os::unix::fs::symlink(SESSION_LOG, d.path().join("current.log")).unwrap();
    let r = d.judge();
    let skip = |n: &str| file(&r, n).verdict.clone();
    assert_eq!(
        skip("archive"),
        FileVerdict::Skipped(FileSkipReason::Directory)
    );
    assert_eq!(
        skip("agent.sock"),
        FileVerdict::Skipped(FileSkipReason::NotRegular)
    );
    assert_eq!(
        skip("latest.log"),
        FileVerdict::Skipped(FileSkipReason::DanglingLink)
    );
    assert_eq!(skip("current.log"), FileVerdict::Work { at: NOW - 60 });
    assert_eq!(age(&r), 60);
    let names: Vec<_> = r.files.iter().map(|f| f.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted);
}

#[test]
fn judge_dir_names_the_path_when_it_cannot_list_it() {
    let d = LogDir::new();
    let missing = d.path().join("nope");
    let e = judge_dir(&missing, NOW, &ReaderLimits::default(), Instant::now).unwrap_err();
    assert!(matches!(e, LogDirError::Missing(_)));
    assert!(e.to_string().contains("nope"), "{e}");
    d.file("a.log", "x", NOW);
    let e = judge_dir(
        &d.path().join("a.log"),
        NOW,
        &ReaderLimits::default(),
        Instant::now,
    )
    .unwrap_err();
    assert!(matches!(e, LogDirError::NotADirectory(_)));
    assert!(e.to_string().contains("a.log"), "{e}");
}

#[test]
fn judge_file_applies_the_directory_rules_to_one_file() {
    let d = LogDir::new();
    d.file("Telemetry.log", work(NOW - 5, "x"), NOW - 5).file(
        SESSION_LOG,
        work(NOW - 5, "assistant.turn_end"),
        NOW - 5,
    );
    let l = ReaderLimits::default();
    let t = judge_file(&d.path().join("Telemetry.log"), NOW, &l, Instant::now);
    assert_eq!(t.verdict, FileVerdict::Skipped(FileSkipReason::Telemetry));
    let s = judge_file(&d.path().join(SESSION_LOG), NOW, &l, Instant::now);
    assert_eq!(s.verdict, FileVerdict::Work { at: NOW - 5 });
    assert_eq!(s.name, SESSION_LOG);
    let m = judge_file(&d.path().join("missing.log"), NOW, &l, Instant::now);
    assert_eq!(m.verdict, FileVerdict::Unknown);
    assert!(m.error.is_some());
}

#[test]
fn log_dir_comes_from_the_first_log_dir_argument() {
    let argv = |a: &[&str]| a.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    let dir = |a: &[&str]| log_dir_from_argv(&argv(a));
    assert_eq!(
        dir(&["copilot", "--no-auto-update", "--log-dir", "/tmp/s1"]),
        Some(PathBuf::from("/tmp/s1"))
    );
    assert_eq!(
        dir(&["copilot", "--log-dir=/tmp/s 2", "--log-dir", "/tmp/s3"]),
        Some(PathBuf::from("/tmp/s 2"))
    );
    assert_eq!(dir(&["copilot", "--log-dir"]), None);
    assert_eq!(dir(&["copilot", "--log-dir=", "--log-dir", "/x"]), None);
    assert_eq!(dir(&["copilot", "--log-directory", "/x"]), None);
    assert_eq!(dir(&[]), None);
}

/// The reports' `micros` come from the caller's clock, never one the reader reads itself: a
/// clock that never moves times everything at 0, one that jumps 1 ms a reading at least 1 ms.
#[test]
fn the_reader_times_itself_by_the_clock_it_is_given() {
    use std::sync::OnceLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;
    fn base() -> Instant {
        static T: OnceLock<Instant> = OnceLock::new();
        *T.get_or_init(Instant::now)
    }
    fn frozen() -> Instant {
        base()
    }
    fn ticking() -> Instant {
        static N: AtomicU64 = AtomicU64::new(0);
        base() + Duration::from_millis(N.fetch_add(1, Ordering::Relaxed))
    }
    let d = LogDir::new();
    d.file(SESSION_LOG, work(NOW - 5, "assistant.turn_end"), NOW - 5);
    let l = ReaderLimits::default();
    let f = judge_file(&d.path().join(SESSION_LOG), NOW, &l, frozen);
    let r = judge_dir(d.path(), NOW, &l, frozen).unwrap();
    assert_eq!((f.micros, r.micros, r.files[0].micros), (0, 0, 0));
    let f = judge_file(&d.path().join(SESSION_LOG), NOW, &l, ticking);
    let r = judge_dir(d.path(), NOW, &l, ticking).unwrap();
    assert!(f.micros >= 1000 && r.micros >= 1000, "control: {f:?} {r:?}");
    assert!(r.files[0].micros >= 1000, "{r:?}");
}
