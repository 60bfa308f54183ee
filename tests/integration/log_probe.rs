//! `log-probe` on real directories: the human and JSON views of one judgement, a replay with
//! `--at`, and every way DIR or `--at` can be wrong. The binary runs as the test's private
//! unprivileged uid when the tests run as root, so permission bits mean what they say.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use headroom_core::time::format_secs;
use predicates::prelude::*;

use crate::schema;
use crate::support::Env;

const HOUR: i64 = 3600;
const SESSION_LOG: &str = "process-1787933425-86242.log";
const QUEUE: &str = "telemetry_queue.44137.1787938165269.0.jsonl.delivered";

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn us(t: i64) -> String {
    format!("{}.499123Z", &format_secs(t)[..19])
}

/// The incident's three heartbeat lines every 30 s from `from` to `to`.
fn heartbeats(from: i64, to: i64) -> String {
    let mut s = String::new();
    let mut t = from;
    while t <= to {
        s += &format!(
            "{} DEBUG tokio-runtime-worker ThreadId(09) agency::send_telemetry_events: client/agency/src/send_telemetry_events.rs:427: telem periodic flush: queue empty, nothing to commit\n\
             {} DEBUG tokio-runtime-worker ThreadId(09) agency::send_telemetry_events: client/agency/src/send_telemetry_events.rs:282: telem flush: spawned detached child pid={}\n\
             {} DEBUG tokio-runtime-worker ThreadId(11) otel_receiver::server: client/otel_receiver/src/server.rs:136: accepted OTLP signal (not yet processed) signal=/v1/metrics\n",
            us(t),
            us(t),
            32_302 + t % 1000,
            us(t + 1)
        );
        t += 30;
    }
    s
}

fn work(t: i64, event: &str) -> String {
    format!(
        "{}.499Z [DEBUG] Forwarding event for session 4da0d54f: {event}\n",
        &format_secs(t)[..19]
    )
}

fn write(dir: &Path, name: &str, content: &str, mtime: Option<i64>) {
    let mut f = File::create(dir.join(name)).unwrap();
    f.write_all(content.as_bytes()).unwrap();
    if let Some(m) = mtime {
        f.set_modified(UNIX_EPOCH + Duration::from_secs(m as u64))
            .unwrap();
    }
}

