//! Process start-up for the `headroom` binary, which skips Rust's own (`#![no_main]` in
//! `main.rs`; ARCHITECTURE.md says why). What of Rust's start-up the binary relies on is
//! done here instead, the same way std does it:
//!
//! - file descriptors 0, 1 and 2 are open: a closed one is opened on `/dev/null`, so that a
//!   file headroom opens later (the evidence log, say) can never become its stdout;
//! - SIGPIPE is ignored, so a closed pipe (`headroom probe | head -1`) is an `EPIPE` error
//!   that `lib::run` treats as success rather than a silent death. Children get it back at
//!   its default: std's `Command` resets it in every child it starts;
//! - the arguments are `std::env::args_os`, which std fills without its runtime on the
//!   targets that skip it (`main.rs`);
//! - the parent's pid is noted before anything else runs (`parent_at_start`), so that
//!   `run --die-with-parent` can tell a parent that exited before it looked.
//!
//! Left out: std's stack-overflow handler, whose set-up on Linux reads `/proc/self/maps` at
//! every start. Without it a stack overflow, in any thread, still kills the process (SIGSEGV
//! at the guard page) but without std's one-line explanation; and the main thread has no
//! name, so a panic message says `<unnamed>` where it said `main`.

// `unsafe` here: signal(SIGPIPE, SIG_IGN): no safe wrapper in rustix or std.
#![allow(unsafe_code)]

use std::ffi::c_int;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, IntoRawFd};

use rustix::fs::{Mode, OFlags};

/// Ignore SIGPIPE and make fds 0–2 valid. An error means the process cannot run safely:
/// the caller reports it and exits without doing anything.
pub fn prepare() -> io::Result<()> {
    let parent = rustix::process::Pid::as_raw(rustix::process::getppid());
    PARENT_AT_START.store(parent, std::sync::atomic::Ordering::Relaxed);
    // First, so that reporting a failure below cannot die of a closed pipe.
    // SAFETY: installs the predefined SIG_IGN disposition; no handler code runs.
    if unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) } == libc::SIG_ERR {
        return Err(context(io::Error::last_os_error(), "cannot ignore SIGPIPE"));
    }
    ensure_open(0, std::io::stdin().as_fd())?;
    ensure_open(1, std::io::stdout().as_fd())?;
    ensure_open(2, std::io::stderr().as_fd())?;
    Ok(())
}

static PARENT_AT_START: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The parent's pid when the binary started, or None where `prepare` did not run (the
/// library called directly, as unit tests do).
pub(crate) fn parent_at_start() -> Option<i32> {
    Some(PARENT_AT_START.load(std::sync::atomic::Ordering::Relaxed)).filter(|&p| p > 0)
}

/// Open `/dev/null` on `fd` (`borrowed`: std's handle for it, which names the number
/// whether or not it is open) when it is closed. fds are checked in ascending order, so the
/// lowest free descriptor `open` returns is `fd` itself; anything else is refused.
fn ensure_open(fd: c_int, borrowed: BorrowedFd<'_>) -> io::Result<()> {
    let err = match rustix::io::fcntl_getfd(borrowed) {
        Ok(_) => return Ok(()),
        Err(e) => io::Error::from(e),
    };
    if err.raw_os_error() != Some(libc::EBADF) {
        return Err(context(err, format_args!("cannot check fd {fd}")));
    }
    // Not close-on-exec: a command headroom starts inherits it as its own fd 0, 1 or 2.
    // `openat`, as the C library's `open` makes it (rustix's `open` is the older `open`
    // system call on x86-64).
    let opened = match rustix::fs::openat(rustix::fs::CWD, "/dev/null", OFlags::RDWR, Mode::empty())
    {
        Ok(f) => f.into_raw_fd(),
        Err(e) => {
            return Err(context(
                e.into(),
                format_args!("fd {fd} is closed and /dev/null cannot be opened in its place"),
            ));
        }
    };
    if opened == fd {
        return Ok(());
    }
    Err(io::Error::other(format!(
        "fd {fd} was closed and /dev/null opened as fd {opened}"
    )))
}

/// `e`, of the same kind, with what was being done in front of its message.
fn context(e: io::Error, doing: impl std::fmt::Display) -> io::Error {
    io::Error::new(e.kind(), format!("{doing}: {e}"))
}
