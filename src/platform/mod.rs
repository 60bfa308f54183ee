//! THE boundary: the only code that talks to the OS about processes.
//!
//! `ProcessSource` returns data only; `ProcessControl` sends signals, and only to an
//! `Identity` (pid + start time + uid) that it re-reads and compares just before each signal.
//! Every decision about *whom* to signal lives in `core`.

#![allow(unsafe_code)]

#[cfg(unix)]
mod fd;
pub mod linux;
pub mod macos;
pub mod own_program;
#[cfg(unix)]
pub mod parent_watch;
#[cfg(unix)]
pub mod path_lookup;
#[cfg(unix)]
pub mod pressure;
pub mod replay;
#[cfg(unix)]
mod signal;
#[cfg(unix)]
pub mod signal_handlers;
#[cfg(unix)]
mod spawn;
#[cfg(unix)]
pub mod start;
pub mod stop_flag;
#[cfg(unix)]
pub mod supervise;
#[cfg(unix)]
mod tty;
pub mod unsupported;

use crate::core::hangs::AppObservation;
use crate::core::snapshot::{Detail, Identity, MemoryTotals, ProcessRecord, Snapshot};
/// The tree walk is pure logic over a table: it lives in the core.
pub use crate::core::tree_select::{TreeQuery, reachable, select_tree};

#[derive(Debug, thiserror::Error)]
pub enum PlatformError {
    #[error("{what}: unsupported on {os}")]
    Unsupported { os: &'static str, what: String },
    #[error("permission denied for pid `{pid}`")]
    PermissionDenied { pid: i32 },
    #[error("no such process `{pid}`")]
    NoSuchProcess { pid: i32 },
    /// Says its cause itself and so does not also return it as `source()`: a front end
    /// walking the chain would say the OS error twice (`exit::report`).
    #[error("{context}: {cause}")]
    Io {
        context: String,
        cause: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
}

/// `run --records-fd FD`: the inherited descriptor as a file to write to (open, writable,
/// 3 or above), made close-on-exec so the command does not inherit it.
#[cfg(unix)]
pub fn adopt_records_fd(fd: i32) -> std::io::Result<std::fs::File> {
    fd::adopt_for_writing(fd)
}

/// Have `cmd`'s child find `fd` (open in this process) at `target` (3 or above), inherited
/// across exec: how `headroom mcp` hands `run` its `--records-fd`. Every other descriptor
/// stays close-on-exec, so a concurrent spawn never holds this one. `dup2` between fork and
/// exec is async-signal-safe.
#[cfg(unix)]
pub fn pass_fd(
    cmd: &mut std::process::Command,
    fd: std::os::fd::RawFd,
    target: std::os::fd::RawFd,
) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure calls only dup2 and fcntl, async-signal-safe, on descriptors this
    // process owns; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if fd == target {
                let fl = libc::fcntl(fd, libc::F_GETFD);
                if fl < 0 || libc::fcntl(fd, libc::F_SETFD, fl & !libc::FD_CLOEXEC) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(fd, target) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
}

/// A blocking, close-on-exec pipe: (read end as a file, write end), for `pass_fd`.
#[cfg(unix)]
pub fn pipe_pair() -> std::io::Result<(std::fs::File, std::os::fd::OwnedFd)> {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0 as std::ffi::c_int; 2];
    // SAFETY: fds is an array of two ints, as pipe(2) requires.
    fd::cvt(unsafe { libc::pipe(fds.as_mut_ptr()) })?;
    // SAFETY: both descriptors were just created and are owned by nothing else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    for f in [fds[0], fds[1]] {
        // SAFETY: fcntl on descriptors owned above.
        fd::cvt(unsafe { libc::fcntl(f, libc::F_SETFD, libc::FD_CLOEXEC) })?;
    }
    Ok((std::fs::File::from(r), w))
}

impl PlatformError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            context: context.into(),
            cause: source,
        }
    }
}

