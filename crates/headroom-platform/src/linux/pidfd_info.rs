//! What the kernel says about one process without generating a `/proc` text file, for the
//! slot round's check that a process it read before is unchanged (`slots.rs`):
//!
//! - a pidfd (`pidfd_open`, Linux 5.3) and its `PIDFD_GET_INFO` ioctl (Linux 6.13): the
//!   real uid and the parent, exact at the call, ESRCH once the process was reaped (the
//!   pidfd names that process, never a later one with the same pid); `poll` on it reports
//!   `POLLIN` once the whole process has exited (a zombie) and `POLLHUP` once it was reaped;
//! - `statm` of a multi-threaded process: all zeros once its main thread has exited (the
//!   leader's memory is released before it becomes a zombie: `status` reads `Z` from
//!   then on, with the same thread count, while the other threads run and the pidfd stays
//!   quiet), its sizes while the main thread has memory (not a zombie);
//! - `fstat` on an open `/proc/PID/task` directory: its link count is the thread count
//!   plus 2 (`proc_task_getattr` adds `get_nr_threads`, the value `status` prints as
//!   `Threads:`).
//!
//! Measured on this 2-core VM under load (CPU time, 1,400 processes): `pread` of a kept
//! `status` 17.7 µs, of `stat` 6.6 µs, of `statm` 1.6–2.5 µs; the ioctl 1.4 µs, the `fstat` 1.1 µs, `poll` 0.1 µs
//! per descriptor.

// `unsafe` here: the PIDFD_GET_INFO ioctl and a poll over kept libc pollfds.
#![allow(unsafe_code)]

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// `struct pidfd_info` up to `exit_code` (`PIDFD_INFO_SIZE_VER0`, 64 bytes): the kernel
/// copies the first `_IOC_SIZE` bytes of its own, larger struct.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
struct RawInfo {
    mask: u64,
    cgroupid: u64,
    pid: u32,
    tgid: u32,
    ppid: u32,
    ruid: u32,
    rgid: u32,
    euid: u32,
    egid: u32,
    suid: u32,
    sgid: u32,
    fsuid: u32,
    fsgid: u32,
    exit_code: i32,
}

/// `PIDFD_INFO_PID | PIDFD_INFO_CREDS`.
const INFO_MASK: u64 = 0x1 | 0x2;
/// `_IOWR(PIDFS_IOCTL_MAGIC 0xFF, 11, struct pidfd_info)` at the 64-byte size.
const PIDFD_GET_INFO: u64 =
    (3 << 30) | ((std::mem::size_of::<RawInfo>() as u64) << 16) | (0xFF << 8) | 11;

/// The parts of `PIDFD_GET_INFO` the slot round compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PidfdInfo {
    /// The pid in this process's namespace (compared with the `/proc` entry's).
    pub pid: i32,
    pub ppid: i32,
    pub ruid: u32,
}

/// A pidfd for `pid`; `Err` when it is gone (ESRCH) or pidfds are unavailable.
pub(super) fn open(pid: i32) -> io::Result<OwnedFd> {
    // No pid is 0 or below (pidfd_open refused it too).
    let pid = rustix::process::Pid::from_raw(pid.max(0)).ok_or(rustix::io::Errno::INVAL)?;
    Ok(rustix::process::pidfd_open(
        pid,
        rustix::process::PidfdFlags::empty(),
    )?)
}

/// Whether `pid`, a read of whose `/proc` files said ENOENT, is really gone: procfs also
/// says ENOENT when it cannot allocate an inode under memory pressure. One `pidfd_open`,
/// only on that path (a process that exited between the listing and the read): ESRCH is
/// gone; a descriptor means a process holds the pid (the same or a new one, either is there
/// to be counted). Any other failure (no pidfds before Linux 5.3, no descriptor left)
/// cannot tell and is taken as gone, as before.
pub(super) fn really_gone(pid: i32) -> bool {
    open(pid).is_err()
}

/// `PIDFD_GET_INFO` on `fd`: ESRCH once reaped; ENOTTY/EINVAL before Linux 6.13.
pub(super) fn info(fd: &OwnedFd) -> io::Result<PidfdInfo> {
    let mut raw = RawInfo {
        mask: INFO_MASK,
        ..RawInfo::default()
    };
    // rustix's ioctl is as unsafe as libc's: the request's layout is the caller's to get
    // right.
    // SAFETY: `raw` is a valid, writable struct of the size the request number encodes.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), PIDFD_GET_INFO as _, &mut raw) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(PidfdInfo {
        pid: raw.pid as i32,
        ppid: raw.ppid as i32,
        ruid: raw.ruid,
    })
}

