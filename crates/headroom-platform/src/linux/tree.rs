//! `run --limit`'s per-interval read on Linux: only the watched tree, found by walking
//! `/proc/PID/task/TID/children` down from headroom (a child subreaper, so orphans of the
//! tree hang below it too), never the whole table (except the occasional process-group scan
//! the caller asks for).
//!
//! The `stat`, `statm`, `status` and `children` files of each member stay open between
//! samples and are re-read with `pread` at offset 0 (procfs regenerates them), which saves
//! the open and close of every file every interval. A kept descriptor is tied to the process
//! it was opened for: once that process is reaped, reading it fails with ESRCH even if the
//! pid has been reused, so a stale descriptor can never report another process.
//!
//! `status` is what the kernel takes longest to generate (8.7 µs against 3.7 for `stat`
//! and 1.1 for `statm` on the benchmark's VM), and of it a sample needs only the real uid and
//! the footprint (RssAnon + VmSwap). `statm` moves whenever either memory figure does (a
//! page touched, swapped out or in changes its resident or shared count), so `status` is
//! read again only when the member's `statm` line differs from the one read with it, or
//! once `STATUS_EVERY` has passed (a uid changed by `setuid` alone); `stat` is read every
//! sample (state, parent, group, threads, CPU). headroom's own `children` (the root's) is
//! a kept file too, read when `/proc/self/task`'s link count says one thread.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::{self, File};
use std::path::Path;
use std::time::{Duration, Instant};

use super::pidfd_info::{open_task_dir, threads};
use super::procfs;
use super::read::{gone, parse_pid, read_into, read_whole};
use super::records::ProcReader;
use crate::core::snapshot::{Detail, ProcessRecord, Snapshot};
use crate::{PlatformError, TreeQuery, current_uid, select_tree};

/// Processes whose files are kept open (four descriptors each, 768 in all, under the usual
/// soft limit of 1,024); members beyond are read by path.
const KEEP_OPEN: usize = 192;

/// The longest a member's `status` is served from its last read while its `statm` stays the
/// same: how late a uid changed by `setuid` alone (no memory moved) can be seen.
const STATUS_EVERY: Duration = Duration::from_secs(1);

/// The files of the last tree sampled, kept open until the next sample.
pub(super) type KeptOpen = RefCell<TreeFiles>;

#[derive(Debug, Default)]
pub(crate) struct TreeFiles {
    /// The members', by pid.
    members: HashMap<i32, OpenProc>,
    /// The roots' (headroom itself), by pid.
    roots: HashMap<i32, OpenRoot>,
}

/// The open `/proc` files of one process.
#[derive(Debug)]
pub(crate) struct OpenProc {
    status: File,
    stat: File,
    statm: File,
    /// The main thread's `children` (enough for a single-threaded process).
    children: File,
    /// The last `status` read, for as long as `statm` says it still holds.
    last: Option<LastStatus>,
}

#[derive(Debug)]
struct LastStatus {
    /// The `statm` line read just before it.
    statm: String,
    status: procfs::ProcStatus,
    at: Instant,
}

impl OpenProc {
    fn open(dir: &Path, pid: i32) -> std::io::Result<Self> {
        Ok(Self {
            status: File::open(dir.join("status"))?,
            stat: File::open(dir.join("stat"))?,
            statm: File::open(dir.join("statm"))?,
            children: File::open(dir.join(format!("task/{pid}/children")))?,
            last: None,
        })
    }
}

/// A root's `/proc/PID/task` (its link count is its thread count plus 2) and its main
/// thread's `children`.
#[derive(Debug)]
pub(crate) struct OpenRoot {
    task: File,
    children: File,
}

impl OpenRoot {
    fn open(dir: &Path, pid: i32) -> std::io::Result<Self> {
        Ok(Self {
            task: open_task_dir(dir)?,
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
    statm: String,
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
        let TreeFiles {
            members: mut kept,
            roots: mut kept_roots,
        } = open.take();
        let mut next: HashMap<i32, OpenProc> = HashMap::with_capacity(kept.len());
        let mut next_roots = HashMap::with_capacity(query.roots.len());
        let mut out = Vec::new();
        let mut seen: HashSet<i32> = query.roots.iter().copied().collect();
        let mut queue: VecDeque<i32> = VecDeque::new();
        for &root in query.roots {
            let dir = self.proc_path(root.to_string());
            let r = kept_roots
                .remove(&root)
                .map_or_else(|| OpenRoot::open(&dir, root).ok(), Some);
            let listed = r.as_ref().and_then(|r| {
                (threads(&r.task) == Some(1))
                    .then(|| read_whole(&r.children, &mut bufs.kids).ok())
                    .flatten()
            });
            if let Some(r) = r {
                next_roots.insert(root, r);
            }
            if listed.is_some() {
                queue.extend(procfs::parse_children(&bufs.kids));
                continue;
            }
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
        *open.borrow_mut() = TreeFiles {
            members: next,
            roots: next_roots,
        };
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
        if let Some(mut o) = kept {
            if let Some(rec) = self.read_open(&mut o, pid, uid, &dir, bufs) {
                return Some((rec, Some(o)));
            }
        }
        match OpenProc::open(&dir, pid) {
            Ok(mut o) => {
                let rec = self.read_open(&mut o, pid, uid, &dir, bufs)?;
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

    /// `stat` and `statm` every time, `status` when `statm` moved or `STATUS_EVERY` passed
    /// (the module header).
    fn read_open(
        &self,
        o: &mut OpenProc,
        pid: i32,
        uid: u32,
        dir: &Path,
        bufs: &mut Bufs,
    ) -> Option<ProcessRecord> {
        pread_into(&o.stat, &mut bufs.stat).ok()??;
        // Before `status`: memory that moves between the two reads leaves a newer `status`
        // than its key, and the next sample reads it again.
        pread_into(&o.statm, &mut bufs.statm).ok()??;
        let now = Instant::now();
        let holds = o
            .last
            .as_ref()
            .is_some_and(|l| l.statm == bufs.statm && now.duration_since(l.at) < STATUS_EVERY);
        if !holds {
            pread_into(&o.status, &mut bufs.status).ok()??;
            o.last = Some(LastStatus {
                statm: bufs.statm.clone(),
                status: procfs::parse_status(&bufs.status),
                at: now,
            });
        }
        let mut status = o.last.as_ref()?.status.clone();
        // The state and the thread count move without memory moving: the record takes
        // them from `stat`, read now (its thread count wins over a missing one).
        status.state = stat_state(&bufs.stat);
        status.threads = None;
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

/// The state letter of a `stat` line (the first field after the comm's last `)`).
fn stat_state(stat: &str) -> Option<char> {
    let close = stat.rfind(')')?;
    stat[close + 1..].trim_start().chars().next()
}

#[cfg(test)]
mod tests;
