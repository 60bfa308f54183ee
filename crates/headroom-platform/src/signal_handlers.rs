//! The one owner of headroom's signal dispositions (Unix). `signal.rs` sends signals; this
//! file receives them.
//!
//! One handler for every signal headroom catches: it notes a stop request (SIGINT, SIGTERM,
//! SIGHUP) in an atomic, then writes the signal number into a self-pipe, both
//! async-signal-safe. The pipe is made once per process and never closed, so the handler
//! can never write into a descriptor that was closed or reused. A loop that sleeps in
//! `poll(2)` on the pipe's read end (`run`'s supervisor, `stop_flag::sleep`) wakes at once,
//! whenever the signal lands: the byte waits in the pipe even if it arrived between the
//! loop's last look and its `poll` (the race a flag alone cannot close).
//!
//! Which signals are caught, and how, is chosen by the one caller that installs them
//! (`Handlers::install`); dropping `Handlers` restores what was there before.

// `unsafe` here: sigaction and the handler's write(2): no safe crate installs a handler
// with these semantics.
#![allow(unsafe_code)]

use std::ffi::c_int;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};

use super::fd;

/// The self-pipe (read end, write end), made by the first `install`.
static PIPE: OnceLock<(OwnedFd, OwnedFd)> = OnceLock::new();
/// Its write end for the handler, which may not touch the `OnceLock` (-1: none yet).
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
/// The last SIGINT, SIGTERM or SIGHUP received (0: none).
static STOP: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: c_int) {
    if matches!(sig, libc::SIGINT | libc::SIGTERM | libc::SIGHUP) {
        // Before the byte: whoever wakes for the byte finds the request.
        STOP.store(sig, Ordering::SeqCst);
    }
    let fd = PIPE_WRITE.load(Ordering::SeqCst);
    if fd < 0 {
        return;
    }
    // The handler runs between any two instructions of the interrupted code: it must leave
    // errno as it found it.
    let saved = errno::errno();
    let byte = sig as u8;
    // SAFETY: write(2) is async-signal-safe; the buffer is one valid byte. A full pipe
    // (EAGAIN) drops the byte, which is fine: the reader is already due to wake.
    unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
    errno::set_errno(saved);
}

/// `sigaction(2)` for `sig`: install `new`, or only ask when it is `None`; the action in
/// place before.
fn sigaction(sig: c_int, new: Option<&libc::sigaction>) -> io::Result<libc::sigaction> {
    let new = new.map_or(std::ptr::null(), |n| n as *const libc::sigaction);
    // SAFETY: an all-zero sigaction is valid plain data for the kernel to overwrite; `new`
    // is null (a query) or an action made by `action` (whose handler, `on_signal`, only
    // touches atomics, errno and write(2)) or one `sigaction` returned before.
    let (rc, old) = unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        let rc = libc::sigaction(sig, new, &mut old);
        (rc, old)
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(old)
}

/// An action running `handler` (a function address, `SIG_DFL` or `SIG_IGN`) with `flags`
/// and an empty mask.
fn action(handler: libc::sighandler_t, flags: c_int) -> libc::sigaction {
    // SAFETY: an all-zero sigaction is a valid "no flags, empty mask" value; sigemptyset
    // initialises the mask it is given.
    let mut sa: libc::sigaction = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        libc::sigemptyset(&mut sa.sa_mask);
        sa
    };
    sa.sa_sigaction = handler;
    sa.sa_flags = flags;
    sa
}

/// The read end of the self-pipe, made on first use.
pub(crate) fn wake_fd() -> io::Result<BorrowedFd<'static>> {
    if let Some((r, _)) = PIPE.get() {
        return Ok(r.as_fd());
    }
    let made = fd::nonblocking_pipe()?;
    // A racing first call may have won; its pipe is the one kept (ours is closed here).
    let (r, w) = PIPE.get_or_init(|| made);
    PIPE_WRITE.store(w.as_raw_fd(), Ordering::SeqCst);
    Ok(r.as_fd())
}

/// The signal numbers written since the last call, in order (the pipe emptied).
pub(crate) fn take_arrived() -> Vec<c_int> {
    match PIPE.get() {
        Some((r, _)) => fd::drain(r.as_fd()).into_iter().map(c_int::from).collect(),
        None => Vec::new(),
    }
}

/// The last SIGINT, SIGTERM or SIGHUP received since start (or since `clear_stop`).
pub(crate) fn stop_requested() -> Option<c_int> {
    match STOP.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

#[cfg(test)]
pub(crate) fn clear_stop() {
    STOP.store(0, Ordering::SeqCst);
}

/// How `Handlers::install` treats the signals it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Catch {
    /// Restart interrupted system calls (`SA_RESTART`). Off, a signal cuts a `nanosleep`
    /// or `poll` short.
    pub restart: bool,
    /// Leave a termination signal (anything but SIGCHLD) that headroom was started with
    /// ignored (`nohup`, a background job of a non-interactive shell) ignored, so a command
    /// headroom starts inherits that as it would without headroom (a handler is reset to
    /// the default at exec, an ignored signal is not).
    pub keep_ignored: bool,
}

/// The dispositions replaced by `install`, restored on drop.
#[derive(Debug)]
pub(crate) struct Handlers {
    old: Vec<(c_int, libc::sigaction)>,
}

