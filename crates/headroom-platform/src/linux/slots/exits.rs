//! Which kept processes exited or were reaped since the last round, without asking each.
//!
//! A `poll` over every kept pidfd asks each pidfd's process for its state: at +6,000 zombies
//! that was 42 % of a table round (`pidfd_poll`, `pid_task`, `fdget`; BENCHMARKS.md
//! "2026-12-03 (night)"), and after minutes of quiet rounds all of it cold. So the pidfds
//! join one edge-triggered epoll set when they are opened, and a round's `begin` only takes
//! what fired since (`epoll_wait` with no timeout): a process that did not change costs
//! nothing. A pidfd fires when its whole process exits (`do_notify_pidfd`, Linux 5.3) and,
//! on kernels that wake its waiters on reap (`__change_pid`), when it is reaped, with its
//! state then (`POLLIN`, `POLLIN | POLLHUP`); both are for good, so each is kept as it is
//! seen. A pidfd already exited when it is added fires then (epoll polls it on insert).
//!
//! A kernel that does not wake a pidfd's waiters on reap would leave a reaped zombie looking
//! unreaped, and a dead zombie is served with no system call of its own while it is not
//! reaped (`dead_and_still_parented`): its pid could name another process by then. So the
//! set is used only once this kernel showed it wakes them (`reap_wakes_waiters`, asked once
//! a process: a child that exits at once, watched through both steps); otherwise, and if
//! any pidfd cannot be added, every round `poll`s as before.

// `unsafe` here: the self-test's child (a raw `clone` with no exit signal) and its `waitid`s.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;
use std::time::Duration;

use rustix::event::epoll::{self, CreateFlags, Event, EventData, EventFlags};

/// Events taken per `epoll_wait`; a round with more calls it again.
const BATCH: usize = 256;

/// What fired for one kept pidfd: its token (`token`), and whether it was reaped too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Fired {
    pub(super) token: u64,
    pub(super) reaped: bool,
}

/// The token a pidfd is added with: its pid and the serial of the kept entry, so an event
/// of a pidfd closed since (an entry removed and its pid kept again) names no live entry.
pub(super) fn token(pid: i32, serial: u32) -> u64 {
    (u64::from(serial) << 32) | u64::from(pid as u32)
}

/// The pid and serial of a token.
pub(super) fn untoken(token: u64) -> (i32, u32) {
    (token as u32 as i32, (token >> 32) as u32)
}

/// The edge-triggered set of kept pidfds.
pub(super) struct ExitSet {
    epoll: OwnedFd,
    events: Vec<Event>,
}

impl std::fmt::Debug for ExitSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExitSet")
            .field("epoll", &self.epoll)
            .finish()
    }
}

/// One event as `Fired` (copied out: epoll's struct is packed).
fn fired(e: &Event) -> Fired {
    let flags = e.flags;
    Fired {
        token: e.data.u64(),
        reaped: flags.contains(EventFlags::HUP),
    }
}

impl ExitSet {
    /// The set, where this kernel wakes pidfd waiters on reap (`reap_wakes_waiters`);
    /// `None`: `poll` every round.
    pub(super) fn new() -> Option<Self> {
        if !reap_wakes_waiters() {
            return None;
        }
        Self::made().ok()
    }

    fn made() -> io::Result<Self> {
        Ok(Self {
            epoll: epoll::create(CreateFlags::CLOEXEC)?,
            events: vec![
                Event {
                    flags: EventFlags::empty(),
                    data: EventData::new_u64(0),
                };
                BATCH
            ],
        })
    }

    /// Watch `pidfd` under `token`; one that already exited fires at once.
    pub(super) fn add(&self, pidfd: BorrowedFd<'_>, token: u64) -> io::Result<()> {
        Ok(epoll::add(
            &self.epoll,
            pidfd,
            EventData::new_u64(token),
            EventFlags::IN | EventFlags::ET,
        )?)
    }