/// This process's soft RLIMIT_NPROC: (value, unlimited, why it could not be read). Both
/// backends report it; what it means (origin, enforcement) is theirs to say.
#[cfg(unix)]
pub(crate) fn rlimit_nproc() -> (Option<i64>, bool, Option<String>) {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `rl` is a valid, writable rlimit.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NPROC, &mut rl) };
    if rc != 0 {
        (
            None,
            false,
            Some(std::io::Error::last_os_error().to_string()),
        )
    } else if rl.rlim_cur == libc::RLIM_INFINITY || rl.rlim_cur > i64::MAX as u64 {
        (None, true, None)
    } else {
        (Some(rl.rlim_cur as i64), false, None)
    }
}

/// CPU time (user + system) this process has used so far, in nanoseconds.
#[cfg(unix)]
pub fn own_cpu_ns() -> Option<u64> {
    // SAFETY: rusage is plain integers; all-zero is valid.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: ru is a valid, writable rusage.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return None;
    }
    let ns = |t: libc::timeval| -> Option<u64> {
        Some(u64::try_from(t.tv_sec).ok()? * 1_000_000_000 + u64::try_from(t.tv_usec).ok()? * 1_000)
    };
    Some(ns(ru.ru_utime)? + ns(ru.ru_stime)?)
}

/// Read-only access to the process table.
pub trait ProcessSource {
    /// `linux`, `macos`, or the OS a replayed snapshot was taken on.
    fn os(&self) -> &str;
    /// The whole table, the ceilings and memory totals. A process that vanishes mid-scan is
    /// skipped, not an error.
    fn snapshot(&self, detail: Detail) -> Result<Snapshot, PlatformError>;
    /// Re-read one process, for identity checks: full detail except the executable path,
    /// which no check needs and which costs a readlink (a libproc call on macOS) per check.
    /// `Ok(None)` when it does not exist.
    fn process(&self, pid: i32) -> Result<Option<ProcessRecord>, PlatformError>;
    /// The command line of a process of the current user.
    fn argv(&self, pid: i32) -> Result<Vec<String>, PlatformError>;
    /// The working directory of a process of the current user (a session child's relative
    /// `--log-dir` is resolved against it).
    fn cwd(&self, pid: i32) -> Result<std::path::PathBuf, PlatformError> {
        Err(PlatformError::Unsupported {
            os: std::env::consts::OS,
            what: format!("the working directory of pid `{pid}`"),
        })
    }
    /// Physical memory totals.
    fn memory(&self) -> Result<MemoryTotals, PlatformError>;

    /// The caller takes slot snapshots again and again (`watch`): from now on a backend may
    /// keep between snapshots what makes the next one cheaper (Linux keeps descriptors,
    /// within a raised soft RLIMIT_NOFILE). Until then every snapshot reads each process
    /// once and keeps nothing: a one-shot reading pays for no cache.
    fn keep_between_rounds(&self) {}

    /// An upper bound of the user's slots and the ceilings as they stand, read without
    /// listing a process (`core::round_plan`): what `watch` reads in a round the wall is
    /// provably far from. `None` when this backend has none (a replay, a fake
    /// `--proc-root`, another OS, or before the first slot snapshot of a repeated round on
    /// Linux): every round reads the table.
    fn slot_bound(&self) -> Option<crate::core::round_plan::Bound> {
        None
    }

    /// Every process below `query.roots` by live parent links, every process in
    /// `query.pgid`, and every pid in `query.extra` with everything below it, read with full
    /// detail except the executable path (the roots themselves are not read).
    ///
    /// This is `run --limit`'s per-interval read: backends override it to read only the
    /// tree instead of the whole table. A process that vanishes mid-read is skipped.
    fn tree_sample(&self, query: &TreeQuery<'_>) -> Result<Vec<ProcessRecord>, PlatformError> {
        Ok(select_tree(self.snapshot(Detail::Full)?, query))
    }
}

