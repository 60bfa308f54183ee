//! Process start-up for the `headroom` binary, which skips Rust's own (`#![no_main]` in
//! `main.rs`; ARCHITECTURE.md says why). What of Rust's start-up the binary relies on is
//! done here instead, the same way std does it:
//!
//! - file descriptors 0, 1 and 2 are open: a closed one is opened on `/dev/null`, so that a
//!   file headroom opens later (the evidence log, say) can never become its stdout;
//! - SIGPIPE is ignored, so a closed pipe (`headroom probe | head -1`) is an `EPIPE` error
//!   that `lib::run` treats as success rather than a silent death. Children get it back at
//!   its default: std's `Command` resets it in every child it starts;
//! - the arguments come from the `argv` the C runtime passed;
//! - the parent's pid is noted before anything else runs (`parent_at_start`), so that
//!   `run --die-with-parent` can tell a parent that exited before it looked.
//!
//! Left out: std's stack-overflow handler, whose set-up on Linux reads `/proc/self/maps` at
//! every start. Without it a stack overflow, in any thread, still kills the process (SIGSEGV
//! at the guard page) but without std's one-line explanation; and the main thread has no
//! name, so a panic message says `<unnamed>` where it said `main`.

use std::ffi::{CStr, OsString, c_char, c_int};
use std::io;
use std::os::unix::ffi::OsStrExt;

/// Ignore SIGPIPE and make fds 0–2 valid. An error means the process cannot run safely:
/// the caller reports it and exits without doing anything.
pub fn prepare() -> io::Result<()> {
    // SAFETY: getppid cannot fail and has no preconditions.
    let parent = unsafe { libc::getppid() };
    PARENT_AT_START.store(parent, std::sync::atomic::Ordering::Relaxed);
    // First, so that reporting a failure below cannot die of a closed pipe.
    // SAFETY: installs the predefined SIG_IGN disposition; no handler code runs.
    if unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) } == libc::SIG_ERR {
        return Err(context(io::Error::last_os_error(), "cannot ignore SIGPIPE"));
    }
    for fd in 0..=2 {
        ensure_open(fd)?;
    }
    Ok(())
}

static PARENT_AT_START: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The parent's pid when the binary started, or None where `prepare` did not run (the
/// library called directly, as unit tests do).
pub fn parent_at_start() -> Option<i32> {
    Some(PARENT_AT_START.load(std::sync::atomic::Ordering::Relaxed)).filter(|&p| p > 0)
}

/// Open `/dev/null` on `fd` when it is closed. fds are checked in ascending order, so the
/// lowest free descriptor `open` returns is `fd` itself; anything else is refused.
fn ensure_open(fd: c_int) -> io::Result<()> {
    // SAFETY: F_GETFD only reads the descriptor's flags.
    if unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() != Some(libc::EBADF) {
        return Err(context(err, format_args!("cannot check fd {fd}")));
    }
    // SAFETY: the path is a NUL-terminated literal.
    let opened = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
    if opened == fd {
        return Ok(());
    }
    if opened < 0 {
        return Err(context(
            io::Error::last_os_error(),
            format_args!("fd {fd} is closed and /dev/null cannot be opened in its place"),
        ));
    }
    Err(io::Error::other(format!(
        "fd {fd} was closed and /dev/null opened as fd {opened}"
    )))
}

/// `e`, of the same kind, with what was being done in front of its message.
fn context(e: io::Error, doing: impl std::fmt::Display) -> io::Error {
    io::Error::new(e.kind(), format!("{doing}: {e}"))
}

/// The arguments as the C runtime passed them to `main`.
///
/// # Safety
///
/// `argv` must point to `argc` pointers, each to a NUL-terminated string that outlives the
/// call, as the C runtime's `argv` does. A null `argv` or a negative `argc` gives no
/// arguments; a null entry ends the list early.
pub unsafe fn args_from_c(argc: c_int, argv: *const *const c_char) -> Vec<OsString> {
    let count = usize::try_from(argc).unwrap_or(0);
    let mut args = Vec::with_capacity(count);
    if argv.is_null() {
        return args;
    }
    for i in 0..count {
        // SAFETY: i < argc, and the caller promises argv holds argc entries.
        let arg = unsafe { *argv.add(i) };
        if arg.is_null() {
            break;
        }
        // SAFETY: the caller promises each entry is a live NUL-terminated string.
        let bytes = unsafe { CStr::from_ptr(arg) }.to_bytes();
        args.push(std::ffi::OsStr::from_bytes(bytes).to_os_string());
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_read_as_bytes_up_to_argc() {
        let strings = [c"headroom", c"log-probe", c"/tmp/\xffdir", c"ignored"];
        let ptrs: Vec<*const c_char> = strings.iter().map(|s| s.as_ptr()).collect();
        // SAFETY: three valid entries of the four, all alive for the call.
        let args = unsafe { args_from_c(3, ptrs.as_ptr()) };
        assert_eq!(args.len(), 3);
        assert_eq!(args[1], "log-probe");
        assert_eq!(args[2].as_bytes(), b"/tmp/\xffdir");
    }

    #[test]
    fn a_null_entry_ends_the_list_and_null_argv_gives_none() {
        let ptrs = [c"headroom".as_ptr(), std::ptr::null()];
        // SAFETY: argc overstates the list; the null entry stops the walk before it.
        let args = unsafe { args_from_c(5, ptrs.as_ptr()) };
        assert_eq!(args, vec![OsString::from("headroom")]);
        // SAFETY: a null argv is checked before any read.
        assert!(unsafe { args_from_c(2, std::ptr::null()) }.is_empty());
        // SAFETY: a negative argc reads nothing.
        assert!(unsafe { args_from_c(-1, ptrs.as_ptr()) }.is_empty());
    }
}
