//! The slot round's read of every process (`Detail::Slots`: `watch` once a round, `probe`,
//! `limits`), made cheap for a reader that repeats it.
//!
//! Slot counting needs each process's real uid (RLIMIT_NPROC charges the real uid, and only
//! `status` has it: `stat` has none, and the owner of `/proc/PID` is the effective uid, or
//! root for a non-dumpable process), its state, parent, name and thread count: one `status`
//! per process, nothing else. Profiled at 1,400 processes, a quarter of that read was the
//! `open` (path walk, pid revalidation) and `close` around it, so each `status` stays open
//! between snapshots and is re-read with `pread` at offset 0 (procfs regenerates it). A
//! kept descriptor belongs to the process it was opened for: once that process is reaped it
//! reads ESRCH even if the pid was reused, and the pid is then opened afresh, so it never
//! reports another process. Descriptors of pids no longer listed are closed after each
//! snapshot; at most `budget` are kept, the rest are read by path as before.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;

use super::read::{gone, read_whole};
use crate::platform::PlatformError;

/// Descriptors left to the rest of the process whatever the budget: `run`'s tree keeps up to
/// 768 of its own (`tree.rs`), plus state files, pipes and pidfds.
const RESERVE: u64 = 1024;
/// Never more than this many kept, however high the limit.
const MAX_KEPT: u64 = 65_536;

#[derive(Debug)]
pub(crate) struct KeptStatus {
    files: HashMap<i32, (File, u64)>,
    /// The snapshot being taken; a descriptor not seen in it is closed at its end.
    generation: u64,
    budget: usize,
}

impl KeptStatus {
    /// Keep as many as the soft RLIMIT_NOFILE allows beyond `RESERVE` (none at the usual
    /// 1,024, where every read goes by path as before; `watch` raises its soft limit).
    pub(crate) fn new() -> Self {
        Self::with_budget(Self::budget_now())
    }

    pub(crate) fn with_budget(budget: usize) -> Self {
        Self {
            files: HashMap::new(),
            generation: 0,
            budget,
        }
    }

    fn budget_now() -> usize {
        let mut rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `rl` is a valid, writable rlimit.
        if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0 {
            return 0;
        }
        rl.rlim_cur.saturating_sub(RESERVE).min(MAX_KEPT) as usize
    }

    /// Start a snapshot.
    pub(crate) fn begin(&mut self) {
        self.generation += 1;
        // The limit may have been raised since (`watch` raises it before its first round).
        self.budget = self.budget.max(Self::budget_now());
    }

    /// `pid`'s `status` (at `path`) into `buf`; `Ok(None)` when the process is gone.
    pub(crate) fn read(
        &mut self,
        pid: i32,
        path: &Path,
        buf: &mut String,
    ) -> Result<Option<()>, PlatformError> {
        let generation = self.generation;
        if let Some((f, seen)) = self.files.get_mut(&pid) {
            match read_whole(f, buf) {
                Ok(len) if len > 0 => {
                    *seen = generation;
                    return Ok(Some(()));
                }
                // Reaped since (ESRCH, or an empty read): the pid may name a new process
                // now, which is opened afresh below.
                Ok(_) => {}
                Err(e) if gone(&e) => {}
                Err(e) => {
                    return Err(PlatformError::io(
                        format!("cannot read `{}`", path.display()),
                        e,
                    ));
                }
            }
            self.files.remove(&pid);
        }
        let f = match File::open(path) {
            Ok(f) => f,
            Err(e) if gone(&e) => return Ok(None),
            Err(e) => {
                return Err(PlatformError::io(
                    format!("cannot read `{}`", path.display()),
                    e,
                ));
            }
        };
        match read_whole(&f, buf) {
            Ok(_) => {}
            Err(e) if gone(&e) => return Ok(None),
            Err(e) => {
                return Err(PlatformError::io(
                    format!("cannot read `{}`", path.display()),
                    e,
                ));
            }
        }
        if self.files.len() < self.budget {
            self.files.insert(pid, (f, generation));
        }
        Ok(Some(()))
    }

    /// End a snapshot: close the descriptors of pids it did not list.
    pub(crate) fn end(&mut self) {
        let generation = self.generation;
        self.files.retain(|_, (_, seen)| *seen == generation);
    }

    #[cfg(test)]
    pub(crate) fn kept(&self) -> usize {
        self.files.len()
    }
}

/// Raise this process's soft RLIMIT_NOFILE to its hard limit (at most `MAX_KEPT` +
/// `RESERVE`), for a long-lived reader that keeps descriptors (`watch`). The limit is a
/// per-process ceiling the user already holds; nothing is raised above the hard limit.
pub fn raise_nofile() {
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `rl` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) } != 0 {
        return;
    }
    let want = rl.rlim_max.min(MAX_KEPT + RESERVE);
    if want > rl.rlim_cur {
        rl.rlim_cur = want;
        // SAFETY: `rl` is a valid rlimit no higher than the hard limit it was read with.
        // This is platform/, which may change limits (clippy.toml).
        #[allow(clippy::disallowed_methods)]
        unsafe {
            libc::setrlimit(libc::RLIMIT_NOFILE, &rl)
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A kept descriptor is re-read (the file's new content, no reopen); a pid that left the
    /// listing is closed; the budget caps what is kept, and reads past it still work.
    #[test]
    fn kept_descriptors_are_reread_pruned_and_capped() {
        let d = tempfile::tempdir().unwrap();
        let path = |pid: i32| d.path().join(format!("{pid}-status"));
        for pid in [1, 2, 3] {
            fs::write(path(pid), format!("Name:\tp{pid}\n")).unwrap();
        }
        let mut k = KeptStatus::with_budget(2);
        let mut buf = String::new();
        k.generation += 1;
        for pid in [1, 2, 3] {
            assert_eq!(k.read(pid, &path(pid), &mut buf).unwrap(), Some(()));
            assert_eq!(buf, format!("Name:\tp{pid}\n"));
        }
        assert_eq!(k.kept(), 2, "the budget caps what is kept");
        k.end();
        // Rewritten in place (same inode): the kept descriptor reads the new content.
        fs::write(path(1), "Name:\tnew\n").unwrap();
        k.generation += 1;
        assert_eq!(k.read(1, &path(1), &mut buf).unwrap(), Some(()));
        assert_eq!(buf, "Name:\tnew\n");
        k.end();
        assert_eq!(k.kept(), 1, "pid 2 was not listed this time: closed");
        // Gone: a missing file is Ok(None), not an error.
        assert_eq!(k.read(9, &path(9), &mut buf).unwrap(), None);
    }

    /// For real: a reaped child's kept descriptor does not read as a live process; the pid
    /// is opened afresh (and is gone).
    #[test]
    fn a_reaped_process_is_not_read_through_its_old_descriptor() {
        // `cat` on a pipe ends when its stdin closes: no signal needed.
        let mut child = std::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let path = std::path::PathBuf::from(format!("/proc/{pid}/status"));
        let mut k = KeptStatus::with_budget(8);
        let mut buf = String::new();
        k.generation += 1;
        assert_eq!(k.read(pid, &path, &mut buf).unwrap(), Some(()));
        // (Not its name: `spawn` can return before exec has set it.)
        assert!(buf.contains(&format!("\nPid:\t{pid}\n")), "{buf}");
        assert_eq!(k.kept(), 1);
        drop(child.stdin.take());
        child.wait().unwrap();
        k.generation += 1;
        assert_eq!(k.read(pid, &path, &mut buf).unwrap(), None);
        assert_eq!(k.kept(), 0);
    }
}
