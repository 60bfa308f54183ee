//! The evidence log on disk: `evidence.csv` in the state directory, one row per reading
//! and one per cleanup, the material for an upstream bug report. The rows, their columns and
//! their CSV (escaping, formula neutralising, the reader by column name) are
//! `core::evidence_csv`'s; this file writes and reads the files.
//!
//! The header is written when the file is created. A file whose header differs (a newer
//! version added a column) is rotated aside to `evidence.1.csv` rather than appended to
//! under a narrower header — a check OpenZombr added one row too late, leaving a 14-field row
//! under a 13-column header in its archive. Files also rotate at 4 MiB, keeping 3. Two
//! writers never tear or interleave a row: every append holds an advisory lock, and each row
//! is one `write` on an O_APPEND descriptor. A row that could be written only in part (a full
//! disk) or was torn by a SIGKILL mid-`write` is cut off, so the file always ends after a
//! whole row.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub use crate::core::evidence_csv::{Anomaly, ReadRow, Row, columns};
use crate::core::evidence_csv::{encode, parse};
use crate::store::fsio::{Lock, open_append};

pub const FILE: &str = "evidence.csv";
pub const MAX_BYTES: u64 = 4 * 1024 * 1024;
pub const KEEP: usize = 3;

/// The log in one directory.
#[derive(Debug, Clone)]
pub struct EvidenceLog {
    dir: PathBuf,
    max_bytes: u64,
    keep: usize,
}

impl EvidenceLog {
    pub fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            max_bytes: MAX_BYTES,
            keep: KEEP,
        }
    }

    /// A log that rotates at `max_bytes` (tests).
    pub fn with_limits(dir: &Path, max_bytes: u64, keep: usize) -> Self {
        Self {
            dir: dir.to_path_buf(),
            max_bytes,
            keep: keep.max(1),
        }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE)
    }

    fn rotated(&self, n: usize) -> PathBuf {
        self.dir.join(format!("evidence.{n}.csv"))
    }

    /// Shift `.1 → .2 → … → .keep` (the oldest drops out) and move the live file to `.1`.
    fn rotate(&self) -> Result<()> {
        let _ = std::fs::remove_file(self.rotated(self.keep));
        for n in (1..self.keep).rev() {
            let from = self.rotated(n);
            if from.exists() {
                std::fs::rename(&from, self.rotated(n + 1))
                    .with_context(|| format!("cannot rotate `{}`", from.display()))?;
            }
        }
        std::fs::rename(self.path(), self.rotated(1))
            .with_context(|| format!("cannot rotate `{}`", self.path().display()))
    }

    /// Append `rows` (one write per row), rotating first when the header differs or the file
    /// reached its size limit. All or an error; see `append_some` for how many went in.
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
        let error = self.append_inner(rows, &mut written).err();
        Appended { written, error }
    }

    fn append_inner(&self, rows: &[Row], written: &mut usize) -> Result<()> {
        let path = self.path();
        let _lock = Lock::acquire(&path)?;
        let header = encode(&columns())?;
        if let Ok(meta) = std::fs::symlink_metadata(&path) {
            if meta.file_type().is_file() && meta.len() > 0 {
                let (first, whole) = first_line(&path)?;
                // The start of this header without its newline is a torn header (a writer
                // killed creating the file): no row follows it, and the cut below empties
                // the file, so there is nothing to rotate aside (rotating would push out
                // the oldest archive). Any other first line is kept, rotated aside.
                let torn = !whole && header.starts_with(first.as_bytes());
                if !torn && first.as_bytes() != header.strip_suffix(b"\n").unwrap_or(&header)
                    || meta.len() >= self.max_bytes
                {
                    self.rotate()?;
                }
            }
        }
        let mut f = open_append(&path)
            .with_context(|| format!("cannot open evidence log `{}`", path.display()))?;
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
            write(&mut f, &header)?;
        }
        for row in rows {
            write(&mut f, &encode(&row.csv_fields()?)?)?;
            *written += 1;
        }
        Ok(())
    }

    /// Every file of the log, oldest first.
    pub fn files(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = (1..=self.keep.max(KEEP))
            .rev()
            .map(|n| self.rotated(n))
            .filter(|p| p.exists())
            .collect();
        if self.path().exists() {
            v.push(self.path());
        }
        v
    }
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
        std::io::Read::read_exact(f, chunk)?;
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

