//! The C file that holds every hand-declared macOS layout and constant against Apple's own
//! headers, generated from the Rust declarations themselves so the two cannot drift.
//!
//! `c_source()` states, as `_Static_assert`s, the size and alignment of every struct in
//! `kinfo.rs`, `libproc.rs` and `vnode.rs`, the offset and width of every one of their
//! fields, and every sysctl, libproc, `p_stat`, path and signal constant the macOS code uses.
//! A test reads every file under `platform/macos/` and fails on a `#[repr(C)]` struct or a
//! numeric constant the file does not name (checked, or listed as outside the header set). CI compiles it with
//! `../shared/tools/check-macos-layout` for arm64 and x86_64 against the xnu headers (and
//! once with one offset changed, which must fail). The committed copy is
//! `.ci/macos-layout.c`; a test fails when it is stale (`scripts/generate.sh` rewrites it).
//!
//! The generator runs on any 64-bit OS: the declarations are compiled everywhere. The
//! signal numbers differ between Linux and macOS, so they are a table here, and on macOS
//! libc's values are asserted equal to it at compile time.

use std::fmt::Write as _;
use std::mem::{align_of, offset_of, size_of};

use super::kinfo::{self, Eproc, ExternProc, Itimerval, KinfoProc, Pcred, Timeval, Ucred, Vmspace};
use super::libproc::{self as lp, ProcTaskinfo, RusageInfoV2};
use super::vnode::{self, ProcVnodePathInfo, VnodeInfo, VnodeInfoPath};

/// The signal numbers headroom sends or handles, as macOS numbers them (`<sys/signal.h>`).
pub(crate) const MACOS_SIGNALS: &[(&str, i32)] = &[
    ("SIGHUP", 1),
    ("SIGINT", 2),
    ("SIGKILL", 9),
    ("SIGPIPE", 13),
    ("SIGTERM", 15),
    ("SIGSTOP", 17),
    ("SIGTSTP", 18),
    ("SIGCONT", 19),
    ("SIGCHLD", 20),
    ("SIGTTIN", 21),
    ("SIGTTOU", 22),
];

#[cfg(target_os = "macos")]
const _: () = {
    const fn num(name: &str) -> i32 {
        let mut i = 0;
        while i < MACOS_SIGNALS.len() {
            if str_eq(MACOS_SIGNALS[i].0, name) {
                return MACOS_SIGNALS[i].1;
            }
            i += 1;
        }
        -1
    }
    const fn str_eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }
    assert!(num("SIGHUP") == libc::SIGHUP && num("SIGINT") == libc::SIGINT);
    assert!(num("SIGKILL") == libc::SIGKILL && num("SIGPIPE") == libc::SIGPIPE);
    assert!(num("SIGTERM") == libc::SIGTERM && num("SIGSTOP") == libc::SIGSTOP);
    assert!(num("SIGTSTP") == libc::SIGTSTP && num("SIGCONT") == libc::SIGCONT);
    assert!(num("SIGCHLD") == libc::SIGCHLD && num("SIGTTIN") == libc::SIGTTIN);
    assert!(num("SIGTTOU") == libc::SIGTTOU);
};

/// Where the committed copy lives, relative to the repository.
pub(crate) const COMMITTED_PATH: &str = ".ci/macos-layout.c";

/// The repository's root: this crate is `crates/headroom-platform` in it.
#[cfg(all(test, target_pointer_width = "64"))]
fn repository() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The width of a field, from a projection (no value of the struct needed).
fn width<T, F>(_: fn(&T) -> &F) -> usize {
    size_of::<F>()
}

struct Out(String);

impl Out {
    fn check(&mut self, cond: String, what: &str) {
        // Infallible: writing to a String.
        let _ = writeln!(self.0, "_Static_assert({cond}, \"{what}\");");
    }

    /// Size and alignment; the message names the Rust type too (the coverage test reads it).
    fn layout<T>(&mut self, c: &str) {
        let rust = std::any::type_name::<T>().rsplit("::").next().unwrap_or("");
        self.check(
            format!("sizeof({c}) == {}", size_of::<T>()),
            &format!("sizeof {c} ({rust})"),
        );
        self.check(
            format!("_Alignof({c}) == {}", align_of::<T>()),
            &format!("alignof {c}"),
        );
    }

    fn field(&mut self, c: &str, path: &str, offset: usize, width: usize) {
        self.check(
            format!("offsetof({c}, {path}) == {offset}"),
            &format!("offset {c}.{path}"),
        );
        self.check(
            format!("sizeof((({c} *)0)->{path}) == {width}"),
            &format!("width {c}.{path}"),
        );
    }

