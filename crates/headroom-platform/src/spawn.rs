//! Starting `run`'s command (Unix): looked up as a shell would, in a process group of its
//! own, handed the terminal before it execs, with the signal mask headroom was started with,
//! and optionally inside a cgroup it joins between fork and exec.

// `unsafe` here: pre_exec: std has no safe way to run code between fork and exec.
#![allow(unsafe_code)]

use std::ffi::{OsString, c_int};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

use super::fd;
use super::path_lookup::{self, LookupError};
use super::tty::tty_signals;

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

/// What the child does between fork and exec, besides leading its own process group.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setup {
    /// The terminal to take for the new group (headroom's group owns it now).
    pub(crate) tty_fd: Option<RawFd>,
    /// The mask to exec with.
    pub(crate) mask: libc::sigset_t,
    /// `cgroup.procs` of the cgroup to join.
    pub(crate) cgroup_fd: Option<RawFd>,
}

/// Start `argv` with stdio inherited, in a new process group led by the command, set up as
/// `setup` says. Returns the command's pid; the child is not waited for here.
pub(crate) fn spawn_in_own_group(argv: &[OsString], setup: Setup) -> Result<i32, SpawnError> {
    let Some((prog, args)) = argv.split_first() else {
        return Err(SpawnError::Other(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no command given",
        )));
    };
    let path = path_lookup::resolve(prog).map_err(|e| match e {
        LookupError::NotFound(e) => SpawnError::NotFound(e),
        LookupError::NotExecutable(e) => SpawnError::NotExecutable(e),
    })?;
    let mut cmd = Command::new(&path);
    // The program sees the name it was given, not the path it was found at.
    cmd.arg0(prog).args(args).process_group(0);
    let Setup {
        tty_fd,
        mask: original,
        cgroup_fd,
    } = setup;
    // A failure to join the cgroup is told apart from a failure to exec through this
    // pipe: the child writes its errno here before giving up (close-on-exec both ends).
    let marker = match cgroup_fd {
        Some(_) => Some(fd::nonblocking_pipe().map_err(SpawnError::Other)?),
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
        let mut code = [0u8; 1];
        // The read end is non-blocking.
        if rustix::io::read(r, &mut code) == Ok(1) {
            return Err(SpawnError::Cgroup(io::Error::from_raw_os_error(
                c_int::from(code[0]),
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
    // Dropping the handle neither kills nor waits: the supervisor's `reap` collects the
    // status.
    drop(child);
    // The same from this side, so neither order of events leaves a window (as shells
    // do). EACCES after the child's exec is expected and harmless.
    // (Never `None`: that would name headroom itself.)
    if let Some(child_pid) = rustix::process::Pid::from_raw(pid.max(0)) {
        let _ = rustix::process::setpgid(Some(child_pid), Some(child_pid));
    }
    Ok(pid)
}
