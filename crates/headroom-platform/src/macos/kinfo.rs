//! `struct kinfo_proc` as `sysctl(KERN_PROC_ALL)` returns it on 64-bit macOS, declared here
//! because libc has none for Apple targets (compiled on every OS so the layout tests run on
//! Linux CI too).
//!
//! Layout source: xnu `bsd/sys/sysctl.h` (struct kinfo_proc, struct eproc, struct _pcred,
//! struct _ucred), `bsd/sys/proc.h` (struct extern_proc), `bsd/sys/vm.h` (the userland
//! `struct vmspace`), as summarised in `../shared/reference/macos-linux-apis-and-peers.md`
//! §1a. The reference notes warn that a public crate declares `e_flag` and `e_spare` as
//! `long`, giving 672 bytes; the header says `int32_t`, giving 648. For a KERN_PROC_ALL array
//! the stride must be exact, so every pointer is a `u64` and every field has its C width, and
//! the size and the offsets of every field headroom reads are asserted below, and
//! `layout.rs` holds them against the xnu headers in CI.

use crate::core::snapshot::ProcState;

/// `struct timeval` on LP64 Darwin: `long tv_sec; int tv_usec;` padded to 16 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Timeval {
    pub tv_sec: i64,
    pub tv_usec: i32,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Itimerval {
    pub it_interval: Timeval,
    pub it_value: Timeval,
}

/// `struct extern_proc` (proc.h). The leading union `p_un` is either two queue pointers or
/// `struct timeval __p_starttime`; both are 16 bytes, and for sysctl output it holds the
/// start time.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct ExternProc {
    pub p_starttime: Timeval,
    pub p_vmspace: u64,
    pub p_sigacts: u64,
    pub p_flag: i32,
    pub p_stat: i8,
    pub p_pid: i32,
    pub p_oppid: i32,
    pub p_dupfd: i32,
    pub user_stack: u64,
    pub exit_thread: u64,
    pub p_debugger: i32,
    pub sigwait: i32,
    pub p_estcpu: u32,
    pub p_cpticks: i32,
    pub p_pctcpu: u32,
    pub p_wchan: u64,
    pub p_wmesg: u64,
    pub p_swtime: u32,
    pub p_slptime: u32,
    pub p_realtimer: Itimerval,
    pub p_rtime: Timeval,
    pub p_uticks: u64,
    pub p_sticks: u64,
    pub p_iticks: u64,
    pub p_traceflag: i32,
    pub p_tracep: u64,
    pub p_siglist: i32,
    pub p_textvp: u64,
    pub p_holdcnt: i32,
    pub p_sigmask: u32,
    pub p_sigignore: u32,
    pub p_sigcatch: u32,
    pub p_priority: u8,
    pub p_usrpri: u8,
    pub p_nice: i8,
    /// `char p_comm[MAXCOMLEN + 1]`, MAXCOMLEN = 16.
    pub p_comm: [u8; 17],
    pub p_pgrp: u64,
    pub p_addr: u64,
    pub p_xstat: u16,
    pub p_acflag: u16,
    pub p_ru: u64,
}

/// `struct _pcred` (sysctl.h).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pcred {
    pub pc_lock: [u8; 72],
    pub pc_ucred: u64,
    pub p_ruid: u32,
    pub p_svuid: u32,
    pub p_rgid: u32,
    pub p_svgid: u32,
    pub p_refcnt: i32,
}

/// `struct _ucred` (sysctl.h), NGROUPS = 16.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ucred {
    pub cr_ref: i32,
    pub cr_uid: u32,
    pub cr_ngroups: i16,
    pub cr_groups: [u32; 16],
}

/// The userland `struct vmspace` placeholder (vm.h).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Vmspace {
    pub dummy: i32,
    pub dummy2: u64,
    pub dummy3: [i32; 5],
    pub dummy4: [u64; 3],
}

