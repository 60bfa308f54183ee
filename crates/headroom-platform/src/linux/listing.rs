//! How a repeated slot round finds the pids to read: all of `/proc` listed, only its tail,
//! or the pids it kept, walked.
//!
//! Listing `/proc` costs the kernel a dentry per process: 6.6 ms of CPU at 6,100 processes
//! here, most of a table round once its per-process reads are served unchanged
//! (`slots.rs`). Between two rounds the listing can only have gained what new tasks were
//! given: an exit keeps the pid listed until it is reaped, and the kept pidfds' `poll` sees
//! both (a zombie polls readable, a reaped process hangs up, and its kept descriptors read
//! ESRCH). Two counters say what was created since a complete listing, both read before it
//! (so a task started during the listing counts as after it):
//!
//! - `/proc/stat`'s `processes`, every task (process or thread) ever created on the machine.
//!   Unchanged: nothing new, and the round walks the kept pids (each checked as before).
//! - `/proc/loadavg`'s fifth field, the pid namespace's cursor: the last pid allocated.
//!   Pids are handed out upwards from it and wrap to 300 past `pid_max`. When the cursor has
//!   not gone down and fewer tasks were created than one lap of pids, no new pid is at or
//!   below the old cursor, so the round lists only the tail of `/proc` from the greatest pid
//!   at or below it (procfs positions are by pid: a position resumes at the first pid at or
//!   above the one it was taken at, listed or gone since) and takes the kept pids below it.
//! - Otherwise (a lap possible, a counter unreadable, the last listing incomplete): all of it.
//!
//! A listing is complete when every process it gave was kept (the descriptor budget did
//! not run out) and none was unreadable (a `hidepid` mount hides some). What this cannot
//! see: a pid chosen by `clone3`'s `set_tid` or the cursor written back through
//! `ns_last_pid` (checkpoint/restore, which needs CAP_CHECKPOINT_RESTORE), and a `/proc` of
//! another pid namespace than this process's, whose cursor is not the one `loadavg` shows:
//! then every round lists all (`Listing::new` checks that `/proc/self` names this process).

use std::collections::BTreeMap;
use std::fs::File;
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{Mode, OFlags, RawDir, SeekFrom};

use super::read::read_whole;

/// The lowest pid the cursor wraps to (the kernel's RESERVED_PIDS).
const WRAP_TO: u64 = 300;

/// The two counters (`processes`, the cursor) at one instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Mark {
    pub(super) created: u64,
    pub(super) cursor: u64,
}

/// Where a round's pids come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PidSource {
    /// Nothing created since the last complete listing: the kept pids.
    Kept,
    /// The kept pids below `below`, and `/proc` listed from `below`'s position.
    Tail { below: i32 },
    /// All of `/proc`.
    All,
}

#[derive(Debug, Default)]
pub(super) struct Listing {
    /// `/proc`, `/proc/loadavg` and `/proc/stat`, kept open; `None`: every round lists all.
    files: Option<(OwnedFd, File, File)>,
    /// `pid_max` when opened.
    pid_max: u64,
    /// The counters read before the last complete listing.
    complete_at: Option<Mark>,
    /// Each listed pid's position (its predecessor's cookie), for a tail.
    positions: BTreeMap<i32, u64>,
    text: String,
    /// A test's counters in place of the kernel's.
    #[cfg(test)]
    pub(super) fixed: Option<Mark>,
    /// The last `list`'s `below` (`Some(None)`: all of it), for tests.
    #[cfg(test)]
    pub(super) last_list: Option<Option<i32>>,
}

