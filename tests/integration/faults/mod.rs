//! The fault suite: each assumption headroom's guarantees rest on is broken on purpose, on
//! real processes and real file systems, in a sandbox the test owns, and the guarantee is
//! checked (docs/GUIDE.md, "What survives what").
//!
//! Sandboxes: a private mount namespace per test (`unshare(CLONE_NEWNS)` on a thread of the
//! test's own, with every mount made private, so nothing mounted here is seen outside it
//! and it ends with the thread), a tmpfs of 64 KiB for a full disk, a private `/proc` with
//! `hidepid=2`; the binary under test runs as a private unprivileged uid (support.rs), and
//! the only processes signalled are those the test itself started. Linux, as root: elsewhere
//! they are ignored with the reason (build.rs's `hr_root`), and under `.ci/run`
//! (HEADROOM_REQUIRE_TOOLS) a missing requirement fails them.

#![cfg(target_os = "linux")]

mod clock;
mod crash;
mod descriptors;
mod disk_full;
mod exhaustion;
mod hostile_proc;
mod signals_pipes;
mod state_dir;
mod two_guards;

use std::ffi::CString;
use std::path::Path;

use crate::support::Env;

/// Held by the tests that load the machine most (the kill loop, the hostile leakers with
/// ~500 zombies each), so they run one at a time and leave the rest of the test run (and
/// its timing-sensitive tests) some room on a small CI machine.
pub static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The `HEAVY` guard, whether or not a test that held it failed.
pub fn heavy() -> std::sync::MutexGuard<'static, ()> {
    HEAVY
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The first line of a fault test: the sandboxes need root (namespaces, a private uid).
/// Such a test is gated `#[cfg_attr(not(hr_root), ignore)]`; compiled to run without root
/// (a stale build, or HEADROOM_REQUIRE_TOOLS), it fails here.
pub fn require_sandbox(env: &Env) {
    crate::support::require_root();
    assert!(
        env.private,
        "root without a private uid: the sandboxes need one"
    );
}

/// Run `f` on a new thread in a new mount namespace whose mounts are all private: what `f`
/// mounts, and every process it starts, sees the sandbox; the rest of the machine does not.
/// The namespace ends when the thread and the processes it started do.
pub fn in_mount_ns<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: unshare has no memory-safety preconditions. CLONE_NEWNS implies
            // CLONE_FS, which only this thread gets a copy of.
            let rc = unsafe { libc::unshare(libc::CLONE_NEWNS) };
            assert_eq!(rc, 0, "unshare -m: {}", std::io::Error::last_os_error());
            mount(
                None,
                Path::new("/"),
                None,
                libc::MS_REC | libc::MS_PRIVATE,
                None,
            );
            f()
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

fn cstr(s: &str) -> CString {
    CString::new(s).unwrap()
}

/// mount(2), asserting success.
pub fn mount(
    source: Option<&str>,
    target: &Path,
    fstype: Option<&str>,
    flags: libc::c_ulong,
    data: Option<&str>,
) {
    let source = source.map(cstr);
    let fstype = fstype.map(cstr);
    let data = data.map(cstr);
    let target_c = cstr(target.to_str().unwrap());
    let ptr = |c: &Option<CString>| c.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: every pointer is null or a NUL-terminated string that outlives the call.
    let rc = unsafe {
        libc::mount(
            ptr(&source),
            target_c.as_ptr(),
            ptr(&fstype),
            flags,
            data.as_ref()
                .map_or(std::ptr::null(), |d| d.as_ptr().cast()),
        )
    };
    assert_eq!(
        rc,
        0,
        "mount {target:?}: {}",
        std::io::Error::last_os_error()
    );
}

/// A tmpfs of `size` over `dir`, owned by `uid`, mode 0700.
pub fn tmpfs(dir: &Path, size: &str, uid: u32) {
    let opts = format!("size={size},mode=0700,uid={uid},gid={uid}");
    mount(Some("tmpfs"), dir, Some("tmpfs"), 0, Some(&opts));
}

/// Unmount `dir` (a sandbox mount; the namespace would drop it anyway).
pub fn umount(dir: &Path) {
    let c = cstr(dir.to_str().unwrap());
    // SAFETY: c is a NUL-terminated path.
    unsafe { libc::umount2(c.as_ptr(), libc::MNT_DETACH) };
}

/// Fill the file system holding `dir` to the last byte with `dir/filler`.
pub fn fill(dir: &Path) -> std::fs::File {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler")).unwrap();
    for chunk in [4096usize, 1] {
        let buf = vec![b'x'; chunk];
        loop {
            match f.write(&buf) {
                Ok(n) if n == chunk => {}
                Ok(_) => break,
                Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
                Err(e) => panic!("filling {}: {e}", dir.display()),
            }
        }
    }
    f
}

/// Every file of the state directory parses as what it is, no temporary is left, and the
/// evidence log reads without an anomaly. Returns (files checked, evidence rows).
pub fn check_state_files(dir: &Path) -> (usize, Vec<headroom_core::evidence_csv::ReadRow>) {
    check_state_files_beside(dir, None)
}

/// The same while `writer` (a pid) still runs: its own temporary may be in flight between
/// its creation and its rename or removal, so only that one name is let through. A
/// temporary it failed to remove is still there after it exits, where `check_state_files`
/// refuses it.
pub fn check_state_files_beside(
    dir: &Path,
    writer: Option<i32>,
) -> (usize, Vec<headroom_core::evidence_csv::ReadRow>) {
    let in_flight = writer.map(|pid| format!(".tmp.{pid}"));
    let mut checked = 0;
    let mut rows = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        if in_flight.as_deref().is_some_and(|t| name.ends_with(t)) {
            continue;
        }
        assert!(!name.contains(".tmp."), "a temporary was left: {name}");
        if name.ends_with(".json") {
            let bytes = std::fs::read(&path).unwrap();
            serde_json::from_slice::<serde_json::Value>(&bytes)
                .unwrap_or_else(|err| panic!("{name} does not parse ({err}): {bytes:?}"));
            checked += 1;
        } else if name.starts_with("evidence") && name.ends_with(".csv") {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                bytes.is_empty() || bytes.ends_with(b"\n"),
                "{name} ends inside a row"
            );
            let (r, anomalies) = headroom::testing::read_file(&path).unwrap();
            assert!(anomalies.is_empty(), "{name}: {anomalies:?}");
            rows.extend(r);
            checked += 1;
        }
    }
    (checked, rows)
}