/// `struct eproc` (sysctl.h).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct Eproc {
    pub e_paddr: u64,
    pub e_sess: u64,
    pub e_pcred: Pcred,
    pub e_ucred: Ucred,
    pub e_vm: Vmspace,
    pub e_ppid: i32,
    pub e_pgid: i32,
    pub e_jobc: i16,
    pub e_tdev: i32,
    pub e_tpgid: i32,
    pub e_tsess: u64,
    pub e_wmesg: [u8; 8],
    pub e_xsize: i32,
    pub e_xrssize: i16,
    pub e_xccount: i16,
    pub e_xswrss: i16,
    pub e_flag: i32,
    pub e_login: [u8; 12],
    pub e_spare: [i32; 4],
}

#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub(crate) struct KinfoProc {
    pub kp_proc: ExternProc,
    pub kp_eproc: Eproc,
}

/// Size the kernel writes per entry on LP64.
pub(crate) const KINFO_PROC_SIZE: usize = 648;
const _: () = assert!(std::mem::size_of::<KinfoProc>() == KINFO_PROC_SIZE);

/// `p_stat` values (proc.h).
pub(crate) const SIDL: i8 = 1;
pub(crate) const SRUN: i8 = 2;
pub(crate) const SSLEEP: i8 = 3;
pub(crate) const SSTOP: i8 = 4;
pub(crate) const SZOMB: i8 = 5;

/// `p_flag` bit (proc.h) that sysctl sets for a process a debugger has attached to: xnu's
/// `fill_user64_externproc` copies `p_lflag & P_LTRACED` into it (kern_sysctl.c). A debugger
/// holds the process with Mach exceptions and `task_suspend`, so `p_stat` stays SRUN at a
/// breakpoint: the flag is the only sign.
pub(crate) const P_TRACED: i32 = 0x0000_0800;

/// `MAXCOMLEN` (param.h): `p_comm` keeps this many bytes of the name.
pub(crate) const MAXCOMLEN: usize = 16;

/// The state of a process from its `p_stat`, its `p_flag` and, where libproc could be read,
/// its `pti_numrunning`. xnu never sets SSLEEP: every live process arrives as SRUN, so SRUN
/// alone says nothing about running or sleeping, and without `pti_numrunning` (another
/// user's process, a slot-only read, a process that went away) the state is unknown. A
/// process with a debugger attached ([`P_TRACED`]) is `Traced` unless it is a zombie or
/// stopped (SSTOP says more: a stopped process cannot run whoever holds it).
pub(crate) fn state(p_stat: i8, p_flag: i32, numrunning: Option<i32>) -> ProcState {
    match (p_stat, numrunning) {
        (SZOMB, _) => ProcState::Zombie,
        (SSTOP, _) => ProcState::Stopped,
        _ if p_flag & P_TRACED != 0 => ProcState::Traced,
        (SIDL, _) => ProcState::Idle,
        (SRUN | SSLEEP, Some(n)) if n > 0 => ProcState::Running,
        (SRUN | SSLEEP, Some(_)) => ProcState::Sleeping,
        _ => ProcState::Unknown,
    }
}

/// The name patterns are matched against. `p_comm` is cut at MAXCOMLEN bytes, so a name
/// that fills it may be longer: then the longer of libproc's `proc_name` (up to 32 bytes,
/// the caller's own processes only) and the executable's file name (`proc_pidpath`, any
/// process) is used, as long as it starts with what `p_comm` holds (so a renamed process
/// keeps the name it gave itself).
pub(crate) fn full_name(comm: &str, proc_name: Option<&str>, exe: Option<&str>) -> String {
    if comm.len() < MAXCOMLEN {
        return comm.to_string();
    }
    let file = exe.and_then(|e| e.rsplit('/').next());
    [proc_name, file]
        .into_iter()
        .flatten()
        .filter(|n| n.len() > comm.len() && n.starts_with(comm))
        .max_by_key(|n| n.len())
        .unwrap_or(comm)
        .to_string()
}

