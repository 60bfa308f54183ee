//! Descriptor helpers shared by the Unix platform code: `-1`-returning calls as
//! `io::Result`, and the non-blocking, close-on-exec pipes that signal handlers, the
//! supervisor and the spawn marker write into.

use std::ffi::c_int;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A libc return value: negative is the thread's errno.
pub(crate) fn cvt(rc: c_int) -> io::Result<c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// `O_NONBLOCK` and `FD_CLOEXEC` on `fd`, keeping its other flags.
fn set_flags(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor we own, with valid commands and flags.
    unsafe {
        let fl = cvt(libc::fcntl(fd, libc::F_GETFL))?;
        cvt(libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK))?;
        let fd_fl = cvt(libc::fcntl(fd, libc::F_GETFD))?;
        cvt(libc::fcntl(fd, libc::F_SETFD, fd_fl | libc::FD_CLOEXEC))?;
    }
    Ok(())
}

/// A non-blocking, close-on-exec pipe (read end, write end).
pub(crate) fn nonblocking_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: fds is an array of two ints, as pipe(2) requires.
    cvt(unsafe { libc::pipe(fds.as_mut_ptr()) })?;
    // SAFETY: both descriptors were just created and are owned by nothing else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    set_flags(r.as_raw_fd())?;
    set_flags(w.as_raw_fd())?;
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
    // SAFETY: fcntl queries on a descriptor number; a closed one fails with EBADF.
    let fl = cvt(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    if fl & libc::O_ACCMODE == libc::O_RDONLY {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is open for reading only",
        ));
    }
    // SAFETY: as above, on the same descriptor.
    let fd_fl = cvt(unsafe { libc::fcntl(fd, libc::F_GETFD) })?;
    // SAFETY: as above.
    cvt(unsafe { libc::fcntl(fd, libc::F_SETFD, fd_fl | libc::FD_CLOEXEC) })?;
    // SAFETY: the descriptor is open (checked above), was handed to this process for this
    // use, and nothing else in it owns the number.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}

/// Wait up to `timeout` for `fd` to become readable; whether it did. EINTR (a signal) ends
/// the wait early and reads as "not readable".
pub(crate) fn wait_readable(fd: RawFd, timeout: std::time::Duration) -> bool {
    let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as c_int;
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    let n = unsafe { libc::poll(&mut pfd, 1, ms) };
    n > 0 && pfd.revents & libc::POLLIN != 0
}

/// Read and discard everything buffered in the non-blocking `fd`; the bytes, in order.
pub(crate) fn drain(fd: RawFd) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 64];
    loop {
        // SAFETY: buf is writable for its length; the descriptor is non-blocking.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            return out;
        }
        out.extend_from_slice(&buf[..n as usize]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_pipe_is_nonblocking_and_close_on_exec_and_drains_in_order() {
        let (r, w) = nonblocking_pipe().unwrap();
        for fd in [r.as_raw_fd(), w.as_raw_fd()] {
            // SAFETY: fcntl queries on descriptors we own.
            let (fl, fdfl) = unsafe {
                (
                    libc::fcntl(fd, libc::F_GETFL),
                    libc::fcntl(fd, libc::F_GETFD),
                )
            };
            assert_ne!(fl & libc::O_NONBLOCK, 0);
            assert_ne!(fdfl & libc::FD_CLOEXEC, 0);
        }
        assert!(!wait_readable(r.as_raw_fd(), Duration::ZERO), "empty");
        assert!(
            drain(r.as_raw_fd()).is_empty(),
            "an empty pipe does not block"
        );
        // SAFETY: three valid bytes.
        unsafe { libc::write(w.as_raw_fd(), b"abc".as_ptr().cast(), 3) };
        assert!(wait_readable(r.as_raw_fd(), Duration::from_secs(5)));
        assert_eq!(drain(r.as_raw_fd()), b"abc");
        assert!(!wait_readable(r.as_raw_fd(), Duration::ZERO), "drained");
    }

    #[test]
    fn cvt_turns_minus_one_into_the_errno() {
        // SAFETY: closing a descriptor that cannot be open.
        let e = cvt(unsafe { libc::close(-1) }).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EBADF));
        assert_eq!(cvt(3).unwrap(), 3);
    }
}
