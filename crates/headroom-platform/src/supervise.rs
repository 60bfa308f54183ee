//! `run`'s hold on the command it starts (Unix): the OS half of supervising a process tree.
//!
//! - Linux: headroom becomes a child subreaper (`PR_SET_CHILD_SUBREAPER`), so orphans of the
//!   tree are reparented to it, stay in the tree, and are reaped by it. macOS has no such
//!   thing; there the tree is followed by polling (`core::memory::TreeTracker`).
//! - SIGINT, SIGTERM, SIGHUP and SIGCHLD are caught by a handler that only writes the signal
//!   number into a non-blocking self-pipe; the polling loop sleeps in `poll(2)` on that pipe,
//!   so it wakes at once for a signal or a child's exit and costs nothing in between. A
//!   termination signal headroom was started with ignored (`nohup`) stays ignored, so the
//!   command inherits it as it would without headroom.
//! - The command starts in a process group of its own (so headroom can tell the tree from
//!   whatever else shares its own group, like the other side of a pipe). When headroom's
//!   group owns the terminal, the command's group is handed the terminal before it execs,
//!   as a shell does for a foreground job: Ctrl-C and Ctrl-Z go straight to it and
//!   interactive programs can read. headroom blocks SIGTTOU and SIGTTIN while it runs so
//!   that it can take the terminal back, and write to stderr, from the background.
//!
//! The command gets the signal mask headroom was started with. Everything is undone on
//! drop: the terminal goes back to headroom's group, handlers and the mask are restored.
//!
//! The parts live by job: the handlers and the self-pipe in `signal_handlers.rs` (the one
//! owner of dispositions), the terminal in `tty.rs`, `$PATH` lookup in `path_lookup.rs`, the
//! fork/exec in `spawn.rs`; this file holds them together for one run.

// `unsafe` here: raise(SIGTSTP): libc only (job control stops headroom itself).
#![allow(unsafe_code)]

use std::ffi::{OsString, c_int};
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags};
use rustix::process::WaitOptions;

use super::signal_handlers::{self, Catch, Handlers};
pub use super::spawn::SpawnError;
use super::spawn::{Setup, spawn_in_own_group};
use super::tty::{Tty, thread_mask, tty_signals};
use crate::Signal;

/// Signals whose arrival wakes the loop.
const CAUGHT: [c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGCHLD];

/// Why the loop woke up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// headroom itself was sent SIGINT, SIGTERM or SIGHUP.
    Signal(Signal),
    /// A child exited or stopped: call `reap`.
    Child,
    /// The memory-pressure source fired (`wake_on_pressure`).
    Pressure,
    /// The process that started headroom has exited (`watch_parent`); said once.
    ParentGone,
}

/// What `waitpid` said about one child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildEvent {
    Exited(i32),
    Signaled(i32),
    /// Stopped by this signal (SIGTSTP from Ctrl-Z, SIGTTIN, SIGTTOU, SIGSTOP).
    Stopped(i32),
}

/// Whether a `ChildEvent::Stopped` signal is the terminal's job control (SIGTSTP from
/// Ctrl-Z, SIGTTIN or SIGTTOU on a background read or write), not a SIGSTOP someone sent.
pub fn is_terminal_stop(sig: i32) -> bool {
    [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU].contains(&sig)
}

/// The OS state `run` holds while it supervises a command.
pub struct Supervisor {
    /// The self-pipe's read end (`signal_handlers`).
    wake: BorrowedFd<'static>,
    handlers: Handlers,
    old_mask: libc::sigset_t,
    tty: Option<Tty>,
    subreaper: bool,
    /// `cgroup.procs` of the cgroup the next command joins before it execs.
    cgroup_procs: Option<OwnedFd>,
    /// The memory-pressure source `wait` also wakes on.
    pressure: Option<crate::pressure::Pressure>,
    /// The parent `wait` watches (`watch_parent`), until its exit was reported.
    parent: Option<super::parent_watch::ParentWatch>,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("wake", &self.wake)
            .field("handlers", &self.handlers.len())
            .field("tty", &self.tty)
            .field("subreaper", &self.subreaper)
            .finish_non_exhaustive()
    }
}

