//! `run --limit`'s per-interval read on Linux: only the watched tree, found by walking
//! `/proc/PID/task/TID/children` down from headroom (a child subreaper, so orphans of the
//! tree hang below it too), never the whole table (except the occasional process-group scan
//! the caller asks for).
//!
//! The `stat`, `status` and `children` files of each member stay open between samples and
//! are re-read with `pread` at offset 0 (procfs regenerates them), which saves the open and
//! close of every file every interval. A kept descriptor is tied to the process it was
//! opened for: once that process is reaped, reading it fails with ESRCH even if the pid has
//! been reused, so a stale descriptor can never report another process.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::{self, File};
use std::path::Path;

use super::procfs;
use super::read::{gone, parse_pid, read_into, read_whole};
use super::records::ProcReader;
use crate::core::snapshot::{Detail, ProcessRecord, Snapshot};
use crate::platform::{PlatformError, TreeQuery, current_uid, select_tree};

/// Processes whose files are kept open (three descriptors each, well under the usual soft
/// limit of 1,024); members beyond are read by path.
const KEEP_OPEN: usize = 256;

/// The files of the last tree sampled, by pid, kept open until the next sample.
pub(super) type KeptOpen = RefCell<HashMap<i32, OpenProc>>;

/// The open `/proc` files of one process.
#[derive(Debug)]
pub(crate) struct OpenProc {
    status: File,
    stat: File,
    /// The main thread's `children` (enough for a single-threaded process).
    children: File,
}

impl OpenProc {
    fn open(dir: &Path, pid: i32) -> std::io::Result<Self> {
        Ok(Self {
            status: File::open(dir.join("status"))?,
            stat: File::open(dir.join("stat"))?,
            children: File::open(dir.join(format!("task/{pid}/children")))?,
        })
    }
}

/// Re-read a procfs file from offset 0 into `buf`; `Ok(None)` when its process is gone.
fn pread_into(f: &File, buf: &mut String) -> std::io::Result<Option<()>> {
    match read_whole(f, buf) {
        // A reaped process can also read as empty.
        Ok(len) => Ok((len > 0).then_some(())),
        Err(e) if gone(&e) => Ok(None),
        Err(e) => Err(e),
    }
}

#[derive(Debug, Default)]
struct Bufs {
    status: String,
    stat: String,
    kids: String,
}

impl ProcReader {
    /// `ProcessSource::tree_sample` for Linux (see the module header): files kept open in
    /// `open` between calls; `full` reads the whole table where the kernel has no
    /// `children` files.
    pub(super) fn sample_tree(
        &self,
        open: &KeptOpen,
        query: &TreeQuery<'_>,
        full: &dyn Fn() -> Result<Snapshot, PlatformError>,
    ) -> Result<Vec<ProcessRecord>, PlatformError> {
        let uid = current_uid();
        let mut bufs = Bufs::default();
        let mut kept = open.take();
        let mut next: HashMap<i32, OpenProc> = HashMap::with_capacity(kept.len());
        let mut out = Vec::new();
        let mut seen: HashSet<i32> = query.roots.iter().copied().collect();
        let mut queue: VecDeque<i32> = VecDeque::new();
        for &root in query.roots {
            match self.children_of(root, None, &mut bufs.kids)? {
                Some(c) => queue.extend(c),
                // No `children` files (a kernel without CONFIG_PROC_CHILDREN): read the
                // whole table instead.
                None if self.proc_path(root.to_string()).exists() => {
                    return Ok(select_tree(full()?, query));
                }
                None => {}
            }
        }
        queue.extend(query.extra.iter().copied());
        if let Some(pgid) = query.pgid {
            queue.extend(self.group_pids(pgid)?);
        }
        while let Some(pid) = queue.pop_front() {
            if !seen.insert(pid) {
                continue;
            }
            let Some((rec, open)) = self.read_member(pid, uid, kept.remove(&pid), &mut bufs) else {
                continue;
            };
            if !rec.is_zombie() {
                let kids = match (&open, rec.threads) {
                    (Some(o), Some(1)) => pread_into(&o.children, &mut bufs.kids)
                        .ok()
                        .flatten()
                        .map(|()| procfs::parse_children(&bufs.kids).collect()),
                    _ => self.children_of(pid, rec.threads, &mut bufs.kids)?,
                };
                queue.extend(kids.into_iter().flatten());
            }
            if let Some(o) = open.filter(|_| next.len() < KEEP_OPEN) {
                next.insert(pid, o);
            }
            out.push(rec);
        }
        // Whatever was kept and not seen again is closed here.
        *open.borrow_mut() = next;
        Ok(out)
    }

