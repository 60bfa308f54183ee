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
//!
//! A member, or its children, is left out only when it is gone (ESRCH, ENOENT: `gone`) or
//! refuses to be read (EACCES, EPERM: `refused`, as before). A shortage of descriptors or
//! memory closes kept files (`shed`) and reads the member again by path; any other failure,
//! or a shortage that stays, fails the sample: a tree read short would undercount its
//! footprint and let it pass its limit unseen, while a failed sample is warned about and
//! the watchdog keeps its last whole one.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet, VecDeque};
use std::fs::{self, File};
use std::path::Path;
use std::time::{Duration, Instant};

use super::pidfd_info::{open_task_dir, threads};
use super::procfs;
use super::read::{gone, read_into, read_whole, refused, short_of_resources};
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

/// Kept files closed when a read finds no descriptor left: up to this many sets.
const SHED: usize = 16;

/// Close up to `SHED` kept sets, those of members already read this sample first (they
/// only save the next sample its opens), then the last sample's not yet visited.
fn shed(next: &mut HashMap<i32, OpenProc>, kept: &mut HashMap<i32, OpenProc>) {
    for map in [next, kept] {
        let pids: Vec<i32> = map.keys().copied().take(SHED).collect();
        for pid in pids {
            map.remove(&pid);
        }
    }
}

