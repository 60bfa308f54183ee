//! THE boundary: the only code that talks to the OS about processes.
//!
//! `ProcessSource` returns data only; `ProcessControl` sends signals, and only to an
//! `Identity` (pid + start time + uid) that it re-reads and compares just before each signal.
//! Every decision about *whom* to signal lives in `core`.
//!
//! A crate of its own (`crates/headroom-platform`): it depends on `headroom-core` and on no
//! other part of headroom, and the `headroom` crate depends on no system-call crate, so the
//! compiler refuses an upward import from here and a system call outside (ARCHITECTURE.md).
//! `headroom` names it `crate::platform`.

/// The pure rules (`crates/headroom-core`): `crate::core::…` paths are that crate's.
use headroom_core as core;

mod clock;
#[cfg(unix)]
mod fd;
pub mod files;
pub mod linux;
pub(crate) mod macos;
pub mod own_program;
#[cfg(unix)]
pub(crate) mod parent_watch;
#[cfg(unix)]
pub mod path_lookup;
#[cfg(unix)]
pub mod pressure;
pub mod replay;
mod screen;
#[cfg(unix)]
mod signal;
#[cfg(unix)]
pub(crate) mod signal_handlers;
#[cfg(unix)]
mod spawn;
#[cfg(unix)]
pub mod start;
pub mod stdio;
pub mod stop_flag;
#[cfg(unix)]
pub mod supervise;
#[cfg(unix)]
mod tty;
pub(crate) mod unsupported;

use crate::core::hangs::AppObservation;
use crate::core::snapshot::{Detail, Identity, MemoryTotals, ProcessRecord, Snapshot};
/// The tree walk is pure logic over a table: it lives in the core.
pub use crate::core::tree_select::{TreeQuery, select_tree};
#[cfg(unix)]
pub use clock::own_cpu_ns;
pub use clock::{awake_ms, boot_id, boot_ms, now_ms, utc_offset_secs};
#[cfg(unix)]
pub use fd::{adopt_records_fd, pass_fd, pipe_pair};
pub use screen::{screen_height, screen_width, terminal_columns};

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
    // rustix's getrlimit cannot fail (the resource is valid); `None` is RLIM_INFINITY.
    match rustix::process::getrlimit(rustix::process::Resource::Nproc).current {
        Some(cur) if cur <= i64::MAX as u64 => (Some(cur as i64), false, None),
        _ => (None, true, None),
    }
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

    /// Takes back a snapshot its caller is done with, so the next one can reuse its
    /// allocation: a long-lived `watch` reads the same table every few minutes, and a fresh
    /// vector of 6,000 records is a megabyte to fault in (313 page faults in its first
    /// whole-table round after start-up, measured; 31 recycled). Default: dropped.
    fn recycle(&self, snapshot: Snapshot) {
        drop(snapshot);
    }

    /// An upper bound of the user's slots and the ceilings as they stand, read without
    /// listing a process (`core::round_plan`): what `watch` reads in a round the wall is
    /// provably far from. `None` when this backend has none (a replay, a fake
    /// `--proc-root`, another OS, or before the first slot snapshot of a repeated round on
    /// Linux): every round reads the table.
    fn slot_bound(&self) -> Option<std::sync::Arc<crate::core::round_plan::Bound>> {
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
        rustix::process::getuid().as_raw()
    }
    #[cfg(not(unix))]
    {
        0
    }
}
