//! The liveness guard on real processes (Linux): a wrapper holding zombies with a session
//! child whose `--log-dir` and CPU decide whether it is finished.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::schema;
use crate::support::{Env, Tree, proc_state, wait_until, zombie_children};

const HEARTBEATS: [&str; 3] = [
    "DEBUG tokio-runtime-worker ThreadId(09) agency::send_telemetry_events: client/agency/src/send_telemetry_events.rs:427: telem periodic flush: queue empty, nothing to commit",
    "DEBUG tokio-runtime-worker ThreadId(09) agency::send_telemetry_events: client/agency/src/send_telemetry_events.rs:282: telem flush: spawned detached child pid=32302",
    "DEBUG tokio-runtime-worker ThreadId(11) otel_receiver::server: client/otel_receiver/src/server.rs:136: accepted OTLP signal (not yet processed) signal=/v1/metrics",
];

fn stamp(secs_ago: u64) -> String {
    let t = SystemTime::now() - Duration::from_secs(secs_ago);
    let ms = t.duration_since(UNIX_EPOCH).unwrap().as_millis() % 1000;
    let base = humantime::format_rfc3339_seconds(t).to_string();
    format!("{}.{ms:03}Z", base.trim_end_matches('Z'))
}

/// A session log: one work line 3 h 1 min ago, then heartbeat triplets every 30 s up to now,
/// and optionally a work line `recent_work` seconds ago.
fn write_log(dir: &Path, recent_work: Option<u64>) {
    std::fs::create_dir_all(dir).unwrap();
    let mut text = format!(
        "{} INFO Forwarding event for session 4da0d54f: assistant.turn_end\n",
        stamp(3 * 3600 + 60)
    );
    let mut ago = 3 * 3600;
    loop {
        for h in HEARTBEATS {
            text.push_str(&format!("{} {h}\n", stamp(ago)));
        }
        if let Some(w) = recent_work {
            if ago > w && ago - 30 <= w {
                text.push_str(&format!(
                    "{} INFO Forwarding event for session 4da0d54f: tool.execution_start\n",
                    stamp(w)
                ));
            }
        }
        if ago < 30 {
            break;
        }
        ago -= 30;
    }
    std::fs::write(dir.join("process-1-86242.log"), text).unwrap();
}

pub(crate) struct Setup {
    pub(crate) env: Env,
    pub(crate) tree: Tree,
    pub(crate) leaker: i32,
    pub(crate) session: i32,
    logs: std::path::PathBuf,
}

pub(crate) fn setup(name: &str, recent_work: Option<u64>) -> Setup {
    let env = Env::new();
    let logs = env.path("session-logs");
    write_log(&logs, recent_work);
    if env.private {
        crate::support::chown(&logs, env.uid);
    }
    let copilot = env.named_fixture(&format!("cop-{}", &name[name.len() - 3..]));
    let exe = env.named_fixture(name);
    let mut tree = env.spawn(
        &exe,
        &[
            "leak",
            "--zombies",
            "150",
            "--session",
            copilot.to_str().unwrap(),
            "idle",
            "--log-dir",
            logs.to_str().unwrap(),
            "--",
        ],
    );
    let ready = tree.ready();
    let leaker = ready["pid"].as_i64().unwrap() as i32;
    let session = ready["session"].as_i64().unwrap() as i32;
    Setup {
        env,
        tree,
        leaker,
        session,
        logs,
    }
}

/// How far ahead of the machine's awake clock headroom's runs in these tests read theirs:
/// more than any CPU idleness a test seeds, so a history "20 minutes ago" is after the boot
/// on the clock headroom reads, however long the machine has been up.
const AWAKE_AHEAD_S: i64 = 24 * 3600;

impl Setup {
    /// headroom as the test user (`Env::cmd`), in a time namespace whose CLOCK_MONOTONIC
    /// (the awake clock on Linux) is `AWAKE_AHEAD_S` ahead, its boot clock untouched (so
    /// start times in `/proc` read as outside). Every run that reads or writes the CPU
    /// history `seed_cpu_history` writes goes through here, so all agree on the clock.
    pub(crate) fn cmd_awake_ahead(&self, wrapper: &[&str]) -> assert_cmd::Command {
        crate::support::require_root();
        crate::support::require_tool("unshare");
        let ahead = AWAKE_AHEAD_S.to_string();
        let launcher = [
            "unshare",
            "--time",
            "--monotonic",
            &ahead,
            "--boottime",
            "0",
            "--",
        ];
        self.env.cmd_in(&launcher, wrapper)
    }
}

