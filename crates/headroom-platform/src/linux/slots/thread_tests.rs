//! The unchanged check on multi-threaded processes, for real (`slots.rs`): a fixture
//! (`hr-fixture threads`, under `hr-fixture supervise`, the test's own subreaper) starts and
//! ends threads and ends its main thread alone, leaving a zombie leader while its other
//! threads run. Every round of a source that serves unchanged processes must count it as a
//! full read does (threads, zombie, uid, parent); the control runs the same steps through a
//! source that reads every process in full. A changed real uid is not repeated here: the
//! `PIDFD_GET_INFO` ioctl reads the leader's, as `status` does, whatever the thread count
//! (`a_changed_real_uid_is_seen_the_next_round`).

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use super::round_tests::{full_reads, repeating, require_pidfd_info, round, until, wait_status};
use crate::linux::{LinuxSource, Roots};

/// `hr-fixture`, the `headroom` package's example: `cargo test` at the workspace root builds
/// it next to the test binary's directory (`cargo build --examples` before `cargo test -p
/// headroom-platform`).
fn fixture_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let p = exe
        .parent()
        .and_then(|deps| deps.parent())
        .unwrap()
        .join("examples/hr-fixture");
    assert!(
        p.exists(),
        "fixture not built at {}: run `cargo build --examples` (or `cargo test` at the root)",
        p.display()
    );
    p
}

/// The supervisor (ended with everything under it when its stdin closes, also when an
/// assertion failed first) and the FIFO that drives the fixture.
struct Fixture {
    supervisor: Child,
    control: Option<File>,
    pid: i32,
    _dir: tempfile::TempDir,
}

impl Fixture {
    fn start() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("control");
        assert!(
            Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let mut supervisor = Command::new(fixture_bin())
            .arg("supervise")
            .arg("--")
            .arg(fixture_bin())
            .args(["threads", "--control"])
            .arg(&fifo)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(supervisor.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let pid: i32 = line
            .strip_prefix("started ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("supervisor said {line:?}"));
        // Non-blocking: ENXIO until the fixture has opened its end (a condition, waited for).
        let control = until(
            "the fixture never opened its FIFO",
            |text| match OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&fifo)
            {
                Ok(f) => Some(f),
                Err(e) => {
                    *text = e.to_string();
                    None
                }
            },
        );
        Self {
            supervisor,
            control: Some(control),
            pid,
            _dir: dir,
        }
    }

    fn say(&mut self, what: &str) {
        let c = self.control.as_mut().unwrap();
        c.write_all(format!("{what}\n").as_bytes()).unwrap();
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        drop(self.control.take());
        drop(self.supervisor.stdin.take());
        let _ = self.supervisor.wait();
    }
}

/// `Threads:` and whether `State:` is a zombie, in `status` now.
fn threads_now(text: &str) -> Option<(u32, bool)> {
    let threads = text
        .lines()
        .find_map(|l| l.strip_prefix("Threads:\t"))?
        .parse()
        .ok()?;
    Some((threads, text.contains("\nState:\tZ")))
}

/// One step: wait until `status` shows `want` (threads, zombie), then a round of `src`
/// and one of `full` (every process read in full): both count it so. Whether `src`
/// served it from its last full read.
fn step(src: &LinuxSource, full: &LinuxSource, pid: i32, want: (u32, bool)) -> bool {
    wait_status(pid, |s| threads_now(s) == Some(want));
    let (rec, served) = round(src, pid);
    let (control, control_served) = round(full, pid);
    assert!(!control_served, "the control reads in full");
    let view = |r: &crate::core::snapshot::ProcessRecord| (r.threads, r.is_zombie(), r.uid, r.ppid);
    let (rec, control) = (rec.unwrap(), control.unwrap());
    assert_eq!(view(&rec), view(&control), "served: {served}");
    assert_eq!((rec.threads, rec.is_zombie()), (Some(want.0), want.1));
    served
}

/// The steps, through `src`; with `fast`, which rounds must be served unchanged (the
/// first after a change reads in full, the next is served).
fn threads_leader_exit_and_zombie_leader(src: &LinuxSource, fast: bool) {
    let full = full_reads();
    let mut f = Fixture::start();
    let pid = f.pid;
    let expect = |served: bool, want: bool| {
        assert_eq!(served, fast && want, "served unchanged where expected");
    };
    // The main thread and the control thread.
    expect(step(src, &full, pid, (2, false)), false);
    expect(step(src, &full, pid, (2, false)), true);
    f.say("spawn");
    expect(step(src, &full, pid, (3, false)), false);
    expect(step(src, &full, pid, (3, false)), true);
    f.say("end");
    expect(step(src, &full, pid, (2, false)), false);
    expect(step(src, &full, pid, (2, false)), true);
    // One thread starts and another ends between two rounds: the same count, the same
    // slots; nothing slot counting uses changed, and it is counted as before.
    f.say("spawn");
    wait_status(pid, |s| threads_now(s) == Some((3, false)));
    f.say("end");
    expect(step(src, &full, pid, (2, false)), true);
    // The main thread ends alone: same uid, parent and thread count (the zombie leader is
    // still counted), but the process reads as a zombie now.
    f.say("leader-exit");
    expect(step(src, &full, pid, (2, true)), false);
    expect(step(src, &full, pid, (2, true)), true);
    // A zombie leader's process still starts and ends threads.
    f.say("spawn");
    expect(step(src, &full, pid, (3, true)), false);
    f.say("end");
    expect(step(src, &full, pid, (2, true)), false);
    expect(step(src, &full, pid, (2, true)), true);
    // EOF on the FIFO: the whole process exits (its supervisor reaps it): gone.
    drop(f.control.take());
    until("the fixture never went", |text| {
        *text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        text.is_empty().then_some(())
    });
    assert_eq!(round(src, pid), (None, false), "reaped: gone");
}

#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn a_multi_threaded_process_is_counted_as_a_full_read_counts_it() {
    require_pidfd_info();
    threads_leader_exit_and_zombie_leader(&repeating(), true);
}

/// A one-shot reading (`one_shot.rs`: pidfd, task link count, `statm`; never `status`)
/// counts each step as the full read does: threads, the zombie leader (which only `statm`
/// shows), uid, parent. Breaking the `statm` check (a multi-threaded process read as never
/// a zombie) fails at the `leader-exit` step.
#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn a_one_shot_reading_counts_a_multi_threaded_process_as_a_full_read_does() {
    require_pidfd_info();
    threads_leader_exit_and_zombie_leader(&LinuxSource::new(Roots::default()), false);
}

/// The control: the same steps, every round read in full, count the same.
#[test]
fn the_same_steps_read_in_full() {
    threads_leader_exit_and_zombie_leader(&full_reads(), false);
}