/// `/proc/PID/task`, opened as a directory (its link count is read, never its entries).
pub(super) fn open_task_dir(dir: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY)
        .open(dir.join("task"))
}

/// The thread count of the process `task` (its `/proc/PID/task`) was opened for: link
/// count minus 2. `None` when the count is below 3 (the process was reaped: no threads).
pub(super) fn threads(task: &File) -> Option<u32> {
    // `fstat`, not `File::metadata` (a `statx` asking for more than the link count); on
    // 64-bit Linux rustix makes the `fstat` system call itself.
    let st = rustix::fs::fstat(task).ok()?;
    #[allow(clippy::useless_conversion)]
    let nlink = u64::from(st.st_nlink);
    (nlink >= 3)
        .then(|| u32::try_from(nlink - 2).ok())
        .flatten()
}

/// Which of `fds` report that their process has exited (`POLLIN`: a zombie, or `POLLHUP`:
/// reaped), in one `poll` that does not wait. `false` when the `poll` failed (EINTR,
/// ENOMEM): no answer, and nothing may be served unchanged.
pub(super) fn exited(fds: &mut [libc::pollfd]) -> bool {
    if fds.is_empty() {
        return true;
    }
    // SAFETY: `fds` is a valid array of pollfds for the duration of the call.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
    n >= 0
}

/// `/proc/PID/statm`, kept open for [`leader_exited`].
pub(super) fn open_statm(dir: &Path) -> io::Result<File> {
    File::open(dir.join("statm"))
}

/// Whether the main thread of the process `statm` was opened for has exited: its `statm`
/// reads all zeros (no memory) once it has. `None` when it cannot be read (reaped).
pub(super) fn leader_exited(statm: &File) -> Option<bool> {
    use std::os::unix::fs::FileExt;
    let mut buf = [0u8; 160];
    let n = statm.read_at(&mut buf, 0).ok()?;
    let text = buf.get(..n)?;
    // The first field is the size in pages: never 0 while the main thread has memory.
    (n > 0).then(|| text.starts_with(b"0 "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// For real, where the kernel has `PIDFD_GET_INFO` (6.13): this process's uid and
    /// parent; the thread count of a single-threaded child matches its `status`; a reaped
    /// child's pidfd answers ESRCH and polls readable.
    #[test]
    #[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
    fn pidfd_info_and_thread_count_of_real_processes() {
        let me = open(std::process::id() as i32).unwrap();
        let i = info(&me).unwrap_or_else(|e| panic!("no PIDFD_GET_INFO here: {e}"));
        assert_eq!(i.pid, std::process::id() as i32);
        let ids = (
            rustix::process::getuid().as_raw(),
            rustix::process::Pid::as_raw(rustix::process::getppid()),
        );
        assert_eq!((i.ruid, i.ppid), ids);
        let mut child = std::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let fd = open(pid).unwrap();
        let task = open_task_dir(Path::new(&format!("/proc/{pid}"))).unwrap();
        assert_eq!(threads(&task), Some(1));
        assert_eq!(info(&fd).unwrap().ppid, std::process::id() as i32);
        let mut fds = vec![libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        assert!(exited(&mut fds));
        assert_eq!(fds[0].revents, 0, "alive: not readable");
        let statm = open_statm(Path::new(&format!("/proc/{pid}"))).unwrap();
        assert_eq!(leader_exited(&statm), Some(false));
        drop(child.stdin.take());
        child.wait().unwrap();
        assert_eq!(info(&fd).unwrap_err().raw_os_error(), Some(libc::ESRCH));
        assert_eq!(threads(&task), None);
        assert_eq!(leader_exited(&statm), None, "reaped");
        assert!(exited(&mut fds));
        assert_ne!(fds[0].revents & libc::POLLIN, 0);
        // Reaped, it hangs up too: `slots.rs` serves a zombie without asking only while it
        // does not.
        assert_ne!(fds[0].revents & libc::POLLHUP, 0, "reaped: hung up");
    }
}
