//! Fault 7: signals and pipes. `watch` on SIGHUP stops cleanly and exits 75 (documented: no
//! reload; the non-zero exit is what the service managers it registers with restart on, and
//! the config is read afresh); a reader that closes the
//! JSON Lines stream ends it (EPIPE, exit 0) instead of leaving it guarding for nobody; a
//! stdout nobody reads (a full pipe) does not stall its rounds, and it still stops promptly;
//! nor does a stderr nobody reads while each round has a warning to write there.

use std::io::{BufRead, BufReader, Read};
use std::os::fd::{FromRawFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use super::{check_state_files, require_sandbox};
use crate::support::{Env, TIMEOUT, json_lines, spawn_retrying, wait_until};

/// A headroom child of the test; killed (it is ours, unreaped) if the test fails early.
struct Ours(Child);

impl Drop for Ours {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
        }
        let _ = self.0.wait();
    }
}

impl Ours {
    fn wait_exit(&mut self) -> std::process::ExitStatus {
        let mut status = None;
        wait_until("headroom to exit", || {
            status = self.0.try_wait().unwrap();
            status.is_some()
        });
        status.unwrap()
    }
}

fn watch(env: &Env, stdout: Stdio) -> Ours {
    let mut argv = env.as_test_user();
    argv.push(env.headroom_path().into());
    let mut c = Command::new(&argv[0]);
    c.args(&argv[1..])
        .args([
            "watch",
            "--interval",
            "100ms",
            "--json",
            "--no-hangs",
            // Every round reads the table: these rounds are what is under test.
            "--table-every",
            "0s",
            "--no-auto-reap",
        ])
        .env("HEADROOM_HOME", &env.home)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::null());
    Ours(spawn_retrying(&mut c))
}

fn poll_rows(env: &Env) -> usize {
    std::fs::read_to_string(env.home.join("evidence.csv"))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(",poll,"))
        .count()
}

#[test]
fn sighup_stops_watch_cleanly_with_its_summary_and_exit_75_for_its_service_to_restart() {
    let env = Env::new();
    let (out, err) = (env.path("watch.out"), env.path("watch.err"));
    let args = ["watch", "--interval", "200ms", "--json", "--no-hangs"];
    let mut w = env.spawn_with(env.headroom_path(), &args, Some((&out, &err)));
    wait_until("a reading", || {
        json_lines(&out).iter().any(|e| e["type"] == "reading")
    });
    w.signal(libc::SIGHUP);
    // 75, not 0: systemd's `Restart=on-failure` (headroom's unit, and what `brew services`
    // writes on Linux) left a guard that exited 0 on SIGHUP stopped for good (#27 item 6).
    // Not 129 either: not killed by the hangup, it finished the round and summarised.
    assert_eq!(w.exit_code(), 75, "stopped to be restarted");
    let events = json_lines(&out);
    assert!(
        events.iter().any(|e| e["type"] == "notice"
            && e["message"] == format!("stopping on signal {}", libc::SIGHUP))
    );
    assert_eq!(events.last().unwrap()["type"], "summary");
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn a_reader_that_closes_the_stream_ends_watch() {
    let env = Env::new();
    require_sandbox(&env);
    let mut w = watch(&env, Stdio::piped());
    let mut reader = BufReader::new(w.0.stdout.take().unwrap());
    // The stream opens with notices (the memory-pressure source); read up to the first
    // reading, then close it.
    let mut seen = Vec::new();
    for _ in 0..8 {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            break;
        }
        seen.push(line);
        if seen.last().is_some_and(|l| l.contains("\"reading\"")) {
            break;
        }
    }
    assert!(
        seen.last().is_some_and(|l| l.contains("\"reading\"")),
        "{seen:?}"
    );
    drop(reader); // `| head -1`
    let status = w.wait_exit();
    assert_eq!(status.code(), Some(0), "{status:?}");
    check_state_files(&env.home);
}