/// One member read: its record, its kept files, its children.
type Visit = Option<(ProcessRecord, Option<OpenProc>, Vec<i32>)>;

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
            let children = match self.children_of(root, None, &mut bufs.kids) {
                Err(e) if short_of_resources(&e) => {
                    shed(&mut next, &mut kept);
                    self.children_of(root, None, &mut bufs.kids)
                }
                other => other,
            };
            match children? {
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
        // After a shortage no more sets are opened this sample: members are read by path.
        let mut keep = true;
        while let Some(pid) = queue.pop_front() {
            if !seen.insert(pid) {
                continue;
            }
            let kept_set = kept.remove(&pid);
            let visit = match self.visit(pid, uid, kept_set, keep, &mut bufs) {
                Err(e) if short_of_resources(&e) => {
                    shed(&mut next, &mut kept);
                    keep = false;
                    self.visit(pid, uid, None, false, &mut bufs)
                }
                other => other,
            };
            let visit = match visit {
                Ok(v) => v,
                Err(e) if refused(&e) => None,
                Err(e) => return Err(e),
            };
            let Some((rec, open, kids)) = visit else {
                continue;
            };
            queue.extend(kids);
            if let Some(o) = open.filter(|_| keep && next.len() < KEEP_OPEN) {
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

    /// One member and its children; `Ok(None)` when it is gone.
    fn visit(
        &self,
        pid: i32,
        uid: u32,
        kept: Option<OpenProc>,
        keep: bool,
        bufs: &mut Bufs,
    ) -> Result<Visit, PlatformError> {
        #[cfg(test)]
        if self.short.get() > 0 {
            self.short.set(self.short.get() - 1);
            let e = std::io::Error::from_raw_os_error(libc::EMFILE);
            return Err(PlatformError::io(format!("cannot open `{pid}/stat`"), e));
        }
        let Some((rec, open)) = self.read_member(pid, uid, kept, keep, bufs)? else {
            return Ok(None);
        };
        let kids = if rec.is_zombie() {
            None
        } else {
            match (&open, rec.threads) {
                (Some(o), Some(1)) => match pread_into(&o.children, &mut bufs.kids) {
                    Ok(Some(())) => Some(procfs::parse_children(&bufs.kids).collect()),
                    Ok(None) => None,
                    Err(e) => {
                        let path = self.proc_path(format!("{pid}/task/{pid}/children"));
                        return Err(PlatformError::io(
                            format!("cannot read `{}`", path.display()),
                            e,
                        ));
                    }
                },
                _ => self.children_of(pid, rec.threads, &mut bufs.kids)?,
            }
        };
        Ok(Some((rec, open, kids.unwrap_or_default())))
    }

    /// One member, through its kept files when there are any (a stale set — the process
    /// is gone — is dropped and the pid read afresh, in case a new process holds it);
    /// `keep`: a set may be opened for it. `Ok(None)` when it is gone.
    fn read_member(
        &self,
        pid: i32,
        uid: u32,
        kept: Option<OpenProc>,
        keep: bool,
        bufs: &mut Bufs,
    ) -> Result<Option<(ProcessRecord, Option<OpenProc>)>, PlatformError> {
        let dir = self.proc_path(pid.to_string());
        if let Some(mut o) = kept {
            // A kept set that fails (gone, or a read error) is read afresh below, which
            // tells a reused pid from a failure.
            if let Ok(Some(rec)) = self.read_open(&mut o, pid, uid, &dir, bufs) {
                return Ok(Some((rec, Some(o))));
            }
        }
        let by_path = |bufs: &mut Bufs| {
            Ok(self
                .read_process(pid, uid, Detail::Full, false, &mut bufs.stat)?
                .map(|r| (r, None)))
        };
        if !keep {
            return by_path(bufs);
        }
        match OpenProc::open(&dir, pid) {
            Ok(mut o) => Ok(self
                .read_open(&mut o, pid, uid, &dir, bufs)?
                .map(|rec| (rec, Some(o)))),
            // ENOENT confirmed by pidfd on this machine's `/proc` (`really_gone`): still
            // there, the error fails the sample.
            Err(e) if gone(&e) && (!self.real_proc || super::pidfd_info::really_gone(pid)) => {
                Ok(None)
            }
            Err(e) if gone(&e) => Err(PlatformError::io(
                format!("cannot open `{}`, yet it is not gone", dir.display()),
                e,
            )),
            // Out of descriptors, or a file that cannot be opened: read it by path.
            Err(_) => by_path(bufs),
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
    ) -> Result<Option<ProcessRecord>, PlatformError> {
        let failed = |name: &str, e| {
            PlatformError::io(format!("cannot read `{}`", dir.join(name).display()), e)
        };
        let Some(()) = pread_into(&o.stat, &mut bufs.stat).map_err(|e| failed("stat", e))? else {
            return Ok(None);
        };
        // Before `status`: memory that moves between the two reads leaves a newer `status`
        // than its key, and the next sample reads it again.
        let Some(()) = pread_into(&o.statm, &mut bufs.statm).map_err(|e| failed("statm", e))?
        else {
            return Ok(None);
        };
        let now = Instant::now();
        let holds = o
            .last
            .as_ref()
            .is_some_and(|l| l.statm == bufs.statm && now.duration_since(l.at) < STATUS_EVERY);
        if !holds {
            let Some(()) =
                pread_into(&o.status, &mut bufs.status).map_err(|e| failed("status", e))?
            else {
                return Ok(None);
            };
            o.last = Some(LastStatus {
                statm: bufs.statm.clone(),
                status: procfs::parse_status(&bufs.status),
                at: now,
            });
        }
        let Some(last) = o.last.as_ref() else {
            return Ok(None);
        };
        let mut status = last.status.clone();
        // The state and the thread count move without memory moving: the record takes
        // them from `stat`, read now (its thread count wins over a missing one).
        status.state = stat_state(&bufs.stat);
        status.threads = None;
        self.record(pid, uid, dir, &status, Some(&bufs.stat), false)
            .map(Some)
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
                Ok(rd) => super::read::listed_pids(&task, rd.map(|e| e.map(|e| e.file_name())))?,
                Err(e) if gone(&e) => return Ok(None),
                Err(e) => {
                    return Err(PlatformError::io(
                        format!("cannot list `{}`", task.display()),
                        e,
                    ));
                }
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
        let pids =
            super::read::listed_pids(&self.roots.proc, dir.map(|e| e.map(|e| e.file_name())))?;
        for pid in pids {
            match read_into(&self.proc_path(format!("{pid}/stat")), &mut buf) {
                Ok(Some(())) => {
                    if procfs::parse_stat(&buf).is_ok_and(|s| s.pgrp == pgid) {
                        out.push(pid);
                    }
                }
                Ok(None) => {}
                // A member left out of the scan would leave its memory out of the tree.
                Err(e) if short_of_resources(&e) => return Err(e),
                // Another uid's process refused (hidepid=1), a torn `stat`: as before.
                Err(_) => {}
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