/// The fields headroom takes from one entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KinfoFields {
    pub pid: i32,
    pub ppid: i32,
    pub pgid: i32,
    /// `e_tpgid`: the controlling terminal's foreground process group; xnu fills it only
    /// for a process with a controlling terminal (`P_CONTROLT`) and leaves it 0 otherwise
    /// (`fill_user64_eproc`, bsd/kern/kern_sysctl.c).
    pub tpgid: i32,
    /// Real uid (`e_pcred.p_ruid`), what the per-uid count charges.
    pub ruid: u32,
    pub stat: i8,
    /// `p_flag` (with [`P_TRACED`] as sysctl reports it).
    pub flag: i32,
    /// Microseconds since the epoch.
    pub start_us: u64,
    pub comm: String,
}

impl KinfoProc {
    /// An all-zero entry, as a buffer for the kernel to fill.
    pub(crate) fn zeroed() -> Self {
        // SAFETY: every field is an integer or an array of integers, for which the all-zero
        // bit pattern is a valid value.
        unsafe { std::mem::zeroed() }
    }

    pub(crate) fn fields(&self) -> KinfoFields {
        let p = &self.kp_proc;
        let e = &self.kp_eproc;
        let comm_len = p
            .p_comm
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(p.p_comm.len());
        let st = p.p_starttime;
        KinfoFields {
            pid: p.p_pid,
            ppid: e.e_ppid,
            pgid: e.e_pgid,
            tpgid: e.e_tpgid,
            ruid: e.e_pcred.p_ruid,
            stat: p.p_stat,
            flag: p.p_flag,
            start_us: (st.tv_sec.max(0) as u64) * 1_000_000 + st.tv_usec.max(0) as u64,
            comm: String::from_utf8_lossy(&p.p_comm[..comm_len]).into_owned(),
        }
    }
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn sizes_match_the_xnu_headers() {
        assert_eq!(size_of::<Timeval>(), 16);
        assert_eq!(size_of::<ExternProc>(), 296);
        assert_eq!(size_of::<Pcred>(), 104);
        assert_eq!(size_of::<Ucred>(), 76);
        assert_eq!(size_of::<Vmspace>(), 64);
        assert_eq!(size_of::<Eproc>(), 352);
        assert_eq!(size_of::<KinfoProc>(), 648);
        assert_eq!(std::mem::align_of::<KinfoProc>(), 8);
    }

    #[test]
    fn offsets_of_every_field_read() {
        assert_eq!(offset_of!(ExternProc, p_starttime), 0);
        assert_eq!(offset_of!(ExternProc, p_flag), 32);
        assert_eq!(offset_of!(ExternProc, p_stat), 36);
        assert_eq!(offset_of!(ExternProc, p_pid), 40);
        assert_eq!(offset_of!(ExternProc, p_comm), 243);
        assert_eq!(offset_of!(KinfoProc, kp_eproc), 296);
        assert_eq!(offset_of!(Eproc, e_pcred) + offset_of!(Pcred, p_ruid), 96);
        assert_eq!(offset_of!(Eproc, e_ucred) + offset_of!(Ucred, cr_uid), 124);
        assert_eq!(offset_of!(Eproc, e_ppid), 264);
        assert_eq!(offset_of!(Eproc, e_pgid), 268);
        assert_eq!(offset_of!(Eproc, e_tpgid), 280);
        assert_eq!(offset_of!(Eproc, e_flag), 316);
    }

    #[test]
    fn srun_is_running_or_sleeping_only_with_numrunning() {
        assert_eq!(state(SRUN, 0, Some(1)), ProcState::Running);
        assert_eq!(state(SRUN, 0, Some(0)), ProcState::Sleeping);
        assert_eq!(state(SSLEEP, 0, Some(0)), ProcState::Sleeping);
        // Another user's process: libproc refuses, the state is not guessed.
        assert_eq!(state(SRUN, 0, None), ProcState::Unknown);
        assert_eq!(state(SZOMB, 0, None), ProcState::Zombie);
        assert_eq!(state(SSTOP, 0, None), ProcState::Stopped);
        assert_eq!(state(SSTOP, 0, Some(1)), ProcState::Stopped);
        assert_eq!(state(SIDL, 0, None), ProcState::Idle);
        assert_eq!(state(9, 0, Some(1)), ProcState::Unknown);
    }

