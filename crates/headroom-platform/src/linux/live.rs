//! The live Linux `ProcessSource`: one pass over `/proc` for a snapshot (`stat` and
//! `status` of every pid, and `exe` of the user's own live processes, reusing one buffer;
//! a pid that vanishes between `readdir` and `read` is skipped, one that cannot be read is
//! counted unreadable, a listing that fails part way fails the snapshot), one process, and
//! the tree walk of `tree.rs`. The parts live by job: `records.rs` (one process's record),
//! `ceilings.rs` (the slot ceilings), `read.rs` (the shared read helpers).

use std::cell::RefCell;
use std::fs;
use std::io::ErrorKind;
use std::path::PathBuf;
use std::sync::Arc;

use super::Roots;
use super::ceilings;
use super::kept_ceilings::KeptCeilings;
use super::listing::{Mark, PidSource};
use super::one_shot::{Asked, Scan};
use super::procfs;
use super::read::{gone, listed_pids, read_whole};
use super::records::ProcReader;
use super::tree::KeptOpen;
use crate::core::round_plan::Bound;
use crate::core::snapshot::{Detail, MemoryTotals, ProcessRecord, SNAPSHOT_SCHEMA, Snapshot};
use crate::{PlatformError, ProcessSource, TreeQuery, current_uid, now_ms};

#[derive(Debug)]
pub struct LinuxSource {
    pub(super) reader: ProcReader,
    /// `/proc` files of the last tree sampled, kept open between samples (see `tree.rs`).
    open: KeptOpen,
    /// The ceilings' moving parts, kept open after each slot snapshot of a repeated round
    /// (`slot_bound`).
    ceilings: RefCell<Option<KeptCeilings>>,
    /// `/proc/meminfo`, kept open once read: `run --limit` reads it every sample, and a
    /// `pread` of the open file saves its open and close.
    meminfo: RefCell<Option<fs::File>>,
    /// Whether a repeated slot round must list `/proc` (`listing.rs`).
    pub(super) listing: RefCell<super::listing::Listing>,
    /// The last snapshot's process count: the next one's vector is made that large at
    /// once, not grown (and copied) from 1,024 on (6,000 zombies: four moves of records).
    last_count: std::cell::Cell<usize>,
    /// The vector of the last snapshot handed back (`recycle`), emptied: the next snapshot
    /// fills it instead of faulting in a fresh one.
    spare: RefCell<Vec<ProcessRecord>>,
}

impl LinuxSource {
    pub fn new(roots: Roots) -> Self {
        Self {
            reader: ProcReader::new(roots),
            open: KeptOpen::default(),
            ceilings: RefCell::new(None),
            meminfo: RefCell::new(None),
            listing: RefCell::default(),
            last_count: std::cell::Cell::new(0),
            spare: RefCell::default(),
        }
    }
}

impl LinuxSource {
    /// How many records the next snapshot's vector is made for at once: the last count
    /// (plus a sixteenth), at least 1,024.
    fn expected_len(&self) -> usize {
        self.last_count.get().max(1024)
    }
}

impl LinuxSource {
    /// Slot counting names the parents of zombies, but a process served unchanged in a
    /// repeated round carries its name as last read in full (an `exec` changes no value the
    /// check compares), and one read by pidfd (`one_shot.rs`) none: those parents (`partial`,
    /// sorted) are read in full again now.
    fn refresh_zombie_parents(
        &self,
        processes: &mut Vec<ProcessRecord>,
        partial: &[i32],
        uid: u32,
        buf: &mut String,
    ) {
        if partial.is_empty() || !processes.iter().any(|p| p.is_zombie()) {
            return;
        }
        let mut parents: Vec<i32> = processes
            .iter()
            .filter(|p| p.is_zombie() && partial.binary_search(&p.ppid).is_ok())
            .map(|p| p.ppid)
            .collect();
        parents.sort_unstable();
        parents.dedup();
        for pid in parents {
            self.reader.kept_status.borrow_mut().forget(pid);
            let Some(at) = processes.iter().position(|p| p.pid == pid) else {
                continue;
            };
            match self.reader.read_process(pid, uid, Detail::Slots, true, buf) {
                Ok(Some(p)) => processes[at] = p,
                Ok(None) => {
                    processes.remove(at);
                }
                // Unreadable now: the record read a moment ago stands.
                Err(_) => {}
            }
        }
    }