    /// Everything that fired since the last call, each to `seen`; `Err` when the set could
    /// not be asked (what fired stays queued for the next call).
    pub(super) fn drain(&mut self, mut seen: impl FnMut(Fired)) -> io::Result<()> {
        let now = rustix::time::Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        loop {
            let n = match epoll::wait(&self.epoll, &mut self.events[..], Some(&now)) {
                Ok(n) => n,
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            };
            self.events.iter().take(n).map(fired).for_each(&mut seen);
            if n < self.events.len() {
                return Ok(());
            }
        }
    }

    /// Wait up to `timeout` for one event (the self-test's, which must not spin).
    fn next(&mut self, timeout: Duration) -> Option<Fired> {
        let ts = crate::fd::poll_timeout(timeout);
        let n = epoll::wait(&self.epoll, &mut self.events[..1], Some(&ts)).ok()?;
        (n == 1).then(|| fired(&self.events[0]))
    }
}

/// Whether this kernel wakes a pidfd's epoll waiters when its process exits and again when
/// it is reaped, asked once a process (`probe` never asks: only repeated rounds use the
/// set). A child with no exit signal (so no SIGCHLD reaches `run`'s handler, and a
/// `waitpid(-1)` without `__WALL` cannot take it) exits at once; its pidfd must fire
/// exited-not-reaped once it is a zombie, then reaped once this process reaps it.
fn reap_wakes_waiters() -> bool {
    static ANSWER: OnceLock<bool> = OnceLock::new();
    *ANSWER.get_or_init(|| watched_child().unwrap_or(false))
}

/// The self-test's two steps, each given a second (a kernel that wakes does so before
/// `waitid` returns; the second is for a loaded machine, and only a failing kernel waits
/// it out).
fn watched_child() -> io::Result<bool> {
    let mut set = ExitSet::made()?;
    let child = Child::start()?;
    let pidfd = super::pidfd_info::open(child.0)?;
    set.add(pidfd.as_fd(), 1)?;
    child.wait(true)?;
    let step = Duration::from_secs(1);
    let exited = set.next(step);
    child.wait(false)?;
    let reaped = set.next(step);
    Ok(judged(exited, reaped))
}

/// The self-test's verdict: the first event says exited and not reaped, the second reaped.
fn judged(exited: Option<Fired>, reaped: Option<Fired>) -> bool {
    exited.is_some_and(|f| !f.reaped) && reaped.is_some_and(|f| f.reaped)
}

/// The self-test's child: reaped when dropped, whatever failed first, so none outlives it.
struct Child(i32, std::cell::Cell<bool>);

impl Child {
    fn start() -> io::Result<Self> {
        // A raw `clone` with flags 0: a copy of this process with no exit signal (a `fork`
        // sends SIGCHLD), which only `_exit`s: no allocation, no lock, nothing run but the
        // system call, so a copy of a multi-threaded process is safe.
        // SAFETY: the child returns from the system call on its copy of this stack and calls
        // `_exit` at once; the parent only reads the returned pid.
        let pid = unsafe {
            libc::syscall(
                libc::SYS_clone,
                0 as libc::c_long,
                0 as libc::c_long,
                0 as libc::c_long,
                0 as libc::c_long,
                0 as libc::c_long,
            )
        };
        match pid {
            // SAFETY: `_exit` ends the child without running anything of this process's.
            0 => unsafe { libc::_exit(0) },
            p if p < 0 => Err(io::Error::last_os_error()),
            p => Ok(Self(p as i32, std::cell::Cell::new(false))),
        }
    }

