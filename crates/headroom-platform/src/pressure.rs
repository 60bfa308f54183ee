//! The OS's memory-pressure signal, as one descriptor a `poll(2)` loop can wait on, so that
//! `watch` and `run --limit` start a memory round the moment pressure starts instead of at
//! their next tick.
//!
//! - Linux: a PSI trigger (`Documentation/accounting/psi.rst`): `/proc/pressure/memory` (or
//!   a v2 cgroup's `memory.pressure`) opened `O_RDWR|O_NONBLOCK`, `some 150000 2000000`
//!   written to it (150 ms of stall within a 2 s window; unprivileged triggers need a window
//!   that is a multiple of 2 s), then `POLLPRI` when it fires and `POLLERR` when the file
//!   went away (its cgroup was removed).
//! - macOS: `dispatch_source_create(DISPATCH_SOURCE_TYPE_MEMORYPRESSURE)` with a plain C
//!   handler (`dispatch_source_set_event_handler_f`) that writes a byte into a pipe; the
//!   level is `kern.memorystatus_vm_pressure_level`.
//! - Otherwise, or when that fails: no descriptor, and the loops poll on their timer as
//!   before. `describe` says which and why.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::event::{PollFd, PollFlags};
use std::time::{Duration, Instant};

/// The Linux trigger: 150 ms of "some" memory stall within a 2 s window.
#[cfg_attr(not(target_os = "linux"), allow(dead_code, reason = "Linux's trigger"))]
pub(crate) const PSI_TRIGGER: &str = "some 150000 2000000";

/// How high memory pressure is now: the PSI file's `some avg10` on Linux (a share of the
/// last 10 s in which some task stalled on memory), `kern.memorystatus_vm_pressure_level`
/// on macOS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PressureLevel {
    Normal,
    Warn,
    Critical,
}

impl PressureLevel {
    pub fn name(self) -> &'static str {
        match self {
            PressureLevel::Normal => "normal",
            PressureLevel::Warn => "warn",
            PressureLevel::Critical => "critical",
        }
    }
}

/// `some avg10` at or above this (percent) is `Warn`: the trigger's own rate, 150 ms of
/// stall per 2 s.
pub(crate) const PSI_WARN_AVG10: f64 = 7.5;
/// ... and at or above this, `Critical`.
pub(crate) const PSI_CRITICAL_AVG10: f64 = 30.0;

/// The level in a PSI file's text (`some avg10=1.23 avg60=… total=…`), and its avg10.
pub(crate) fn psi_level(text: &str) -> Option<(PressureLevel, f64)> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    let avg10: f64 = line
        .split_ascii_whitespace()
        .find_map(|f| f.strip_prefix("avg10="))?
        .parse()
        .ok()?;
    let level = if avg10 >= PSI_CRITICAL_AVG10 {
        PressureLevel::Critical
    } else if avg10 >= PSI_WARN_AVG10 {
        PressureLevel::Warn
    } else {
        PressureLevel::Normal
    };
    Some((level, avg10))
}

/// `kern.memorystatus_vm_pressure_level`: 1 normal, 2 warn, 4 critical.
#[cfg_attr(not(target_os = "macos"), allow(dead_code, reason = "macOS-only"))]
pub(crate) fn macos_level(v: i64) -> Option<PressureLevel> {
    match v {
        1 => Some(PressureLevel::Normal),
        2 => Some(PressureLevel::Warn),
        4 => Some(PressureLevel::Critical),
        _ => None,
    }
}

/// Which signal a loop waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, reason = "one variant per OS; the JSON names them all")
)]
#[cfg_attr(
    not(target_os = "macos"),
    allow(dead_code, reason = "one variant per OS; the JSON names them all")
)]
pub enum PressureSignal {
    /// A Linux PSI trigger.
    Psi,
    /// A macOS dispatch memory-pressure source.
    Dispatch,
    /// None: the timer only.
    Poll,
}