/// The file's first line, and whether it ends in a newline (else it is all the file holds).
fn first_line(path: &Path) -> Result<(String, bool)> {
    let f = File::open(path)
        .with_context(|| format!("cannot read evidence log `{}`", path.display()))?;
    let mut line = String::new();
    // A binary file is not a header we wrote: treat invalid UTF-8 as a mismatch.
    if BufReader::new(f).read_line(&mut line).is_err() {
        return Ok((String::new(), true));
    }
    let whole = line.ends_with('\n');
    Ok((line.trim_end_matches(['\n', '\r']).to_string(), whole))
}

/// Read one file: its rows and its anomalies (`core::evidence_csv::parse`). A file whose
/// header does not begin with `at` (`timestamp` before) is not an evidence log: an error naming it.
pub fn read_file(path: &Path) -> Result<(Vec<ReadRow>, Vec<Anomaly>)> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read evidence log `{}`", path.display()))?;
    parse(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::slot_reading::fixture::sample;

    fn row(n: u64) -> Row {
        let mut reading = sample();
        reading.processes += n;
        Row {
            top_parent: Some((87537, "agency".into(), 600)),
            session_signal: "no-session".into(),
            ..Row::new(reading, "poll")
        }
    }

    #[test]
    fn header_and_rows_in_the_documented_format() {
        let d = tempfile::tempdir().unwrap();
        let log = EvidenceLog::new(d.path());
        log.append(&[row(0), row(1)]).unwrap();
        let text = std::fs::read_to_string(log.path()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], columns().join(","));
        assert_eq!(
            lines[0],
            "at,uid,processes,tasks,zombies,used,limit,limit_source,usage_pct,free_slots,level,\
             growth_per_min,eta_seconds,trend_samples,partial,top_parent_pid,top_parent_name,\
             top_parent_zombies,session_signal,action,result,override"
        );
        assert_eq!(
            lines[1],
            "2026-08-29T22:42:41Z,501,3869,,3326,3869,4000,per-uid,96.73,131,critical,10.0,786,4,false,87537,agency,600,no-session,poll,,"
        );
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn names_with_commas_and_newlines_stay_one_row() {
        let d = tempfile::tempdir().unwrap();
        let log = EvidenceLog::new(d.path());
        let mut r = row(0);
        r.top_parent = Some((1, "we,ird\nname".into(), 3));
        log.append(&[r]).unwrap();
        let (rows, anomalies) = read_file(&log.path()).unwrap();
        assert!(anomalies.is_empty());
        // Escaped as on a terminal: one row is one line, whatever the name holds.
        assert_eq!(rows[0].top_parent_name.as_deref(), Some("we,ird\\nname"));
        assert_eq!(
            std::fs::read_to_string(log.path()).unwrap().lines().count(),
            2
        );
    }

    #[test]
    fn formula_names_are_neutralised_but_numbers_are_not() {
        let d = tempfile::tempdir().unwrap();
        let log = EvidenceLog::new(d.path());
        let names = [
            "=cmd|' /C calc'!A0",
            "+1",
            "-2+3",
            "@SUM(A1)",
            "\tx",
            "\rx",
            "agency",
        ];
        let rows: Vec<Row> = names
            .iter()
            .map(|n| {
                let mut r = row(0);
                r.top_parent = Some((1, (*n).into(), 3));
                r.reading.growth_per_min = Some(-1.5);
                r
            })
            .collect();
        log.append(&rows).unwrap();
        let (back, anomalies) = read_file(&log.path()).unwrap();
        assert!(anomalies.is_empty());
        let got: Vec<String> = back
            .iter()
            .map(|r| r.top_parent_name.clone().unwrap())
            .collect();
        assert_eq!(
            got,
            [
                "'=cmd|' /C calc'!A0",
                "'+1",
                "'-2+3",
                "'@SUM(A1)",
                "'\\tx",
                "'\\rx",
                "agency"
            ]
        );
        let text = std::fs::read_to_string(log.path()).unwrap();
        assert!(text.lines().nth(1).unwrap().contains(",-1.5,"), "{text}");
    }

    #[test]
    fn a_torn_last_row_is_cut_off_before_appending() {
        let d = tempfile::tempdir().unwrap();
        let log = EvidenceLog::new(d.path());
        log.append(&[row(0)]).unwrap();
        let whole = std::fs::read(log.path()).unwrap();
        // A writer killed mid-row left half of one.
        let mut torn = whole.clone();
        torn.extend_from_slice(b"2026-08-29T22:42:41Z,3869,33");
        std::fs::write(log.path(), &torn).unwrap();
        let done = log.append_some(&[row(1), row(2)]);
        assert!(done.error.is_none());
        assert_eq!(done.written, 2);
        let (rows, anomalies) = read_file(&log.path()).unwrap();
        assert!(anomalies.is_empty(), "{anomalies:?}");
        assert_eq!(
            rows.iter().map(|r| r.reading.processes).collect::<Vec<_>>(),
            vec![Some(3869), Some(3870), Some(3871)]
        );
        // A torn header (killed while creating the file) is cut to nothing and rewritten,
        // not rotated aside: that would push the oldest archive out for an empty file.
        std::fs::write(log.path(), b"at,uid,proc").unwrap();
        log.append(&[row(3)]).unwrap();
        assert_eq!(read_file(&log.path()).unwrap().0.len(), 1);
        assert_eq!(log.files(), vec![log.path()], "nothing rotated");
        // Controls: a line of one's own without a newline is not a torn header of ours, and
        // a whole header of another layout: both are rotated aside, their text kept.
        std::fs::write(log.path(), b"notes").unwrap();
        log.append(&[row(5)]).unwrap();
        assert_eq!(std::fs::read(&log.files()[0]).unwrap(), b"notes");
        std::fs::remove_file(&log.files()[0]).unwrap();
        std::fs::write(
            log.path(),
            b"timestamp,zombies,action,result\n2026-08-29T22:42:41Z,7,poll,\n",
        )
        .unwrap();
        log.append(&[row(4)]).unwrap();
        assert_eq!(log.files().len(), 2);
        assert_eq!(read_file(&log.files()[0]).unwrap().0.len(), 1);
    }

    #[test]
    fn a_different_header_is_rotated_aside_and_kept() {
        let d = tempfile::tempdir().unwrap();
        let old = "timestamp,total_procs,zombies\n2026-08-28T18:09:53Z,801,239\n";
        std::fs::write(d.path().join(FILE), old).unwrap();
        let log = EvidenceLog::new(d.path());
        log.append(&[row(0)]).unwrap();
        assert_eq!(
            std::fs::read_to_string(d.path().join("evidence.1.csv")).unwrap(),
            old
        );
        assert!(
            std::fs::read_to_string(log.path())
                .unwrap()
                .starts_with("at,uid,processes,tasks,")
        );
        // A matching header is left alone.
        log.append(&[row(1)]).unwrap();
        assert_eq!(read_file(&log.path()).unwrap().0.len(), 2);
        assert!(!d.path().join("evidence.2.csv").exists());
    }

    #[test]
    fn size_rotation_keeps_three() {
        let d = tempfile::tempdir().unwrap();
        let log = EvidenceLog::with_limits(d.path(), 512, 3);
        for i in 0..40 {
            log.append(&[row(i)]).unwrap();
        }
        assert!(d.path().join("evidence.1.csv").exists());
        assert!(d.path().join("evidence.3.csv").exists());
        assert!(!d.path().join("evidence.4.csv").exists());
        assert!(std::fs::metadata(log.path()).unwrap().len() < 1024);
        for f in log.files() {
            let (rows, anomalies) = read_file(&f).unwrap();
            assert!(anomalies.is_empty() && !rows.is_empty(), "{}", f.display());
        }
        assert_eq!(log.files().last(), Some(&log.path()));
    }

    #[test]
    fn the_archived_over_long_final_row_is_reported_not_dropped_silently() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("evidence.1.csv");
        std::fs::write(
            &p,
            crate::core::evidence_csv::fixture::archived_14_field_row(),
        )
        .unwrap();
        let (rows, anomalies) = read_file(&p).unwrap();
        assert_eq!(rows.len(), 86);
        assert_eq!(anomalies.len(), 1);
        assert_eq!(
            (
                anomalies[0].line,
                anomalies[0].fields,
                anomalies[0].expected
            ),
            (88, 14, 13)
        );
        assert_eq!(rows[0].reading.zombies, Some(239));
        assert_eq!(
            rows[0].reading.processes,
            Some(801),
            "read under its new name"
        );
        assert_eq!(
            rows[0].reading.limit_source, None,
            "an old layout lacks the column"
        );
    }

    #[test]
    fn a_file_that_is_not_evidence_is_an_error_naming_it() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("evidence.csv");
        std::fs::write(&p, b"\x00\x01\x02garbage\xff\nmore").unwrap();
        let e = read_file(&p).unwrap_err();
        assert!(
            format!("{e:#}").contains("not a headroom evidence log"),
            "{e:#}"
        );
        // And appending to it rotates it aside instead of writing under a foreign header.
        EvidenceLog::new(d.path()).append(&[row(0)]).unwrap();
        assert!(d.path().join("evidence.1.csv").exists());
        assert_eq!(read_file(&p).unwrap().0.len(), 1);
    }
}
