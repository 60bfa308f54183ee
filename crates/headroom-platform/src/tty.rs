//! The controlling terminal as `run` uses it (Unix): whose process group is in the
//! foreground, and handing it to the command's group and back, as a shell does for a
//! foreground job.

// `unsafe` here: sigset_t and pthread_sigmask: no safe wrapper in rustix.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use rustix::fs::{Mode, OFlags};
use rustix::process::Pid;

#[derive(Debug)]
pub(crate) struct Tty {
    fd: OwnedFd,
    /// headroom's own process group.
    pub(crate) own: libc::pid_t,
    /// Whether headroom handed the terminal to the command's group (and must take it back).
    pub(crate) handed: bool,
}

impl Tty {
    /// The controlling terminal, when there is one.
    pub(crate) fn open() -> Option<Self> {
        // `openat`, as the C library's `open` makes it.
        let fd = rustix::fs::openat(
            rustix::fs::CWD,
            "/dev/tty",
            OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .ok()?;
        let own = rustix::process::getpgrp().as_raw_pid();
        Some(Self {
            fd,
            own,
            handed: false,
        })
    }

    pub(crate) fn raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Whether headroom's group is the terminal's foreground group right now.
    pub(crate) fn ours(&self) -> bool {
        rustix::termios::tcgetpgrp(&self.fd).is_ok_and(|p| p.as_raw_pid() == self.own)
    }

    pub(crate) fn set(&self, pgid: libc::pid_t) -> bool {
        // SIGTTOU is blocked for the whole run (see `Supervisor::install`), so this works
        // from the background too. No group is 0 or below (tcsetpgrp refused it too).
        Pid::from_raw(pgid.max(0)).is_some_and(|p| rustix::termios::tcsetpgrp(&self.fd, p).is_ok())
    }

    /// Give the terminal back to headroom's own group, if it was handed away.
    pub(crate) fn take_back(&mut self) {
        if self.handed {
            self.set(self.own);
            self.handed = false;
        }
    }
}

/// `pthread_sigmask(how, set)` on the calling thread; the mask it had before.
pub(crate) fn thread_mask(how: libc::c_int, set: &libc::sigset_t) -> io::Result<libc::sigset_t> {
    // SAFETY: an all-zero sigset_t is valid plain data for the call to overwrite; `set` is
    // an initialised set (`tty_signals`, or a mask this function returned).
    let (rc, old) = unsafe {
        let mut old: libc::sigset_t = std::mem::zeroed();
        let rc = libc::pthread_sigmask(how, set, &mut old);
        (rc, old)
    };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(old)
}

/// SIGTTOU and SIGTTIN: blocked while headroom may take the terminal from the background.
pub(crate) fn tty_signals() -> libc::sigset_t {
    // SAFETY: an all-zero sigset_t is plain data that sigemptyset initialises before
    // sigaddset adds to it; the pointer is to this stack variable.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTTOU);
        libc::sigaddset(&mut set, libc::SIGTTIN);
        set
    }
}