    /// One member, through its kept files when there are any (a stale set — the process
    /// is gone — is dropped and the pid read afresh, in case a new process holds it).
    fn read_member(
        &self,
        pid: i32,
        uid: u32,
        kept: Option<OpenProc>,
        bufs: &mut Bufs,
    ) -> Option<(ProcessRecord, Option<OpenProc>)> {
        let dir = self.proc_path(pid.to_string());
        if let Some(o) = kept {
            if let Some(rec) = self.read_open(&o, pid, uid, &dir, bufs) {
                return Some((rec, Some(o)));
            }
        }
        match OpenProc::open(&dir, pid) {
            Ok(o) => {
                let rec = self.read_open(&o, pid, uid, &dir, bufs)?;
                Some((rec, Some(o)))
            }
            Err(e) if gone(&e) => None,
            // Out of descriptors, or a file that cannot be opened: read it by path.
            Err(_) => self
                .read_process(pid, uid, Detail::Full, false, &mut bufs.stat)
                .ok()
                .flatten()
                .map(|r| (r, None)),
        }
    }

    fn read_open(
        &self,
        o: &OpenProc,
        pid: i32,
        uid: u32,
        dir: &Path,
        bufs: &mut Bufs,
    ) -> Option<ProcessRecord> {
        pread_into(&o.status, &mut bufs.status).ok()??;
        pread_into(&o.stat, &mut bufs.stat).ok()??;
        let status = procfs::parse_status(&bufs.status);
        self.record(pid, uid, dir, &status, Some(&bufs.stat), false)
            .ok()
    }

    /// Children of `pid` from `/proc/PID/task/TID/children` (one file per thread: a child
    /// is listed under the thread that forked it). `Ok(None)` when the process is gone or
    /// the kernel has no such files.
    fn children_of(
        &self,
        pid: i32,
        threads: Option<u32>,
        buf: &mut String,
    ) -> Result<Option<Vec<i32>>, PlatformError> {
        let task = self.proc_path(format!("{pid}/task"));
        let tids: Vec<i32> = if threads == Some(1) {
            vec![pid]
        } else {
            match fs::read_dir(&task) {
                Ok(rd) => rd
                    .filter_map(|e| e.ok().and_then(|e| parse_pid(&e.file_name())))
                    .collect(),
                Err(_) => return Ok(None),
            }
        };
        let mut out = Vec::new();
        let mut any = false;
        for tid in tids {
            if read_into(&task.join(format!("{tid}/children")), buf)?.is_some() {
                any = true;
                out.extend(procfs::parse_children(buf));
            }
        }
        Ok(any.then_some(out))
    }

    /// Pids in process group `pgid`: one pass over `/proc/*/stat` (the only way to find a
    /// group on Linux; `run` does it every few seconds, not every interval).
    fn group_pids(&self, pgid: i32) -> Result<Vec<i32>, PlatformError> {
        let dir = fs::read_dir(&self.roots.proc).map_err(|e| {
            PlatformError::io(format!("cannot list `{}`", self.roots.proc.display()), e)
        })?;
        let mut buf = String::with_capacity(512);
        let mut out = Vec::new();
        for entry in dir.flatten() {
            let Some(pid) = parse_pid(&entry.file_name()) else {
                continue;
            };
            if let Ok(Some(())) = read_into(&entry.path().join("stat"), &mut buf) {
                if procfs::parse_stat(&buf).is_ok_and(|s| s.pgrp == pgid) {
                    out.push(pid);
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::linux::Roots;

    #[test]
    fn kept_files_follow_a_live_tree_and_drop_the_dead() {
        let reader = ProcReader::new(Roots::default());
        let open = KeptOpen::default();
        let no_full = || -> Result<Snapshot, PlatformError> {
            Err(PlatformError::Invalid(
                "this kernel has children files".into(),
            ))
        };
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let me = std::process::id() as i32;
        let q = TreeQuery {
            roots: &[me],
            pgid: None,
            extra: &[],
        };
        let first = reader.sample_tree(&open, &q, &no_full).unwrap();
        let pid = child.id() as i32;
        let rec = first
            .iter()
            .find(|r| r.pid == pid)
            .expect("the child is found");
        assert!(rec.start_time.is_some() && rec.cpu_ns.is_some());
        assert!(open.borrow().contains_key(&pid), "its files are kept open");
        let again = reader.sample_tree(&open, &q, &no_full).unwrap();
        assert_eq!(
            again.iter().find(|r| r.pid == pid).map(|r| r.start_time),
            Some(rec.start_time)
        );
        child.kill().unwrap();
        child.wait().unwrap();
        let after = reader.sample_tree(&open, &q, &no_full).unwrap();
        assert!(after.iter().all(|r| r.pid != pid));
        assert!(
            !open.borrow().contains_key(&pid),
            "and closed once it is gone"
        );
    }

    #[test]
    fn a_stale_descriptor_reads_as_gone() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let f = File::open(format!("/proc/{}/stat", child.id())).unwrap();
        let mut buf = String::new();
        assert!(pread_into(&f, &mut buf).unwrap().is_some());
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(pread_into(&f, &mut buf).unwrap(), None);
    }
}
