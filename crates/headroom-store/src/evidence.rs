//! The evidence log on disk: `evidence.csv` in the state directory, one row per reading
//! and one per cleanup, the material for an upstream bug report. The rows, their columns and
//! their CSV (escaping, formula neutralising, the reader by column name) are
//! `core::evidence_csv`'s; this file writes and reads the files.
//!
//! **Who writes which file.** A writer appends to `evidence.csv` when its first line is the
//! writer's own header (or the file is missing, empty, or holds a torn start of that
//! header). When it holds anything else — the header of another layout, whose writer may
//! still be running (a `watch` started before `brew upgrade` keeps the old binary), or a
//! line of no layout (a power cut's zero-filled block, a user's notes) — the writer appends
//! to its own layout's file, `evidence-<id>.csv` (`core::evidence_csv::layout_id`), and
//! leaves `evidence.csv` as it is. A writer never renames, rotates or cuts a file whose first
//! line it does not own, so two versions share the directory without either pushing the
//! other's history out; the reader reads every family and orders rows by time. (Writers
//! before this rule rotated any header not their own to `evidence.1.csv`; against them this
//! one loses nothing, as it never writes the file they rotate.)
//!
//! Files rotate at 4 MiB, 3 kept per family (`evidence.N.csv`, `evidence-<id>.N.csv`). Two
//! writers never tear or interleave a row: every append holds one advisory lock for the
//! directory (`evidence.csv.lock`, whichever file it writes), and each row is one `write` on
//! an O_APPEND descriptor. A row that could be written only in part (a full disk) or was
//! torn by a SIGKILL mid-`write` is cut off, so the file always ends after a whole row.
//!
//! **Reading while writers rotate.** The reader takes the same lock just long enough to list
//! and open every file and note its length, then reads the open files up to those lengths
//! (a rename does not move an open file, an unlinked one stays readable), so a rotation can
//! neither hide a file nor show one twice. Where the lock cannot be taken (a directory it
//! may not write) it lists, opens and lists again until both listings name the same files,
//! and reads each file (by device and inode) once.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub(crate) use crate::core::evidence_csv::{Anomaly, ReadRow};
use crate::core::evidence_csv::{
    AnomalyKind, FirstLine, Item, Reader, encode, judge_first_line, layout_id,
};
pub use crate::core::evidence_csv::{Row, columns};
use crate::fsio::{Lock, open_append};

pub(crate) const FILE: &str = "evidence.csv";
pub(crate) const MAX_BYTES: u64 = 4 * 1024 * 1024;
pub(crate) const KEEP: usize = 3;
/// The stem every file of the log starts with.
const STEM: &str = "evidence";

/// The log in one directory, written in one layout (this version's columns).
#[derive(Debug, Clone)]
pub struct EvidenceLog {
    dir: PathBuf,
    max_bytes: u64,
    keep: usize,
    /// This writer's header, newline included.
    header: Vec<u8>,
}

/// One rotating series of files: `<stem>.csv`, `<stem>.1.csv` … `<stem>.<keep>.csv`.
#[derive(Debug, Clone)]
struct Family {
    dir: PathBuf,
    stem: String,
}

impl Family {
    fn live(&self) -> PathBuf {
        self.dir.join(format!("{}.csv", self.stem))
    }

    fn rotated(&self, n: usize) -> PathBuf {
        self.dir.join(format!("{}.{n}.csv", self.stem))
    }

    /// Shift `.1 → .2 → … → .keep` (the oldest drops out) and move the live file to `.1`.
    fn rotate(&self, keep: usize) -> Result<()> {
        let _ = std::fs::remove_file(self.rotated(keep));
        for n in (1..keep).rev() {
            let from = self.rotated(n);
            if from.exists() {
                std::fs::rename(&from, self.rotated(n + 1))
                    .with_context(|| format!("cannot rotate `{}`", from.display()))?;
            }
        }
        let live = self.live();
        std::fs::rename(&live, self.rotated(1))
            .with_context(|| format!("cannot rotate `{}`", live.display()))
    }
}