/// Become a child subreaper (Linux): orphaned descendants are reparented to this process.
#[cfg(target_os = "linux")]
fn become_subreaper() -> io::Result<bool> {
    // Any non-zero argument sets the flag; rustix passes this process's pid.
    rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
    Ok(true)
}

#[cfg(not(target_os = "linux"))]
fn become_subreaper() -> io::Result<bool> {
    Ok(false)
}

impl Supervisor {
    /// Take hold: subreaper, self-pipe, handlers, SIGTTOU/SIGTTIN blocked, the terminal.
    /// Only one may exist at a time (the handlers are process-wide).
    pub fn install() -> io::Result<Self> {
        let subreaper = become_subreaper()?;
        let wake = signal_handlers::wake_fd()?;
        // Bytes of signals that arrived before this run are not this run's.
        signal_handlers::take_arrived();

        // This thread is the one that runs the loop.
        let old_mask = thread_mask(libc::SIG_BLOCK, &tty_signals())?;
        let handlers = Handlers::install(
            &CAUGHT,
            Catch {
                restart: true,
                keep_ignored: true,
            },
        );
        let handlers = match handlers {
            Ok(h) => h,
            Err(e) => {
                // Restoring the mask saved above, on the same thread.
                let _ = thread_mask(libc::SIG_SETMASK, &old_mask);
                return Err(e);
            }
        };
        Ok(Self {
            wake,
            handlers,
            old_mask,
            tty: Tty::open(),
            subreaper,
            cgroup_procs: None,
            pressure: None,
            parent: None,
        })
    }

    /// Have `wait` report `Wake::ParentGone` once the process that started headroom has
    /// exited (`parent_watch`): the parent noted at start-up, else the one now. Reported at
    /// the first `wait` if it is gone already.
    pub fn watch_parent(&mut self) -> io::Result<()> {
        let parent =
            super::start::parent_at_start().unwrap_or_else(super::parent_watch::current_parent);
        self.parent = Some(super::parent_watch::ParentWatch::new(parent)?);
        Ok(())
    }

    /// Whether orphans of the tree come back to headroom (Linux).
    pub fn is_subreaper(&self) -> bool {
        self.subreaper
    }

    /// Whether headroom's group owned the terminal, so the command's group was handed it.
    pub fn handed_terminal(&self) -> bool {
        self.tty.as_ref().is_some_and(|t| t.handed)
    }

    /// Have the next command join the cgroup whose `cgroup.procs` is `procs` between fork
    /// and exec (it writes `0`, "this process"), so that nothing it runs is ever outside it.
    /// A failure to join is `SpawnError::Cgroup` and the command does not run. `None` stops.
    pub fn join_cgroup_at_exec(&mut self, procs: Option<OwnedFd>) {
        self.cgroup_procs = procs;
    }

    /// Have `wait` also wake when `source` fires (`Wake::Pressure`). A source that goes
    /// away is dropped and the loop keeps its timer.
    pub fn wake_on_pressure(&mut self, source: crate::pressure::Pressure) {
        self.pressure = Some(source);
    }

    /// Whether the pressure source's level is above normal now (`Pressure::is_high`).
    pub fn pressure_high(&self) -> bool {
        self.pressure.as_ref().is_some_and(|p| p.is_high())
    }

    /// Start `argv` with stdio inherited, in a new process group led by the command, handed
    /// the terminal when headroom's group owns it. Returns the command's pid.
    pub fn spawn(&mut self, argv: &[OsString]) -> Result<i32, SpawnError> {
        let tty_fd = self.tty.as_ref().filter(|t| t.ours()).map(Tty::raw_fd);
        let pid = spawn_in_own_group(
            argv,
            Setup {
                tty_fd,
                // The mask headroom was started with: SIGTTOU and SIGTTIN are blocked in
                // headroom for the run, and a blocked mask survives exec.
                mask: self.old_mask,
                cgroup_fd: self.cgroup_procs.as_ref().map(|f| f.as_raw_fd()),
            },
        )?;
        if tty_fd.is_some() {
            if let Some(t) = self.tty.as_mut() {
                t.set(pid);
                t.handed = true;
            }
        }
        Ok(pid)
    }