/// A log directory the test user can read.
fn log_dir(env: &Env, name: &str) -> std::path::PathBuf {
    let dir = env.path(name);
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// Runs of spaces as one, so column padding does not matter to an assertion.
fn squeeze(s: &str) -> String {
    s.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join("\n")
}

fn probe_json(env: &Env, args: &[&str]) -> schema::LogProbe {
    let out = env
        .cmd()
        .args(["log-probe", "--json"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stderr.is_empty());
    schema::read(&out.stdout)
}

#[test]
fn a_heartbeat_only_log_beside_a_telemetry_queue_and_an_empty_file_reads_idle() {
    let env = Env::new();
    let dir = log_dir(&env, "session");
    let t = now();
    write(&dir, SESSION_LOG, &heartbeats(t - 7 * HOUR, t - 5), None);
    write(&dir, QUEUE, "{\"events\":[]}\n", None);
    write(&dir, "empty.log", "", None);
    let d = dir.to_str().unwrap();

    let out = env.cmd().args(["log-probe", d]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stderr.is_empty());
    let human = squeeze(&String::from_utf8(out.stdout).unwrap());
    let lines: Vec<&str> = human.lines().collect();
    assert_eq!(lines.len(), 5, "{human}");
    assert!(
        lines[0].starts_with(&format!("log directory {d} (as of ")),
        "{human}"
    );
    // Sorted by name: empty.log, process-…, telemetry_queue….
    assert!(lines[1].starts_with("empty.log 0 B mtime "), "{human}");
    assert!(lines[1].ends_with("skipped: empty"), "{human}");
    assert!(lines[2].starts_with(SESSION_LOG), "{human}");
    assert!(
        lines[2].contains("heartbeat only for at least 6 h ["),
        "{human}"
    );
    assert!(lines[2].contains(" KiB read]"), "{human}");
    assert!(
        lines[3].starts_with(&format!("{QUEUE} 14 B mtime ")),
        "{human}"
    );
    assert!(lines[3].ends_with("skipped: telemetry"), "{human}");
    assert!(
        lines[4].starts_with("directory: heartbeat only for at least 6 h (no work after "),
        "{human}"
    );

    let r = probe_json(&env, &[d]);
    assert_eq!(r.schema, "headroom.log-probe/4");
    assert_eq!(r.dir, d);
    assert!(!r.replay);
    assert_eq!(r.limits.chunk_bytes, 65_536);
    assert_eq!(r.limits.budget_bytes, 4 << 20);
    assert_eq!(r.limits.horizon_seconds, 6 * HOUR);
    let names: Vec<_> = r.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["empty.log", SESSION_LOG, QUEUE]);
    let (empty, log, queue) = (&r.files[0], &r.files[1], &r.files[2]);
    assert_eq!(
        (empty.verdict.as_str(), empty.skip_reason.as_deref()),
        ("skipped", Some("empty"))
    );
    assert_eq!(
        (queue.verdict.as_str(), queue.skip_reason.as_deref()),
        ("skipped", Some("telemetry"))
    );
    assert_eq!(
        (queue.bytes_read, queue.last_activity.as_deref()),
        (0, None)
    );
    assert_eq!(log.verdict, "heartbeat-only");
    assert!(log.age_seconds.unwrap() >= 6 * HOUR, "{log:?}");
    assert!(
        log.bytes_read > 0 && log.bytes_read < log.size_bytes,
        "{log:?}"
    );
    assert!(
        log.mtime_age_seconds.unwrap() < HOUR,
        "content decides, not mtime"
    );
    assert_eq!(r.directory.verdict, "heartbeat-only");
    assert!(r.directory.age_seconds.unwrap() >= 6 * HOUR);
    assert_eq!(r.directory.bytes_read, log.bytes_read);
    assert_eq!(r.directory.unknown_reason, None);
}

#[test]
fn at_replays_an_archived_directory_as_of_the_capture_instant() {
    let env = Env::new();
    let dir = log_dir(&env, "archive");
    // 2026-08-29: the session's last work at 01:42:34, heartbeats after it; the archive was
    // taken later, so it also holds work after the capture instant 09:21:47.
    let last_work = 1_787_967_754; // 2026-08-29T01:42:34Z
    let capture = 1_787_995_307; // 2026-08-29T09:21:47Z
    let session = work(last_work, "assistant.turn_end")
        + &heartbeats(last_work + 3, capture + 2 * HOUR)
        + &work(capture + 2 * HOUR + 10, "assistant.turn_end");
    write(&dir, SESSION_LOG, &session, Some(capture + 2 * HOUR + 10));
    write(
        &dir,
        "agency_copilot_1787933424_86183.log",
        &heartbeats(capture - 17 * HOUR, capture + 2 * HOUR),
        Some(capture + 2 * HOUR),
    );
    let d = dir.to_str().unwrap();

    let r = probe_json(&env, &[d, "--at", "2026-08-29T09:21:47Z"]);
    assert!(r.replay);
    assert_eq!(r.at, "2026-08-29T09:21:47Z");
    // Any RFC 3339 offset names the same instant, reported in UTC (issue 18).
    let east = probe_json(&env, &[d, "--at", "2026-08-29T11:21:47+02:00"]);
    assert_eq!(east.at, "2026-08-29T09:21:47Z");
    assert_eq!(east.directory.verdict, r.directory.verdict);
    for f in &r.files {
        assert_eq!(f.verdict, "heartbeat-only", "{f:?}");
        assert!(f.age_seconds.unwrap() >= 6 * HOUR, "{f:?}");
        assert!(
            f.mtime_age_seconds.unwrap() < 0,
            "modified after the instant: {f:?}"
        );
    }
    assert_eq!(r.directory.verdict, "heartbeat-only");

    let out = env
        .cmd()
        .args(["log-probe", d, "--at", "2026-08-29T09:21:47Z"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let human = squeeze(&String::from_utf8(out.stdout).unwrap());
    assert!(
        human.contains(&format!(
            "log directory {d} (as of 2026-08-29T09:21:47Z; later lines ignored)"
        )),
        "{human}"
    );
    assert!(
        human.contains("mtime 2 h later heartbeat only for at least 6 h"),
        "{human}"
    );
    assert!(
        human.contains("directory: heartbeat only for at least 6 h (no work after 2026-08-29T03:2"),
        "{human}"
    );

    // Minutes after the last turn, the same directory shows that work.
    let r = probe_json(&env, &[d, "--at", "2026-08-29T01:43:00Z"]);
    let f = r.files.iter().find(|f| f.name == SESSION_LOG).unwrap();
    assert_eq!(f.verdict, "work");
    assert_eq!(f.last_activity.as_deref(), Some("2026-08-29T01:42:34Z"));
    assert_eq!(f.age_seconds, Some(26));
    assert_eq!(r.directory.verdict, "work");
    assert_eq!(r.directory.age_seconds, Some(26));
}

#[test]
fn an_unreadable_file_makes_the_directory_unknown_with_exit_zero() {
    let env = Env::new();
    let dir = log_dir(&env, "locked");
    let t = now();
    write(&dir, SESSION_LOG, &heartbeats(t - 7 * HOUR, t - 5), None);
    write(&dir, "secret.log", &work(t - 5, "assistant.turn_end"), None);
    std::fs::set_permissions(
        dir.join("secret.log"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let r = probe_json(&env, &[dir.to_str().unwrap()]);
    let secret = r.files.iter().find(|f| f.name == "secret.log").unwrap();
    assert_eq!(secret.verdict, "unknown");
    assert!(
        secret
            .error
            .as_deref()
            .unwrap()
            .contains("ermission denied"),
        "{secret:?}"
    );
    assert_eq!(r.directory.verdict, "unknown");
    assert_eq!(r.directory.last_activity, None);
    assert_eq!(r.directory.age_seconds, None);
    assert_eq!(
        r.directory.unknown_reason.as_deref(),
        Some("`secret.log` could not be judged")
    );
    env.cmd()
        .args(["log-probe", dir.to_str().unwrap()])
        .assert()
        .code(0)
        .stdout(predicate::str::contains(
            "directory: unknown: `secret.log` could not be judged (an unknown session is protected)",
        ));
}

/// One stderr line naming the path and what is wrong; exit 2; nothing on stdout.
fn assert_dir_error(env: &Env, dir: &Path, what: &str) {
    let out = env.cmd().arg("log-probe").arg(dir).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("headroom: error: "), "{err}");
    assert!(err.contains(&format!("`{}`", dir.display())), "{err}");
    assert!(err.contains(what), "{err}");
}

#[test]
fn a_missing_directory_a_file_or_an_unreadable_directory_is_exit_2_naming_the_path() {
    let env = Env::new();
    assert_dir_error(&env, &env.path("no-such-dir"), "does not exist");

    let file = env.path("a-file.log");
    write(file.parent().unwrap(), "a-file.log", "x\n", None);
    assert_dir_error(&env, &file, "is not a directory");

    let locked = log_dir(&env, "locked");
    write(&locked, SESSION_LOG, "x\n", None);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    assert_dir_error(&env, &locked, "ermission denied");
    assert_dir_error(&env, &locked, "cannot read log directory");
}

#[test]
fn at_that_is_not_rfc3339_is_a_usage_error() {
    let env = Env::new();
    let dir = log_dir(&env, "any");
    for bad in [
        "yesterday",
        "2026-08-29 09:21:47",
        "2026-08-29T09:21:47+02:00x",
    ] {
        let out = env
            .cmd()
            .args(["log-probe", dir.to_str().unwrap(), "--at", bad])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(64), "{bad}");
        assert!(out.stdout.is_empty());
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(&format!("--at `{bad}`")), "{err}");
        assert!(err.contains("RFC 3339"), "{err}");
    }
    // A replay judges the past: an instant in the future is refused.
    env.cmd()
        .args([
            "log-probe",
            dir.to_str().unwrap(),
            "--at",
            "2999-01-01T00:00:00Z",
        ])
        .assert()
        .code(64)
        .stderr(predicates::str::contains("is in the future"));
}
