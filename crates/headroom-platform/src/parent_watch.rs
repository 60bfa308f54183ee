//! `run --die-with-parent` (Unix): notice that the process that started headroom has exited,
//! so that `run` can end the tree it supervises instead of leaving it running for nobody.
//!
//! The truth is one question asked at every wake of `run`'s loop: is `getppid()` still the
//! parent headroom was started by? When the parent exits, the kernel hands headroom to a
//! subreaper or to init and `getppid()` changes; it never changes back. What differs by OS
//! is only how the loop is woken at that moment:
//!
//! - Linux: `PR_SET_PDEATHSIG` with SIGCHLD, a signal `run` always catches (it only wakes the
//!   loop, and nothing else treats it as a request). The kernel sends it when the parent
//!   *thread* that forked headroom exits, which in a threaded parent (the MCP server's
//!   worker threads) may happen while the process lives on: the `getppid()` check turns
//!   those wakes into nothing. The kernel sends it again at each later reparenting, so the
//!   real exit is never missed.
//! - macOS: a kqueue with `EVFILT_PROC`/`NOTE_EXIT` on the parent's pid, polled beside the
//!   self-pipe (a kqueue descriptor is readable while an event is pending).
//!
//! The parent may already be gone before either is set up: the parent recorded at start-up
//! (`start::prepare`, before anything else ran) is compared with `getppid()` after the
//! set-up, so that window is closed too (left open: the exec of headroom itself, before
//! its first instruction).

// `unsafe` here: macOS kevent with EVFILT_PROC: rustix's kevent is unsafe too.
#![allow(unsafe_code)]

use std::io;
#[cfg(target_os = "macos")]
use std::os::fd::{AsFd, AsRawFd, OwnedFd};

/// Watches the parent headroom was started by.
#[derive(Debug)]
pub(crate) struct ParentWatch {
    parent: i32,
    #[cfg(target_os = "macos")]
    kq: OwnedFd,
}

/// This process's parent now.
pub(crate) fn current_parent() -> i32 {
    rustix::process::Pid::as_raw(rustix::process::getppid())
}

impl ParentWatch {
    /// Watch `parent` (the pid headroom was started by). Set up before the command starts.
    pub(crate) fn new(parent: i32) -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::CHILD))?;
            Ok(Self { parent })
        }
        #[cfg(target_os = "macos")]
        {
            let kq = rustix::event::kqueue::kqueue()?;
            // SAFETY: an all-zero kevent is valid plain data, with the fields that matter
            // set before the call; one valid change, no event list (so no timeout is
            // needed: there are no events to wait for).
            let rc = unsafe {
                let mut ev: libc::kevent = std::mem::zeroed();
                ev.ident = parent as libc::uintptr_t;
                ev.filter = libc::EVFILT_PROC;
                ev.flags = libc::EV_ADD | libc::EV_ONESHOT;
                ev.fflags = libc::NOTE_EXIT;
                libc::kevent(
                    kq.as_raw_fd(),
                    &ev,
                    1,
                    std::ptr::null_mut(),
                    0,
                    std::ptr::null(),
                )
            };
            if rc < 0 {
                let e = io::Error::last_os_error();
                // Already gone: `gone` says so from getppid.
                if e.raw_os_error() != Some(libc::ESRCH) {
                    return Err(e);
                }
            }
            Ok(Self { parent, kq })
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos")))]
        {
            Ok(Self { parent })
        }
    }

    /// Whether the parent has exited: headroom has been handed to another process.
    pub(crate) fn gone(&self) -> bool {
        current_parent() != self.parent
    }

    /// A descriptor that becomes readable when the parent exits, for the loop's `poll`
    /// (macOS); on Linux the wake is a signal and there is none.
    pub(crate) fn poll_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        #[cfg(target_os = "macos")]
        {
            Some(self.kq.as_fd())
        }
        #[cfg(not(target_os = "macos"))]
        {
            None
        }
    }

    /// Take the pending event off the kqueue (macOS), so `poll` does not report it again.
    pub(crate) fn drain(&self) {
        #[cfg(target_os = "macos")]
        {
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: an all-zero kevent is valid plain data to be written; no changes,
            // room for one event, a zero timeout: never blocks.
            unsafe {
                let mut ev: libc::kevent = std::mem::zeroed();
                libc::kevent(self.kq.as_raw_fd(), std::ptr::null(), 0, &mut ev, 1, &zero)
            };
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The watch reads the parent now: the test's own parent is alive (control), a pid
    /// that is not the parent reads as gone (the comparison the loop relies on).
    #[test]
    fn a_parent_that_is_not_the_current_one_reads_as_gone() {
        let now = current_parent();
        // Clear the death signal again after: the test runner's threads come and go.
        let w = ParentWatch::new(now).unwrap();
        assert!(!w.gone(), "the live parent");
        rustix::process::set_parent_process_death_signal(None).unwrap();
        let other = ParentWatch { parent: now + 1 };
        assert!(other.gone(), "another pid than getppid()");
        assert!(w.poll_fd().is_none());
    }
}