impl EvidenceLog {
    pub fn new(dir: &Path) -> Self {
        Self::with_limits(dir, MAX_BYTES, KEEP)
    }

    /// A log that rotates at `max_bytes` (tests).
    pub fn with_limits(dir: &Path, max_bytes: u64, keep: usize) -> Self {
        Self {
            dir: dir.to_path_buf(),
            max_bytes,
            keep: keep.max(1),
            // The header of the columns this version writes: a fixed list, which encodes.
            header: encode(&columns()).unwrap_or_default(),
        }
    }

    /// The same log written by a writer of another layout, whose header names `columns`
    /// (tests: a future or an older version beside this one).
    #[cfg(test)]
    pub(crate) fn with_layout(dir: &Path, max_bytes: u64, columns: &[&str]) -> Self {
        Self {
            header: encode(columns).unwrap_or_default(),
            ..Self::with_limits(dir, max_bytes, KEEP)
        }
    }

    /// `evidence.csv`: the file every version looks at first.
    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    fn primary(&self) -> Family {
        Family {
            dir: self.dir.clone(),
            stem: STEM.into(),
        }
    }

    /// The file this layout writes while `evidence.csv` belongs to another.
    fn own(&self) -> Family {
        Family {
            dir: self.dir.clone(),
            stem: format!("{STEM}-{}", layout_id(&self.header)),
        }
    }

    /// What `path`'s first line is to this writer; None for a missing or empty file, or
    /// one that is not a regular file (`open_append` then says what it is).
    fn judge(&self, path: &Path) -> Result<Option<FirstLine>> {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return Ok(None);
        };
        if !meta.file_type().is_file() || meta.len() == 0 {
            return Ok(None);
        }
        let (first, whole) = first_line(path, self.header.len() + 1)?;
        Ok(Some(judge_first_line(&first, whole, &self.header)))
    }

    /// Append `rows` (one write per row). All or an error; see `append_some` for how many
    /// went in.
    pub fn append(&self, rows: &[Row]) -> Result<()> {
        let done = self.append_some(rows);
        match done.error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Append `rows` in order, stopping at the first that cannot be written (a full disk).
    /// The file only ever ends after a whole row: a row written in part is cut off again, and
    /// a torn last row left by a writer killed mid-`write` is cut off before appending. The
    /// caller keeps the rows after `written` and offers them again.
    pub fn append_some(&self, rows: &[Row]) -> Appended {
        let mut written = 0;
        let lines = rows.iter().map(|r| encode(&r.csv_fields()?));
        let error = self.append_lines(lines, &mut written).err();
        Appended { written, error }
    }

    /// Append encoded rows of this layout (`written` counts those that went in).
    pub(crate) fn append_lines(
        &self,
        lines: impl Iterator<Item = Result<Vec<u8>>>,
        written: &mut usize,
    ) -> Result<()> {
        let _lock = Lock::acquire(&self.path())?;
        let family = match self.judge(&self.path())? {
            None | Some(FirstLine::Own | FirstLine::TornOwn) => self.primary(),
            Some(FirstLine::OtherLayout | FirstLine::Foreign) => self.own(),
        };
        let path = family.live();
        match self.judge(&path)? {
            Some(FirstLine::Own) if file_len(&path) >= self.max_bytes => {
                family.rotate(self.keep)?;
            }
            // Only this layout's own file can get here with a line not its header (its name
            // is this header's): it is this writer's to set aside, where the reader reports
            // what it cannot read.
            Some(FirstLine::OtherLayout | FirstLine::Foreign) => family.rotate(self.keep)?,
            _ => {}
        }
        let mut f = open_append(&path)
            .with_context(|| format!("cannot open evidence log `{}`", path.display()))?;
        // A torn start of this header (a writer killed creating the file) is cut to nothing
        // here: no row follows it, and nothing is rotated for it.
        let mut len = cut_torn_tail(&mut f)
            .with_context(|| format!("cannot repair evidence log `{}`", path.display()))?;
        let empty = len == 0;
        let mut write = |f: &mut File, bytes: &[u8]| -> Result<()> {
            match f.write_all(bytes) {
                Ok(()) => {
                    len += bytes.len() as u64;
                    Ok(())
                }
                Err(e) => {
                    // A short write (ENOSPC part-way) leaves half a row: cut it off again.
                    let _ = f.set_len(len);
                    Err(e).with_context(|| {
                        format!("cannot append to evidence log `{}`", path.display())
                    })
                }
            }
        };
        if empty {
            write(&mut f, &self.header)?;
        }
        for line in lines {
            write(&mut f, &line?)?;
            *written += 1;
        }
        Ok(())
    }

    /// Every file of the log now: each family's rotated files, oldest first, then its live
    /// one; `evidence.csv`'s family first.
    pub fn files(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return vec![];
        };
        let mut found: Vec<(String, usize, PathBuf)> = entries
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let (stem, n) = log_name(&name)?;
                Some((stem.to_string(), n, e.path()))
            })
            .collect();
        // Families by stem (`evidence` sorts before `evidence-…`), and in each the highest
        // number (the oldest) first, the live file (0) last.
        found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        found.into_iter().map(|(_, _, p)| p).collect()
    }

    /// Every file of the log, open, with the length it had: a consistent set while writers
    /// append and rotate (see the module's doc). A file that cannot be opened (a symbolic
    /// link, no permission) is there with its error, to be reported.
    pub fn open_all(&self) -> Vec<OpenFile> {
        match take_lock_briefly(&self.path()) {
            Some(_lock) => dedupe(self.files().into_iter().map(OpenFile::open).collect()),
            None => self.open_stable(),
        }
    }

    /// Without the lock: open what one listing names until the next listing names the same
    /// files, each still under the name it was opened by.
    pub(crate) fn open_stable(&self) -> Vec<OpenFile> {
        let mut opened = Vec::new();
        for _ in 0..20 {
            let names = self.files();
            opened = names.iter().cloned().map(OpenFile::open).collect();
            if self.files() == names && opened.iter().all(OpenFile::still_named) {
                break;
            }
        }
        dedupe(opened)
    }
}