impl PressureSignal {
    pub(crate) fn name(self) -> &'static str {
        match self {
            PressureSignal::Psi => "psi",
            PressureSignal::Dispatch => "dispatch",
            PressureSignal::Poll => "poll",
        }
    }
}

/// An armed pressure source, or why there is none.
#[derive(Debug)]
pub struct Pressure {
    pub kind: PressureSignal,
    /// What was armed (`/proc/pressure/memory`, trigger) or why nothing was.
    pub detail: String,
    fd: Option<OwnedFd>,
    /// `POLLPRI` for PSI, `POLLIN` for a pipe.
    events: PollFlags,
    /// The PSI file the level is read from (Linux).
    psi_path: Option<std::path::PathBuf>,
    /// Keeps the macOS dispatch source alive (cancelled on drop).
    #[cfg(target_os = "macos")]
    _dispatch: Option<super::macos::pressure::PressureSource>,
    /// Linux: the source and the signal pipe in one epoll set (`linux/wait_set.rs`); `Err`
    /// when it could not be made, and `poll` waits instead. A PSI trigger's set is made
    /// when the trigger is armed: the poll epoll makes of a descriptor it is given consumes
    /// a trigger event then pending, which the wait after it would then not report. So the
    /// trigger joins the set before it can have fired, and the pipe is added to that set
    /// when it appears, never the set made again around a trigger that may have fired.
    #[cfg(target_os = "linux")]
    wait_set: Option<Result<super::linux::wait_set::WaitSet, ()>>,
}

/// What ended a wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Woke {
    /// The source fired.
    Pressure,
    /// The timeout passed.
    Timeout,
    /// A stop was requested (`stop_flag`).
    Stop,
    /// The source went away (`POLLERR`, e.g. its cgroup was removed); the loop polls now.
    Gone,
}

impl Pressure {
    /// No source: the timer only, for `reason`.
    pub(crate) fn poll(reason: impl Into<String>) -> Self {
        Self {
            kind: PressureSignal::Poll,
            detail: reason.into(),
            fd: None,
            events: PollFlags::empty(),
            psi_path: None,
            #[cfg(target_os = "macos")]
            _dispatch: None,
            #[cfg(target_os = "linux")]
            wait_set: None,
        }
    }

    /// No source because the user turned the signal off (`[memory] pressure = "off"`).
    pub fn turned_off() -> Self {
        Self::poll("turned off by [memory] pressure = \"off\"")
    }

    /// A source on a descriptor that becomes readable (`POLLIN`) when it fires: the macOS
    /// handler's pipe, or in tests a pipe standing in for a trigger.
    #[cfg_attr(not(target_os = "macos"), allow(dead_code, reason = "macOS-only"))]
    pub(crate) fn from_readable(
        kind: PressureSignal,
        detail: impl Into<String>,
        fd: OwnedFd,
    ) -> Self {
        Self {
            kind,
            detail: detail.into(),
            fd: Some(fd),
            events: PollFlags::IN,
            psi_path: None,
            #[cfg(target_os = "macos")]
            _dispatch: None,
            #[cfg(target_os = "linux")]
            wait_set: None,
        }
    }

    /// Arm the trigger on a PSI file (`/proc/pressure/memory`, a cgroup's
    /// `memory.pressure`).
    #[cfg(target_os = "linux")]
    pub fn psi(path: &std::path::Path) -> Self {
        use std::io::Write;
        let opened = crate::files::nonblocking(std::fs::OpenOptions::new().read(true).write(true))
            .open(path);
        let mut f = match opened {
            Ok(f) => f,
            Err(e) => return Self::poll(format!("{}: {e}", path.display())),
        };
        // One write, NUL included: the kernel overwrites the last byte written with a NUL,
        // so without one the window would lose its last digit (2000000 -> 200000, EINVAL).
        // The trigger lives as long as the descriptor.
        let line = format!("{PSI_TRIGGER}\0");
        if let Err(e) = f.write_all(line.as_bytes()) {
            return Self::poll(format!(
                "{}: the kernel refused the trigger `{PSI_TRIGGER}`: {e}",
                path.display()
            ));
        }
        let fd: OwnedFd = f.into();
        let wait_set = Some(super::linux::wait_set::WaitSet::if_room(
            Some((fd.as_fd(), PollFlags::PRI)),
            None,
        ));
        Self {
            kind: PressureSignal::Psi,
            // A comma, not parentheses: `describe` puts the detail in parentheses already.
            detail: format!("{}, trigger `{PSI_TRIGGER}`", path.display()),
            fd: Some(fd),
            events: PollFlags::PRI,
            psi_path: Some(path.to_path_buf()),
            wait_set,
        }
    }

