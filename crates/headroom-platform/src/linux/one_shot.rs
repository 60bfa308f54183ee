//! The slot reading of a command that reads the table once (`probe`, `limits`, `reap`'s
//! verification, `doctor`), on Linux 6.13 and later: each process is asked the kernel once,
//! without generating its `status` and without keeping anything for a next round (that
//! cache is `watch`'s: `slots.rs`).
//!
//! Slot counting needs each process's real uid, parent, thread count and whether it is a
//! zombie; only `status` has the real uid among the text files, and generating it is most of
//! what a `status` reader costs (1.4× a reader of `stat`, which has no uid, on a 4,070-process
//! table). Per process instead:
//!
//! 1. `pidfd_open(pid)`: a descriptor naming the process that holds the pid now;
//! 2. `fstatat` of `/proc/PID/task`: its link count is the thread count plus 2;
//! 3. for a multi-threaded process, `statm` (all zeros once its main thread has exited: a
//!    zombie leader, which the pidfd does not report while other threads run);
//! 4. `PIDFD_GET_INFO`: its real uid and parent, and ESRCH once it was reaped. A process
//!    not reaped at the ioctl held its pid since the `pidfd_open`, so the files of steps 2
//!    and 3, looked up by that pid in between, were its own;
//! 5. one `poll` over a batch of single-threaded processes' pidfds: `POLLIN` a zombie,
//!    `POLLHUP` reaped since (skipped, as a pid that vanished mid-scan).
//!
//! Measured on the 2-core VM at load 28 (CPU time of the whole scan, 4,064 processes, 3,300
//! of them zombies, C readers): `stat` 64 ms, `status` 95 ms, steps 1, 2 and 4 51 ms.
//! Names and live states are not read: slot counting uses neither, except the names of
//! zombies' parents, which the snapshot then reads from their `status` (`live.rs`); a live
//! process's state is `unknown` (as in a macOS slot reading). Without the ioctl, or for a
//! `/proc` of another pid namespace, the caller reads `status` instead.

use std::ffi::CStr;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

use super::pidfd_info::{self, PidfdInfo};
use crate::core::snapshot::{ProcState, ProcessRecord};

/// Single-threaded processes whose pidfds wait for one `poll`: few enough to stay far
/// below the usual soft RLIMIT_NOFILE of 1,024.
const BATCH: usize = 256;

/// What the scan made of one pid.
#[derive(Debug)]
pub(super) enum Asked {
    /// Waiting in the batch; its record comes out of `flush`.
    Pending,
    /// Read now (a multi-threaded process).
    Read(ProcessRecord),
    /// Gone (no such process, or reaped during the questions).
    Gone,
    /// Read this one from its `status` (no descriptor left, or an odd answer).
    Status,
    /// The kernel cannot answer (no `PIDFD_GET_INFO`, another pid namespace's `/proc`):
    /// read this and every later pid from `status`.
    Unsupported,
}

/// One pass over the table.
#[derive(Debug)]
pub(super) struct Scan {
    /// `/proc`, for lookups relative to it (no walk from `/` per process).
    proc: OwnedFd,
    pending: Vec<(i32, OwnedFd, PidfdInfo)>,
    polls: Vec<libc::pollfd>,
}