impl Handlers {
    /// Route each of `sigs` to the handler. Errors name the signal; what was installed
    /// before the error is restored.
    pub(crate) fn install(sigs: &[c_int], how: Catch) -> io::Result<Self> {
        wake_fd()?;
        let mut out = Self { old: Vec::new() };
        for &sig in sigs {
            let named = |e: io::Error| {
                io::Error::new(
                    e.kind(),
                    format!("cannot install a handler for signal {sig}: {e}"),
                )
            };
            let current = sigaction(sig, None).map_err(named)?;
            if how.keep_ignored && sig != libc::SIGCHLD && current.sa_sigaction == libc::SIG_IGN {
                continue;
            }
            let sa = action(
                on_signal as extern "C" fn(c_int) as libc::sighandler_t,
                if how.restart { libc::SA_RESTART } else { 0 },
            );
            let old = sigaction(sig, Some(&sa)).map_err(named)?;
            out.old.push((sig, old));
        }
        Ok(out)
    }

    /// How many signals were routed (those kept ignored are not).
    pub(crate) fn len(&self) -> usize {
        self.old.len()
    }

    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.old.is_empty()
    }

    /// Keep the handlers for the rest of the process (a loop that runs until it exits).
    pub(crate) fn keep_for_life(self) {
        std::mem::forget(self);
    }
}

impl Drop for Handlers {
    fn drop(&mut self) {
        for (sig, old) in self.old.iter().rev() {
            // Restoring the action saved by `install` for the same signal.
            let _ = sigaction(*sig, Some(old));
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Duration;

    /// Dispositions are process-wide: the tests that change them take turns.
    pub(crate) static DISPOSITIONS: Mutex<()> = Mutex::new(());

    fn disposition(sig: c_int) -> libc::sighandler_t {
        sigaction(sig, None).unwrap().sa_sigaction
    }

    /// `raise(3)`: `sig` delivered to this thread before it returns (a `kill` to the
    /// process could land on another thread of the test harness, later).
    pub(crate) fn raise(sig: c_int) {
        // SAFETY: raise has no memory-safety preconditions; the tests that call it have
        // routed `sig` to `on_signal` (or to the default of a signal that does no harm).
        unsafe { libc::raise(sig) };
    }

    #[test]
    fn a_caught_signal_lands_in_the_pipe_and_the_old_disposition_comes_back() {
        let _turn = DISPOSITIONS.lock().unwrap_or_else(|e| e.into_inner());
        let before = disposition(libc::SIGUSR2);
        let h = Handlers::install(
            &[libc::SIGUSR2],
            Catch {
                restart: true,
                keep_ignored: true,
            },
        )
        .unwrap();
        assert_eq!(h.len(), 1);
        let fd = wake_fd().unwrap();
        take_arrived();
        raise(libc::SIGUSR2);
        assert!(
            fd::wait_readable(fd, Duration::from_secs(5)),
            "the byte woke poll"
        );
        assert_eq!(take_arrived(), [libc::SIGUSR2]);
        assert_eq!(stop_requested(), None, "SIGUSR2 is no stop request");
        drop(h);
        assert_eq!(disposition(libc::SIGUSR2), before, "restored");
    }

    #[test]
    fn an_inherited_ignore_is_kept_only_when_asked() {
        let _turn = DISPOSITIONS.lock().unwrap_or_else(|e| e.into_inner());
        // SIGUSR1 ignored for the test; restored below.
        let prev = sigaction(libc::SIGUSR1, Some(&action(libc::SIG_IGN, 0))).unwrap();
        let keep = Catch {
            restart: true,
            keep_ignored: true,
        };
        let h = Handlers::install(&[libc::SIGUSR1], keep).unwrap();
        assert!(h.is_empty());
        assert_eq!(disposition(libc::SIGUSR1), libc::SIG_IGN);
        drop(h);
        let h = Handlers::install(
            &[libc::SIGUSR1],
            Catch {
                keep_ignored: false,
                ..keep
            },
        )
        .unwrap();
        assert_eq!(h.len(), 1);
        assert_eq!(
            disposition(libc::SIGUSR1),
            on_signal as extern "C" fn(c_int) as libc::sighandler_t
        );
        drop(h);
        assert_eq!(disposition(libc::SIGUSR1), libc::SIG_IGN);
        sigaction(libc::SIGUSR1, Some(&prev)).unwrap();
    }

    #[test]
    fn the_handler_leaves_errno_as_it_found_it() {
        let _turn = DISPOSITIONS.lock().unwrap_or_else(|e| e.into_inner());
        let h = Handlers::install(
            &[libc::SIGUSR2],
            Catch {
                restart: true,
                keep_ignored: true,
            },
        )
        .unwrap();
        // A full pipe, so the handler's own write fails (EAGAIN) and sets errno.
        let (_, w) = PIPE.get().unwrap();
        while rustix::io::write(w, b"x") == Ok(1) {}
        errno::set_errno(errno::Errno(libc::ENOSPC));
        raise(libc::SIGUSR2);
        assert_eq!(errno::errno().0, libc::ENOSPC);
        take_arrived();
        drop(h);
    }
}
