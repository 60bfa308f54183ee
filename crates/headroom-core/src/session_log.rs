//! The liveness guard's second signal: whether a coding-agent session is still doing work,
//! judged from the CONTENT of its log directory (the session child's `--log-dir`), never
//! from mtimes. The leak this guard exists to stop refreshed its own log every 30 s with
//! telemetry flushes, so "newest write" read a session dead for 17 h as alive forever
//! (seed: "The log signal reads content, not mtime"; reference A.7).
//!
//! Pure rules over what a [`LogFiles`] answers: which files to open, how far back and how
//! much to read are decided here, file by file as it reads; the file system itself is the
//! caller's (`headroom::store::log_files::Disk`, or a test's). It reads no clock: `now` is
//! an argument, and the time each file cost is measured on the caller's [`Stopwatch`]. `line`
//! holds the timestamp parser and the heartbeat denylist, `backwards` the chunked reader,
//! `judge` the file and directory rules; this file holds the public types.
//!
//! Rules where the reference is silent, decided here (all err towards "active"):
//! - A line stamped after `now` is a clock running ahead of ours; it was written no later
//!   than now, so live it counts as now ([`FutureLines::CountAsNow`]). A replay
//!   (`log-probe --at`) ignores such lines: they did not exist yet ([`FutureLines::Ignore`]).
//! - The upper bound reported when the budget or the file runs out is the timestamp of the
//!   earliest heartbeat read *by position*, not the smallest timestamp: the unread part was
//!   written before it, and with out-of-order lines this is the later bound.
//! - The line the byte budget cuts is not judged (its timestamp was not read), so a file
//!   whose last 4 MiB hold no whole timestamped line (one 10 MB line without a newline, a
//!   binary blob, a huge continuation after the last entry) is unknown, never idle.
//! - The timestamp's fraction may have any number of digits (the reference looked at 40
//!   bytes only): a longer one would otherwise turn a work line into a continuation.
//! - Every file is opened, whatever its mtime: an mtime can lag its content (`touch -d`,
//!   `cp -p`, `rsync -a`, `tar x`, a network mount whose clock is behind), and a session
//!   writing work every second once read `IDLE (released)` because its log's mtime was
//!   three days old. The mtime may only ever make a file count as *more* recent: the
//!   [`ReaderLimits::max_files`] files with the newest mtimes (an unknown mtime first) get
//!   the full budget; the mtime never shortens or skips a read, and never sets a verdict.
//! - The bound, so a directory of thousands of old logs stays cheap: at most `max_files`
//!   (32) files are read with the full budget (4 MiB each), and at most
//!   [`ReaderLimits::max_tail_files`] (992) more only at their end ([`ReaderLimits::tail`],
//!   16 KiB each): at most 1,024 files opened and 143.5 MiB read per directory per poll,
//!   and for a file whose content is as old as its mtime, one read of its last 16 KiB
//!   (64 KiB for the newest 32). A tail that runs out inside recent heartbeats reports the
//!   oldest one seen, an upper bound that errs towards active. A directory with more
//!   candidate files than both caps is unknown without a file opened (listing and `stat`
//!   only), which protects.
//! - Directories, sockets, pipes and devices in the log directory are skipped (a pipe would
//!   block the reader: files are opened non-blocking and re-checked after opening), and so
//!   are dangling symlinks (persistent junk must not protect forever). A file that vanishes
//!   between listing and reading, or cannot be opened, is unknown: that protects once, and
//!   the next poll sees the directory as it now is.

mod backwards;
mod bytes;
mod judge;
mod line;

use std::ffi::OsString;
use std::io::{self, Read, Seek};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub use backwards::{BackwardScan, judge_reader};
pub use judge::{judge_dir, judge_file};
pub use line::{HEARTBEATS, is_heartbeat, parse_timestamp};

/// The file system the reader judges, as the rules below need it. The core opens nothing
/// itself: `headroom::store::log_files::Disk` answers from the OS.
pub trait LogFiles {
    /// An opened file, read from its end backwards.
    type File: Read + Seek;
    /// The metadata of `path`, a symlink followed to its target.
    fn metadata(&self, path: &Path) -> io::Result<FileMeta>;
    /// Whether `path` itself is a symlink (not followed).
    fn is_symlink(&self, path: &Path) -> bool;
    /// The names in `dir`, in any order. An entry that cannot be read fails the listing: a
    /// listing cut short may have lost the one file that shows work.
    fn list(&self, dir: &Path) -> io::Result<Vec<OsString>>;
    /// `path` opened for reading without blocking (the name may have become a pipe since
    /// it was examined), and the metadata of what was opened.
    fn open(&self, path: &Path) -> io::Result<(Self::File, FileMeta)>;
}

/// What the reader looks at in a file's metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileMeta {
    pub kind: FileKind,
    /// Bytes.
    pub len: u64,
    /// The last modification, unix seconds; `None` when the OS did not say.
    pub mtime: Option<i64>,
}

impl FileMeta {
    pub fn is_dir(&self) -> bool {
        self.kind == FileKind::Directory
    }

    pub fn is_file(&self) -> bool {
        self.kind == FileKind::File
    }
}

/// A file's type, as far as the reader cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    File,
    Directory,
    /// A socket, pipe or device.
    Other,
}

/// How much one file may cost, and how far back the reader looks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReaderLimits {
    /// Bytes per read, from the end backwards (64 KiB; at least 1).
    pub chunk: usize,
    /// Bytes one file may cost per judgement (4 MiB; at least one chunk).
    pub budget: u64,
    /// A heartbeat this many seconds old ends the scan: nothing newer was work (6 h).
    pub horizon_secs: i64,
    /// Files read with the full budget in one directory: those with the newest mtimes (32).
    pub max_files: usize,
    /// Further files read only at their end, [`tail`](Self::tail) bytes each (992); a
    /// directory with more candidate files than both caps together is unknown, unread.
    pub max_tail_files: usize,
    /// What one of those further files may cost (16 KiB; at least 1).
    pub tail: u64,
    /// What a line stamped after `now` means.
    pub future: FutureLines,
}

