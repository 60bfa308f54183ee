//! Replays of the reference's SessionLogContentTests S1–S16 (S14 is in `line.rs`), the
//! reader items of PartialEvidenceTests and MatchingAndOrderingTests, and bad input, over
//! log directories built in a temp dir from the incident's own line shapes (reference A.7).
//! S2 and S3 also pick targets in the reference; that belongs to the guard, so here they
//! check the directory verdict the guard would be handed.

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

use super::*;

/// The capture instant of the 2026-08-29 incident evidence: 2026-08-29T09:21:47Z.
const NOW: i64 = 1_787_995_307;
const MIN: i64 = 60;
const HOUR: i64 = 3600;

/// The wrapper's microsecond form.
fn us(t: i64) -> String {
    format!("{}.499123Z", &format_timestamp(t)[..19])
}

/// The session's millisecond form.
fn ms(t: i64) -> String {
    format!("{}.499Z", &format_timestamp(t)[..19])
}

/// The three verbatim incident heartbeat lines, as the wrapper writes them every 30 s.
fn triplet(t: i64) -> String {
    let pid = 32_302 + (t % 1000);
    format!(
        "{} DEBUG tokio-runtime-worker ThreadId(09) agency::send_telemetry_events: client/agency/src/send_telemetry_events.rs:427: telem periodic flush: queue empty, nothing to commit\n\
         {} DEBUG tokio-runtime-worker ThreadId(09) agency::send_telemetry_events: client/agency/src/send_telemetry_events.rs:282: telem flush: spawned detached child pid={pid}\n\
         {} DEBUG tokio-runtime-worker ThreadId(11) otel_receiver::server: client/otel_receiver/src/server.rs:136: accepted OTLP signal (not yet processed) signal=/v1/metrics\n",
        us(t),
        us(t),
        us(t + 1)
    )
}

/// Heartbeat triplets every 30 s from `from` up to `to` (both as unix seconds).
fn heartbeats(from: i64, to: i64) -> String {
    (0..)
        .map(|k| from + 30 * k)
        .take_while(|t| *t <= to)
        .map(triplet)
        .collect()
}

fn work(t: i64, event: &str) -> String {
    format!(
        "{} [DEBUG] Forwarding event for session 4da0d54f: {event}\n",
        ms(t)
    )
}

/// The hourly policy self-fetch: three lines that are housekeeping, not work.
fn policy_fetch(t: i64) -> String {
    format!(
        "{} [INFO] [managedSettings] self-fetch starting for account\n\
         {} [DEBUG] [MDM] Read 3 managed setting(s) from plist\n\
         {} [DEBUG] Forwarding event for session 4da0d54f: session.managed_settings_resolved (ephemeral)\n",
        ms(t),
        ms(t),
        ms(t)
    )
}

fn trace_batch(t: i64) -> String {
    format!(
        "{} DEBUG tokio-runtime-worker ThreadId(11) otel_receiver::server: client/otel_receiver/src/server.rs:210: received Copilot trace batch span_count=3 sample=[\"execute_tool bash\", \"chat\"]\n",
        us(t)
    )
}

const WRAPPER_LOG: &str = "agency_copilot_1787933424_86183.log";
const SESSION_LOG: &str = "process-1787933425-86242.log";

struct LogDir(tempfile::TempDir);

impl LogDir {
    fn new() -> Self {
        Self(tempfile::tempdir().unwrap())
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    /// Write `content` to `name` with its mtime set to `mtime` (unix seconds): the tests
    /// judge as of NOW, not as of the machine's clock.
    fn file(&self, name: &str, content: impl AsRef<[u8]>, mtime: i64) -> &Self {
        let path = self.0.path().join(name);
        let mut f = File::create(&path).unwrap();
        f.write_all(content.as_ref()).unwrap();
        f.set_modified(UNIX_EPOCH + Duration::from_secs(mtime as u64))
            .unwrap();
        self
    }

    fn judge(&self) -> DirReport {
        self.judge_with(&ReaderLimits::default())
    }

    fn judge_with(&self, limits: &ReaderLimits) -> DirReport {
        judge_dir(self.path(), NOW, limits).unwrap()
    }
}

fn file<'a>(r: &'a DirReport, name: &str) -> &'a FileReport {
    r.files.iter().find(|f| f.name == name).unwrap()
}

fn age(r: &DirReport) -> i64 {
    r.age(NOW).unwrap_or_else(|| panic!("unknown: {r:#?}"))
}

