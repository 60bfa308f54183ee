//! Descriptor helpers shared by the Unix platform code: the non-blocking, close-on-exec
//! pipes that signal handlers, the supervisor and the spawn marker write into, and `poll`
//! with the millisecond timeout the loops have always used.

// `unsafe` here: a caller-named descriptor number adopted (`--records-fd`); pre_exec for `pass_fd`.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::fs::OFlags;
use rustix::io::FdFlags;

/// `O_NONBLOCK` and `FD_CLOEXEC` on `fd`, keeping its other flags.
fn set_flags(fd: BorrowedFd<'_>) -> io::Result<()> {
    let fl = rustix::fs::fcntl_getfl(fd)?;
    rustix::fs::fcntl_setfl(fd, fl | OFlags::NONBLOCK)?;
    let fd_fl = rustix::io::fcntl_getfd(fd)?;
    rustix::io::fcntl_setfd(fd, fd_fl | FdFlags::CLOEXEC)?;
    Ok(())
}

/// A blocking, close-on-exec pipe (read end, write end). `pipe(2)` then `fcntl`, as
/// before: macOS has no `pipe2`.
pub(crate) fn cloexec_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = rustix::pipe::pipe()?;
    for f in [r.as_fd(), w.as_fd()] {
        rustix::io::fcntl_setfd(f, FdFlags::CLOEXEC)?;
    }
    Ok((r, w))
}

/// A non-blocking, close-on-exec pipe (read end, write end).
pub(crate) fn nonblocking_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let (r, w) = rustix::pipe::pipe()?;
    set_flags(r.as_fd())?;
    set_flags(w.as_fd())?;
    Ok((r, w))
}

/// Take an inherited descriptor that the caller names (`run --records-fd`) as a file to
/// write to: it must be open and writable; it is made close-on-exec, so the command `run`
/// starts never holds it.
pub(crate) fn adopt_for_writing(fd: RawFd) -> io::Result<std::fs::File> {
    if fd < 3 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "0, 1 and 2 are the command's own",
        ));
    }
    // SAFETY: the number may name no open descriptor; only `fcntl` is called through this
    // borrow, which then fails with EBADF and touches no memory. It is not kept.
    let borrowed = unsafe { BorrowedFd::borrow_raw(fd) };
    let fl = rustix::fs::fcntl_getfl(borrowed)?;
    if fl & OFlags::ACCMODE == OFlags::RDONLY {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is open for reading only",
        ));
    }
    let fd_fl = rustix::io::fcntl_getfd(borrowed)?;
    rustix::io::fcntl_setfd(borrowed, fd_fl | FdFlags::CLOEXEC)?;
    // SAFETY: the descriptor is open (checked above), was handed to this process for this
    // use, and nothing else in it owns the number.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// `run --records-fd FD`: the inherited descriptor as a file to write to (open, writable,
/// 3 or above), made close-on-exec so the command does not inherit it.
pub fn adopt_records_fd(fd: i32) -> io::Result<std::fs::File> {
    adopt_for_writing(fd)
}

/// Have `cmd`'s child find `fd` (open in this process) at `target` (3 or above), inherited
/// across exec: how `headroom mcp` hands `run` its `--records-fd`. Every other descriptor
/// stays close-on-exec, so a concurrent spawn never holds this one. `dup2` between fork and
/// exec is async-signal-safe.
pub fn pass_fd(cmd: &mut std::process::Command, fd: RawFd, target: RawFd) {
    use std::os::unix::process::CommandExt;
    // std has no safe way to run code between fork and exec.
    // SAFETY: the closure calls only dup2 and fcntl, async-signal-safe, on descriptors this
    // process owns; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if fd == target {
                let fl = libc::fcntl(fd, libc::F_GETFD);
                if fl < 0 || libc::fcntl(fd, libc::F_SETFD, fl & !libc::FD_CLOEXEC) < 0 {
                    return Err(io::Error::last_os_error());
                }
            } else if libc::dup2(fd, target) < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        })
    };
}