/// A signal headroom sends or forwards, by its name (`SIGTERM`, `SIGKILL`…).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub enum Signal {
    #[serde(rename = "SIGTERM")]
    Term,
    #[serde(rename = "SIGKILL")]
    Kill,
    #[serde(rename = "SIGSTOP")]
    Stop,
    #[serde(rename = "SIGCONT")]
    Cont,
    #[serde(rename = "SIGINT")]
    Int,
    #[serde(rename = "SIGHUP")]
    Hup,
}

impl Signal {
    /// The number on this OS (SIGSTOP/SIGCONT differ between Linux and macOS).
    #[cfg(unix)]
    pub fn number(self) -> i32 {
        match self {
            Self::Term => libc::SIGTERM,
            Self::Kill => libc::SIGKILL,
            Self::Stop => libc::SIGSTOP,
            Self::Cont => libc::SIGCONT,
            Self::Int => libc::SIGINT,
            Self::Hup => libc::SIGHUP,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Term => "SIGTERM",
            Self::Kill => "SIGKILL",
            Self::Stop => "SIGSTOP",
            Self::Cont => "SIGCONT",
            Self::Int => "SIGINT",
            Self::Hup => "SIGHUP",
        }
    }
}

/// What happened to one signal request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    Sent,
    /// The pid no longer exists (or is a zombie, which is already dead).
    Gone,
    /// Something else now holds the pid, or the identity could not be read: no signal.
    IdentityChanged,
}

/// Sends signals. Implementations must re-read the target and compare its identity before
/// each signal, and must refuse pid ≤ 1 whatever the caller decided.
pub trait ProcessControl {
    fn signal(&self, target: &Identity, sig: Signal) -> Result<Delivery, PlatformError>;
    /// Whether the exact process is still alive (a zombie is not).
    fn alive(&self, target: &Identity) -> Result<bool, PlatformError>;
    /// Alive, confirmed gone, or the pid now names another process. The default reads
    /// `alive` and cannot tell "changed" from "gone"; `UnixControl` tells them apart.
    fn presence(&self, target: &Identity) -> Result<Presence, PlatformError> {
        Ok(if self.alive(target)? {
            Presence::Alive
        } else {
            Presence::Gone
        })
    }
}

/// What an identity check found (`ProcessControl::presence`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// The same process, alive.
    Alive,
    /// No such pid, or a zombie with the same start time: it has exited.
    Gone,
    /// The pid names another process (other start time or uid).
    Changed,
}

/// What one look at the GUI apps found (`hangs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppScan {
    /// False when the WindowServer or LaunchServices interface could not be used.
    pub available: bool,
    pub unavailable_reason: Option<String>,
    /// The running GUI apps whose responsiveness could be asked (an app without a process
    /// serial number cannot be, and is left out rather than guessed).
    pub apps: Vec<AppObservation>,
}

/// Read-only access to the running GUI apps and their responsiveness as the WindowServer
/// (Force Quit) sees it. Data only: every decision is in `core::hangs`.
pub trait AppSource {
    fn scan(&self) -> AppScan;
}

/// The GUI-app source of this OS: macOS only; elsewhere `Unsupported` (`hangs` needs the
/// macOS WindowServer).
pub fn native_apps() -> Result<Box<dyn AppSource>, PlatformError> {
    #[cfg(target_os = "macos")]
    {
        Ok(Box::new(macos::apps::MacApps::new()))
    }
    #[cfg(not(target_os = "macos"))]
    {
        Err(PlatformError::Unsupported {
            os: std::env::consts::OS,
            what: "hangs".into(),
        })
    }
}

/// `path` with its symlinks, `.` and `..` resolved, when it exists (`fs::canonicalize`);
/// `None` when it does not or cannot be read. The hang monitor's bundle-path resolver
/// (`core::hangs::Resolve`): the core compares paths, this reads the disk.
pub fn canonical_path(path: &str) -> Option<String> {
    std::fs::canonicalize(path)
        .ok()
        .map(|p| p.to_string_lossy().into_owned())
}