/// The incident session log: real work until `last_work`, heartbeats every 30 s after it
/// up to 3 s ago.
fn session_log(last_work: i64) -> String {
    work(last_work - 60, "tool.execution_start")
        + &trace_batch(last_work - 57)
        + &work(last_work, "assistant.turn_end")
        + &heartbeats(last_work + 27, NOW - 3)
}

#[test]
fn s1_heartbeats_after_old_work_read_as_idle_despite_a_fresh_mtime() {
    let d = LogDir::new();
    d.file(SESSION_LOG, session_log(NOW - 9 * HOUR), NOW - 1);
    let r = d.judge();
    let f = file(&r, SESSION_LOG);
    // Stopped at the horizon: the first heartbeat older than 6 h.
    let FileVerdict::HeartbeatOnly { since_at_least } = f.verdict else {
        panic!("{f:#?}")
    };
    assert!((NOW - 6 * HOUR - 30..=NOW - 6 * HOUR).contains(&since_at_least));
    assert!(!f.stale);
    assert!(f.bytes_read < f.size && f.bytes_read < 1 << 20, "{f:#?}");
    assert!(age(&r) > 2 * HOUR);
}

#[test]
fn s2_the_incident_directory_at_the_capture_instant_reads_idle() {
    let d = LogDir::new();
    d.file(WRAPPER_LOG, heartbeats(NOW - 17 * HOUR, NOW - 2), NOW - 2)
        .file(SESSION_LOG, session_log(NOW - 9 * HOUR), NOW - 1)
        .file(
            "telemetry_queue.86183.1787995300000.0.jsonl.delivered",
            "{\"events\":[]}\n",
            NOW - 4,
        );
    let r = d.judge();
    assert!(
        matches!(r.verdict, DirVerdict::HeartbeatOnly { .. }),
        "{r:#?}"
    );
    assert!(age(&r) > 2 * HOUR);
}

#[test]
fn s3_work_7_7_hours_ago_in_the_session_log_reads_idle() {
    let d = LogDir::new();
    d.file(WRAPPER_LOG, heartbeats(NOW - 17 * HOUR, NOW - 2), NOW - 2)
        .file(SESSION_LOG, session_log(NOW - 77 * HOUR / 10), NOW - 1);
    assert!(age(&d.judge()) > 2 * HOUR);
}

#[test]
fn s4_work_20_s_ago_in_the_session_log_makes_the_directory_active() {
    let d = LogDir::new();
    let session = heartbeats(NOW - 3 * HOUR, NOW - 60) + &work(NOW - 20, "assistant.turn_end");
    d.file(WRAPPER_LOG, heartbeats(NOW - 17 * HOUR, NOW - 2), NOW - 2)
        .file(SESSION_LOG, session, NOW - 20);
    let r = d.judge();
    assert_eq!(r.verdict, DirVerdict::Work { at: NOW - 20 });
    assert!(age(&r) < 60);
    // The wrapper's own log is quiet, which is the normal case: the session's log decides.
    assert!(matches!(
        file(&r, WRAPPER_LOG).verdict,
        FileVerdict::HeartbeatOnly { .. }
    ));
}

#[test]
fn s5_hourly_policy_fetches_are_not_work() {
    let d = LogDir::new();
    let mut log = work(NOW - 9 * HOUR, "assistant.turn_end");
    for h in (1..=8).rev() {
        log += &heartbeats(NOW - h * HOUR - 25 * MIN, NOW - h * HOUR - 1);
        log += &policy_fetch(NOW - h * HOUR);
    }
    log += &heartbeats(NOW - 50 * MIN, NOW - 3);
    d.file(SESSION_LOG, log, NOW - 3);
    assert!(age(&d.judge()) > 2 * HOUR);
}

#[test]
fn s6_a_tool_start_between_heartbeats_is_work() {
    let d = LogDir::new();
    let log = heartbeats(NOW - 8 * HOUR, NOW - 120)
        + &work(NOW - 45, "tool.execution_start")
        + &triplet(NOW - 10);
    d.file(SESSION_LOG, log, NOW - 9);
    let r = d.judge();
    assert_eq!(age(&r), 45);
}

#[test]
fn s7_an_otlp_trace_batch_is_work() {
    let d = LogDir::new();
    let log = heartbeats(NOW - 8 * HOUR, NOW - 60) + &trace_batch(NOW - 40) + &triplet(NOW - 30);
    d.file(WRAPPER_LOG, log, NOW - 29);
    assert_eq!(age(&d.judge()), 40);
}

