//! The sysctl, libproc and Mach calls the live source (`live.rs`) reads the process table,
//! the ceilings and the memory totals with: each one call and its buffer, no decision.

use std::ffi::{CStr, c_int, c_void};
use std::io;

use crate::macos::kinfo::{KINFO_PROC_SIZE, KinfoProc};
use crate::macos::libproc::{self as lp, ProcTaskinfo, RusageInfoV2};

// The declarations in libproc.rs are the ones `layout.rs` holds against the xnu headers;
// libc's (compiled only here) must agree with them.
const _: () =
    assert!(std::mem::size_of::<ProcTaskinfo>() == std::mem::size_of::<libc::proc_taskinfo>());
const _: () =
    assert!(std::mem::size_of::<RusageInfoV2>() == std::mem::size_of::<libc::rusage_info_v2>());
const _: () = assert!(lp::CTL_KERN == libc::CTL_KERN && lp::KERN_PROC == libc::KERN_PROC);
const _: () =
    assert!(lp::KERN_PROC_ALL == libc::KERN_PROC_ALL && lp::KERN_PROC_PID == libc::KERN_PROC_PID);
const _: () =
    assert!(lp::KERN_PROCARGS2 == libc::KERN_PROCARGS2 && lp::KERN_ARGMAX == libc::KERN_ARGMAX);
const _: () = assert!(
    lp::PROC_PIDTASKINFO == libc::PROC_PIDTASKINFO && lp::RUSAGE_INFO_V2 == libc::RUSAGE_INFO_V2
);
const _: () = assert!(lp::PROC_PIDPATHINFO_MAXSIZE == libc::PROC_PIDPATHINFO_MAXSIZE as usize);

