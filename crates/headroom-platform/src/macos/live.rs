//! The live macOS `ProcessSource` (cannot run on the Linux CI machines: kept thin, every
//! decision is in `core`, and the layouts it relies on are tested in `kinfo.rs`).

use std::ffi::{c_int, c_void};
use std::io;
use std::sync::Mutex;

use crate::core::limits::{Ceiling, LimitSource, Scope};
use crate::core::snapshot::{
    Detail, MemoryTotals, ProcState, ProcessRecord, SNAPSHOT_SCHEMA, Snapshot,
};
use crate::core::tree_select::reachable;
use crate::macos::kernel_reads::{
    kinfo_all, kinfo_pid, ns_per_tick, phys_footprint, pid_path, proc_name, sysctl_int,
    sysctl_mib_int, task_info,
};
use crate::macos::kinfo::{self, KinfoFields, KinfoProc};
use crate::macos::libproc as lp;
use crate::macos::procargs::{Lookup, parse_procargs2, procargs_error};
use crate::{PlatformError, ProcessSource, TreeQuery, current_uid, now_ms};
#[derive(Debug)]
pub(crate) struct MacSource {
    /// Nanoseconds per Mach absolute-time tick (125/3 on Apple Silicon, 1 on Intel).
    ns_per_tick: f64,
    /// The `KERN_PROCARGS2` buffer: `kern.argmax` bytes, allocated at the first `argv`
    /// call and reused (the kernel writes at most that much).
    argv_buf: Mutex<Vec<u8>>,
}

impl Default for MacSource {
    fn default() -> Self {
        Self::new()
    }
}

impl MacSource {
    pub(crate) fn new() -> Self {
        Self {
            ns_per_tick: ns_per_tick(),
            argv_buf: Mutex::new(Vec::new()),
        }
    }

    fn record(&self, k: &KinfoFields, uid: u32, detail: Detail, with_exe: bool) -> ProcessRecord {
        let mut rec = ProcessRecord {
            pid: k.pid,
            ppid: k.ppid,
            uid: k.ruid,
            // Until libproc says otherwise: SRUN alone is no answer (see kinfo::state).
            state: kinfo::state(k.stat, k.flag, None),
            start_time: Some(k.start_us),
            name: k.comm.clone(),
            exe: None,
            pgid: Some(k.pgid),
            sid: None,
            tpgid: Some(k.tpgid),
            threads: None,
            cpu_ns: None,
            footprint_bytes: None,
            argv: None,
            cwd: None,
        };
        let cut = k.comm.len() >= kinfo::MAXCOMLEN && rec.state != ProcState::Zombie;
        // libproc answers only for the caller's own processes (CHECK_SAME_USER), and a zombie
        // has no task left to ask about.
        if detail == Detail::Slots || k.ruid != uid || rec.state == ProcState::Zombie || k.pid <= 0
        {
            // A name p_comm cut short is completed from the executable's file name, which
            // libproc gives for anyone's process (PROC_PIDPATHINFO is not CHECK_SAME_USER),
            // so allow/deny patterns see the same name on macOS as on Linux.
            if cut && k.pid > 0 {
                rec.name = kinfo::full_name(&k.comm, None, pid_path(k.pid).as_deref());
            }
            return rec;
        }
        if let Some(ti) = task_info(k.pid) {
            rec.threads = u32::try_from(ti.pti_threadnum).ok();
            let ticks = ti.pti_total_user.saturating_add(ti.pti_total_system);
            rec.cpu_ns = Some((ticks as f64 * self.ns_per_tick) as u64);
            rec.state = kinfo::state(k.stat, k.flag, Some(ti.pti_numrunning));
        }
        rec.footprint_bytes = phys_footprint(k.pid);
        let path = (with_exe || cut).then(|| pid_path(k.pid)).flatten();
        if cut {
            rec.name = kinfo::full_name(&k.comm, proc_name(k.pid).as_deref(), path.as_deref());
        }
        if with_exe {
            rec.exe = path;
        }
        // SAFETY: getsid has no memory-safety preconditions.
        let sid = unsafe { libc::getsid(k.pid) };
        rec.sid = (sid > 0).then_some(sid);
        rec
    }

