//! Replays of the reference's SessionLogContentTests S1–S16 (S14, the timestamp table, is in
//! `line.rs`) with the incident's line shapes. S2 and S3 also pick targets in the
//! reference; that belongs to the guard, so here they check the directory verdict the guard
//! would be handed.

use super::fixtures::*;
use crate::core::session_log::*;

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
    assert!(!f.tail_only);
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
    let log = (0..50).fold(String::new(), |mut log, i| {
        log += &format!(
            "{{\"ts\":{},\"level\":\"debug\",\"msg\":\"turn_end\"}}\n",
            NOW - i
        );
        log
    });
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
        FileVerdict::Skipped(FileSkipReason::Empty)
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
        FileVerdict::Skipped(FileSkipReason::Telemetry)
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
