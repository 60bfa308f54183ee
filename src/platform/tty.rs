//! The controlling terminal as `run` uses it (Unix): whose process group is in the
//! foreground, and handing it to the command's group and back, as a shell does for a
//! foreground job.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

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
        // SAFETY: a NUL-terminated literal path; the flags are valid for open(2).
        let fd = unsafe {
            libc::open(
                c"/dev/tty".as_ptr(),
                libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return None;
        }
        // SAFETY: fd was just opened and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: getpgrp has no preconditions.
        let own = unsafe { libc::getpgrp() };
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
        // SAFETY: fd is an open terminal descriptor.
        unsafe { libc::tcgetpgrp(self.fd.as_raw_fd()) == self.own }
    }

    pub(crate) fn set(&self, pgid: libc::pid_t) -> bool {
        // SIGTTOU is blocked for the whole run (see `Supervisor::install`), so this works
        // from the background too.
        // SAFETY: fd is an open terminal descriptor; pgid is a process group of our session.
        unsafe { libc::tcsetpgrp(self.fd.as_raw_fd(), pgid) == 0 }
    }

    /// Give the terminal back to headroom's own group, if it was handed away.
    pub(crate) fn take_back(&mut self) {
        if self.handed {
            self.set(self.own);
            self.handed = false;
        }
    }
}

/// SIGTTOU and SIGTTIN: blocked while headroom may take the terminal from the background.
pub(crate) fn tty_signals() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it before use.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is a valid sigset_t.
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTTOU);
        libc::sigaddset(&mut set, libc::SIGTTIN);
    }
    set
}