    fn constant(&mut self, name: &str, value: impl std::fmt::Display) {
        self.check(format!("{name} == {value}"), name);
    }

    /// A constant whose C counterpart is an expression, not a name of its own.
    fn derived(&mut self, c_expr: &str, rust: &str, value: impl std::fmt::Display) {
        self.check(format!("{c_expr} == {value}"), rust);
    }
}

/// Every field of a struct: `fields!(out, RustType, "struct c_name", a, b.c, ...)`. The
/// Rust and C field names are the same (the C macro `p_starttime` names the union member).
macro_rules! fields {
    ($out:ident, $t:ty, $c:literal, $($($f:ident).+),+ $(,)?) => {
        $out.layout::<$t>($c);
        $(
            $out.field(
                $c,
                &stringify!($($f).+).replace(' ', ""),
                offset_of!($t, $($f).+),
                width(|s: &$t| &s.$($f).+),
            );
        )+
    };
}

/// The C file: includes, then one `_Static_assert` per fact.
pub(crate) fn c_source() -> String {
    let mut out = Out(String::new());
    out.0.push_str(
        "/* Generated from crates/headroom-platform/src/macos/{kinfo,libproc,vnode,layout}.rs\n\
         \x20* by headroom-platform's test macos::layout::tests::the_committed_c_file_is_current\n\
         \x20* (scripts/generate.sh rewrites it). Do not edit: change the Rust declarations.\n\
         \x20* Checked by ../shared/tools/check-macos-layout against the xnu headers for\n\
         \x20* arm64-apple-macos14 and x86_64-apple-macos14 (.ci/run).\n\
         \x20*\n\
         \x20* Not checked here (their headers are outside the xnu set), each where it is used:\n\
         \x20* ProcessSerialNumber (MacTypes.h, 8 bytes, two UInt32; asserted in apps_ffi.rs);\n\
         \x20* CF_STRING_ENCODING_UTF8 and CF_NUMBER_SINT64_TYPE (kCFStringEncodingUTF8,\n\
         \x20* kCFNumberSInt64Type: CoreFoundation CFString.h, CFNumber.h; apps_ffi.rs);\n\
         \x20* LS_DEFAULT_SESSION (kLSDefaultSessionID, LaunchServices' private LSInfo.h;\n\
         \x20* apps_ffi.rs); the private SkyLight/LaunchServices signatures (CGSInternal,\n\
         \x20* apps_ffi.rs); DISPATCH_MEMORYPRESSURE_WARN and DISPATCH_MEMORYPRESSURE_CRITICAL\n\
         \x20* and DispatchSourceType, an opaque stand-in (libdispatch <dispatch/source.h>;\n\
         \x20* pressure.rs); objc_autoreleasePoolPush/Pop (objc4; apps.rs) and\n\
         \x20* mach_timebase_info (<mach/mach_time.h>, from the mach2 crate). */\n\
         #include <stddef.h>\n#include <sys/types.h>\n#include <sys/param.h>\n\
         #include <sys/sysctl.h>\n#include <sys/proc.h>\n#include <sys/proc_info.h>\n\
         #include <sys/resource.h>\n#include <sys/signal.h>\n#include <libproc.h>\n\n",
    );
    fields!(out, Timeval, "struct timeval", tv_sec, tv_usec);
    fields!(out, Itimerval, "struct itimerval", it_interval, it_value);
    fields!(
        out,
        ExternProc,
        "struct extern_proc",
        p_starttime,
        p_vmspace,
        p_sigacts,
        p_flag,
        p_stat,
        p_pid,
        p_oppid,
        p_dupfd,
        user_stack,
        exit_thread,
        p_debugger,
        sigwait,
        p_estcpu,
        p_cpticks,
        p_pctcpu,
        p_wchan,
        p_wmesg,
        p_swtime,
        p_slptime,
        p_realtimer,
        p_rtime,
        p_uticks,
        p_sticks,
        p_iticks,
        p_traceflag,
        p_tracep,
        p_siglist,
        p_textvp,
        p_holdcnt,
        p_sigmask,
        p_sigignore,
        p_sigcatch,
        p_priority,
        p_usrpri,
        p_nice,
        p_comm,
        p_pgrp,
        p_addr,
        p_xstat,
        p_acflag,
        p_ru,
    );
    fields!(
        out,
        Pcred,
        "struct _pcred",
        pc_lock,
        pc_ucred,
        p_ruid,
        p_svuid,
        p_rgid,
        p_svgid,
        p_refcnt,
    );
    fields!(
        out,
        Ucred,
        "struct _ucred",
        cr_ref,
        cr_uid,
        cr_ngroups,
        cr_groups
    );
    fields!(
        out,
        Vmspace,
        "struct vmspace",
        dummy,
        dummy2,
        dummy3,
        dummy4
    );
    fields!(
        out,
        Eproc,
        "struct eproc",
        e_paddr,
        e_sess,
        e_pcred,
        e_ucred,
        e_vm,
        e_ppid,
        e_pgid,
        e_jobc,
        e_tdev,
        e_tpgid,
        e_tsess,
        e_wmesg,
        e_xsize,
        e_xrssize,
        e_xccount,
        e_xswrss,
        e_flag,
        e_login,
        e_spare,
    );
    // The fields `KinfoProc::fields` reads, through the nesting, as the kernel lays out one
    // array entry of KERN_PROC_ALL.
    fields!(
        out,
        KinfoProc,
        "struct kinfo_proc",
        kp_proc,
        kp_eproc,
        kp_proc.p_starttime,
        kp_proc.p_stat,
        kp_proc.p_pid,
        kp_proc.p_comm,
        kp_eproc.e_ppid,
        kp_eproc.e_pgid,
        kp_eproc.e_tpgid,
        kp_eproc.e_pcred.p_ruid,
        kp_eproc.e_ucred.cr_uid,
    );
    fields!(
        out,
        ProcTaskinfo,
        "struct proc_taskinfo",
        pti_virtual_size,
        pti_resident_size,
        pti_total_user,
        pti_total_system,
        pti_threads_user,
        pti_threads_system,
        pti_policy,
        pti_faults,
        pti_pageins,
        pti_cow_faults,
        pti_messages_sent,
        pti_messages_received,
        pti_syscalls_mach,
        pti_syscalls_unix,
        pti_csw,
        pti_threadnum,
        pti_numrunning,
        pti_priority,
    );
    fields!(
        out,
        RusageInfoV2,
        "struct rusage_info_v2",
        ri_uuid,
        ri_user_time,
        ri_system_time,
        ri_pkg_idle_wkups,
        ri_interrupt_wkups,
        ri_pageins,
        ri_wired_size,
        ri_resident_size,
        ri_phys_footprint,
        ri_proc_start_abstime,
        ri_proc_exit_abstime,
        ri_child_user_time,
        ri_child_system_time,
        ri_child_pkg_idle_wkups,
        ri_child_interrupt_wkups,
        ri_child_pageins,
        ri_child_elapsed_abstime,
        ri_diskio_bytesread,
        ri_diskio_byteswritten,
    );
    // `proc_pidinfo(PROC_PIDVNODEPATHINFO)`: a process's working directory (vnode.rs).
    // `vnode_info` is read as opaque bytes: its size and alignment are what matter.
    out.layout::<VnodeInfo>("struct vnode_info");
    fields!(
        out,
        VnodeInfoPath,
        "struct vnode_info_path",
        vip_vi,
        vip_path
    );
    fields!(
        out,
        ProcVnodePathInfo,
        "struct proc_vnodepathinfo",
        pvi_cdir,
        pvi_rdir
    );
    out.0.push('\n');
    out.derived(
        "sizeof(struct kinfo_proc)",
        "KINFO_PROC_SIZE",
        kinfo::KINFO_PROC_SIZE,
    );
    // `proc_name` writes at most `pbi_name` (2 * MAXCOMLEN) bytes and its NUL.
    out.derived(
        "sizeof(((struct proc_bsdinfo *)0)->pbi_name) + 1",
        "PROC_NAME_BUF",
        lp::PROC_NAME_BUF,
    );
    for (name, v) in [
        ("CTL_KERN", lp::CTL_KERN),
        ("KERN_ARGMAX", lp::KERN_ARGMAX),
        ("KERN_PROC", lp::KERN_PROC),
        ("KERN_PROC_ALL", lp::KERN_PROC_ALL),
        ("KERN_PROC_PID", lp::KERN_PROC_PID),
        ("KERN_PROCARGS2", lp::KERN_PROCARGS2),
        ("PROC_PIDTASKINFO", lp::PROC_PIDTASKINFO),
        ("RUSAGE_INFO_V2", lp::RUSAGE_INFO_V2),
        ("SIDL", i32::from(kinfo::SIDL)),
        ("SRUN", i32::from(kinfo::SRUN)),
        ("SSLEEP", i32::from(kinfo::SSLEEP)),
        ("SSTOP", i32::from(kinfo::SSTOP)),
        ("SZOMB", i32::from(kinfo::SZOMB)),
        ("P_TRACED", kinfo::P_TRACED),
    ] {
        out.constant(name, v);
    }
    out.constant("PROC_PIDPATHINFO_MAXSIZE", lp::PROC_PIDPATHINFO_MAXSIZE);
    out.constant("PROC_PIDVNODEPATHINFO", vnode::PROC_PIDVNODEPATHINFO);
    out.constant("MAXPATHLEN", vnode::MAXPATHLEN);
    out.constant("MAXCOMLEN", kinfo::MAXCOMLEN);
    for (name, v) in MACOS_SIGNALS {
        out.constant(name, v);
    }
    out.0
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;

    #[test]
    fn the_committed_c_file_is_current() {
        let path = repository().join(COMMITTED_PATH);
        let want = c_source();
        if std::env::var_os("HEADROOM_BLESS").is_some() {
            std::fs::write(&path, &want).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "{COMMITTED_PATH} is stale: run `scripts/generate.sh`"
        );
    }

    /// Every `#[repr(C)]` struct and numeric constant declared under `src/macos/` is
    /// named in the file: checked against the headers, or listed as outside them.
    #[test]
    fn every_hand_declared_layout_and_constant_is_covered() {
        let c = c_source();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/macos");
        let mut missing = Vec::new();
        let mut seen = 0;
        for e in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = e.unwrap_or_else(|e| panic!("{e}")).path();
            if path.extension().is_none_or(|x| x != "rs") || path.ends_with("layout.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().map(str::trim).collect();
            for (i, l) in lines.iter().enumerate() {
                let decl = l
                    .trim_start_matches("pub ")
                    .trim_start_matches("pub(crate) ")
                    .trim_start_matches("pub(super) ");
                let name = if let Some(rest) = decl.strip_prefix("const ") {
                    let (name, ty) = rest.split_once(':').unwrap_or(("", ""));
                    let ty = ty.trim().split(|ch: char| !ch.is_alphanumeric()).next();
                    let numeric = ty.is_some_and(|t| {
                        [
                            "i8", "i16", "i32", "i64", "isize", "u8", "u16", "u32", "u64", "usize",
                        ]
                        .contains(&t)
                    });
                    if !numeric || name == "_" {
                        continue;
                    }
                    name.trim().to_string()
                } else if let Some(rest) = decl.strip_prefix("struct ") {
                    let repr_c = lines[..i].iter().rev().take(4).any(|p| *p == "#[repr(C)]");
                    if !repr_c {
                        continue;
                    }
                    rest.split([' ', '{', '(', '<'])
                        .next()
                        .unwrap_or("")
                        .to_string()
                } else {
                    continue;
                };
                seen += 1;
                if !c.contains(&name) {
                    missing.push(format!("{}: {name}", path.display()));
                }
            }
        }
        assert!(
            seen >= 39,
            "only {seen} declarations found: the scan is broken"
        );
        assert!(missing.is_empty(), "not in {COMMITTED_PATH}: {missing:#?}");
    }

    #[test]
    fn it_states_what_the_code_reads() {
        let c = c_source();
        for fact in [
            "offsetof(struct kinfo_proc, kp_eproc.e_ppid) == 560",
            "offsetof(struct kinfo_proc, kp_proc.p_comm) == 243",
            "sizeof(struct kinfo_proc) == 648",
            "offsetof(struct rusage_info_v2, ri_phys_footprint) == 72",
            "offsetof(struct proc_taskinfo, pti_numrunning) == 88",
            "KERN_PROCARGS2 == 49",
            "SIGSTOP == 17",
            "SZOMB == 5",
            "sizeof(struct proc_vnodepathinfo) == 2352",
            "offsetof(struct proc_vnodepathinfo, pvi_rdir) == 1176",
            "PROC_PIDVNODEPATHINFO == 9",
            "MAXPATHLEN == 1024",
            "sizeof(((struct proc_bsdinfo *)0)->pbi_name) + 1 == 33",
        ] {
            assert!(c.contains(fact), "missing: {fact}");
        }
        // Every field, not a sample: 41 of extern_proc, 19 of eproc.
        let count = |prefix: &str| c.matches(prefix).count();
        assert_eq!(count("offsetof(struct extern_proc, "), 41);
        assert_eq!(count("offsetof(struct eproc, "), 19);
        assert_eq!(count("offsetof(struct rusage_info_v2, "), 19);
    }
}