    /// Issue 25 item 13: an app at a debugger breakpoint is SRUN with P_TRACED set; it reads
    /// `Traced`, whatever libproc says. Controls: the same entry without the flag, and other
    /// `p_flag` bits, read as before; a traced zombie is a zombie, a traced SSTOP stopped.
    #[test]
    fn a_process_with_a_debugger_attached_is_traced() {
        let other_bits = 0x0000_0004 | 0x0000_4000; // P_LP64, P_EXEC-like bits
        assert_eq!(state(SRUN, P_TRACED, Some(0)), ProcState::Traced);
        assert_eq!(state(SRUN, P_TRACED | other_bits, None), ProcState::Traced);
        assert_eq!(state(SRUN, other_bits, Some(0)), ProcState::Sleeping);
        assert_eq!(state(SZOMB, P_TRACED, None), ProcState::Zombie);
        assert_eq!(state(SSTOP, P_TRACED, None), ProcState::Stopped);
        let mut k = KinfoProc::zeroed();
        k.kp_proc.p_stat = SRUN;
        k.kp_proc.p_flag = P_TRACED | other_bits;
        let f = k.fields();
        assert_eq!(state(f.stat, f.flag, Some(1)), ProcState::Traced);
    }

    #[test]
    fn names_cut_at_maxcomlen_are_completed() {
        let comm = "com.example.long"; // 16 bytes: p_comm is full
        assert_eq!(comm.len(), MAXCOMLEN);
        let exe = "/Applications/X.app/Contents/MacOS/com.example.longrunner-helper";
        assert_eq!(
            full_name(comm, None, Some(exe)),
            "com.example.longrunner-helper"
        );
        assert_eq!(
            full_name(comm, Some("com.example.longrunner"), None),
            "com.example.longrunner"
        );
        // The longer of the two wins.
        assert_eq!(
            full_name(comm, Some("com.example.longrunner"), Some(exe)),
            "com.example.longrunner-helper"
        );
        // A short name is complete; a path that does not extend p_comm is not used.
        assert_eq!(full_name("sh", None, Some("/bin/bash")), "sh");
        assert_eq!(full_name(comm, None, Some("/usr/bin/other")), comm);
        assert_eq!(full_name(comm, None, None), comm);
    }

    #[test]
    fn fields_from_an_entry() {
        let mut k = KinfoProc::zeroed();
        k.kp_proc.p_pid = 87537;
        k.kp_proc.p_stat = SZOMB;
        k.kp_proc.p_starttime = Timeval {
            tv_sec: 1_787_995_393,
            tv_usec: 499_123,
        };
        k.kp_proc.p_comm[..6].copy_from_slice(b"agency");
        k.kp_eproc.e_ppid = 87594;
        k.kp_eproc.e_pgid = 87537;
        k.kp_eproc.e_tpgid = 87500;
        k.kp_eproc.e_pcred.p_ruid = 501;
        k.kp_eproc.e_ucred.cr_uid = 0;
        let f = k.fields();
        assert_eq!(
            f,
            KinfoFields {
                pid: 87537,
                ppid: 87594,
                pgid: 87537,
                tpgid: 87500,
                ruid: 501,
                stat: SZOMB,
                flag: 0,
                start_us: 1_787_995_393_499_123,
                comm: "agency".into(),
            }
        );
        // A full 16-character name has no NUL inside the array's first 16 bytes.
        k.kp_proc.p_comm = *b"abcdefghijklmnop\0";
        assert_eq!(k.fields().comm, "abcdefghijklmnop");
    }
}