#[test]
fn s8_json_lines_without_iso_timestamps_are_unknown() {
    let d = LogDir::new();
    let log: String = (0..50)
        .map(|i| {
            format!(
                "{{\"ts\":{},\"level\":\"debug\",\"msg\":\"turn_end\"}}\n",
                NOW - i
            )
        })
        .collect();
    d.file("events.jsonl", log, NOW - 1);
    let r = d.judge();
    assert_eq!(r.last_activity, None);
    assert_eq!(
        r.verdict,
        DirVerdict::Unknown(UnknownWhy::FileUnknown {
            name: "events.jsonl".into()
        })
    );
    assert_eq!(file(&r, "events.jsonl").verdict, FileVerdict::Unknown);
}

#[test]
fn s9_a_message_from_an_unknown_module_is_work() {
    let d = LogDir::new();
    let log = heartbeats(NOW - 2 * HOUR, NOW - 60)
        + &format!(
            "{} INFO brand_new_module: reticulating splines\n",
            us(NOW - 30)
        );
    d.file(SESSION_LOG, log, NOW - 30);
    assert_eq!(age(&d.judge()), 30);
}

#[test]
fn s10_one_file_without_any_timestamp_makes_the_directory_unknown() {
    let d = LogDir::new();
    d.file(WRAPPER_LOG, heartbeats(NOW - 8 * HOUR, NOW - 3), NOW - 3)
        .file("notes.txt", "starting\nstill going\n", NOW - 5);
    assert_eq!(d.judge().last_activity, None);
}

#[test]
fn s11_an_empty_file_is_skipped_not_unknown() {
    let d = LogDir::new();
    d.file(WRAPPER_LOG, heartbeats(NOW - 8 * HOUR, NOW - 3), NOW - 3)
        .file("process-empty.log", "", NOW - 1);
    let r = d.judge();
    assert_eq!(
        file(&r, "process-empty.log").verdict,
        FileVerdict::Skipped(SkipReason::Empty)
    );
    assert!(age(&r) > 2 * HOUR);
}

#[test]
fn s12_a_fresh_telemetry_queue_file_is_ignored() {
    let d = LogDir::new();
    let queue = "telemetry_queue.44137.1787938165269.0.jsonl.delivered";
    d.file(SESSION_LOG, session_log(NOW - 6 * HOUR), NOW - 3)
        .file(queue, [0xffu8, 0xfe, 0, 1, 2, b'\n'], NOW - 1);
    let r = d.judge();
    assert_eq!(
        file(&r, queue).verdict,
        FileVerdict::Skipped(SkipReason::Telemetry)
    );
    assert_eq!(file(&r, queue).size, 6);
    assert!((age(&r) - 6 * HOUR).abs() <= 60, "{}", age(&r));
}

#[test]
fn s13_continuation_lines_belong_to_the_work_line_above() {
    let d = LogDir::new();
    let log = heartbeats(NOW - HOUR, NOW - 90)
        + &work(NOW - 60, "tool.execution_complete")
        + "  stdout: Compiling headroom v0.1.0\n  {\"exit_code\": 0}\n\n    at main (index.js:1)\n";
    d.file(SESSION_LOG, log, NOW - 59);
    assert_eq!(age(&d.judge()), 60);
}

#[test]
fn s15_a_40_mb_log_with_work_at_the_end_is_judged_from_its_last_chunk() {
    let d = LogDir::new();
    let churn = format!(
        "{} TRACE hyper_util::client::legacy::pool: reuse idle connection for (\"https\", api.example.com)\n",
        us(NOW - 20 * HOUR)
    );
    let mut log = churn.repeat(40_000_000 / churn.len());
    log += &heartbeats(NOW - 10 * MIN, NOW - 60);
    log += &work(NOW - 20, "assistant.streaming_delta");
    d.file(SESSION_LOG, &log, NOW - 20);
    let r = d.judge();
    let f = file(&r, SESSION_LOG);
    assert!(f.size >= 40_000_000);
    assert_eq!(f.verdict, FileVerdict::Work { at: NOW - 20 });
    assert_eq!(f.bytes_read, 64 * 1024, "one chunk");
    assert!(age(&r) < 60);
}

