//! The unchanged check (the module doc of `slots.rs` says why): whether a kept process can
//! be served its last full read without reading `status` again.

use std::fs::File;
use std::os::fd::OwnedFd;

use super::pidfd_info;
use crate::core::snapshot::ProcessRecord;

/// What an unchanged process is known by between full reads.
#[derive(Debug)]
pub(super) struct UnchangedCheck {
    pub(super) task: File,
    /// Multi-threaded processes' `statm` (whether the main thread exited).
    pub(super) statm: Option<File>,
    pub(super) record: ProcessRecord,
    /// The step (`KeptStatus::tick`) just before `record` was last read in full or
    /// confirmed with `PIDFD_GET_INFO` (`KeptStatus::unchanged`'s parent rule).
    pub(super) verified_at: u64,
}

impl UnchangedCheck {
    /// The descriptors it holds.
    pub(super) fn fds(&self) -> usize {
        1 + usize::from(self.statm.is_some())
    }
}

/// Why a kept process is read in full again rather than served unchanged: any of the
/// values slot counting uses differs from the last full read.
/// `leader_exited` is `statm`'s answer, read for multi-threaded processes only.
pub(super) fn still_unchanged(
    record: &ProcessRecord,
    pid: i32,
    info: pidfd_info::PidfdInfo,
    threads: Option<u32>,
    exited: bool,
    leader_exited: Option<bool>,
) -> bool {
    let leader = record.threads == Some(1) || leader_exited == Some(record.is_zombie());
    info.pid == pid
        && info.ruid == record.uid
        && info.ppid == record.ppid
        && threads.is_some()
        && threads == record.threads
        && (!exited || record.is_zombie())
        && leader
}

/// A process that was a single-threaded zombie at its last full read and whose pidfd has
/// polled exited since is dead: no thread can start in it, so its thread count is still that
/// read's and its `task` link count need not be asked (one `fstat` fewer a zombie in a
/// table round, and a leak of thousands of zombies is the table those rounds read most).
/// Its parent can still change (it is reparented when the parent dies), and
/// `PIDFD_GET_INFO` is still asked for that, and fails once it is reaped.
pub(super) fn dead(record: &ProcessRecord, exited: bool) -> bool {
    exited && record.is_zombie() && record.threads == Some(1)
}

/// Whether a dead zombie (`dead`) is served with no system call of its own: its pidfd has
/// not hung up (it is not reaped, so its pid still names it), and its parent as last read
/// is a kept process alive at this snapshot's `begin` by its pidfd (polled, or not fired in
/// the exit set), opened before the zombie's parent was last read or confirmed. A zombie's real
/// uid and thread count cannot change, and its parent changes only when it is reparented,
/// which happens when that parent's last thread exits: a parent alive at `begin` is still
/// its parent at `begin`, the instant the rest of the snapshot's facts are from. So the
/// `PIDFD_GET_INFO` of each of a leak's thousands of zombies is not asked, and a table round
/// at 6,000 zombies costs what one at a few hundred processes does. Either condition missing
/// (reaped, parent exited or not kept): the ioctl, as before.
pub(super) fn dead_and_still_parented(
    exited: bool,
    reaped: bool,
    parent_alive: bool,
    record: &ProcessRecord,
) -> bool {
    dead(record, exited) && !reaped && parent_alive
}

/// The unchanged check by system calls: `PIDFD_GET_INFO`, and the `task` link count (and
/// `statm`, multi-threaded) unless the process is `dead`.
pub(super) fn asked_unchanged(fd: &OwnedFd, c: &UnchangedCheck, pid: i32, exited: bool) -> bool {
    match pidfd_info::info(fd) {
        Ok(info) => {
            let leader = c.statm.as_ref().and_then(pidfd_info::leader_exited);
            let threads = if dead(&c.record, exited) {
                c.record.threads
            } else {
                pidfd_info::threads(&c.task)
            };
            still_unchanged(&c.record, pid, info, threads, exited, leader)
        }
        // Reaped (ESRCH): read afresh, as any kept descriptor that reads ESRCH.
        Err(_) => false,
    }
}