pub(crate) fn reap(s: &Setup, name: &str, extra: &[&str]) -> schema::Reap {
    let threshold = if extra.contains(&"--idle-threshold") {
        vec![]
    } else {
        vec!["--idle-threshold", "60s"]
    };
    let out = s
        .cmd_awake_ahead(&[])
        .args(["reap", "--json", "--allow", name])
        .args(threshold)
        .args(extra)
        .output()
        .unwrap();
    schema::read_or(&out.stdout, &String::from_utf8_lossy(&out.stderr))
}

pub(crate) fn parent(r: &schema::Reap, pid: i32) -> &schema::ReapParent {
    r.parents.iter().find(|p| p.pid == pid).unwrap()
}

/// Two readings more than the threshold (60 s, the least `reap` accepts) apart: the first
/// records the session child's CPU, which is then moved two minutes into the past.
fn two_readings(s: &Setup, name: &str, extra: &[&str]) -> schema::Reap {
    let first = reap(s, name, &["--dry-run"]);
    assert_eq!(
        parent(&first, s.leaker).reason.as_deref(),
        Some("session-signal-unavailable"),
        "no history means busy: {:?}",
        parent(&first, s.leaker)
    );
    seed_cpu_history(s, 120);
    reap(s, name, extra)
}

#[test]
#[cfg_attr(
    not(all(hr_root, hr_tool_unshare)),
    ignore = "needs root and unshare (a time namespace)"
)]
fn a_finished_session_is_released_and_its_child_survives_the_parent() {
    let s = setup("agency-idl", None);
    let r = two_readings(&s, "agency-idl", &[]);
    let p = parent(&r, s.leaker);
    assert_eq!(
        (p.verdict.as_str(), p.session.as_str()),
        ("target", "idle"),
        "{p:?}"
    );
    assert!(p.log_age_seconds.unwrap() >= 3.0 * 3600.0 - 5.0, "{p:?}");
    assert!(p.cpu_idle_seconds.unwrap() >= 1.0, "{p:?}");
    assert_eq!(
        (r.targets[0].outcome.as_str(), r.targets[0].verified),
        ("sigterm", true)
    );
    wait_until("the wrapper to go", || proc_state(s.leaker).is_none());
    assert_eq!(zombie_children(s.leaker), 0);
    // The session child keeps running, reparented (to the test's subreaper).
    assert_eq!(proc_state(s.session), Some('S'));
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", s.session)).unwrap();
    let ppid: i32 = stat[stat.rfind(')').unwrap() + 2..]
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert_ne!(ppid, s.leaker);
    drop(s.tree);
}

/// Seed the CPU history as if the session child had been read, idle, `idle_s` ago on the
/// awake clock headroom reads under `Setup::cmd_awake_ahead` (CLOCK_MONOTONIC on Linux,
/// `AWAKE_AHEAD_S` ahead of this process's), so one run sees minutes of CPU idleness on a
/// machine up for less than that (headroom drops a reading from before its boot).
pub(crate) fn seed_cpu_history(s: &Setup, idle_s: i64) {
    assert!(
        idle_s <= AWAKE_AHEAD_S,
        "{idle_s} s is before headroom's boot"
    );
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", s.session)).unwrap();
    let f: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    let (utime, stime, start): (u64, u64, u64) = (
        f[11].parse().unwrap(),
        f[12].parse().unwrap(),
        f[19].parse().unwrap(),
    );
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid, writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    // A time namespace's offsets are from the machine's clock, not the creator's: if this
    // process is in one (a container, or a test run as on a machine just booted), its own
    // offset is not headroom's.
    let now_ms =
        (ts.tv_sec - own_monotonic_offset_s() + AWAKE_AHEAD_S) * 1000 + ts.tv_nsec / 1_000_000;
    let then = now_ms - idle_s * 1000;
    let entry = serde_json::json!({"pid": s.session, "start_time": start, "cpu_ns": (utime + stime) * 10_000_000,
                                   "read_at_ms": then, "last_active_ms": then});
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap();
    let file = serde_json::json!({"schema": "headroom.cpu-history/2", "uid": s.env.uid,
                                  "boot": boot.trim(), "entries": [entry]});
    let path = s.env.home.join("cpu-history.json");
    std::fs::write(&path, file.to_string()).unwrap();
    if s.env.private {
        crate::support::chown(&path, s.env.uid);
    }
}