#[test]
fn s16_the_budget_ends_an_hour_of_heartbeats_with_an_upper_bound() {
    let d = LogDir::new();
    d.file(WRAPPER_LOG, heartbeats(NOW - HOUR, NOW - 10), NOW - 9);
    let limits = ReaderLimits {
        chunk: 4096,
        budget: 16 * 1024,
        horizon_secs: 6 * HOUR,
        ..ReaderLimits::default()
    };
    let r = d.judge_with(&limits);
    let f = file(&r, WRAPPER_LOG);
    assert!(f.size > 16 * 1024);
    assert_eq!(f.bytes_read, 16 * 1024);
    assert!(matches!(f.verdict, FileVerdict::HeartbeatOnly { .. }));
    let a = age(&r);
    assert!(0 < a && a < HOUR, "{a}");
}

// ----- PartialEvidenceTests / MatchingAndOrderingTests (reader items) ------------------

#[test]
fn a_file_untouched_beyond_the_horizon_is_not_opened() {
    let d = LogDir::new();
    // Garbage: if it were opened it would read as unknown.
    d.file("old.log", "no timestamps in here\n", NOW - 7 * HOUR);
    let r = d.judge();
    let f = file(&r, "old.log");
    assert!(f.stale);
    assert_eq!(f.bytes_read, 0);
    assert_eq!(
        f.verdict,
        FileVerdict::HeartbeatOnly {
            since_at_least: NOW - 7 * HOUR
        }
    );
    assert!(age(&r) >= 6 * HOUR);
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

#[test]
fn a_file_that_vanishes_before_it_is_read_is_unknown() {
    let d = LogDir::new();
    d.file(SESSION_LOG, work(NOW - 60, "assistant.turn_end"), NOW - 60);
    let path = d.path().join(SESSION_LOG);
    let Examined::Read(report) = examine(&path, SESSION_LOG.into(), NOW, &ReaderLimits::default())
    else {
        panic!("a fresh file must be read")
    };
    std::fs::remove_file(&path).unwrap();
    let r = read(&path, report, NOW, &ReaderLimits::default());
    assert_eq!(r.verdict, FileVerdict::Unknown);
    assert!(r.error.is_some());
    assert!(matches!(
        aggregate(&[r]),
        DirVerdict::Unknown(UnknownWhy::FileUnknown { .. })
    ));
}

#[test]
fn more_recent_files_than_the_cap_make_the_directory_unknown_unread() {
    let d = LogDir::new();
    for i in 0..5 {
        d.file(
            &format!("process-{i}.log"),
            work(NOW - 30, "assistant.turn_end"),
            NOW - 30,
        );
    }
    d.file("old.log", "x\n", NOW - 9 * HOUR);
    let r = d.judge();
    assert!((age(&r) - 30).abs() <= 2);
    let capped = d.judge_with(&ReaderLimits {
        max_files: 4,
        ..ReaderLimits::default()
    });
    assert_eq!(capped.last_activity, None);
    assert_eq!(
        capped.verdict,
        DirVerdict::Unknown(UnknownWhy::TooManyFiles { recent: 5, cap: 4 })
    );
    assert!(capped.files.iter().all(|f| f.bytes_read == 0));
    // Stale files are judged by mtime and do not count towards the cap.
    assert!(file(&capped, "old.log").stale);
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
    assert_eq!(skip("archive"), FileVerdict::Skipped(SkipReason::Directory));
    assert_eq!(
        skip("agent.sock"),
        FileVerdict::Skipped(SkipReason::NotRegular)
    );
    assert_eq!(
        skip("latest.log"),
        FileVerdict::Skipped(SkipReason::DanglingLink)
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
    let e = judge_dir(&missing, NOW, &ReaderLimits::default()).unwrap_err();
    assert!(matches!(e, LogDirError::Missing(_)));
    assert!(e.to_string().contains("nope"), "{e}");
    d.file("a.log", "x", NOW);
    let e = judge_dir(&d.path().join("a.log"), NOW, &ReaderLimits::default()).unwrap_err();
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
    let t = judge_file(&d.path().join("Telemetry.log"), NOW, &l);
    assert_eq!(t.verdict, FileVerdict::Skipped(SkipReason::Telemetry));
    let s = judge_file(&d.path().join(SESSION_LOG), NOW, &l);
    assert_eq!(s.verdict, FileVerdict::Work { at: NOW - 5 });
    assert_eq!(s.name, SESSION_LOG);
    let m = judge_file(&d.path().join("missing.log"), NOW, &l);
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
