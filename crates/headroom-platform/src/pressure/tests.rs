use super::*;
use crate::fd::nonblocking_pipe;

/// The reaction path: an event on the descriptor ends the wait at once, not at the
/// timeout. A pipe stands in for the trigger (the same `poll` loop serves both).
#[test]
fn an_event_wakes_the_wait_at_once_not_at_the_next_tick() {
    // Holds the shared self-pipe's turn: this wait drains it when it wakes, which would
    // take the byte of another test's signal.
    let _turn = crate::signal_handlers::tests::DISPOSITIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let (r, w) = nonblocking_pipe().unwrap();
    let mut p = Pressure::from_readable(PressureSignal::Psi, "test pipe", r);
    let fired = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        let at = Instant::now();
        rustix::io::write(&w, b"x").unwrap();
        (at, w)
    });
    let woke = p.wait(Duration::from_secs(30), &|| false);
    let now = Instant::now();
    let (at, _w) = fired.join().unwrap();
    assert_eq!(woke, Woke::Pressure);
    let late = now.saturating_duration_since(at);
    assert!(
        late < Duration::from_millis(100),
        "woke {late:?} after the event"
    );
    // Drained: the same event does not fire twice; the next wait runs to its timeout.
    assert_eq!(p.wait(Duration::from_millis(50), &|| false), Woke::Timeout);
}

/// The wait is not cut into 1 s slices to look at the stop flag: a stop request (the
/// signal handler sets the flag and writes the self-pipe) ends a 60 s wait at once,
/// with a source armed and without one. With 1 s slices it ended up to a second late.
#[test]
fn a_stop_signal_ends_a_long_wait_at_once() {
    use crate::signal_handlers::{Catch, Handlers, clear_stop, tests::DISPOSITIONS};
    let _turn = DISPOSITIONS.lock().unwrap_or_else(|e| e.into_inner());
    let h = Handlers::install(
        &[libc::SIGHUP],
        Catch {
            restart: false,
            keep_ignored: false,
        },
    )
    .unwrap();
    let (r, _w) = nonblocking_pipe().unwrap();
    for mut p in [
        Pressure::from_readable(PressureSignal::Psi, "test pipe", r),
        Pressure::poll("none"),
    ] {
        clear_stop();
        crate::signal_handlers::take_arrived();
        // From another thread, so the poll is woken by the pipe, not cut short by EINTR;
        // again every 50 ms until the wait ends, because another test's loop in this
        // process may drain the shared pipe first.
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let raised = std::thread::spawn({
            let done = done.clone();
            move || {
                std::thread::sleep(Duration::from_millis(100));
                let at = Instant::now();
                while !done.load(std::sync::atomic::Ordering::SeqCst) {
                    // The handler for SIGHUP is ours; raise delivers it to this thread.
                    crate::signal_handlers::tests::raise(libc::SIGHUP);
                    std::thread::sleep(Duration::from_millis(50));
                }
                at
            }
        });
        let stop = || crate::stop_flag::requested().is_some();
        let woke = p.wait(Duration::from_secs(60), &stop);
        let now = Instant::now();
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        let at = raised.join().unwrap();
        assert_eq!(woke, Woke::Stop, "{}", p.describe());
        let late = now.saturating_duration_since(at);
        assert!(
            late < Duration::from_millis(500),
            "woke {late:?} after the signal"
        );
    }
    clear_stop();
    crate::signal_handlers::take_arrived();
    drop(h);
}

#[test]
fn levels_from_psi_text_and_the_macos_sysctl() {
    let psi = |avg10: &str| {
        format!(
            "some avg10={avg10} avg60=0.00 avg300=0.00 total=1\nfull avg10=99.00 avg60=0.00 avg300=0.00 total=1\n"
        )
    };
    assert_eq!(psi_level(&psi("0.00")), Some((PressureLevel::Normal, 0.0)));
    assert_eq!(
        psi_level(&psi("7.49")).map(|l| l.0),
        Some(PressureLevel::Normal)
    );
    assert_eq!(
        psi_level(&psi("7.50")).map(|l| l.0),
        Some(PressureLevel::Warn)
    );
    assert_eq!(
        psi_level(&psi("30.00")).map(|l| l.0),
        Some(PressureLevel::Critical)
    );
    // `full` is not `some`; garbage is no level, not normal.
    assert_eq!(psi_level("full avg10=99.00\n"), None);
    assert_eq!(psi_level("some avg10=x\n"), None);
    assert_eq!(
        [1, 2, 4, 0, 3].map(macos_level),
        [
            Some(PressureLevel::Normal),
            Some(PressureLevel::Warn),
            Some(PressureLevel::Critical),
            None,
            None
        ]
    );
    // A source without a level file reads none; so does the timer.
    assert_eq!(Pressure::poll("none").level(), None);
    assert!(!Pressure::poll("none").is_high());
}

