//! `ProcessTable`: a snapshot indexed by pid and by parent, built once per snapshot, for
//! the tree walks every rule makes (children, ancestry, subtrees) and the per-uid slot
//! usage and zombie parents a reading counts.

use crate::pid_map::PidMap;
use crate::snapshot::{ProcessRecord, SlotUsage, Snapshot, ZombieParent};

/// The table with indexes for tree walks. Built once per snapshot.
#[derive(Debug)]
pub struct ProcessTable<'a> {
    pub snapshot: &'a Snapshot,
    by_pid: PidMap<usize>,
    children: PidMap<Vec<usize>>,
}

impl<'a> ProcessTable<'a> {
    pub fn new(snapshot: &'a Snapshot) -> Self {
        let mut by_pid =
            PidMap::with_capacity_and_hasher(snapshot.processes.len(), Default::default());
        let mut children: PidMap<Vec<usize>> = PidMap::default();
        for (i, p) in snapshot.processes.iter().enumerate() {
            by_pid.insert(p.pid, i);
            if p.ppid != p.pid {
                children.entry(p.ppid).or_default().push(i);
            }
        }
        Self {
            snapshot,
            by_pid,
            children,
        }
    }

    pub fn get(&self, pid: i32) -> Option<&'a ProcessRecord> {
        self.by_pid.get(&pid).map(|&i| &self.snapshot.processes[i])
    }

    pub fn children(&self, pid: i32) -> impl Iterator<Item = &'a ProcessRecord> + '_ {
        let procs = &self.snapshot.processes;
        self.children
            .get(&pid)
            .into_iter()
            .flatten()
            .map(move |&i| &procs[i])
    }

    /// `pid` and every ancestor by ppid, walked from this table (never cached across
    /// polls: a former ancestor drops out as soon as it stops being one). Always includes
    /// pid 1. Stops at ppid <= 0, an unknown pid, or a cycle.
    pub fn self_and_ancestors(&self, pid: i32) -> Vec<i32> {
        let mut out = vec![pid];
        let mut cur = pid;
        while let Some(p) = self.get(cur) {
            let next = p.ppid;
            if next <= 0 || out.contains(&next) {
                break;
            }
            out.push(next);
            cur = next;
        }
        if !out.contains(&1) {
            out.push(1);
        }
        out
    }

    /// `self_pid` and every ancestor, through gaps: where the walk meets a pid > 1 that is
    /// not in this table (a scan drops what it could not read), `read_ppid` reads that pid
    /// directly. `Err(pid)` when it cannot: headroom does not know its own ancestry, and
    /// everything above the gap would be unprotected. Always includes 1.
    pub fn ancestry(
        &self,
        self_pid: i32,
        read_ppid: &mut dyn FnMut(i32) -> Option<i32>,
    ) -> Result<Vec<i32>, i32> {
        let mut out = vec![self_pid];
        let mut cur = self_pid;
        loop {
            let next = match self.get(cur) {
                Some(p) => p.ppid,
                None if cur > 1 => read_ppid(cur).ok_or(cur)?,
                None => break,
            };
            if next <= 0 || out.contains(&next) {
                break;
            }
            out.push(next);
            cur = next;
        }
        if !out.contains(&1) {
            out.push(1);
        }
        Ok(out)
    }

    /// `root` and every descendant by live parent links that `keep` accepts (a child it
    /// rejects is left out with everything below it): root first, then breadth first, each
    /// parent's children by pid, so every parent comes before its children. `None` when
    /// `root` is not in the table.
    pub fn subtree(
        &self,
        root: i32,
        keep: impl Fn(&ProcessRecord) -> bool,
    ) -> Option<Vec<&'a ProcessRecord>> {
        let mut out = vec![self.get(root)?];
        let mut seen = std::collections::HashSet::from([root]);
        let mut queue = std::collections::VecDeque::from([root]);
        while let Some(pid) = queue.pop_front() {
            let mut kids: Vec<&ProcessRecord> = self.children(pid).filter(|k| keep(k)).collect();
            kids.sort_by_key(|k| k.pid);
            for k in kids {
                if seen.insert(k.pid) {
                    out.push(k);
                    queue.push_back(k.pid);
                }
            }
        }
        Some(out)
    }

    /// Slot usage of `uid`.
    pub fn usage(&self, uid: u32) -> SlotUsage {
        let mut processes = 0u64;
        let mut zombies = 0u64;
        let mut tasks = 0u64;
        let mut tasks_known = true;
        for p in self.snapshot.processes.iter().filter(|p| p.uid == uid) {
            processes += 1;
            if p.is_zombie() {
                zombies += 1;
            }
            match p.threads {
                // A zombie leader still holds its slot; its thread count reads 0 or 1.
                Some(n) => tasks += u64::from(n.max(1)),
                None => tasks_known = false,
            }
        }
        let tasks = (self.snapshot.counts_tasks() && tasks_known).then_some(tasks);
        let used = if self.snapshot.counts_tasks() {
            tasks.unwrap_or(processes)
        } else {
            processes
        };
        SlotUsage {
            processes,
            tasks,
            zombies,
            used,
        }
    }

    /// Parents of the user's zombies, biggest offender first (zombies desc, pid asc).
    pub fn zombie_parents(&self, uid: u32) -> Vec<ZombieParent> {
        let mut counts: PidMap<u64> = PidMap::default();
        for p in &self.snapshot.processes {
            if p.uid == uid && p.is_zombie() {
                *counts.entry(p.ppid).or_default() += 1;
            }
        }
        let mut out: Vec<ZombieParent> = counts
            .into_iter()
            .map(|(pid, zombies)| {
                let record = self.get(pid).cloned();
                let name = record
                    .as_ref()
                    .map_or_else(|| "unknown".to_string(), |r| r.name.clone());
                ZombieParent {
                    pid,
                    name,
                    zombies,
                    record,
                }
            })
            .collect();
        out.sort_by(|a, b| b.zombies.cmp(&a.zombies).then(a.pid.cmp(&b.pid)));
        out
    }
}

#[cfg(test)]
mod tests;