/// The backend for the OS this binary runs on.
pub fn native() -> Box<dyn ProcessSource> {
    #[cfg(target_os = "linux")]
    {
        Box::new(linux::LinuxSource::new(linux::Roots::default()))
    }
    #[cfg(target_os = "macos")]
    {
        Box::new(macos::MacSource::new())
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        Box::new(unsupported::Unsupported)
    }
}

/// How a signal reaches its process after the identity check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SignalPath {
    /// Through a pidfd opened before the identity check (Linux 5.3+): no pid reuse between.
    Pidfd,
    /// A plain `kill(2)`: a pid reused in the instant between cannot be excluded.
    Kill,
}

#[cfg(unix)]
pub fn signal_delivery() -> SignalPath {
    signal::delivery()
}

/// Signals go to real processes, each re-checked just before it against the **live OS**,
/// never against `_decided_from` (the source the decision came from: a recording or a fake
/// `/proc` that names a real pid must not be able to vouch for it). The argument only
/// documents the pairing at the call sites.
#[cfg(unix)]
pub fn native_control<'a>(_decided_from: &'a dyn ProcessSource) -> Box<dyn ProcessControl + 'a> {
    Box::new(signal::UnixControl::new(native()))
}

#[cfg(not(unix))]
pub fn native_control<'a>(_source: &'a dyn ProcessSource) -> Box<dyn ProcessControl + 'a> {
    Box::new(unsupported::Unsupported)
}

/// Real uid of this process.
pub fn current_uid() -> u32 {
    #[cfg(unix)]
    {
        // SAFETY: getuid has no preconditions and cannot fail.
        unsafe { libc::getuid() }
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// The local clock's offset from UTC at instant `t` (Unix seconds), in seconds east, as
/// the C library's time zone rules (`TZ`, `/etc/localtime`) give it; None where it cannot say.
pub fn utc_offset_secs(t: i64) -> Option<i32> {
    #[cfg(unix)]
    {
        // time_t is 64 bits on the targets built today, 32 on others.
        #[allow(clippy::useless_conversion)]
        let t: libc::time_t = t.try_into().ok()?;
        // SAFETY: tm is plain old data; zeroed is a valid value.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        // SAFETY: both pointers are valid for the call; localtime_r is the reentrant form.
        let r = unsafe { libc::localtime_r(&t, &mut tm) };
        if r.is_null() {
            return None;
        }
        i32::try_from(tm.tm_gmtoff).ok()
    }
    #[cfg(not(unix))]
    {
        let _ = t;
        None
    }
}

/// Narrower than this, a layout gives up on columns and only cuts lines.
const MIN_SCREEN_WIDTH: usize = 20;

/// The width tables are laid out for: the terminal's, else `$COLUMNS` (as a shell exports
/// it); none known (a pipe, no variable): no limit, every column kept.
pub fn screen_width() -> Option<usize> {
    terminal_columns()
        .or_else(|| size_from_env("COLUMNS"))
        .map(|w| w.max(MIN_SCREEN_WIDTH))
}

/// The height a screenful has: the terminal's, else `$LINES`; none known, no limit.
pub fn screen_height() -> Option<usize> {
    terminal_rows()
        .or_else(|| size_from_env("LINES"))
        .map(|h| h.max(5))
}

fn size_from_env(name: &str) -> Option<usize> {
    std::env::var(name)
        .ok()?
        .trim()
        .parse()
        .ok()
        .filter(|&n| n > 0)
}

/// The height of the terminal on stdout in rows, None when stdout is not a terminal.
pub fn terminal_rows() -> Option<usize> {
    #[cfg(unix)]
    {
        // SAFETY: winsize is plain old data; zeroed is a valid value.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: TIOCGWINSZ writes one winsize into the valid pointer it is given.
        let rc = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) };
        if rc == 0 && ws.ws_row > 0 {
            return Some(usize::from(ws.ws_row));
        }
    }
    None
}

/// The width of the terminal on stdout in columns, None when stdout is not a terminal.
pub fn terminal_columns() -> Option<usize> {
    #[cfg(unix)]
    {
        // SAFETY: winsize is plain old data; zeroed is a valid value.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        // SAFETY: TIOCGWINSZ writes one winsize into the valid pointer it is given.
        let rc = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) };
        if rc == 0 && ws.ws_col > 0 {
            return Some(usize::from(ws.ws_col));
        }
    }
    None
}

