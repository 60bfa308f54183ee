//! A stop request for long-running loops (`hangs --watch`, `watch`): SIGINT, SIGTERM and
//! SIGHUP (the terminal closed; a guard does not reload on it) set a flag
//! instead of ending the process, so the loop finishes the round it is in (never leaving a
//! restart half done), saves its state and exits with its own code.
//!
//! The handler only stores the signal number in an atomic, which is async-signal-safe.
//! Installed with `sigaction(2)` without `SA_RESTART`, so a sleep is cut short.

use std::sync::atomic::{AtomicI32, Ordering};

static REQUESTED: AtomicI32 = AtomicI32::new(0);

#[cfg(unix)]
extern "C" fn on_signal(sig: libc::c_int) {
    REQUESTED.store(sig, Ordering::SeqCst);
}

/// Route SIGINT, SIGTERM and SIGHUP to the flag. Errors name the signal.
#[cfg(unix)]
pub fn install() -> std::io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: an all-zero sigaction is a valid "no flags, empty mask" value; the fields
        // set below are the handler address and an initialised mask.
        let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
        sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        // SAFETY: sa.sa_mask is a valid, writable sigset_t.
        unsafe { libc::sigemptyset(&mut sa.sa_mask) };
        // SAFETY: sa is fully initialised; the handler only touches an atomic.
        let rc = unsafe { libc::sigaction(sig, &sa, std::ptr::null_mut()) };
        if rc != 0 {
            let e = std::io::Error::last_os_error();
            return Err(std::io::Error::new(
                e.kind(),
                format!("cannot install a handler for signal {sig}: {e}"),
            ));
        }
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn install() -> std::io::Result<()> {
    Ok(())
}

/// The signal that asked to stop, if any.
pub fn requested() -> Option<i32> {
    match REQUESTED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Whether the stop came from SIGINT (Ctrl-C).
pub fn is_interrupt(sig: i32) -> bool {
    #[cfg(unix)]
    {
        sig == libc::SIGINT
    }
    #[cfg(not(unix))]
    {
        let _ = sig;
        false
    }
}

/// Sleep up to `d`, waking early when a stop is requested.
///
/// The handler is installed without `SA_RESTART`, so a signal cuts `nanosleep` short and the
/// flag is seen at once. Each sleep is capped at one second only to bound the race where a
/// signal lands between checking the flag and going to sleep: an idle `watch` wakes once a
/// second, not ten times (its whole cost at a 60 s interval is a few milliseconds a minute).
pub fn sleep(d: std::time::Duration) {
    let deadline = std::time::Instant::now() + d;
    while requested().is_none() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        nap(left.min(std::time::Duration::from_secs(1)));
    }
}

#[cfg(unix)]
fn nap(d: std::time::Duration) {
    let ts = libc::timespec {
        tv_sec: d.as_secs() as libc::time_t,
        tv_nsec: d.subsec_nanos() as libc::c_long,
    };
    // SAFETY: ts is a valid timespec; a null remainder is allowed. EINTR (a signal) simply
    // returns early, which is the point.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

#[cfg(not(unix))]
fn nap(d: std::time::Duration) {
    std::thread::sleep(d);
}