/// This process's CLOCK_MONOTONIC offset from the machine's, in whole seconds (0 outside a
/// time namespace, or on a kernel without them).
fn own_monotonic_offset_s() -> i64 {
    let Ok(text) = std::fs::read_to_string("/proc/self/timens_offsets") else {
        return 0;
    };
    let line = text.lines().find(|l| l.starts_with("monotonic "));
    line.and_then(|l| l.split_whitespace().nth(1))
        .map(|s| s.parse().unwrap())
        .unwrap_or(0)
}

#[test]
#[cfg_attr(
    not(all(hr_root, hr_tool_unshare)),
    ignore = "needs root and unshare (a time namespace)"
)]
fn one_work_line_20s_ago_keeps_it_active_although_cpu_says_idle_for_20_minutes() {
    // The 2026-08-29 lesson in reverse: CPU cannot see delegated work; the log can.
    let s = setup("agency-act", Some(20));
    seed_cpu_history(&s, 1200);
    let r = reap(&s, "agency-act", &["--idle-threshold", "60s"]);
    let p = parent(&r, s.leaker);
    assert_eq!(
        (p.reason.as_deref(), p.session.as_str()),
        (Some("has-active-session"), "active"),
        "{p:?}"
    );
    assert!(p.log_age_seconds.unwrap() < 60.0);
    assert!(p.cpu_idle_seconds.unwrap() >= 1200.0 - 5.0, "{p:?}");
    assert!(r.targets.is_empty());
    assert_eq!(zombie_children(s.leaker), 150);
}

#[test]
#[cfg_attr(
    not(all(hr_root, hr_tool_unshare)),
    ignore = "needs root and unshare (a time namespace)"
)]
fn an_unreadable_log_directory_protects_as_unavailable() {
    let s = setup("agency-unr", None);
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&s.logs, std::fs::Permissions::from_mode(0o000)).unwrap();
    let r = two_readings(&s, "agency-unr", &[]);
    std::fs::set_permissions(&s.logs, std::fs::Permissions::from_mode(0o755)).unwrap();
    let p = parent(&r, s.leaker);
    assert_eq!(
        p.reason.as_deref(),
        Some("session-signal-unavailable"),
        "{p:?}"
    );
    assert!(
        p.cpu_idle_seconds.is_some() && p.log_age_seconds.is_none(),
        "{p:?}"
    );
    assert!(r.summary.contains("unreadable"));
    assert_eq!(zombie_children(s.leaker), 150);
}

#[test]
fn idle_watch_on_the_same_setup_sends_no_signal() {
    let s = setup("agency-iwt", None);
    let args = [
        "idle-watch",
        "--json",
        "--duration",
        "2s",
        "--every",
        "1s",
        "--threshold",
        "1s",
    ];
    let out = if crate::support::has_tool("strace") {
        // Prove it: no kill/tkill/tgkill system call at all.
        let trace = s.env.path("strace.out");
        let o = s
            .env
            .cmd_via(&[
                "strace",
                "-f",
                "-e",
                "trace=kill,tkill,tgkill,pidfd_send_signal",
                "-o",
                trace.to_str().unwrap(),
            ])
            .args(args)
            .output()
            .unwrap();
        let calls = std::fs::read_to_string(&trace).unwrap();
        let signals: Vec<&str> = calls
            .lines()
            .filter(|l| l.contains("kill(") || l.contains("pidfd_send_signal("))
            .collect();
        assert!(signals.is_empty(), "idle-watch sent signals: {signals:?}");
        o
    } else {
        s.env.cmd().args(args).output().unwrap()
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last_poll = lines.iter().rev().find(|l| l["type"] == "poll").unwrap();
    let p = last_poll["parents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"] == s.leaker)
        .unwrap();
    assert_eq!(p["verdict"], "idle", "{p}");
    assert_eq!(lines.last().unwrap()["signals_sent"], 0);
    assert_eq!(proc_state(s.leaker), Some('S'));
    assert_eq!(zombie_children(s.leaker), 150);
    assert_eq!(proc_state(s.session), Some('S'));
}

