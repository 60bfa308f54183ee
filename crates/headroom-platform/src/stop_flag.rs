//! A stop request for long-running loops (`hangs --watch`, `watch`): SIGINT, SIGTERM and
//! SIGHUP (the terminal closed; a guard does not reload on it, it exits to be restarted) set a flag
//! instead of ending the process, so the loop finishes the round it is in (never leaving a
//! restart half done), saves its state and exits with its own code.
//!
//! The handlers are `signal_handlers`' (the one owner of dispositions), installed without
//! `SA_RESTART` so a blocking call is cut short too. `sleep` waits in `poll(2)` on the
//! handlers' self-pipe, so a signal that lands after the flag was looked at but before the
//! sleep began still ends the sleep at once: the byte waits in the pipe.

/// Route SIGINT, SIGTERM and SIGHUP to the flag, for the rest of the process. Errors name
/// the signal.
#[cfg(unix)]
pub fn install() -> std::io::Result<()> {
    use super::signal_handlers::{Catch, Handlers};
    Handlers::install(
        &[libc::SIGINT, libc::SIGTERM, libc::SIGHUP],
        Catch {
            restart: false,
            // A guard started under `nohup` still stops cleanly on SIGHUP: it asked.
            keep_ignored: false,
        },
    )?
    .keep_for_life();
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn install() -> std::io::Result<()> {
    Ok(())
}

/// The signal that asked to stop, if any.
pub fn requested() -> Option<i32> {
    #[cfg(unix)]
    {
        super::signal_handlers::stop_requested()
    }
    #[cfg(not(unix))]
    {
        None
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

/// Whether the stop came from SIGHUP (a terminal closed, or `kill -HUP`: start afresh).
pub fn is_hangup(sig: i32) -> bool {
    #[cfg(unix)]
    {
        sig == libc::SIGHUP
    }
    #[cfg(not(unix))]
    {
        let _ = sig;
        false
    }
}

/// Read what is there on `fd` (blocking until something is, or it ends), unless a stop is
/// requested first: `Ok(None)` then. For a server that reads its input and must also stop
/// on SIGTERM (`headroom mcp`): the wait is a `poll` on `fd` and the self-pipe together.
#[cfg(unix)]
pub fn read_unless_stopped(
    fd: std::os::fd::BorrowedFd<'_>,
    buf: &mut [u8],
) -> std::io::Result<Option<usize>> {
    use super::signal_handlers;
    use rustix::event::{PollFd, PollFlags};
    let wake = signal_handlers::wake_fd()?;
    loop {
        if requested().is_some() {
            return Ok(None);
        }
        let mut pfds = [
            PollFd::from_borrowed_fd(fd, PollFlags::IN),
            PollFd::from_borrowed_fd(wake, PollFlags::IN),
        ];
        match super::fd::poll(&mut pfds, None) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        let (input, woke) = (pfds[0].revents(), pfds[1].revents());
        if !woke.is_empty() {
            signal_handlers::take_arrived();
        }
        if !input.is_empty() {
            // poll said a read will not block.
            match rustix::io::read(fd, &mut *buf) {
                Ok(n) => return Ok(Some(n)),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Sleep up to `d`, waking at once when a stop is requested.
pub fn sleep(d: std::time::Duration) {
    let deadline = std::time::Instant::now() + d;
    while requested().is_none() {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            break;
        }
        nap(left);
    }
}

/// Up to `d` in `poll` on the self-pipe; emptied when it woke, so the loop above sees
/// the flag (stored before the byte) and a byte of some other signal cannot keep it busy.
#[cfg(unix)]
fn nap(d: std::time::Duration) {
    use super::{fd, signal_handlers};
    match signal_handlers::wake_fd() {
        Ok(wake) => {
            if fd::wait_readable(wake, d) {
                signal_handlers::take_arrived();
            }
        }
        // No pipe (descriptors exhausted): the signal still cuts this sleep short (no
        // SA_RESTART), and the flag is looked at again within a second.
        Err(_) => std::thread::sleep(d.min(std::time::Duration::from_secs(1))),
    }
}

#[cfg(not(unix))]
fn nap(d: std::time::Duration) {
    std::thread::sleep(d);
}

#[cfg(test)]
#[cfg(unix)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// The race the flag alone had: the signal lands after `requested` was looked at and
    /// before the sleep starts. Here it has landed before `nap` even begins, with the flag
    /// cleared as if looked at a moment earlier: the byte in the pipe still ends a nap
    /// that would otherwise take a minute.
    #[test]
    fn a_signal_between_the_look_and_the_sleep_still_ends_the_sleep_at_once() {
        use crate::signal_handlers::tests::{DISPOSITIONS, raise};
        use crate::signal_handlers::{Catch, Handlers, clear_stop};
        let _turn = DISPOSITIONS.lock().unwrap_or_else(|e| e.into_inner());
        let h = Handlers::install(
            &[libc::SIGHUP],
            Catch {
                restart: false,
                keep_ignored: false,
            },
        )
        .unwrap();
        crate::signal_handlers::take_arrived();
        // The handler for SIGHUP is ours; raise delivers before it returns.
        raise(libc::SIGHUP);
        assert_eq!(requested(), Some(libc::SIGHUP));
        assert!(!is_interrupt(libc::SIGHUP) && is_interrupt(libc::SIGINT));
        clear_stop();
        let t = Instant::now();
        nap(Duration::from_secs(60));
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
        // With the flag set, sleep returns without sleeping; the control: without it, it
        // sleeps the time asked.
        raise(libc::SIGHUP);
        let t = Instant::now();
        sleep(Duration::from_secs(60));
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
        clear_stop();
        crate::signal_handlers::take_arrived();
        let t = Instant::now();
        sleep(Duration::from_millis(50));
        assert!(t.elapsed() >= Duration::from_millis(50));
        drop(h);
    }
}