    fn ceilings(&self, uid: u32, all_processes: u64) -> Vec<Ceiling> {
        let per_uid = sysctl_int(c"kern.maxprocperuid");
        let maxproc = sysctl_int(c"kern.maxproc");
        let (rvalue, unlimited, rnote) = crate::rlimit_nproc();
        let from = |r: Result<i64, io::Error>| match r {
            Ok(v) => (Some(v), None),
            Err(e) => (None, Some(e.to_string())),
        };
        let (pv, pnote) = from(per_uid);
        let (mv, mnote) = from(maxproc);
        vec![
            Ceiling {
                source: LimitSource::PerUid,
                value: pv,
                unlimited: false,
                scope: Scope::User,
                in_use: None,
                origin: "sysctl kern.maxprocperuid".into(),
                // fork never checks it (core::limits): information and the trap note.
                enforced: false,
                note: Some(match pnote {
                    Some(e) => format!("{e}; {}", crate::core::limits::PER_UID_NOTE),
                    None => crate::core::limits::PER_UID_NOTE.into(),
                }),
            },
            Ceiling {
                source: LimitSource::RlimitNproc,
                value: rvalue,
                unlimited,
                scope: Scope::User,
                in_use: None,
                origin: "getrlimit(RLIMIT_NPROC) soft limit (launchctl limit maxproc)".into(),
                enforced: uid != 0,
                note: if uid == 0 {
                    Some("not enforced for root".into())
                } else {
                    rnote
                },
            },
            Ceiling {
                source: LimitSource::SystemWide,
                value: mv,
                unlimited: false,
                scope: Scope::Shared,
                in_use: Some(all_processes),
                origin: "sysctl kern.maxproc".into(),
                enforced: true,
                note: mnote,
            },
        ]
    }
}

impl ProcessSource for MacSource {
    fn os(&self) -> &str {
        "macos"
    }

    /// `proc_listallpids` without a buffer answers how many pids a buffer would need:
    /// xnu's `proc_listpids` returns `nprocs + 20` (bsd/kern/proc_info.c), the count of
    /// every process, zombies included, with room to spare: at least any user's count
    /// `kern.maxprocperuid` charges. One call, and the three ceilings (two sysctls, one
    /// `getrlimit`).
    fn slot_bound(&self) -> Option<std::sync::Arc<crate::core::round_plan::Bound>> {
        // SAFETY: a null buffer of size 0 asks only for the count.
        let n = unsafe { libc::proc_listallpids(std::ptr::null_mut(), 0) };
        let slots = u64::try_from(n).ok().filter(|&n| n > 0);
        let uid = current_uid();
        Some(std::sync::Arc::new(crate::core::round_plan::Bound {
            slots,
            ceilings: self.ceilings(uid, slots.unwrap_or(0)),
            uid,
        }))
    }

    fn snapshot(&self, detail: Detail) -> Result<Snapshot, PlatformError> {
        let uid = current_uid();
        let taken_at_ms = now_ms();
        let table = kinfo_all().map_err(|e| PlatformError::io("sysctl(KERN_PROC_ALL)", e))?;
        let mut processes: Vec<ProcessRecord> = table
            .iter()
            .map(|k| self.record(&k.fields(), uid, detail, true))
            .collect();
        processes.sort_by_key(|p| p.pid);
        let all = processes.len() as u64;
        Ok(Snapshot {
            schema: SNAPSHOT_SCHEMA.to_string(),
            detail,
            os: "macos".into(),
            taken_at_ms,
            self_pid: std::process::id() as i32,
            uid,
            // One sysctl returns the whole table: nothing listed is left unread.
            unreadable: 0,
            others_hidden: false,
            ceilings: self.ceilings(uid, all),
            memory: self.memory().ok(),
            processes,
        })
    }

    fn process(&self, pid: i32) -> Result<Option<ProcessRecord>, PlatformError> {
        if pid <= 0 {
            return Ok(None);
        }
        let k = kinfo_pid(pid)
            .map_err(|e| PlatformError::io(format!("sysctl(KERN_PROC_PID, {pid})"), e))?;
        Ok(k.map(|k| self.record(&k.fields(), current_uid(), Detail::Full, false)))
    }