/// The writers' lock, if it can be had within a second (a writer holds it for one append);
/// None when no writer has made the lock file yet (a reader never makes it: root reading a
/// user's directory would leave a lock file the user's writers cannot open), when it cannot
/// be opened, or when it stays held.
fn take_lock_briefly(path: &Path) -> Option<Lock> {
    let mut lock_file = path.as_os_str().to_owned();
    lock_file.push(".lock");
    if !std::fs::symlink_metadata(&lock_file).is_ok_and(|m| m.is_file()) {
        return None;
    }
    for _ in 0..100 {
        match Lock::try_acquire(path) {
            Ok(Some(l)) => return Some(l),
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(10)),
            Err(_) => return None,
        }
    }
    None
}

/// `(stem, n)` of a file of the log: `evidence.csv` is `("evidence", 0)`,
/// `evidence.2.csv` `("evidence", 2)`, `evidence-0a1b2c3d.1.csv` `("evidence-0a1b2c3d", 1)`.
fn log_name(name: &str) -> Option<(&str, usize)> {
    let base = name.strip_suffix(".csv")?;
    let (stem, n) = match base.rsplit_once('.') {
        Some((stem, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (stem, n.parse().ok()?)
        }
        _ => (base, 0),
    };
    let ok = stem == STEM
        || stem.strip_prefix("evidence-").is_some_and(|id| {
            id.len() == 8
                && id
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        });
    ok.then_some((stem, n))
}

/// One file of the log, opened for reading.
#[derive(Debug)]
pub struct OpenFile {
    pub path: PathBuf,
    file: std::io::Result<(File, u64)>,
}

impl OpenFile {
    fn open(path: PathBuf) -> Self {
        let file = open_no_follow(&path).and_then(|f| {
            let len = f.metadata()?.len();
            Ok((f, len))
        });
        Self { path, file }
    }

    #[cfg(unix)]
    fn id(&self) -> Option<(u64, u64)> {
        use std::os::unix::fs::MetadataExt;
        let m = self.file.as_ref().ok()?.0.metadata().ok()?;
        Some((m.dev(), m.ino()))
    }

    #[cfg(not(unix))]
    fn id(&self) -> Option<(u64, u64)> {
        None
    }

    /// The name still leads to the file opened under it.
    #[cfg(unix)]
    fn still_named(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        let now = std::fs::symlink_metadata(&self.path)
            .ok()
            .map(|m| (m.dev(), m.ino()));
        now == self.id()
    }

    #[cfg(not(unix))]
    fn still_named(&self) -> bool {
        true
    }

    /// Read the file's rows and anomalies up to the length it had when opened, giving each
    /// to `each`; a file that could not be opened is one anomaly.
    pub fn read(self, each: &mut dyn FnMut(Item<'_>)) {
        let name = self.path.display().to_string();
        match self.file {
            Err(e) => each(Item::Anomaly(Anomaly {
                file: name,
                line: 0,
                fields: 0,
                expected: 0,
                text: format!("cannot read it: {e}"),
                reason: AnomalyKind::FileUnreadable,
                column: None,
                through_line: None,
            })),
            Ok((f, len)) => {
                let mut r = Reader::new(&name, f.take(len));
                while let Some(item) = r.next_item() {
                    each(item);
                }
            }
        }
    }
}

/// Each file once, however many names led to it during a rotation.
fn dedupe(files: Vec<OpenFile>) -> Vec<OpenFile> {
    let mut seen = std::collections::HashSet::new();
    files
        .into_iter()
        .filter(|f| f.id().is_none_or(|id| seen.insert(id)))
        .collect()
}

/// Open for reading, never through a symbolic link (a planted link could point the
/// reader, and the text of its anomalies, at another user's file).
fn open_no_follow(path: &Path) -> std::io::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    crate::platform::files::refuse_links_nonblocking(&mut o);
    let f = o.open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(f)
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// How much of a batch `append_some` wrote.
#[derive(Debug)]
pub struct Appended {
    /// Rows now in the file, from the start of the batch.
    pub written: usize,
    /// Why the rest were not.
    pub error: Option<anyhow::Error>,
}

/// Cut the file back to the end of its last whole row and return its length. Every row ends
/// in a newline and no field holds one (`csv_fields` escapes them), so a file that does not
/// end in `\n` ends in a torn row — written by a process killed, or a disk filled, mid-row.
fn cut_torn_tail(f: &mut File) -> std::io::Result<u64> {
    use std::io::{Seek, SeekFrom};
    let len = f.metadata()?.len();
    if len == 0 {
        return Ok(0);
    }
    let mut keep = 0;
    let mut end = len;
    let mut buf = vec![0u8; 4096];
    while end > 0 {
        let start = end.saturating_sub(buf.len() as u64);
        let chunk = &mut buf[..(end - start) as usize];
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(chunk)?;
        if end == len && chunk.last() == Some(&b'\n') {
            return Ok(len);
        }
        if let Some(i) = memchr::memrchr(b'\n', chunk) {
            keep = start + i as u64 + 1;
            break;
        }
        end = start;
    }
    f.set_len(keep)?;
    Ok(keep)
}

/// The file's first line (at most `max` bytes of it, without its newline), and whether a
/// newline ended it within them.
fn first_line(path: &Path, max: usize) -> Result<(Vec<u8>, bool)> {
    let f = open_no_follow(path)
        .with_context(|| format!("cannot read evidence log `{}`", path.display()))?;
    let mut buf = Vec::with_capacity(max);
    f.take(max as u64)
        .read_to_end(&mut buf)
        .with_context(|| format!("cannot read evidence log `{}`", path.display()))?;
    Ok(match memchr::memchr(b'\n', &buf) {
        Some(i) => {
            buf.truncate(i);
            if buf.last() == Some(&b'\r') {
                buf.pop();
            }
            (buf, true)
        }
        None => (buf, false),
    })
}

/// Read one file whole: its rows and its anomalies (tests and tools; `evidence` streams).
pub fn read_file(path: &Path) -> Result<(Vec<ReadRow>, Vec<Anomaly>)> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read evidence log `{}`", path.display()))?;
    Ok(crate::core::evidence_csv::parse(path, &bytes))
}

#[cfg(test)]
mod tests;