#[test]
#[cfg_attr(
    not(all(hr_root, hr_tool_unshare)),
    ignore = "needs root and unshare (a time namespace)"
)]
fn a_stopped_session_child_stays_protected_while_a_merely_silent_one_is_released() {
    let s = setup("agency-stp", None);
    // SIGSTOP the session child this test started (as `park` or a memory guard would).
    // SAFETY: kill has no memory-safety preconditions; the pid is this test's fixture.
    #[allow(clippy::disallowed_methods)]
    let rc = unsafe { libc::kill(s.session, libc::SIGSTOP) };
    assert_eq!(rc, 0);
    wait_until("the session child to stop", || {
        proc_state(s.session) == Some('T')
    });
    let first = two_readings(&s, "agency-stp", &["--dry-run"]);
    seed_cpu_history(&s, 240);
    let second = reap(&s, "agency-stp", &["--dry-run"]);
    for (round, r) in [first, second].iter().enumerate() {
        let p = parent(r, s.leaker);
        assert_eq!(
            (p.reason.as_deref(), p.session_blind.as_deref()),
            (Some("session-signal-unavailable"), Some("child-stopped")),
            "reading {round}: {p:?}"
        );
        assert!(
            p.cpu_idle_seconds.unwrap_or(0.0) >= 60.0,
            "past the threshold: {p:?}"
        );
    }
    let human = s
        .cmd_awake_ahead(&[])
        .args([
            "reap",
            "--dry-run",
            "--allow",
            "agency-stp",
            "--idle-threshold",
            "60s",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("session child stopped"), "{text}");
    // Control: continued, the same session is merely silent, and the wrapper is released.
    // SAFETY: as above.
    #[allow(clippy::disallowed_methods)]
    let rc = unsafe { libc::kill(s.session, libc::SIGCONT) };
    assert_eq!(rc, 0);
    wait_until("the session child to run", || {
        proc_state(s.session) == Some('S')
    });
    seed_cpu_history(&s, 120);
    let r = reap(&s, "agency-stp", &["--dry-run"]);
    let p = parent(&r, s.leaker);
    assert_eq!(
        (p.verdict.as_str(), p.session.as_str()),
        ("target", "idle"),
        "{p:?}"
    );
    assert_eq!(zombie_children(s.leaker), 150, "dry runs only");
}

/// Issue 25 item 15, on real processes: the session log holds work 20 s ago, but its mtime
/// was set three days back (`touch -d '3 days ago'`, `cp -p`, `rsync -a`, `tar x`). Judged
/// by mtime the log read idle and the wrapper was released; the content decides, so it is
/// `has-active-session` and nothing is signalled, though CPU says idle. Control: the same
/// old mtime over a log whose last work is 3 h old is released (`reap --dry-run`).
#[test]
#[cfg_attr(
    not(all(hr_root, hr_tool_unshare)),
    ignore = "needs root and unshare (a time namespace)"
)]
fn an_old_mtime_on_a_fresh_log_keeps_its_session_active() {
    let three_days = SystemTime::now() - Duration::from_secs(72 * 3600);
    let set_old = |s: &Setup| {
        let f = std::fs::File::options()
            .write(true)
            .open(s.logs.join("process-1-86242.log"))
            .unwrap();
        f.set_modified(three_days).unwrap();
    };
    let s = setup("agency-mtm", Some(20));
    set_old(&s);
    seed_cpu_history(&s, 1200);
    let r = reap(&s, "agency-mtm", &[]);
    let p = parent(&r, s.leaker);
    assert_eq!(
        (p.reason.as_deref(), p.session.as_str()),
        (Some("has-active-session"), "active"),
        "{p:?}"
    );
    assert!(p.log_age_seconds.unwrap() < 60.0, "{p:?}");
    assert!(r.targets.is_empty());
    assert_eq!(zombie_children(s.leaker), 150);
    // log-probe says the same of the directory.
    let out = s
        .env
        .cmd()
        .args(["log-probe", "--json"])
        .arg(&s.logs)
        .output()
        .unwrap();
    let lp: schema::LogProbe = schema::read(&out.stdout);
    assert_eq!(lp.directory.verdict, "work", "{lp:?}");
    assert!(lp.files[0].bytes_read > 0 && !lp.files[0].tail_only);
    assert!(lp.files[0].mtime_age_seconds.unwrap() > 71 * 3600);
    drop(s.tree);
    // Control: old content under the same old mtime is released.
    let s = setup("agency-mto", None);
    set_old(&s);
    seed_cpu_history(&s, 1200);
    let r = reap(&s, "agency-mto", &["--dry-run"]);
    let p = parent(&r, s.leaker);
    assert_eq!(
        (p.verdict.as_str(), p.session.as_str()),
        ("target", "idle"),
        "{p:?}"
    );
    drop(s.tree);
}
