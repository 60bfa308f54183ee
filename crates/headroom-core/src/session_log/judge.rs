//! The file and directory rules (the module comment of `session_log` gives each choice):
//! what each entry of a log directory is, which files get the full budget and which only
//! their tail, each file opened without blocking and scanned backwards, and the files'
//! verdicts aggregated into the directory's.

use std::io;
use std::path::Path;
use std::time::Instant;

use super::{
    DirReport, DirVerdict, FileMeta, FileReport, FileSkipReason, FileVerdict, LogDirError,
    LogFiles, ReaderLimits, Stopwatch, UnknownWhy, judge_reader, line,
};

/// Judge one file as of `now` (unix seconds), by the same rules as a file in a directory.
pub fn judge_file(
    fs: &impl LogFiles,
    path: &Path,
    now: i64,
    limits: &ReaderLimits,
    clock: Stopwatch,
) -> FileReport {
    let started = clock();
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut report = match examine(fs, path, name) {
        Examined::Done(r) => r,
        Examined::Read(r) => read(fs, path, r, now, limits),
    };
    report.micros = micros_since(clock, started);
    report
}

/// Judge every file of `dir` as of `now` and aggregate: any file showing work makes the
/// directory active (the latest activity wins), one unknown file makes it unknown, and no
/// usable file leaves it unknown. `Err` only when the directory itself cannot be listed.
pub fn judge_dir(
    fs: &impl LogFiles,
    dir: &Path,
    now: i64,
    limits: &ReaderLimits,
    clock: Stopwatch,
) -> Result<DirReport, LogDirError> {
    let started = clock();
    match fs.metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => return Err(LogDirError::NotADirectory(dir.to_path_buf())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(LogDirError::Missing(dir.to_path_buf()));
        }
        Err(source) => {
            return Err(LogDirError::Unreadable {
                path: dir.to_path_buf(),
                source,
            });
        }
    }
    let unreadable = |source| LogDirError::Unreadable {
        path: dir.to_path_buf(),
        source,
    };
    let mut entries = fs.list(dir).map_err(unreadable)?;
    entries.sort();

    let mut examined = Vec::with_capacity(entries.len());
    for name in entries {
        let started = clock();
        let path = dir.join(&name);
        let ex = examine(fs, &path, name.to_string_lossy().into_owned());
        examined.push((path, ex, micros_since(clock, started)));
    }
    // The newest mtimes (an unknown one first) get the full budget; the rest their tail.
    let mut order: Vec<(usize, Option<i64>)> = examined
        .iter()
        .enumerate()
        .filter_map(|(i, (_, ex, _))| match ex {
            Examined::Read(r) => Some((i, r.mtime)),
            Examined::Done(_) => None,
        })
        .collect();
    order.sort_by_key(|&(i, m)| (std::cmp::Reverse(m.map_or(i64::MAX, |m| m)), i));
    let candidates = order.len();
    let cap = limits.max_files.saturating_add(limits.max_tail_files);
    let over_cap = candidates > cap;
    let mut full = vec![false; examined.len()];
    for &(i, _) in order.iter().take(limits.max_files) {
        full[i] = true;
    }
    let tail = tail_limits(limits);

    let mut files = Vec::with_capacity(examined.len());
    for (i, (path, ex, examining)) in examined.into_iter().enumerate() {
        let started = clock();
        let mut report = match ex {
            Examined::Done(r) => r,
            Examined::Read(mut r) if over_cap => {
                r.verdict = FileVerdict::Skipped(FileSkipReason::TooManyFiles);
                r
            }
            Examined::Read(r) if full[i] => read(fs, &path, r, now, limits),
            Examined::Read(mut r) => {
                r.tail_only = true;
                read(fs, &path, r, now, &tail)
            }
        };
        report.micros = examining.saturating_add(micros_since(clock, started));
        files.push(report);
    }
    let verdict = if over_cap {
        DirVerdict::Unknown(UnknownWhy::TooManyFiles {
            files: candidates,
            cap,
        })
    } else {
        aggregate(&files)
    };
    let last_activity = match verdict {
        DirVerdict::Work { at } => Some(at),
        DirVerdict::HeartbeatOnly { since_at_least } => Some(since_at_least),
        DirVerdict::Unknown(_) => None,
    };
    Ok(DirReport {
        files,
        last_activity,
        verdict,
        micros: micros_since(clock, started),
    })
}