    /// Until it has exited: left a zombie (`keep`), or reaped.
    fn wait(&self, keep: bool) -> io::Result<()> {
        let mut flags = libc::WEXITED | libc::__WALL;
        if keep {
            flags |= libc::WNOWAIT;
        }
        loop {
            // SAFETY: `info` is a zeroed siginfo the kernel fills; the pid is this child.
            let rc = unsafe {
                let mut info: libc::siginfo_t = std::mem::zeroed();
                libc::waitid(libc::P_PID, self.0 as libc::id_t, &mut info, flags)
            };
            if rc == 0 {
                if !keep {
                    self.1.set(true);
                }
                return Ok(());
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(e);
            }
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.1.get() {
            let _ = self.wait(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For real: this kernel (6.18 here) wakes a pidfd's waiters on exit and on reap, so
    /// `watch` uses the set; the test fails where a kernel does not (the set would then
    /// never be used, and the `poll` path is what `watch` runs: the round tests' control
    /// covers it).
    #[test]
    fn this_kernel_wakes_pidfd_waiters_on_exit_and_on_reap() {
        assert_eq!(watched_child().ok(), Some(true));
        assert!(ExitSet::new().is_some());
    }

    /// A verdict is "wakes" only with both events in order: an exit seen with the reap
    /// already in it, or no reap event, is a kernel the set cannot be trusted on.
    #[test]
    fn the_self_test_needs_exited_then_reaped() {
        let f = |reaped| Some(Fired { token: 1, reaped });
        assert!(judged(f(false), f(true)));
        assert!(!judged(f(false), None), "no wake on reap");
        assert!(!judged(None, f(true)), "no wake on exit");
        assert!(!judged(f(true), f(true)), "the first already reaped");
        assert!(!judged(f(false), f(false)), "the second not reaped");
    }

    #[test]
    fn a_token_names_its_pid_and_serial() {
        for (pid, serial) in [(1, 0), (4_194_304, 7), (i32::MAX, u32::MAX)] {
            assert_eq!(untoken(token(pid, serial)), (pid, serial));
        }
    }

    /// Set in the run of `each_change_fires_once_and_a_closed_pidfd_never` alone.
    const ALONE: &str = "HEADROOM_EXITS_TEST_ALONE";

    /// Edge-triggered: a pidfd fires once for its exit, not again each drain, and again
    /// with `reaped` for its reap; a pidfd closed before a drain is never reported.
    ///
    /// An epoll registration ends when the last copy of its file closes, and a fork on
    /// another test thread holds a copy of every descriptor until its child execs (it
    /// failed so once in `.ci/run`: the closed pidfd fired). So the test runs again in a
    /// process of its own, on one thread, where nothing else forks; `watch` itself takes a
    /// stale event for what it is by the serial in its token.
    #[test]
    fn each_change_fires_once_and_a_closed_pidfd_never() {
        if std::env::var_os(ALONE).is_none() {
            let name = concat!(
                module_path!(),
                "::each_change_fires_once_and_a_closed_pidfd_never"
            );
            let name = name.split_once("::").map_or(name, |(_, rest)| rest);
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args([name, "--exact", "--test-threads=1"])
                .env(ALONE, "1")
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{text}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(text.contains("1 passed"), "it ran: {text}");
            return;
        }
        if !reap_wakes_waiters() {
            panic!("this kernel does not wake pidfd waiters on reap");
        }
        let mut set = ExitSet::made().unwrap();
        let a = Child::start().unwrap();
        let b = Child::start().unwrap();
        let fa = super::super::pidfd_info::open(a.0).unwrap();
        let fb = super::super::pidfd_info::open(b.0).unwrap();
        set.add(fa.as_fd(), token(a.0, 1)).unwrap();
        set.add(fb.as_fd(), token(b.0, 2)).unwrap();
        a.wait(true).unwrap();
        b.wait(true).unwrap();
        drop(fb);
        let mut seen = Vec::new();
        set.drain(|f| seen.push(f)).unwrap();
        assert_eq!(
            seen,
            [Fired {
                token: token(a.0, 1),
                reaped: false
            }]
        );
        seen.clear();
        set.drain(|f| seen.push(f)).unwrap();
        assert!(seen.is_empty(), "fired again: {seen:?}");
        a.wait(false).unwrap();
        set.drain(|f| seen.push(f)).unwrap();
        assert_eq!(
            seen,
            [Fired {
                token: token(a.0, 1),
                reaped: true
            }]
        );
    }
}