impl Listing {
    /// For the `/proc` at `proc`, when it is this machine's (`real_proc`) and of this
    /// process's pid namespace.
    pub(super) fn new(proc: &Path, real_proc: bool) -> Self {
        let own_ns = std::fs::read_link(proc.join("self"))
            .ok()
            .and_then(|p| p.to_str()?.parse::<u32>().ok())
            == Some(std::process::id());
        let open = || {
            let dir = rustix::fs::open(
                proc,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok()?;
            let loadavg = File::open(proc.join("loadavg")).ok()?;
            let stat = File::open(proc.join("stat")).ok()?;
            Some((dir, loadavg, stat))
        };
        let pid_max = std::fs::read_to_string(proc.join("sys/kernel/pid_max"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0);
        Self {
            files: (real_proc && own_ns && pid_max > WRAP_TO)
                .then(open)
                .flatten(),
            pid_max,
            ..Self::default()
        }
    }

    /// The counters now; `None` when either cannot be read.
    pub(super) fn mark(&mut self) -> Option<Mark> {
        #[cfg(test)]
        if self.fixed.is_some() {
            return self.fixed;
        }
        let (_, loadavg, stat) = self.files.as_ref()?;
        read_whole(loadavg, &mut self.text).ok()?;
        let cursor = parse_cursor(&self.text)?;
        read_whole(stat, &mut self.text).ok()?;
        let created = parse_created(&self.text)?;
        Some(Mark { created, cursor })
    }

    /// Where this round's pids come from, by the counters read at its start.
    pub(super) fn source(&self, now: Option<Mark>) -> PidSource {
        let (Some(now), Some(then)) = (now, self.complete_at) else {
            return PidSource::All;
        };
        if now.created == then.created {
            return PidSource::Kept;
        }
        let lap = self.pid_max.saturating_sub(WRAP_TO);
        let no_lap = now.cursor >= then.cursor
            && now
                .created
                .checked_sub(then.created)
                .is_some_and(|n| n < lap);
        let from = i32::try_from(then.cursor)
            .ok()
            .and_then(|c| self.positions.range(..=c).next_back().map(|(p, _)| *p));
        match from {
            Some(below) if no_lap => PidSource::Tail { below },
            _ => PidSource::All,
        }
    }

    /// `/proc`'s pids, all of them or from `below`'s position on; their positions are
    /// remembered for the next tail. `None`: the listing failed (the caller lists by path).
    pub(super) fn list(&mut self, below: Option<i32>) -> Option<Vec<i32>> {
        #[cfg(test)]
        {
            self.last_list = Some(below);
        }
        let (dir, _, _) = self.files.as_ref()?;
        let start = match below {
            Some(p) => *self.positions.get(&p)?,
            None => 0,
        };
        rustix::fs::seek(dir, SeekFrom::Start(start)).ok()?;
        let mut buf = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
        let mut entries = RawDir::new(dir, &mut buf);
        let mut pids = Vec::new();
        let mut found = Vec::new();
        let mut at = start;
        while let Some(entry) = entries.next() {
            let entry = entry.ok()?;
            if let Some(pid) = parse_pid(entry.file_name().to_bytes()) {
                pids.push(pid);
                found.push((pid, at));
            }
            at = entry.next_entry_cookie();
        }
        // Positions by pid rise with the pid; any other order and a tail cannot be trusted.
        if !found.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1) {
            self.positions.clear();
            return Some(pids);
        }
        match below {
            Some(p) => {
                self.positions.split_off(&p);
            }
            None => self.positions.clear(),
        }
        self.positions.extend(found);
        Some(pids)
    }

    /// After a round that read `mark` first: whether its processes were all kept and
    /// readable, so the next round may walk them or list only a tail.
    pub(super) fn finish(&mut self, mark: Option<Mark>, complete: bool) {
        self.complete_at = mark.filter(|_| complete);
    }
}

fn parse_pid(name: &[u8]) -> Option<i32> {
    if name.is_empty() || !name.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(name).ok()?.parse().ok()
}

/// The fifth field of `/proc/loadavg`: the last pid allocated in the reader's namespace.
fn parse_cursor(s: &str) -> Option<u64> {
    s.split_ascii_whitespace().nth(4)?.parse().ok()
}

/// `/proc/stat`'s `processes` line: every task created since boot.
fn parse_created(s: &str) -> Option<u64> {
    s.lines()
        .find_map(|l| l.strip_prefix("processes "))?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests;