/// Read an `int` sysctl by MIB.
pub(super) fn sysctl_mib_int(mib: &mut [c_int]) -> Result<i64, io::Error> {
    let mut v: c_int = 0;
    let mut len = std::mem::size_of::<c_int>();
    // SAFETY: mib holds mib.len() entries; the out-buffer is one writable c_int and `len`
    // says so.
    let rc = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            mib.len() as libc::c_uint,
            (&mut v as *mut c_int).cast::<c_void>(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(i64::from(v))
}

/// Read an integer sysctl of 4 or 8 bytes.
pub(super) fn sysctl_int(name: &CStr) -> Result<i64, io::Error> {
    let mut v8: i64 = 0;
    let mut len = std::mem::size_of::<i64>();
    // SAFETY: name is NUL-terminated; the out-buffer is 8 writable bytes and `len` says so.
    let rc = unsafe {
        libc::sysctlbyname(
            name.as_ptr(),
            (&mut v8 as *mut i64).cast::<c_void>(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    match len {
        8 => Ok(v8),
        // A 4-byte value was written into the low-address half (little-endian on both Apple
        // architectures).
        4 => Ok(i64::from(v8 as i32)),
        n => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{name:?}: unexpected size {n}"),
        )),
    }
}

pub(super) fn ns_per_tick() -> f64 {
    // hw.tbfrequency is right even under Rosetta, where mach_timebase_info reports 1/1 while
    // the process counters stay in native 24 MHz ticks (reference notes §1b).
    if let Ok(hz) = sysctl_int(c"hw.tbfrequency") {
        if hz > 0 {
            return 1e9 / hz as f64;
        }
    }
    let mut info = mach2::mach_time::mach_timebase_info { numer: 0, denom: 0 };
    // SAFETY: info is a valid, writable mach_timebase_info.
    let rc = unsafe { mach2::mach_time::mach_timebase_info(&mut info) };
    if rc == 0 && info.denom != 0 {
        f64::from(info.numer) / f64::from(info.denom)
    } else {
        1.0
    }
}

pub(super) fn kinfo_all() -> Result<Vec<KinfoProc>, io::Error> {
    let mut mib = [lp::CTL_KERN, lp::KERN_PROC, lp::KERN_PROC_ALL, 0];
    for _ in 0..5 {
        let mut len: usize = 0;
        // SAFETY: size query: null out-buffer, `len` receives the size needed.
        let rc = unsafe {
            libc::sysctl(
                mib.as_mut_ptr(),
                4,
                std::ptr::null_mut(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        // Slack for processes born between the two calls.
        let cap = len / KINFO_PROC_SIZE + 64;
        let mut v: Vec<KinfoProc> = vec![KinfoProc::zeroed(); cap];
        let mut bytes = cap * KINFO_PROC_SIZE;
        // SAFETY: v holds `cap` entries of exactly KINFO_PROC_SIZE bytes (asserted in kinfo.rs),
        // so the buffer is writable for `bytes` bytes.
        let rc = unsafe {
            libc::sysctl(
                mib.as_mut_ptr(),
                4,
                v.as_mut_ptr().cast::<c_void>(),
                &mut bytes,
                std::ptr::null_mut(),
                0,
            )
        };
        if rc != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::ENOMEM) {
                continue;
            }
            return Err(e);
        }
        v.truncate(bytes / KINFO_PROC_SIZE);
        return Ok(v);
    }
    Err(io::Error::other(
        "process table kept growing across 5 attempts",
    ))
}

pub(super) fn kinfo_pid(pid: i32) -> Result<Option<KinfoProc>, io::Error> {
    let mut mib = [lp::CTL_KERN, lp::KERN_PROC, lp::KERN_PROC_PID, pid];
    let mut k = KinfoProc::zeroed();
    let mut len = KINFO_PROC_SIZE;
    // SAFETY: k is KINFO_PROC_SIZE writable bytes and `len` says so.
    let rc = unsafe {
        libc::sysctl(
            mib.as_mut_ptr(),
            4,
            (&mut k as *mut KinfoProc).cast::<c_void>(),
            &mut len,
            std::ptr::null_mut(),
            0,
        )
    };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return if e.raw_os_error() == Some(libc::ESRCH) {
            Ok(None)
        } else {
            Err(e)
        };
    }
    // A pid that just exited: sysctl succeeds with length 0.
    if len != KINFO_PROC_SIZE || k.kp_proc.p_pid != pid {
        return Ok(None);
    }
    Ok(Some(k))
}

pub(super) fn task_info(pid: i32) -> Option<ProcTaskinfo> {
    let mut ti = ProcTaskinfo::default();
    let size = std::mem::size_of::<ProcTaskinfo>() as c_int;
    // SAFETY: ti is `size` writable bytes of the struct PROC_PIDTASKINFO fills.
    let n = unsafe {
        libc::proc_pidinfo(
            pid,
            lp::PROC_PIDTASKINFO,
            0,
            (&mut ti as *mut ProcTaskinfo).cast::<c_void>(),
            size,
        )
    };
    (n == size).then_some(ti)
}

pub(super) fn phys_footprint(pid: i32) -> Option<u64> {
    let mut ri = RusageInfoV2::default();
    // SAFETY: ri is a writable rusage_info_v2, the flavor asked for.
    let rc = unsafe {
        libc::proc_pid_rusage(
            pid,
            lp::RUSAGE_INFO_V2,
            (&mut ri as *mut RusageInfoV2).cast::<libc::rusage_info_t>(),
        )
    };
    (rc == 0).then_some(ri.ri_phys_footprint)
}

/// libproc's name for the process (`pbi_name`, up to 32 bytes; own processes only).
pub(super) fn proc_name(pid: i32) -> Option<String> {
    let mut buf = [0u8; lp::PROC_NAME_BUF];
    // SAFETY: buf is writable for its length.
    let n = unsafe { libc::proc_name(pid, buf.as_mut_ptr().cast::<c_void>(), buf.len() as u32) };
    let n = usize::try_from(n).ok().filter(|&n| n > 0)?;
    let text = &buf[..n.min(buf.len())];
    let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
    Some(String::from_utf8_lossy(&text[..end]).into_owned())
}

pub(super) fn pid_path(pid: i32) -> Option<String> {
    let mut buf = vec![0u8; lp::PROC_PIDPATHINFO_MAXSIZE];
    // SAFETY: buf is writable for its length.
    let n = unsafe { libc::proc_pidpath(pid, buf.as_mut_ptr().cast::<c_void>(), buf.len() as u32) };
    if n <= 0 {
        return None;
    }
    buf.truncate(n as usize);
    Some(String::from_utf8_lossy(&buf).into_owned())
}