    /// The pids a repeated slot round reads (`listing.rs`): the kept ones, the kept ones
    /// below a tail of `/proc` and that tail, or all of `/proc` through the kept
    /// descriptor; `None` for a round that is not repeated, or when that listing failed (the
    /// caller lists `/proc` by path). Starts the kept descriptors' snapshot (`begin`).
    fn repeated_pids(&self, repeated: bool, mark: Option<Mark>) -> Option<Vec<i32>> {
        if !repeated {
            return None;
        }
        let mut kept = self.reader.kept_status.borrow_mut();
        kept.begin();
        let mut listing = self.listing.borrow_mut();
        let source = if kept.answered() {
            listing.source(mark)
        } else {
            PidSource::All
        };
        let pids = match source {
            PidSource::Kept => Some(kept.pids()),
            PidSource::Tail { below } => listing.list(Some(below)).map(|tail| {
                let mut pids: Vec<i32> = kept.pids().into_iter().filter(|p| *p < below).collect();
                pids.extend(tail);
                pids
            }),
            PidSource::All => None,
        };
        pids.or_else(|| listing.list(None))
    }

    /// A slot snapshot's processes, each read once (`one_shot.rs`, by pidfd, where the
    /// kernel can; otherwise, and for a fake `--proc-root`, its `status`), or through the
    /// kept descriptors of a repeated round (`slots.rs`). Returns the pids whose records
    /// were not read in full (`refresh_zombie_parents`), and counts the unreadable.
    fn slot_processes(
        &self,
        pids: impl Iterator<Item = i32>,
        uid: u32,
        processes: &mut Vec<ProcessRecord>,
        unreadable: &mut u64,
        buf: &mut String,
    ) -> Vec<i32> {
        let repeated = self.reader.repeated.get();
        let mut scan = (!repeated && self.reader.real_proc)
            .then(|| Scan::new(&self.reader.roots.proc))
            .flatten();
        let mut by_pidfd = Vec::new();
        let mut by_status = Vec::new();
        for pid in pids {
            if let Some(s) = scan.as_mut() {
                match s.ask(pid) {
                    Asked::Pending if s.full() => by_status.extend(s.flush(&mut by_pidfd)),
                    Asked::Pending | Asked::Gone => {}
                    Asked::Read(r) => by_pidfd.push(r),
                    Asked::Status => by_status.push(pid),
                    Asked::Unsupported => {
                        by_status.extend(s.flush(&mut by_pidfd));
                        by_status.push(pid);
                        scan = None;
                    }
                }
                continue;
            }
            by_status.push(pid);
        }
        if let Some(s) = scan.as_mut() {
            by_status.extend(s.flush(&mut by_pidfd));
        }
        // Its descriptor of `/proc` closed first: a pid sent here because no pidfd could be
        // opened (EMFILE) then has that one descriptor for its `status`.
        drop(scan);
        for pid in by_status {
            match self.reader.read_process(pid, uid, Detail::Slots, true, buf) {
                Ok(Some(p)) => processes.push(p),
                Ok(None) => {}
                // As in `snapshot`: cannot be judged, so counted as unreadable.
                Err(_) => *unreadable += 1,
            }
        }
        let mut partial: Vec<i32> = by_pidfd.iter().map(|p| p.pid).collect();
        processes.append(&mut by_pidfd);
        if repeated {
            partial.extend_from_slice(self.reader.kept_status.borrow().served_unchanged());
        }
        partial.sort_unstable();
        partial
    }
}