impl Scan {
    /// `None` when `proc` cannot be opened (the caller reads `status` by path).
    pub(super) fn new(proc: &Path) -> Option<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let dir = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(proc)
            .ok()?;
        Some(Self {
            proc: OwnedFd::from(dir),
            pending: Vec::with_capacity(BATCH),
            polls: Vec::with_capacity(BATCH),
        })
    }

    /// Ask the kernel about `pid` (steps 1–4 of the module's list).
    pub(super) fn ask(&mut self, pid: i32) -> Asked {
        let fd = match pidfd_info::open(pid) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Asked::Gone,
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => return Asked::Unsupported,
            // EMFILE, ENFILE, ENOMEM: this one by path.
            Err(_) => return Asked::Status,
        };
        let threads = self.threads(pid);
        let leader_exited = match threads {
            Some(n) if n > 1 => self.leader_exited(pid),
            _ => None,
        };
        let info = match pidfd_info::info(&fd) {
            Ok(i) => i,
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return Asked::Gone,
            Err(_) => return Asked::Unsupported,
        };
        if info.pid != pid {
            // This `/proc` numbers another pid namespace than this process's pidfds.
            return Asked::Unsupported;
        }
        match (threads, leader_exited) {
            (Some(1), _) => {
                self.pending.push((pid, fd, info));
                Asked::Pending
            }
            (Some(n), Some(exited)) if n > 1 => Asked::Read(record(
                info,
                n,
                if exited {
                    ProcState::Zombie
                } else {
                    ProcState::Unknown
                },
            )),
            // Not reaped at the ioctl, yet no thread count or `statm`: not what a live
            // process shows; its `status` says what it is.
            _ => Asked::Status,
        }
    }

    /// Whether the batch should be polled now.
    pub(super) fn full(&self) -> bool {
        self.pending.len() >= BATCH
    }

    /// Poll the batch (step 5) and add its records to `out`. A `poll` that fails leaves
    /// their state unknown to it: those pids are returned, to be read from `status`.
    pub(super) fn flush(&mut self, out: &mut Vec<ProcessRecord>) -> Vec<i32> {
        self.polls.clear();
        self.polls
            .extend(self.pending.iter().map(|(_, fd, _)| libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            }));
        let answered = pidfd_info::exited(&mut self.polls);
        let mut unread = Vec::new();
        for ((pid, _fd, info), p) in self.pending.drain(..).zip(&self.polls) {
            if !answered {
                unread.push(pid);
            } else if p.revents & libc::POLLHUP != 0 {
                // Reaped since the ioctl: gone, as a pid that vanished mid-scan.
            } else if p.revents & libc::POLLIN != 0 {
                out.push(record(info, 1, ProcState::Zombie));
            } else {
                out.push(record(info, 1, ProcState::Unknown));
            }
        }
        unread
    }

    /// Step 2: the thread count from `/proc/PID/task`'s link count.
    fn threads(&self, pid: i32) -> Option<u32> {
        let mut buf = [0u8; 32];
        let path = rel_path(pid, b"task", &mut buf)?;
        let st = rustix::fs::statat(&self.proc, path, rustix::fs::AtFlags::empty()).ok()?;
        #[allow(clippy::useless_conversion)]
        let nlink = u64::from(st.st_nlink);
        (nlink >= 3)
            .then(|| u32::try_from(nlink - 2).ok())
            .flatten()
    }

    /// Step 3: whether the main thread has exited (`statm` reads all zeros).
    fn leader_exited(&self, pid: i32) -> Option<bool> {
        let mut buf = [0u8; 32];
        let path = rel_path(pid, b"statm", &mut buf)?;
        let statm = rustix::fs::openat(
            &self.proc,
            path,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .ok()?;
        let statm = File::from(statm);
        pidfd_info::leader_exited(&statm)
    }
}

/// `PID/LEAF` NUL-terminated in `buf`, without an allocation.
fn rel_path<'b>(pid: i32, leaf: &[u8], buf: &'b mut [u8; 32]) -> Option<&'b CStr> {
    use std::io::Write as _;
    let mut w = io::Cursor::new(&mut buf[..]);
    write!(w, "{pid}/").ok()?;
    w.write_all(leaf).ok()?;
    w.write_all(b"\0").ok()?;
    let len = w.position() as usize;
    CStr::from_bytes_with_nul(&buf[..len]).ok()
}

fn record(info: PidfdInfo, threads: u32, state: ProcState) -> ProcessRecord {
    ProcessRecord {
        pid: info.pid,
        ppid: info.ppid,
        uid: info.ruid,
        state,
        start_time: None,
        // Not read (see the module's comment); zombies' parents are read in full after.
        name: String::new(),
        exe: None,
        pgid: None,
        sid: None,
        tpgid: None,
        threads: Some(threads),
        cpu_ns: None,
        footprint_bytes: None,
        argv: None,
        cwd: None,
    }
}

#[cfg(test)]
mod tests;