    /// The system's source: PSI under `proc_root` on Linux, dispatch on macOS.
    pub fn system(proc_root: &std::path::Path) -> Self {
        #[cfg(target_os = "linux")]
        {
            Self::psi(&proc_root.join("pressure/memory"))
        }
        #[cfg(target_os = "macos")]
        {
            let _ = proc_root;
            match super::macos::pressure::PressureSource::new() {
                Ok((source, fd)) => {
                    let mut p = Self::from_readable(
                        PressureSignal::Dispatch,
                        "DISPATCH_SOURCE_TYPE_MEMORYPRESSURE (warn, critical)",
                        fd,
                    );
                    p._dispatch = Some(source);
                    p
                }
                Err(e) => Self::poll(format!("no dispatch memory-pressure source: {e}")),
            }
        }
        #[cfg(not(any(target_os = "linux", target_os = "macos")))]
        {
            let _ = proc_root;
            Self::poll(format!(
                "no memory-pressure signal on {}",
                std::env::consts::OS
            ))
        }
    }

    /// `psi (…)`, `dispatch (…)` or `poll (why)`: the line `watch` prints once.
    pub fn describe(&self) -> String {
        format!("{} ({})", self.kind.name(), self.detail)
    }

    /// The pressure level now, and what it was read from (`some avg10 0.42 %`); `None`
    /// without a source or when it cannot be read.
    pub fn level(&self) -> Option<(PressureLevel, String)> {
        match self.kind {
            PressureSignal::Psi => {
                let text = std::fs::read_to_string(self.psi_path.as_ref()?).ok()?;
                let (level, avg10) = psi_level(&text)?;
                Some((level, format!("some avg10 {avg10:.2} %")))
            }
            PressureSignal::Dispatch => {
                #[cfg(target_os = "macos")]
                {
                    let v = super::macos::pressure::level().ok()?;
                    let level = macos_level(v)?;
                    Some((level, format!("kern.memorystatus_vm_pressure_level {v}")))
                }
                #[cfg(not(target_os = "macos"))]
                None
            }
            PressureSignal::Poll => None,
        }
    }

    /// Whether the level is above normal now (unknown counts as not).
    pub(crate) fn is_high(&self) -> bool {
        self.level().is_some_and(|(l, _)| l > PressureLevel::Normal)
    }

    /// The descriptor and `poll` events to wait on, for a loop that polls other
    /// descriptors too (`Supervisor::wait`); call `drain` when it fired.
    pub(crate) fn poll_spec(&self) -> Option<(BorrowedFd<'_>, PollFlags)> {
        self.fd().map(|fd| (fd, self.events))
    }

