//! The libproc and sysctl declarations `live.rs` calls with, declared here rather than taken
//! from libc so that they are compiled on every OS and `layout.rs` can hold each one against
//! the xnu headers in CI (libc's own are compiled only for Apple targets; `live.rs` asserts
//! that both agree in size there).
//!
//! Sources: xnu `bsd/sys/proc_info.h` (struct proc_taskinfo, PROC_PIDTASKINFO,
//! PROC_PIDPATHINFO_MAXSIZE), `bsd/sys/resource.h` (struct rusage_info_v2, RUSAGE_INFO_V2),
//! `bsd/sys/sysctl.h` (the MIB names), `bsd/sys/param.h` (MAXCOMLEN).

/// `struct proc_taskinfo` (proc_info.h), the answer to `PROC_PIDTASKINFO`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ProcTaskinfo {
    pub pti_virtual_size: u64,
    pub pti_resident_size: u64,
    /// Mach absolute-time ticks, not nanoseconds (reference notes §1b).
    pub pti_total_user: u64,
    pub pti_total_system: u64,
    pub pti_threads_user: u64,
    pub pti_threads_system: u64,
    pub pti_policy: i32,
    pub pti_faults: i32,
    pub pti_pageins: i32,
    pub pti_cow_faults: i32,
    pub pti_messages_sent: i32,
    pub pti_messages_received: i32,
    pub pti_syscalls_mach: i32,
    pub pti_syscalls_unix: i32,
    pub pti_csw: i32,
    pub pti_threadnum: i32,
    pub pti_numrunning: i32,
    pub pti_priority: i32,
}

/// `struct rusage_info_v2` (resource.h), the answer to `proc_pid_rusage(RUSAGE_INFO_V2)`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct RusageInfoV2 {
    pub ri_uuid: [u8; 16],
    pub ri_user_time: u64,
    pub ri_system_time: u64,
    pub ri_pkg_idle_wkups: u64,
    pub ri_interrupt_wkups: u64,
    pub ri_pageins: u64,
    pub ri_wired_size: u64,
    pub ri_resident_size: u64,
    /// What Activity Monitor's Memory column shows (reference notes §1b).
    pub ri_phys_footprint: u64,
    pub ri_proc_start_abstime: u64,
    pub ri_proc_exit_abstime: u64,
    pub ri_child_user_time: u64,
    pub ri_child_system_time: u64,
    pub ri_child_pkg_idle_wkups: u64,
    pub ri_child_interrupt_wkups: u64,
    pub ri_child_pageins: u64,
    pub ri_child_elapsed_abstime: u64,
    pub ri_diskio_bytesread: u64,
    pub ri_diskio_byteswritten: u64,
}

/// proc_info.h
pub(crate) const PROC_PIDTASKINFO: i32 = 4;
pub(crate) const PROC_PIDPATHINFO_MAXSIZE: usize = 4096;
/// resource.h
pub(crate) const RUSAGE_INFO_V2: i32 = 2;
/// sysctl.h: the top-level and `kern.` MIB names headroom uses.
pub(crate) const CTL_KERN: i32 = 1;
pub(crate) const KERN_ARGMAX: i32 = 8;
pub(crate) const KERN_PROC: i32 = 14;
pub(crate) const KERN_PROC_ALL: i32 = 0;
pub(crate) const KERN_PROC_PID: i32 = 1;
pub(crate) const KERN_PROCARGS2: i32 = 49;
/// `proc_name` writes at most `2 * MAXCOMLEN` bytes (pbi_name) plus its NUL.
pub(crate) const PROC_NAME_BUF: usize = 2 * super::kinfo::MAXCOMLEN + 1;

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn sizes_and_the_offsets_read() {
        assert_eq!(size_of::<ProcTaskinfo>(), 96);
        assert_eq!(offset_of!(ProcTaskinfo, pti_total_user), 16);
        assert_eq!(offset_of!(ProcTaskinfo, pti_threadnum), 84);
        assert_eq!(offset_of!(ProcTaskinfo, pti_numrunning), 88);
        assert_eq!(size_of::<RusageInfoV2>(), 160);
        // Pinned by a public peer too (reference notes §1b): footprint at 72, RSS at 64.
        assert_eq!(offset_of!(RusageInfoV2, ri_resident_size), 64);
        assert_eq!(offset_of!(RusageInfoV2, ri_phys_footprint), 72);
    }
}