/// A pipe filled to the last byte, that nobody will read while watch runs: (read end, write
/// end, bytes in it). The write end blocks, as a shell pipeline's would.
fn full_pipe() -> (OwnedFd, OwnedFd, usize) {
    let mut fds = [0; 2];
    // SAFETY: fds is a valid two-int array.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: pipe2 returned two fresh fds that nothing else owns.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // Fill the pipe: nobody will read it while watch runs.
    // SAFETY: fcntl on our own fd.
    unsafe { libc::fcntl(fds[1], libc::F_SETFL, libc::O_NONBLOCK) };
    let chunk = [b'#'; 4096];
    let mut filled = 0;
    loop {
        // SAFETY: chunk is valid for its length; fds[1] is open.
        let n = unsafe { libc::write(fds[1], chunk.as_ptr().cast(), chunk.len()) };
        if n <= 0 {
            break;
        }
        filled += n as usize;
    }
    // SAFETY: as above; watch gets a blocking pipe, as a shell pipeline would give it.
    unsafe { libc::fcntl(fds[1], libc::F_SETFL, 0) };
    (read_end, write_end, filled)
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn a_full_stdout_pipe_does_not_stall_the_rounds() {
    let env = Env::new();
    require_sandbox(&env);
    let (read_end, write_end, filled) = full_pipe();
    let mut w = watch(&env, Stdio::from(write_end));
    // Readings go on (each has its evidence row) though every write to stdout would block.
    wait_until("ten rounds behind a full pipe", || poll_rows(&env) >= 10);
    #[allow(clippy::disallowed_methods)]
    // SAFETY: kill has no memory-safety preconditions; the pid is our own unreaped child.
    unsafe {
        libc::kill(w.0.id() as i32, libc::SIGTERM)
    };
    let stopped = Instant::now();
    let status = w.wait_exit();
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(
        stopped.elapsed() < TIMEOUT / 2,
        "stopping waited for the reader"
    );
    // Nothing torn into the pipe: whatever followed the filler is whole lines (a pipe write
    // of a line is atomic; the lines still queued at exit are dropped with the process).
    let mut all = Vec::new();
    std::fs::File::from(read_end).read_to_end(&mut all).unwrap();
    let text = String::from_utf8_lossy(&all[filled..]);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    eprintln!(
        "full pipe: {} rounds with {filled} bytes unread in the pipe; {} lines delivered after",
        poll_rows(&env),
        lines.len()
    );
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn a_full_stderr_pipe_does_not_stall_the_rounds() {
    let env = Env::new();
    require_sandbox(&env);
    let (_read_end, write_end, _) = full_pipe();
    let cfg = env.path("stderr.toml");
    std::fs::write(&cfg, "[notifications]\nenabled = false\n").unwrap();
    let out = env.path("watch.out");
    let mut argv = env.as_test_user();
    argv.push(env.headroom_path().into());
    let mut c = Command::new(&argv[0]);
    c.args(&argv[1..])
        .args(["watch", "--interval", "100ms", "--json", "--no-hangs"])
        // Critical every round: every round runs a cleanup (with nothing allowed, nothing
        // is signalled), and its CPU history, corrupted below, is a warning on stderr.
        .args(["--crit", "0.0001", "--warn", "0.0001", "--config"])
        .arg(&cfg)
        .env("HEADROOM_HOME", &env.home)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::from(write_end));
    let mut w = Ours(spawn_retrying(&mut c));
    let history = env.home.join("cpu-history.json");
    let set_aside = || {
        std::fs::read_dir(&env.home)
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
            .count()
    };
    // Each corrupt history is set aside with a warning to the full stderr: five of them
    // behind the blocked writer, and the rounds go on.
    wait_until("ten rounds and five warnings behind a full stderr", || {
        if std::fs::read(&history).map_or(true, |b| !b.starts_with(b"garbage")) {
            std::fs::write(&history, "garbage").unwrap();
            crate::support::chown(&history, env.uid);
        }
        poll_rows(&env) >= 10 && set_aside() >= 5
    });
    let r = poll_rows(&env);
    wait_until("two more rounds", || poll_rows(&env) >= r + 2);
    #[allow(clippy::disallowed_methods)]
    // SAFETY: kill has no memory-safety preconditions; the pid is our own unreaped child.
    unsafe {
        libc::kill(w.0.id() as i32, libc::SIGTERM)
    };
    let stopped = Instant::now();
    let status = w.wait_exit();
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(
        stopped.elapsed() < TIMEOUT / 2,
        "stopping waited for the reader"
    );
    let events = json_lines(&out);
    assert_eq!(events.last().unwrap()["type"], "summary", "{events:?}");
    eprintln!(
        "full stderr: {} rounds, {} warnings behind a full pipe",
        poll_rows(&env),
        set_aside()
    );
}