/// Milliseconds of a clock that stops while the machine sleeps, comparable across processes
/// within one boot (Linux CLOCK_MONOTONIC, macOS CLOCK_UPTIME_RAW): time asleep is not idle
/// time. It starts again near 0 after a reboot. A failed read is an error, never 0: a 0
/// would make every stored reading look like it came from the future, or a fresh one look
/// hours old.
pub fn awake_ms() -> Result<i64, PlatformError> {
    #[cfg(unix)]
    {
        #[cfg(target_os = "macos")]
        let clock = libc::CLOCK_UPTIME_RAW;
        #[cfg(not(target_os = "macos"))]
        let clock = libc::CLOCK_MONOTONIC;
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid, writable timespec.
        if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
            return Err(PlatformError::io(
                "cannot read the awake clock",
                std::io::Error::last_os_error(),
            ));
        }
        // time_t and c_long are i64 on every 64-bit target headroom supports.
        #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
        Ok(ts.tv_sec as i64 * 1000 + ts.tv_nsec as i64 / 1_000_000)
    }
    #[cfg(not(unix))]
    Err(PlatformError::Unsupported {
        os: std::env::consts::OS,
        what: "the awake clock".into(),
    })
}

/// What identifies the current boot, so that CPU history (pids, start times, awake-clock
/// readings) from an earlier boot is discarded: Linux `/proc/sys/kernel/random/boot_id`,
/// macOS `kern.bootsessionuuid` (not `kern.boottime`, which every clock step moves:
/// `macos::boot`). Always the live OS, never a replay root.
pub fn boot_id() -> Result<String, PlatformError> {
    #[cfg(target_os = "macos")]
    {
        // A `uuid_string_t` is 37 bytes; room to spare, and the parser stops at the NUL.
        let mut buf = [0u8; 64];
        let mut len = buf.len();
        // SAFETY: the name is NUL-terminated; the out-buffer is `len` writable bytes.
        let rc = unsafe {
            libc::sysctlbyname(
                c"kern.bootsessionuuid".as_ptr(),
                buf.as_mut_ptr().cast::<libc::c_void>(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        if rc != 0 {
            return Err(PlatformError::io(
                "cannot read kern.bootsessionuuid",
                std::io::Error::last_os_error(),
            ));
        }
        macos::boot::parse_session_uuid(&buf[..len.min(buf.len())]).map_err(PlatformError::Invalid)
    }
    #[cfg(target_os = "linux")]
    {
        let path = "/proc/sys/kernel/random/boot_id";
        let text = std::fs::read_to_string(path).map_err(|e| PlatformError::io(path, e))?;
        let id = text.trim();
        if id.is_empty() {
            return Err(PlatformError::Invalid(format!("`{path}` is empty")));
        }
        Ok(id.to_string())
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    Err(PlatformError::Unsupported {
        os: std::env::consts::OS,
        what: "the boot identity".into(),
    })
}

/// Milliseconds since boot on a clock that is never stepped and counts time asleep (Linux
/// CLOCK_BOOTTIME, macOS CLOCK_MONOTONIC), comparable across processes within one boot:
/// what the hang cooldown is measured on, so that a wall clock set forward or back moves it
/// neither way. `None` where there is none.
pub fn boot_ms() -> Option<i64> {
    #[cfg(unix)]
    {
        #[cfg(target_os = "macos")]
        let clock = libc::CLOCK_MONOTONIC;
        #[cfg(not(target_os = "macos"))]
        let clock = libc::CLOCK_BOOTTIME;
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid, writable timespec.
        if unsafe { libc::clock_gettime(clock, &mut ts) } == 0 {
            #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
            return Some(ts.tv_sec as i64 * 1000 + ts.tv_nsec as i64 / 1_000_000);
        }
    }
    None
}