/// For real where PSI exists: the system source reads a level.
#[cfg(target_os = "linux")]
#[test]
#[cfg_attr(not(hr_psi), ignore = "needs PSI (/proc/pressure/memory)")]
fn the_system_psi_source_reads_a_level() {
    let p = Pressure::system(std::path::Path::new("/proc"));
    assert_eq!(
        p.kind,
        PressureSignal::Psi,
        "no PSI trigger here: {}",
        p.describe()
    );
    let (_, from) = p.level().expect("a level from /proc/pressure/memory");
    assert!(from.starts_with("some avg10 "), "{from}");
}

#[test]
fn without_a_source_it_is_a_timer_and_a_stop_ends_it() {
    // Holds the shared self-pipe's turn: this wait drains it when it wakes, which would
    // take the byte of another test's signal.
    let _turn = crate::signal_handlers::tests::DISPOSITIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let mut p = Pressure::poll("none here");
    assert_eq!(p.describe(), "poll (none here)");
    let t = Instant::now();
    assert_eq!(p.wait(Duration::from_millis(30), &|| false), Woke::Timeout);
    assert!(t.elapsed() >= Duration::from_millis(30));
    assert_eq!(p.wait(Duration::from_secs(30), &|| true), Woke::Stop);
}

#[test]
fn a_source_that_goes_away_falls_back_to_polling() {
    // Holds the shared self-pipe's turn: this wait drains it when it wakes, which would
    // take the byte of another test's signal.
    let _turn = crate::signal_handlers::tests::DISPOSITIONS
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let (r, w) = nonblocking_pipe().unwrap();
    let mut p = Pressure::from_readable(PressureSignal::Psi, "test pipe", r);
    drop(w); // POLLHUP with nothing to read: the source is gone
    assert_eq!(p.wait(Duration::from_secs(30), &|| false), Woke::Gone);
    assert_eq!(p.kind, PressureSignal::Poll);
    assert!(p.fd().is_none());
}

#[cfg(target_os = "linux")]
#[test]
fn a_missing_psi_file_means_polling_and_says_why() {
    let d = tempfile::tempdir().unwrap();
    let p = Pressure::system(d.path());
    assert_eq!(p.kind, PressureSignal::Poll);
    assert!(p.describe().contains("pressure/memory"), "{}", p.describe());
}

/// For real: the kernel accepts the 2 s-window trigger (unprivileged too, on kernels
/// with unprivileged PSI triggers). Ignored where the build found no PSI.
#[cfg(target_os = "linux")]
#[test]
#[cfg_attr(not(hr_psi), ignore = "needs PSI (/proc/pressure/memory)")]
fn the_kernel_accepts_the_trigger() {
    let path = std::path::Path::new("/proc/pressure/memory");
    assert!(
        path.exists(),
        "{} does not exist (kernel without PSI)",
        path.display()
    );
    let mut p = Pressure::psi(path);
    assert_eq!(p.kind, PressureSignal::Psi, "{}", p.describe());
    // The trigger is in its epoll set from the moment it is armed (before it can have
    // fired: the poll epoll makes when a descriptor is added would consume a pending
    // event), and a wait adds the pipe to that same set rather than making a new one.
    let made = match &p.wait_set {
        Some(Ok(set)) => {
            assert!(!set.has_wake, "the pipe joins at the first wait");
            set.raw_fd()
        }
        other => panic!("no epoll set at arming: {other:?}"),
    };
    assert_eq!(p.wait(Duration::from_millis(10), &|| false), Woke::Timeout);
    match &p.wait_set {
        Some(Ok(set)) => {
            assert!(set.has_wake, "the pipe was added");
            // A new set would be made while the old is still open: another number.
            assert_eq!(set.raw_fd(), made, "the same set, not a new one");
        }
        other => panic!("the set was lost: {other:?}"),
    }
    // A 1 s window is refused to unprivileged users; the control that a refusal is seen
    // at all: an invalid trigger is refused to everyone.
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .unwrap();
    assert!(f.write_all(b"some 150000 999\0").is_err());
}