impl Default for ReaderLimits {
    fn default() -> Self {
        Self {
            chunk: 64 * 1024,
            budget: 4 * 1024 * 1024,
            horizon_secs: 6 * 3600,
            max_files: 32,
            max_tail_files: 992,
            tail: 16 * 1024,
            future: FutureLines::CountAsNow,
        }
    }
}

/// Lines whose timestamp is after `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FutureLines {
    /// Live: the writer's clock runs ahead; the line was written by now and counts as now.
    CountAsNow,
    /// Replay as of an instant: the line did not exist yet and is ignored.
    Ignore,
}

/// What one file says about the session. Times are unix seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileVerdict {
    /// The newest line that is not a heartbeat.
    Work { at: i64 },
    /// Only heartbeats back to the horizon, the budget or the file's start: the last work
    /// was no later than `since_at_least`.
    HeartbeatOnly { since_at_least: i64 },
    /// No timestamped line read, or the file could not be read: protects.
    Unknown,
    /// Not evidence either way; left out of the directory's verdict.
    Skipped(FileSkipReason),
}

impl FileVerdict {
    /// The latest time the session can have worked, by this file; `None` when unknown or
    /// skipped.
    pub fn activity_bound(&self) -> Option<i64> {
        match *self {
            Self::Work { at } => Some(at),
            Self::HeartbeatOnly { since_at_least } => Some(since_at_least),
            Self::Unknown | Self::Skipped(_) => None,
        }
    }
}

/// Why a file was not judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileSkipReason {
    /// Its name contains `telemetry`: the leaking children write their queue files here,
    /// and a fresh `telemetry_queue….jsonl.delivered` once kept a finished session alive.
    Telemetry,
    /// Zero bytes: otherwise a forgotten empty file would protect its wrapper forever.
    Empty,
    Directory,
    /// A socket, pipe or device.
    NotRegular,
    /// A symlink to nothing.
    DanglingLink,
    /// More files than [`ReaderLimits::max_files`] and [`ReaderLimits::max_tail_files`]
    /// together; none was read.
    TooManyFiles,
}

impl FileSkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Telemetry => "telemetry",
            Self::Empty => "empty",
            Self::Directory => "directory",
            Self::NotRegular => "not-a-regular-file",
            Self::DanglingLink => "dangling-symlink",
            Self::TooManyFiles => "too-many-files",
        }
    }
}

/// One file's verdict and what it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// The file name (lossy UTF-8; not escaped for a terminal).
    pub name: String,
    pub size: u64,
    /// Unix seconds; `None` when the OS did not say.
    pub mtime: Option<i64>,
    pub verdict: FileVerdict,
    pub bytes_read: u64,
    pub micros: u64,
    /// Read only at its end ([`ReaderLimits::tail`] bytes): more files than
    /// [`ReaderLimits::max_files`], and this one not among the newest by mtime.
    pub tail_only: bool,
    /// The I/O error behind an `Unknown`, if there was one.
    pub error: Option<String>,
}

/// The directory's verdict: the latest activity over its files, or why it is unknown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirVerdict {
    Work { at: i64 },
    HeartbeatOnly { since_at_least: i64 },
    Unknown(UnknownWhy),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnknownWhy {
    /// Nothing left to judge once skipped files are set aside.
    NoUsableFiles,
    /// This file (the first by name) could not be interpreted.
    FileUnknown { name: String },
    /// `files` files to read, over the cap (`max_files` + `max_tail_files`).
    TooManyFiles { files: usize, cap: usize },
}

/// Every file of one log directory, sorted by name, and the verdict over them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirReport {
    pub files: Vec<FileReport>,
    /// The latest time the session can have worked; `None` = unknown, which protects.
    pub last_activity: Option<i64>,
    pub verdict: DirVerdict,
    /// What judging the whole directory cost, listing included.
    pub micros: u64,
}

impl DirReport {
    /// Seconds since the last activity as of `now` (never negative); `None` when unknown.
    pub fn age(&self, now: i64) -> Option<i64> {
        self.last_activity.map(|t| now.saturating_sub(t).max(0))
    }
}

/// The log directory itself could not be listed.
#[derive(Debug, thiserror::Error)]
pub enum LogDirError {
    #[error("log directory `{}` does not exist", .0.display())]
    Missing(PathBuf),
    #[error("`{}` is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("cannot read log directory `{}`", path.display())]
    Unreadable {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// The session child's log directory from its argv: `--log-dir DIR` or `--log-dir=DIR`,
/// first occurrence only (as the session itself would parse it). An empty or missing value
/// is `None`.
pub fn log_dir_from_argv(argv: &[String]) -> Option<PathBuf> {
    let mut args = argv.iter();
    while let Some(a) = args.next() {
        let value = if a == "--log-dir" {
            args.next().map(String::as_str)
        } else if let Some(v) = a.strip_prefix("--log-dir=") {
            Some(v)
        } else {
            continue;
        };
        return value.filter(|v| !v.is_empty()).map(PathBuf::from);
    }
    None
}

/// The monotonic clock a judgement times itself by (`micros` in the reports): the caller's
/// (commands pass `Instant`'s `now`), since the core reads no clock of its own.
pub type Stopwatch = fn() -> Instant;

// The tests time the reader on the real clock, as the callers do.
#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod proptests;