impl ProcessSource for LinuxSource {
    fn os(&self) -> &str {
        "linux"
    }

    fn snapshot(&self, detail: Detail) -> Result<Snapshot, PlatformError> {
        let uid = current_uid();
        let taken_at_ms = now_ms();
        let list = || {
            fs::read_dir(&self.reader.roots.proc).map_err(|e| {
                PlatformError::io(
                    format!("cannot list `{}`", self.reader.roots.proc.display()),
                    e,
                )
            })
        };
        let listed = |dir: fs::ReadDir| {
            listed_pids(
                &self.reader.roots.proc,
                dir.map(|e| e.map(|e| e.file_name())),
            )
        };
        let mut processes = self.spare.take();
        processes.reserve(self.expected_len());
        let mut buf = String::with_capacity(4096);
        let mut unreadable = 0;
        if detail == Detail::Slots {
            let repeated = self.reader.repeated.get();
            // Before the listing: a task started during it counts as after it (`listing.rs`).
            let mark = if repeated {
                self.listing.borrow_mut().mark()
            } else {
                None
            };
            let pids = match self.repeated_pids(repeated, mark) {
                Some(p) => p,
                None => listed(list()?)?,
            };
            let partial = self.slot_processes(
                pids.into_iter(),
                uid,
                &mut processes,
                &mut unreadable,
                &mut buf,
            );
            self.refresh_zombie_parents(&mut processes, &partial, uid, &mut buf);
            if repeated {
                let mut kept = self.reader.kept_status.borrow_mut();
                kept.end();
                let complete = unreadable == 0 && processes.iter().all(|p| kept.has(p.pid));
                self.listing.borrow_mut().finish(mark, complete);
            }
        } else {
            for pid in listed(list()?)? {
                match self.reader.read_process(pid, uid, detail, true, &mut buf) {
                    Ok(Some(p)) => processes.push(p),
                    Ok(None) => {}
                    // Unreadable mid-scan (EACCES under hidepid, a torn read): it cannot be
                    // judged, so it cannot be acted on; counted, because it may be a session
                    // child or an ancestor (`Snapshot::unreadable`).
                    Err(_) => unreadable += 1,
                }
            }
        }
        processes.sort_by_key(|p| p.pid);
        self.last_count.set(processes.len() + processes.len() / 16);
        // A ceiling's file that finds no descriptor left is read again after the kept
        // ceilings (reopened below anyway) and some kept `status` files are closed.
        let mut free = || {
            self.ceilings.borrow_mut().take();
            self.reader.kept_status.borrow_mut().shed_for_others();
        };
        let ceilings = ceilings::ceilings(&self.reader.roots, uid, &mut free);
        if detail == Detail::Slots && self.reader.repeated.get() && self.reader.real_proc {
            self.ceilings.borrow_mut().take();
            let kept = KeptCeilings::open(&self.reader.roots, &ceilings, &mut free);
            *self.ceilings.borrow_mut() = kept;
        }
        Ok(Snapshot {
            schema: SNAPSHOT_SCHEMA.to_string(),
            detail,
            os: "linux".into(),
            taken_at_ms,
            self_pid: std::process::id() as i32,
            uid,
            unreadable,
            others_hidden: super::hidepid::others_hidden(&self.reader.roots.proc),
            ceilings,
            memory: self.memory().ok(),
            processes,
        })
    }

    fn process(&self, pid: i32) -> Result<Option<ProcessRecord>, PlatformError> {
        if pid <= 0 {
            return Ok(None);
        }
        let mut buf = String::with_capacity(2048);
        self.reader
            .read_process(pid, current_uid(), Detail::Full, false, &mut buf)
    }

    fn recycle(&self, snapshot: Snapshot) {
        let mut processes = snapshot.processes;
        // A table that was once far larger (a fork storm) gives its memory back.
        if processes.capacity() <= 2 * self.expected_len() {
            processes.clear();
            *self.spare.borrow_mut() = processes;
        }
    }