    pub(crate) fn fd(&self) -> Option<BorrowedFd<'_>> {
        self.fd.as_ref().map(|f| f.as_fd())
    }

    /// Wait up to `timeout` for the source to fire or `stop` to hold. `stop` is the flag the
    /// signal handlers set (`stop_flag::requested`): the wait also polls their self-pipe,
    /// which the same handler makes readable, so it blocks for the whole timeout instead of
    /// waking every second to look (a signal that lands before the poll leaves its byte in
    /// the pipe and ends the poll at once). Without the pipe (descriptors exhausted) it
    /// wakes once a second to look at `stop`, as before. Without a source this is a plain
    /// interruptible sleep. A source that reports `POLLERR`/`POLLHUP`/`POLLNVAL` is dropped,
    /// so the caller falls back to its timer.
    pub fn wait(&mut self, timeout: Duration, stop: &dyn Fn() -> bool) -> Woke {
        let deadline = Instant::now() + timeout;
        // Made (or looked up) before `stop` is first looked at: a signal before that sets
        // the flag, one after it leaves a byte.
        let wake = super::signal_handlers::wake_fd().ok();
        loop {
            if stop() {
                return Woke::Stop;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Woke::Timeout;
            }
            let slice = if wake.is_some() {
                left
            } else {
                left.min(Duration::from_secs(1))
            };
            let Some((revents, woke)) = self.wait_once(wake, slice) else {
                continue; // timeout slice, or EINTR: look at `stop` again
            };
            if woke {
                // A caught signal: emptied (the flag was stored before the byte), so the
                // loop looks at `stop` and a byte of another signal cannot keep it busy.
                super::signal_handlers::take_arrived();
            }
            if revents.intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL)
                && !revents.intersects(self.events)
            {
                self.fd = None;
                #[cfg(target_os = "linux")]
                {
                    self.wait_set = None;
                }
                self.kind = PressureSignal::Poll;
                self.detail = format!("the source went away ({})", self.detail);
                return Woke::Gone;
            }
            if revents.intersects(self.events) {
                self.drain();
                return Woke::Pressure;
            }
        }
    }

    /// One sleep of up to `slice` on the source and the wake pipe: the source's events and
    /// whether the pipe was readable, or `None` (the slice passed, or a signal cut it
    /// short). Linux sleeps in the epoll set (made at the first wait unless the trigger
    /// made it, the pipe added once it exists); elsewhere, or when the set cannot be made
    /// or the pipe not added, in `poll`.
    fn wait_once(
        &mut self,
        wake: Option<BorrowedFd<'static>>,
        slice: Duration,
    ) -> Option<(PollFlags, bool)> {
        #[cfg(target_os = "linux")]
        {
            use super::linux::wait_set::WaitSet;
            // Made here only for a readable source (a pipe: its state is not consumed by
            // being polled) or none (it went away).
            if self.wait_set.is_none() {
                self.wait_set = Some(WaitSet::if_room(self.poll_spec(), wake));
            }
            // No `let` chains: the crate builds with Rust 1.85 (`rust-version`).
            if let (Some(Ok(set)), Some(w)) = (&mut self.wait_set, wake) {
                if !set.has_wake && set.add_wake(w).is_err() {
                    self.wait_set = Some(Err(()));
                }
            }
            if let Some(Ok(set)) = &self.wait_set {
                return set.wait(slice).map(|f| (f.source, f.wake));
            }
        }
        // Only what there is is polled: no source, or no pipe, is no entry.
        let mut pfd = Vec::with_capacity(2);
        if let Some(fd) = self.fd() {
            pfd.push(PollFd::from_borrowed_fd(fd, self.events));
        }
        let source_at = pfd.len().checked_sub(1);
        if let Some(w) = wake {
            pfd.push(PollFd::from_borrowed_fd(w, PollFlags::IN));
        }
        let wake_at = wake.map(|_| pfd.len() - 1);
        if !matches!(super::fd::poll(&mut pfd, Some(slice)), Ok(n) if n > 0) {
            return None;
        }
        let revents = source_at.map_or(PollFlags::empty(), |i| pfd[i].revents());
        let woke = wake_at.is_some_and(|i| !pfd[i].revents().is_empty());
        Some((revents, woke))
    }

    /// A readable source (a pipe) is emptied so it does not fire again for the same event;
    /// a PSI trigger needs nothing (its event is consumed by the poll that reported it).
    pub(crate) fn drain(&self) {
        if self.events != PollFlags::IN {
            return;
        }
        if let Some(fd) = self.fd() {
            let mut buf = [0u8; 64];
            // The descriptor is non-blocking.
            while matches!(rustix::io::read(fd, &mut buf), Ok(n) if n > 0) {}
        }
    }
}

#[cfg(test)]
mod tests;
