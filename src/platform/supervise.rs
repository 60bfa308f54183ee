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

use std::ffi::{OsString, c_int};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use crate::platform::Signal;

/// The write end of the self-pipe, for the signal handler (-1: none installed).
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);

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
}

/// What `waitpid` said about one child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildEvent {
    Exited(i32),
    Signaled(i32),
    /// Stopped by this signal (SIGTSTP from Ctrl-Z, SIGTTIN, SIGTTOU, SIGSTOP).
    Stopped(i32),
}

/// Why the command could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("{0}")]
    NotFound(io::Error),
    #[error("{0}")]
    NotExecutable(io::Error),
    #[error("{0}")]
    Other(io::Error),
    /// The command could not join the cgroup it was to run in (`join_cgroup_at_exec`); it
    /// never ran, so starting it again without the cgroup is safe.
    #[error("{0}")]
    Cgroup(io::Error),
}

#[derive(Debug)]
struct Tty {
    fd: OwnedFd,
    /// headroom's own process group.
    own: libc::pid_t,
    /// Whether headroom handed the terminal to the command's group (and must take it back).
    handed: bool,
}

impl Tty {
    /// The controlling terminal, when there is one.
    fn open() -> Option<Self> {
        // SAFETY: a NUL-terminated literal path; the flags are valid for open(2).
        let fd = unsafe {
            libc::open(
                c"/dev/tty".as_ptr(),
                libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return None;
        }
        // SAFETY: fd was just opened and is owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: getpgrp has no preconditions.
        let own = unsafe { libc::getpgrp() };
        Some(Self {
            fd,
            own,
            handed: false,
        })
    }

    /// Whether headroom's group is the terminal's foreground group right now.
    fn ours(&self) -> bool {
        // SAFETY: fd is an open terminal descriptor.
        unsafe { libc::tcgetpgrp(self.fd.as_raw_fd()) == self.own }
    }

    fn set(&self, pgid: libc::pid_t) -> bool {
        // SIGTTOU is blocked for the whole run (see `Supervisor::install`), so this works
        // from the background too.
        // SAFETY: fd is an open terminal descriptor; pgid is a process group of our session.
        unsafe { libc::tcsetpgrp(self.fd.as_raw_fd(), pgid) == 0 }
    }
}

/// The OS state `run` holds while it supervises a command.
pub struct Supervisor {
    read: OwnedFd,
    _write: OwnedFd,
    old_actions: Vec<(c_int, libc::sigaction)>,
    old_mask: libc::sigset_t,
    tty: Option<Tty>,
    subreaper: bool,
    /// `cgroup.procs` of the cgroup the next command joins before it execs.
    cgroup_procs: Option<OwnedFd>,
    /// The memory-pressure source `wait` also wakes on.
    pressure: Option<crate::platform::pressure::Pressure>,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("read", &self.read)
            .field("handlers", &self.old_actions.len())
            .field("tty", &self.tty)
            .field("subreaper", &self.subreaper)
            .finish_non_exhaustive()
    }
}

extern "C" fn on_signal(sig: c_int) {
    let fd = PIPE_WRITE.load(Ordering::Relaxed);
    if fd < 0 {
        return;
    }
    let saved = errno();
    let byte = sig as u8;
    // SAFETY: write(2) is async-signal-safe; the buffer is one valid byte. A full pipe
    // (EAGAIN) drops the byte, which is fine: the loop is already awake.
    unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
    set_errno(saved);
}

#[cfg(target_os = "linux")]
fn errno_ptr() -> *mut c_int {
    // SAFETY: returns the calling thread's errno location; no preconditions.
    unsafe { libc::__errno_location() }
}

#[cfg(target_os = "macos")]
fn errno_ptr() -> *mut c_int {
    // SAFETY: returns the calling thread's errno location; no preconditions.
    unsafe { libc::__error() }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn errno_ptr() -> *mut c_int {
    std::ptr::null_mut()
}

fn errno() -> c_int {
    let p = errno_ptr();
    if p.is_null() {
        return 0;
    }
    // SAFETY: p points at this thread's errno.
    unsafe { *p }
}

fn set_errno(v: c_int) {
    let p = errno_ptr();
    if !p.is_null() {
        // SAFETY: p points at this thread's errno.
        unsafe { *p = v };
    }
}

fn cvt(rc: c_int) -> io::Result<c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

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

fn tty_signals() -> libc::sigset_t {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it before use.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: set is a valid sigset_t.
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTTOU);
        libc::sigaddset(&mut set, libc::SIGTTIN);
    }
    set
}