    fn slot_bound(&self) -> Option<Arc<Bound>> {
        self.ceilings.borrow().as_ref().map(KeptCeilings::read)
    }

    fn keep_between_rounds(&self) {
        super::slots::raise_nofile();
        self.reader.keep_between_rounds();
        *self.listing.borrow_mut() =
            super::listing::Listing::new(&self.reader.roots.proc, self.reader.real_proc);
    }

    fn tree_sample(&self, query: &TreeQuery<'_>) -> Result<Vec<ProcessRecord>, PlatformError> {
        self.reader
            .sample_tree(&self.open, query, &|| self.snapshot(Detail::Full))
    }

    fn argv(&self, pid: i32) -> Result<Vec<String>, PlatformError> {
        let path = self.reader.proc_path(format!("{pid}/cmdline"));
        match fs::read(&path) {
            Ok(b) => Ok(procfs::parse_cmdline(&b)),
            Err(e) if e.kind() == ErrorKind::NotFound => Err(PlatformError::NoSuchProcess { pid }),
            Err(e) if e.kind() == ErrorKind::PermissionDenied => {
                Err(PlatformError::PermissionDenied { pid })
            }
            Err(e) => Err(PlatformError::io(
                format!("cannot read `{}`", path.display()),
                e,
            )),
        }
    }

    fn cwd(&self, pid: i32) -> Result<PathBuf, PlatformError> {
        let path = self.reader.proc_path(format!("{pid}/cwd"));
        match fs::read_link(&path) {
            // A deleted directory cannot hold the logs the verdict needs: unknown.
            Ok(p) if p.to_string_lossy().ends_with(" (deleted)") => Err(PlatformError::Invalid(
                format!("the working directory of pid `{pid}` was deleted"),
            )),
            Ok(p) => Ok(p),
            Err(e) if gone(&e) => Err(PlatformError::NoSuchProcess { pid }),
            Err(e) if e.kind() == ErrorKind::PermissionDenied => {
                Err(PlatformError::PermissionDenied { pid })
            }
            Err(e) => Err(PlatformError::io(
                format!("cannot read `{}`", path.display()),
                e,
            )),
        }
    }