    fn cwd(&self, pid: i32) -> Result<std::path::PathBuf, PlatformError> {
        use crate::macos::vnode::{self, PROC_PIDVNODEPATHINFO, ProcVnodePathInfo};
        // SAFETY: plain integers and char arrays; all-zero is valid.
        let mut vi: ProcVnodePathInfo = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<ProcVnodePathInfo>() as c_int;
        // SAFETY: vi is `size` writable bytes of the layout this flavor fills.
        let n = unsafe {
            libc::proc_pidinfo(
                pid,
                PROC_PIDVNODEPATHINFO,
                0,
                (&mut vi as *mut ProcVnodePathInfo).cast::<c_void>(),
                size,
            )
        };
        if n != size {
            return Err(PlatformError::io(
                format!("proc_pidinfo(PROC_PIDVNODEPATHINFO, {pid})"),
                io::Error::last_os_error(),
            ));
        }
        vnode::path_of(&vi.pvi_cdir).map(Into::into).ok_or_else(|| {
            PlatformError::Invalid(format!("pid `{pid}` reported no working directory"))
        })
    }

    fn argv(&self, pid: i32) -> Result<Vec<String>, PlatformError> {
        // A poisoned lock only means an earlier call panicked; the bytes are overwritten.
        let mut buf = self
            .argv_buf
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if buf.is_empty() {
            let argmax = sysctl_mib_int(&mut [lp::CTL_KERN, lp::KERN_ARGMAX])
                .unwrap_or(1 << 20)
                .clamp(4096, 1 << 24) as usize;
            buf.resize(argmax, 0);
        }
        let mut len = buf.len();
        let mut mib = [lp::CTL_KERN, lp::KERN_PROCARGS2, pid];
        // SAFETY: mib has 3 valid entries, buf is writable for `len` bytes and `len` is
        // updated by the kernel to the number of bytes written.
        let rc = unsafe {
            libc::sysctl(
                mib.as_mut_ptr(),
                3,
                buf.as_mut_ptr().cast::<c_void>(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        if rc != 0 {
            let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0);
            return Err(procargs_error(pid, errno, || match kinfo_pid(pid) {
                Ok(None) => Lookup::Absent,
                Ok(Some(k)) if k.kp_proc.p_stat == kinfo::SZOMB => Lookup::Zombie,
                Ok(Some(_)) => Lookup::Alive,
                Err(e) => Lookup::Failed(e),
            }));
        }
        let written = &buf[..len.min(buf.len())];
        parse_procargs2(written)
            .map(|(_, args)| args)
            .map_err(PlatformError::Invalid)
    }

    /// One `sysctl(KERN_PROC_ALL)` for the links (cheap: one call for the whole table),
    /// then libproc only for the processes the query selects.
    fn tree_sample(&self, query: &TreeQuery<'_>) -> Result<Vec<ProcessRecord>, PlatformError> {
        let uid = current_uid();
        let table = kinfo_all().map_err(|e| PlatformError::io("sysctl(KERN_PROC_ALL)", e))?;
        let fields: Vec<KinfoFields> = table.iter().map(KinfoProc::fields).collect();
        let wanted = reachable(fields.iter().map(|k| (k.pid, k.ppid, Some(k.pgid))), query);
        Ok(fields
            .iter()
            .filter(|k| wanted.contains(&k.pid))
            .map(|k| self.record(k, uid, Detail::Full, false))
            .collect())
    }

    fn memory(&self) -> Result<MemoryTotals, PlatformError> {
        let total =
            sysctl_int(c"hw.memsize").map_err(|e| PlatformError::io("sysctl hw.memsize", e))?;
        // The percentage of memory the kernel considers free (what memory_pressure prints).
        let level = sysctl_int(c"kern.memorystatus_level")
            .map_err(|e| PlatformError::io("sysctl kern.memorystatus_level", e))?;
        let total = total.max(0) as u64;
        let available = total / 100 * level.clamp(0, 100) as u64;
        Ok(MemoryTotals {
            total_bytes: total,
            available_bytes: available,
        })
    }
}