/// A blocking, close-on-exec pipe: (read end as a file, write end), for `pass_fd`.
pub fn pipe_pair() -> io::Result<(std::fs::File, OwnedFd)> {
    let (r, w) = cloexec_pipe()?;
    Ok((std::fs::File::from(r), w))
}

/// `timeout` in whole milliseconds, rounded up and capped as `poll(2)`'s `int` takes it:
/// the wait every loop had when it called `poll` itself.
pub(crate) fn poll_timeout(timeout: Duration) -> Timespec {
    let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i64;
    Timespec {
        tv_sec: ms / 1000,
        tv_nsec: (ms % 1000) * 1_000_000,
    }
}

/// `poll(2)` over `fds` for up to `timeout` (`None`: no limit); how many are ready.
pub(crate) fn poll(fds: &mut [PollFd<'_>], timeout: Option<Duration>) -> io::Result<usize> {
    let ts = timeout.map(poll_timeout);
    Ok(rustix::event::poll(fds, ts.as_ref())?)
}

/// Wait up to `timeout` for `fd` to become readable; whether it did. EINTR (a signal) ends
/// the wait early and reads as "not readable".
pub(crate) fn wait_readable(fd: BorrowedFd<'_>, timeout: Duration) -> bool {
    let mut pfd = [PollFd::from_borrowed_fd(fd, PollFlags::IN)];
    matches!(poll(&mut pfd, Some(timeout)), Ok(n) if n > 0)
        && pfd[0].revents().contains(PollFlags::IN)
}

/// Read and discard everything buffered in the non-blocking `fd`; the bytes, in order.
pub(crate) fn drain(fd: BorrowedFd<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 64];
    loop {
        match rustix::io::read(fd, &mut buf) {
            Ok(n) if n > 0 => out.extend_from_slice(&buf[..n]),
            _ => return out,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (non-blocking, close-on-exec) of both ends of a pipe.
    fn flags(ends: &(OwnedFd, OwnedFd)) -> [(bool, bool); 2] {
        [ends.0.as_fd(), ends.1.as_fd()].map(|fd| {
            (
                rustix::fs::fcntl_getfl(fd)
                    .unwrap()
                    .contains(OFlags::NONBLOCK),
                rustix::io::fcntl_getfd(fd)
                    .unwrap()
                    .contains(FdFlags::CLOEXEC),
            )
        })
    }

    #[test]
    fn a_pipe_is_nonblocking_and_close_on_exec_and_drains_in_order() {
        let ends = nonblocking_pipe().unwrap();
        assert_eq!(flags(&ends), [(true, true); 2]);
        let (r, w) = ends;
        assert!(!wait_readable(r.as_fd(), Duration::ZERO), "empty");
        assert!(drain(r.as_fd()).is_empty(), "an empty pipe does not block");
        rustix::io::write(&w, b"abc").unwrap();
        assert!(wait_readable(r.as_fd(), Duration::from_secs(5)));
        assert_eq!(drain(r.as_fd()), b"abc");
        assert!(!wait_readable(r.as_fd(), Duration::ZERO), "drained");
    }

    #[test]
    fn a_blocking_pipe_is_close_on_exec_only() {
        assert_eq!(flags(&cloexec_pipe().unwrap()), [(false, true); 2]);
    }

    #[test]
    fn the_poll_timeout_is_whole_milliseconds_rounded_up() {
        let t = poll_timeout(Duration::from_micros(1_500_001));
        assert_eq!((t.tv_sec, t.tv_nsec), (1, 501_000_000));
        let t = poll_timeout(Duration::ZERO);
        assert_eq!((t.tv_sec, t.tv_nsec), (0, 0));
        let t = poll_timeout(Duration::from_secs(u64::MAX));
        assert_eq!(t.tv_sec, i64::from(i32::MAX) / 1000);
    }
}
