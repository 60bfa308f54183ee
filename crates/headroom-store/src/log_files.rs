//! The agents' session logs, read for `core::session_log`: the file system behind its
//! [`LogFiles`] (which files the rules open, how far back and how much they read are decided
//! there, file by file as they read). Not headroom's own files, but the same every OS and
//! nothing about processes, so the store reads them rather than the platform.

use std::ffi::OsString;
use std::fs::{self, File, Metadata};
use std::io;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::core::session_log::{
    self, DirReport, FileKind, FileMeta, LogDirError, LogFiles, ReaderLimits, Stopwatch,
};

/// The OS's file system.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Disk;

impl LogFiles for Disk {
    type File = File;

    fn metadata(&self, path: &Path) -> io::Result<FileMeta> {
        fs::metadata(path).map(|m| meta(&m))
    }

    fn is_symlink(&self, path: &Path) -> bool {
        fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<OsString>> {
        fs::read_dir(dir)?
            .map(|entry| entry.map(|e| e.file_name()))
            .collect()
    }

    fn open(&self, path: &Path) -> io::Result<(File, FileMeta)> {
        let f = open_nonblocking(path)?;
        let m = f.metadata()?;
        Ok((f, meta(&m)))
    }
}

/// [`session_log::judge_file`] on the disk.
#[cfg(test)]
pub(crate) fn judge_file(
    path: &Path,
    now: i64,
    limits: &ReaderLimits,
    clock: Stopwatch,
) -> session_log::FileReport {
    session_log::judge_file(&Disk, path, now, limits, clock)
}

/// [`session_log::judge_dir`] on the disk.
pub fn judge_dir(
    dir: &Path,
    now: i64,
    limits: &ReaderLimits,
    clock: Stopwatch,
) -> Result<DirReport, LogDirError> {
    session_log::judge_dir(&Disk, dir, now, limits, clock)
}

fn meta(m: &Metadata) -> FileMeta {
    let kind = if m.is_file() {
        FileKind::File
    } else if m.is_dir() {
        FileKind::Directory
    } else {
        FileKind::Other
    };
    FileMeta {
        kind,
        len: m.len(),
        mtime: m.modified().ok().and_then(unix_secs),
    }
}

fn open_nonblocking(path: &Path) -> io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    crate::platform::files::nonblocking(&mut options);
    options.open(path)
}

/// A `SystemTime` as unix seconds (negative before 1970); `None` beyond `i64`.
fn unix_secs(t: SystemTime) -> Option<i64> {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).ok(),
        // Whole seconds, rounded down like the positive side: 0.5 s before 1970 is -1.
        Err(e) => {
            let d = e.duration();
            let up = u64::from(d.subsec_nanos() > 0);
            i64::try_from(d.as_secs().saturating_add(up))
                .ok()
                .map(|s| -s)
        }
    }
}

#[cfg(test)]
mod edge_tests;
#[cfg(test)]
mod fixtures;
#[cfg(test)]
mod replay_tests;