    /// Sleep until a caught signal arrives or `timeout` passes; what arrived, in order.
    pub fn wait(&mut self, timeout: Duration) -> Vec<Wake> {
        let pressure = self.pressure.as_ref().and_then(|p| p.poll_spec());
        let parent_fd = self.parent.as_ref().and_then(|p| p.poll_fd());
        // Only what there is is polled: no pressure source or parent kqueue, no entry.
        let mut pfds = vec![PollFd::from_borrowed_fd(self.wake, PollFlags::IN)];
        let pressure_at = pressure.map(|(fd, ev)| {
            pfds.push(PollFd::from_borrowed_fd(fd, ev));
            (pfds.len() - 1, ev)
        });
        if let Some(fd) = parent_fd {
            pfds.push(PollFd::from_borrowed_fd(fd, PollFlags::IN));
        }
        // EINTR just ends the wait early; the byte the handler wrote is read below or on
        // the next call.
        let _ = super::fd::poll(&mut pfds, Some(timeout));
        let pressure_woke = pressure_at.map(|(i, ev)| (pfds[i].revents(), ev));
        drop(pfds);
        let mut out = Vec::new();
        if let (Some(p), Some((r, ev))) = (self.pressure.as_mut(), pressure_woke) {
            if r.intersects(ev) {
                p.drain();
                out.push(Wake::Pressure);
            } else if r.intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL) {
                self.pressure = None;
            }
        }
        for sig in signal_handlers::take_arrived() {
            let wake = match sig {
                libc::SIGINT => Wake::Signal(Signal::Int),
                libc::SIGTERM => Wake::Signal(Signal::Term),
                libc::SIGHUP => Wake::Signal(Signal::Hup),
                _ => Wake::Child,
            };
            if !(wake == Wake::Child && out.last() == Some(&Wake::Child)) {
                out.push(wake);
            }
        }
        // Asked at every wake, whatever woke it: the parent's exit is `getppid()` changing.
        if let Some(p) = &self.parent {
            p.drain();
            if p.gone() {
                self.parent = None;
                out.push(Wake::ParentGone);
            }
        }
        out
    }

    /// Collect every child that exited or stopped (the command, and on Linux any orphan of
    /// the tree reparented here), without blocking.
    pub fn reap(&self) -> Vec<(i32, ChildEvent)> {
        let mut out = Vec::new();
        loop {
            // `waitpid(-1, …)`: any child (rustix's `waitpid(None, …)` is pid 0, headroom's
            // own group only, which the command has left). WNOHANG never blocks. None, or
            // an error (ECHILD): no more.
            let Ok(Some((pid, status))) =
                rustix::process::wait(WaitOptions::NOHANG | WaitOptions::UNTRACED)
            else {
                return out;
            };
            let ev = if let Some(code) = status.exit_status() {
                ChildEvent::Exited(code)
            } else if let Some(sig) = status.terminating_signal() {
                ChildEvent::Signaled(sig)
            } else if let Some(sig) = status.stopping_signal() {
                ChildEvent::Stopped(sig)
            } else {
                continue;
            };
            out.push((pid.as_raw_pid(), ev));
        }
    }

    /// Job control, when the command's group was stopped from the terminal (Ctrl-Z): take
    /// the terminal back and stop headroom too, so the shell sees the job stopped. Returns
    /// once headroom is continued (`fg`/`bg`), having handed the terminal back to `pgid` if
    /// headroom's group owns it again. The caller then continues the command's group.
    pub fn suspend_with(&mut self, pgid: i32) {
        self.take_terminal();
        // SAFETY: raise has no memory-safety preconditions. SIGTSTP's default action stops
        // this process; in an orphaned group the kernel discards it and this returns at once.
        unsafe { libc::raise(libc::SIGTSTP) };
        if let Some(t) = self.tty.as_mut().filter(|t| t.ours()) {
            t.handed = t.set(pgid);
        }
    }

    /// Give the terminal back to headroom's own group, if it was handed away.
    pub fn take_terminal(&mut self) {
        if let Some(t) = self.tty.as_mut() {
            t.take_back();
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.take_terminal();
        // The handlers go back when `self.handlers` drops, right after this.
        // Restoring the mask saved by `install`, on the same thread.
        let _ = thread_mask(libc::SIG_SETMASK, &self.old_mask);
    }
}