/// A non-blocking, close-on-exec pipe (read end, write end).
fn marker_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as c_int; 2];
    // SAFETY: fds is an array of two ints, as pipe(2) requires.
    cvt(unsafe { libc::pipe(fds.as_mut_ptr()) })?;
    // SAFETY: both descriptors were just created and are owned by nothing else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    set_flags(r.as_raw_fd())?;
    set_flags(w.as_raw_fd())?;
    Ok((r, w))
}

/// Become a child subreaper (Linux): orphaned descendants are reparented to this process.
#[cfg(target_os = "linux")]
fn become_subreaper() -> io::Result<bool> {
    // SAFETY: prctl(PR_SET_CHILD_SUBREAPER, 1) takes integer arguments only.
    cvt(unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })?;
    Ok(true)
}

#[cfg(not(target_os = "linux"))]
fn become_subreaper() -> io::Result<bool> {
    Ok(false)
}

/// Find `prog` the way a shell does: a name with a `/` is used as is; otherwise the first
/// executable regular file of that name in `$PATH`. Only when there is none, but a file of
/// that name exists, is it "not executable" (126); when there is no such file, "not found"
/// (127) — even if some `$PATH` directory could not be searched, which `execvp` would
/// report as EACCES.
fn resolve(prog: &std::ffi::OsStr) -> Result<std::path::PathBuf, SpawnError> {
    use std::os::unix::ffi::OsStrExt;
    use std::path::PathBuf;
    if prog.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(prog));
    }
    let not_found = || {
        SpawnError::NotFound(io::Error::new(
            io::ErrorKind::NotFound,
            "no such file in $PATH",
        ))
    };
    if prog.is_empty() {
        return Err(not_found());
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/bin:/usr/bin".into());
    let mut not_executable: Option<PathBuf> = None;
    for dir in std::env::split_paths(&path) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(prog);
        if !candidate.is_file() {
            continue;
        }
        let Ok(c) = std::ffi::CString::new(candidate.as_os_str().as_bytes()) else {
            continue;
        };
        // SAFETY: c is a NUL-terminated path; access has no other preconditions.
        if unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0 {
            return Ok(candidate);
        }
        not_executable.get_or_insert(candidate);
    }
    match not_executable {
        Some(p) => Err(SpawnError::NotExecutable(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("`{}` is not executable", p.display()),
        ))),
        None => Err(not_found()),
    }
}

impl Supervisor {
    /// Take hold: subreaper, self-pipe, handlers, SIGTTOU/SIGTTIN blocked, the terminal.
    /// Only one may exist at a time (the handlers are process-wide).
    pub fn install() -> io::Result<Self> {
        let subreaper = become_subreaper()?;
        let mut fds = [0 as c_int; 2];
        // SAFETY: fds is an array of two ints, as pipe(2) requires.
        cvt(unsafe { libc::pipe(fds.as_mut_ptr()) })?;
        // SAFETY: both descriptors were just created and are owned by nothing else.
        let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        set_flags(read.as_raw_fd())?;
        set_flags(write.as_raw_fd())?;
        PIPE_WRITE.store(write.as_raw_fd(), Ordering::SeqCst);

        let blocked = tty_signals();
        // SAFETY: sigset_t is plain data; pthread_sigmask fills it.
        let mut old_mask: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: both sets are valid; this thread is the one that runs the loop.
        let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &blocked, &mut old_mask) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        let mut sup = Self {
            read,
            _write: write,
            old_actions: Vec::new(),
            old_mask,
            tty: None,
            subreaper,
            cgroup_procs: None,
            pressure: None,
        };
        for sig in CAUGHT {
            // SAFETY: as above.
            let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: a query only (no new action); `current` is valid to write.
            cvt(unsafe { libc::sigaction(sig, std::ptr::null(), &mut current) })?;
            // A termination signal headroom was started with ignored (`nohup`, a background
            // job of a non-interactive shell) stays ignored, so the command inherits that as
            // it would without headroom; a handler would be reset to the default at exec.
            if sig != libc::SIGCHLD && current.sa_sigaction == libc::SIG_IGN {
                continue;
            }
            // SAFETY: sigaction is plain data; every field is set below or zero is valid.
            let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
            sa.sa_sigaction = on_signal as extern "C" fn(c_int) as libc::sighandler_t;
            sa.sa_flags = libc::SA_RESTART;
            // SAFETY: sa.sa_mask is a valid sigset_t.
            unsafe { libc::sigemptyset(&mut sa.sa_mask) };
            // SAFETY: as above.
            let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
            // SAFETY: sig is a catchable signal; both structs are valid.
            cvt(unsafe { libc::sigaction(sig, &sa, &mut old) })?;
            sup.old_actions.push((sig, old));
        }
        sup.tty = Tty::open();
        Ok(sup)
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
    pub fn wake_on_pressure(&mut self, source: crate::platform::pressure::Pressure) {
        self.pressure = Some(source);
    }