/// The limits of a tail-only read: [`ReaderLimits::tail`] bytes from the end, in one read
/// where it fits a chunk.
fn tail_limits(limits: &ReaderLimits) -> ReaderLimits {
    let tail = limits.tail.max(1);
    ReaderLimits {
        chunk: limits
            .chunk
            .min(usize::try_from(tail).unwrap_or(usize::MAX))
            .max(1),
        budget: tail,
        ..limits.clone()
    }
}

/// Max over the files' bounds (work wins a tie); any unknown file makes it unknown.
fn aggregate(files: &[FileReport]) -> DirVerdict {
    let mut best: Option<(i64, bool)> = None;
    for f in files {
        let candidate = match f.verdict {
            FileVerdict::Unknown => {
                return DirVerdict::Unknown(UnknownWhy::FileUnknown {
                    name: f.name.clone(),
                });
            }
            FileVerdict::Skipped(_) => continue,
            FileVerdict::Work { at } => (at, true),
            FileVerdict::HeartbeatOnly { since_at_least } => (since_at_least, false),
        };
        best = best.max(Some(candidate));
    }
    match best {
        None => DirVerdict::Unknown(UnknownWhy::NoUsableFiles),
        Some((at, true)) => DirVerdict::Work { at },
        Some((t, false)) => DirVerdict::HeartbeatOnly { since_at_least: t },
    }
}

/// What a look at a file's metadata settles.
#[derive(Debug)]
enum Examined {
    /// Skipped, or unknown: no need to open it.
    Done(FileReport),
    /// A regular file with content: its content decides, whatever its mtime (the report
    /// holds name, size and mtime).
    Read(FileReport),
}

fn examine(fs: &impl LogFiles, path: &Path, name: String) -> Examined {
    let mut report = FileReport {
        name,
        size: 0,
        mtime: None,
        verdict: FileVerdict::Unknown,
        bytes_read: 0,
        micros: 0,
        tail_only: false,
        error: None,
    };
    let skip = |mut r: FileReport, why| {
        r.verdict = FileVerdict::Skipped(why);
        Examined::Done(r)
    };
    if line::contains_ignore_ascii_case(report.name.as_bytes(), b"telemetry") {
        // Shown, never read, and never a reason for unknown (not even when it vanished).
        if let Ok(m) = fs.metadata(path) {
            report.size = m.len;
            report.mtime = m.mtime;
        }
        return skip(report, FileSkipReason::Telemetry);
    }
    let meta = match fs.metadata(path) {
        Ok(m) => m,
        Err(e) => {
            let dangling = e.kind() == io::ErrorKind::NotFound && fs.is_symlink(path);
            if dangling {
                return skip(report, FileSkipReason::DanglingLink);
            }
            report.error = Some(e.to_string());
            return Examined::Done(report);
        }
    };
    report.size = meta.len;
    report.mtime = meta.mtime;
    if meta.is_dir() {
        return skip(report, FileSkipReason::Directory);
    }
    if !meta.is_file() {
        return skip(report, FileSkipReason::NotRegular);
    }
    if meta.len == 0 {
        return skip(report, FileSkipReason::Empty);
    }
    // An old mtime is no reason not to read: it can lag the content (module docs).
    Examined::Read(report)
}

/// Open (never blocking: the name may have become a pipe since it was examined), re-check
/// what was opened, and scan it backwards.
fn read<F: LogFiles>(
    fs: &F,
    path: &Path,
    mut report: FileReport,
    now: i64,
    limits: &ReaderLimits,
) -> FileReport {
    let opened = fs.open(path);
    let (mut file, meta): (F::File, FileMeta) = match opened {
        Ok(x) => x,
        Err(e) => {
            report.verdict = FileVerdict::Unknown;
            report.error = Some(e.to_string());
            return report;
        }
    };
    if !meta.is_file() {
        report.verdict = FileVerdict::Skipped(FileSkipReason::NotRegular);
        return report;
    }
    report.size = meta.len;
    report.mtime = meta.mtime.or(report.mtime);
    if meta.len == 0 {
        report.verdict = FileVerdict::Skipped(FileSkipReason::Empty);
        return report;
    }
    let scan = judge_reader(&mut file, meta.len, now, limits);
    report.verdict = scan.verdict;
    report.bytes_read = scan.bytes_read;
    report.error = scan.error.map(|e| e.to_string());
    report
}

fn micros_since(clock: Stopwatch, t: Instant) -> u64 {
    u64::try_from(clock().saturating_duration_since(t).as_micros()).unwrap_or(u64::MAX)
}