    fn memory(&self) -> Result<MemoryTotals, PlatformError> {
        // Read every interval by `run`: one `pread` of the kept file (opened on the first
        // call, or again after a read of it failed).
        let path = self.reader.proc_path("meminfo");
        let mut text = String::with_capacity(4096);
        let mut kept = self.meminfo.borrow_mut();
        let read = kept
            .as_ref()
            .is_some_and(|f| read_whole(f, &mut text).is_ok());
        if !read {
            *kept = None;
            let cannot = |e| PlatformError::io(format!("cannot read `{}`", path.display()), e);
            let f = match fs::File::open(&path) {
                Ok(f) => f,
                Err(e) if gone(&e) => {
                    return Err(PlatformError::Invalid(format!(
                        "`{}` does not exist",
                        path.display()
                    )));
                }
                Err(e) => return Err(cannot(e)),
            };
            read_whole(&f, &mut text).map_err(cannot)?;
            // Only procfs regenerates a file in place; a fake root's may be replaced.
            if self.reader.real_proc {
                *kept = Some(f);
            }
        }
        let (total_bytes, available_bytes) = procfs::parse_meminfo(&text).ok_or_else(|| {
            PlatformError::Invalid(format!(
                "`{}` lacks MemTotal or MemAvailable",
                path.display()
            ))
        })?;
        Ok(MemoryTotals {
            total_bytes,
            available_bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::limits::LimitSource;

    /// A fake /proc with one live process, one zombie, one torn entry and one that vanished.
    fn fake_proc() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path();
        let mk = |pid: &str, stat: &str, status: &str| {
            fs::create_dir_all(p.join(pid)).unwrap();
            fs::write(p.join(pid).join("stat"), stat).unwrap();
            fs::write(p.join(pid).join("status"), status).unwrap();
        };
        mk(
            "100",
            "100 (agency) S 1 100 100 0 -1 0 0 0 0 0 200 100 0 0 20 0 2 0 5000 0 0",
            "Name:\tagency\nState:\tS (sleeping)\nPPid:\t1\nUid:\t4242\t4242\t4242\t4242\nThreads:\t2\nRssAnon:\t10 kB\nVmSwap:\t0 kB\n",
        );
        mk(
            "101",
            "101 (send-telemetry) Z 100 100 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5100 0 0",
            "Name:\tsend-telemetry\nState:\tZ (zombie)\nPPid:\t100\nUid:\t4242\t4242\t4242\t4242\nThreads:\t1\n",
        );
        mk("102", "102 (torn", "Uid:\t4242\n");
        fs::create_dir_all(p.join("103")).unwrap(); // vanished: no files
        fs::create_dir_all(p.join("self")).unwrap();
        fs::write(
            p.join("meminfo"),
            "MemTotal: 1000 kB\nMemAvailable: 250 kB\n",
        )
        .unwrap();
        fs::write(p.join("loadavg"), "0 0 0 1/77 9\n").unwrap();
        fs::create_dir_all(p.join("sys/kernel")).unwrap();
        fs::write(p.join("sys/kernel/threads-max"), "5000\n").unwrap();
        fs::write(p.join("sys/kernel/pid_max"), "garbage\n").unwrap();
        d
    }

    /// A source reading `fake_proc`'s tree, with no `/sys`.
    fn fake_source(d: &tempfile::TempDir) -> LinuxSource {
        LinuxSource::new(Roots {
            proc: d.path().to_path_buf(),
            sys: d.path().join("nosys"),
        })
    }

    /// `meminfo` is read through the file kept open after the first call on the real
    /// `/proc` (procfs regenerates it at each read); a fake root's is opened at every call,
    /// so a file replaced there is seen.
    #[test]
    fn free_memory_is_read_again_through_the_kept_file_on_procfs_only() {
        let real = LinuxSource::new(Roots::default());
        let first = real.memory().unwrap();
        assert!(real.meminfo.borrow().is_some(), "kept open");
        let again = real.memory().unwrap();
        assert_eq!(first.total_bytes, again.total_bytes);
        let d = fake_proc();
        let src = fake_source(&d);
        assert_eq!(src.memory().unwrap().available_bytes, 250 * 1024);
        let path = d.path().join("meminfo");
        fs::write(
            d.path().join("new"),
            "MemTotal: 1000 kB\nMemAvailable: 100 kB\n",
        )
        .unwrap();
        fs::rename(d.path().join("new"), &path).unwrap();
        assert_eq!(src.memory().unwrap().available_bytes, 100 * 1024);
        assert!(src.meminfo.borrow().is_none());
    }

    /// A snapshot handed back is emptied and its vector filled by the next one (no fresh
    /// allocation to fault in); one far larger than the table (a past fork storm) is freed.
    #[test]
    fn a_recycled_snapshot_lends_its_vector_to_the_next_unless_oversized() {
        let d = fake_proc();
        let src = fake_source(&d);
        let first = src.snapshot(Detail::Slots).unwrap();
        let buffer = first.processes.as_ptr();
        src.recycle(first);
        assert!(
            src.spare.borrow().is_empty(),
            "its records are dropped at once"
        );
        let second = src.snapshot(Detail::Slots).unwrap();
        assert_eq!(second.processes.as_ptr(), buffer, "the same allocation");
        let pids: Vec<i32> = second.processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, vec![100, 101], "filled afresh, nothing left over");
        let mut storm = second;
        storm.processes.reserve(3 * 1024 + 16);
        src.recycle(storm);
        assert_eq!(
            src.spare.borrow().capacity(),
            0,
            "an oversized vector is freed"
        );
        let third = src.snapshot(Detail::Slots).unwrap();
        assert_eq!(third.processes.len(), 2);
        src.recycle(third);
        assert!(
            src.spare.borrow().capacity() >= 1024,
            "a table-sized one is kept"
        );
    }

    #[test]
    fn snapshot_of_a_fake_proc_skips_torn_and_vanished_entries() {
        let d = fake_proc();
        let src = fake_source(&d);
        let snap = src.snapshot(Detail::Full).unwrap();
        let pids: Vec<i32> = snap.processes.iter().map(|p| p.pid).collect();
        assert_eq!(pids, vec![100, 101]);
        let leader = &snap.processes[0];
        assert_eq!(
            (leader.uid, leader.threads, leader.footprint_bytes),
            (4242, Some(2), Some(10 * 1024))
        );
        assert_eq!(leader.start_time, Some(5000));
        let slots = src.snapshot(Detail::Slots).unwrap();
        assert_eq!(slots.processes.len(), 2);
        // A fake tree's pids are not this machine's: read from its `status`, never by pidfd.
        assert_eq!(slots.processes[0].name, "agency");
        assert_eq!(
            (slots.processes[1].ppid, slots.processes[1].start_time),
            (100, None)
        );
        assert!(slots.processes[1].is_zombie());
        assert!(leader.cpu_ns.unwrap() > 0);
        assert!(snap.processes[1].is_zombie());
        assert_eq!(
            snap.memory,
            Some(MemoryTotals {
                total_bytes: 1_024_000,
                available_bytes: 256_000
            })
        );
        let threads = snap
            .ceilings
            .iter()
            .find(|c| c.source == LimitSource::ThreadsMax)
            .unwrap();
        assert_eq!((threads.value, threads.in_use), (Some(5000), Some(77)));
        let pidmax = snap
            .ceilings
            .iter()
            .find(|c| c.source == LimitSource::PidMax)
            .unwrap();
        assert_eq!(pidmax.value, None);
        assert!(pidmax.note.as_deref().unwrap().contains("garbage"));
        let cg = snap
            .ceilings
            .iter()
            .find(|c| c.source == LimitSource::CgroupPids)
            .unwrap();
        assert!(cg.unlimited);
    }

    #[test]
    fn cgroup_v1_and_v2_pick_the_tightest_level() {
        let d = fake_proc();
        let p = d.path();
        fs::write(p.join("self/cgroup"), "3:pids:/a/b\n0::/x\n").unwrap();
        let cg = p.join("sys/fs/cgroup");
        for (dir, max, cur) in [
            ("pids/a/b", "max", "5"),
            ("pids/a", "100", "90"),
            ("pids", "1000", "95"),
            ("x", "50", "10"),
        ] {
            fs::create_dir_all(cg.join(dir)).unwrap();
            fs::write(cg.join(dir).join("pids.max"), max).unwrap();
            fs::write(cg.join(dir).join("pids.current"), cur).unwrap();
        }
        let src = LinuxSource::new(Roots {
            proc: p.to_path_buf(),
            sys: p.join("sys"),
        });
        let c = ceilings::cgroup_ceiling(&src.reader.roots);
        assert_eq!(
            (c.value, c.in_use, c.unlimited),
            (Some(100), Some(90), false)
        );
        assert!(c.origin.ends_with("pids/a/pids.max"), "{}", c.origin);
    }

    #[test]
    fn live_snapshot_sees_this_process() {
        let snap = LinuxSource::new(Roots::default())
            .snapshot(Detail::Full)
            .unwrap();
        let me = snap
            .processes
            .iter()
            .find(|p| p.pid == snap.self_pid)
            .unwrap();
        assert_eq!(me.uid, current_uid());
        assert!(me.exe.is_some());
        assert!(snap.processes.len() > 1);
    }
}