    /// Whether the pressure source's level is above normal now (`Pressure::is_high`).
    pub fn pressure_high(&self) -> bool {
        self.pressure.as_ref().is_some_and(|p| p.is_high())
    }

    /// Start `argv` with stdio inherited, in a new process group led by the command, handed
    /// the terminal when headroom's group owns it. Returns the command's pid.
    pub fn spawn(&mut self, argv: &[OsString]) -> Result<i32, SpawnError> {
        let Some((prog, args)) = argv.split_first() else {
            return Err(SpawnError::Other(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no command given",
            )));
        };
        let path = resolve(prog)?;
        let mut cmd = Command::new(&path);
        // The program sees the name it was given, not the path it was found at.
        cmd.arg0(prog).args(args).process_group(0);
        let tty_fd = self
            .tty
            .as_ref()
            .filter(|t| t.ours())
            .map(|t| t.fd.as_raw_fd());
        // The mask headroom was started with: SIGTTOU and SIGTTIN are blocked in headroom
        // for the run, and a blocked mask survives exec, so the command gets the original.
        let original = self.old_mask;
        let cgroup_fd = self.cgroup_procs.as_ref().map(|f| f.as_raw_fd());
        // A failure to join the cgroup is told apart from a failure to exec through this
        // pipe: the child writes its errno here before giving up (close-on-exec both ends).
        let marker = match cgroup_fd {
            Some(_) => Some(marker_pipe().map_err(SpawnError::Other)?),
            None => None,
        };
        let marker_w = marker.as_ref().map(|(_, w)| w.as_raw_fd());
        // SAFETY: the closure runs in the child between fork and exec and calls only
        // async-signal-safe functions (write, sigprocmask, tcsetpgrp, getpid) on plain data;
        // `tty_signals` only fills a sigset_t on the stack.
        unsafe {
            cmd.pre_exec(move || {
                if let (Some(fd), Some(w)) = (cgroup_fd, marker_w) {
                    if libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                        let e = io::Error::last_os_error();
                        let code = e.raw_os_error().unwrap_or(libc::EIO).clamp(1, 255) as u8;
                        libc::write(w, (&code as *const u8).cast(), 1);
                        return Err(e);
                    }
                }
                if let Some(fd) = tty_fd {
                    // Block SIGTTOU (whatever std did to the mask) so that a member of a
                    // background group may take the terminal. The child already leads its own
                    // group (process_group(0) ran first); it takes the terminal before exec so
                    // the program never starts in the background. A failure is not fatal: the
                    // parent tries too.
                    let block = tty_signals();
                    libc::sigprocmask(libc::SIG_BLOCK, &block, std::ptr::null_mut());
                    libc::tcsetpgrp(fd, libc::getpid());
                }
                libc::sigprocmask(libc::SIG_SETMASK, &original, std::ptr::null_mut());
                Ok(())
            })
        };
        let spawned = cmd.spawn();
        if let (Err(_), Some((r, _))) = (&spawned, &marker) {
            let mut code = 0u8;
            // SAFETY: one writable byte; the read end is non-blocking.
            if unsafe { libc::read(r.as_raw_fd(), (&mut code as *mut u8).cast(), 1) } == 1 {
                return Err(SpawnError::Cgroup(io::Error::from_raw_os_error(
                    c_int::from(code),
                )));
            }
        }
        let child = spawned.map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => SpawnError::NotFound(e),
            io::ErrorKind::PermissionDenied => SpawnError::NotExecutable(e),
            _ if e.raw_os_error() == Some(libc::ENOEXEC) => SpawnError::NotExecutable(e),
            _ => SpawnError::Other(e),
        })?;
        let pid = child.id() as libc::pid_t;
        // Dropping the handle neither kills nor waits: `reap` collects the status.
        drop(child);
        // The same from this side, so neither order of events leaves a window (as shells
        // do). EACCES after the child's exec is expected and harmless.
        // SAFETY: setpgid on our own child, into a group it leads.
        unsafe { libc::setpgid(pid, pid) };
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
        let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as c_int;
        let pressure = self.pressure.as_ref().and_then(|p| p.poll_spec());
        let mut pfds = [
            libc::pollfd {
                fd: self.read.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: pressure.map_or(-1, |(fd, _)| fd),
                events: pressure.map_or(0, |(_, ev)| ev),
                revents: 0,
            },
        ];
        let n = if pressure.is_some() { 2 } else { 1 };
        // SAFETY: `n` valid pollfds. EINTR just ends the wait early; the byte the handler
        // wrote is read below or on the next call.
        unsafe { libc::poll(pfds.as_mut_ptr(), n, ms) };
        let mut out = Vec::new();
        if let (Some(p), Some((_, ev))) = (self.pressure.as_mut(), pressure) {
            let r = pfds[1].revents;
            if r & ev != 0 {
                p.drain();
                out.push(Wake::Pressure);
            } else if r & (libc::POLLERR | libc::POLLHUP | libc::POLLNVAL) != 0 {
                self.pressure = None;
            }
        }
        let mut buf = [0u8; 64];
        loop {
            // SAFETY: buf is writable for its length; the descriptor is non-blocking.
            let n =
                unsafe { libc::read(self.read.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                break;
            }
            for &b in &buf[..n as usize] {
                let wake = match c_int::from(b) {
                    libc::SIGINT => Wake::Signal(Signal::Int),
                    libc::SIGTERM => Wake::Signal(Signal::Term),
                    libc::SIGHUP => Wake::Signal(Signal::Hup),
                    _ => Wake::Child,
                };
                if !(wake == Wake::Child && out.last() == Some(&Wake::Child)) {
                    out.push(wake);
                }
            }
        }
        out
    }

    /// Collect every child that exited or stopped (the command, and on Linux any orphan of
    /// the tree reparented here), without blocking.
    pub fn reap(&self) -> Vec<(i32, ChildEvent)> {
        let mut out = Vec::new();
        loop {
            let mut status: c_int = 0;
            // SAFETY: status is a valid out-pointer; WNOHANG never blocks.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::WUNTRACED) };
            if pid <= 0 {
                return out;
            }
            let ev = if libc::WIFEXITED(status) {
                ChildEvent::Exited(libc::WEXITSTATUS(status))
            } else if libc::WIFSIGNALED(status) {
                ChildEvent::Signaled(libc::WTERMSIG(status))
            } else if libc::WIFSTOPPED(status) {
                ChildEvent::Stopped(libc::WSTOPSIG(status))
            } else {
                continue;
            };
            out.push((pid, ev));
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
        if let Some(t) = self.tty.as_mut().filter(|t| t.handed) {
            t.set(t.own);
            t.handed = false;
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        self.take_terminal();
        PIPE_WRITE.store(-1, Ordering::SeqCst);
        for (sig, old) in &self.old_actions {
            // SAFETY: restoring the action saved by `install` for the same signal.
            unsafe { libc::sigaction(*sig, old, std::ptr::null_mut()) };
        }
        // SAFETY: restoring the mask saved by `install`, on the same thread.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut()) };
    }
}
