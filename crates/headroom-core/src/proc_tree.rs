//! The process-tree library (all OSes, pure): the trees a user owns and their footprint
//! (`top`, `calibrate`, `watch`'s memory guards and their warnings), one tree under a given
//! root (`run --limit`'s and the guards' enforcement), and how a tree changed between two
//! samples (growth, CPU).

use crate::process_table::ProcessTable;
use crate::snapshot::ProcessRecord;

/// One tree of processes the user owns.
#[derive(Debug, Clone)]
pub struct OwnTree<'a> {
    pub root: &'a ProcessRecord,
    /// The root first, then breadth first.
    pub members: Vec<&'a ProcessRecord>,
    pub footprint_bytes: u64,
}

impl OwnTree<'_> {
    pub fn pids(&self) -> Vec<i32> {
        self.members.iter().map(|m| m.pid).collect()
    }
}

/// The tree under `root`: every descendant of the user's by live parent links, stopping at
/// another user's process (whatever runs below it belongs to a tree of its own), without
/// `exclude` (headroom itself: it should not count its own memory).
pub fn tree_at<'a>(
    table: &ProcessTable<'a>,
    root: i32,
    uid: u32,
    exclude: i32,
) -> Option<OwnTree<'a>> {
    let members = table.subtree(root, |k| k.uid == uid && k.pid != exclude)?;
    let r = members[0];
    let footprint_bytes = members
        .iter()
        .filter(|m| m.pid != exclude)
        .filter_map(|m| m.footprint_bytes)
        .sum();
    Some(OwnTree {
        root: r,
        members,
        footprint_bytes,
    })
}

/// Every tree the user owns: one per process of `uid` whose parent is not the user's (or is
/// init, or unknown), largest footprint first (pid breaks ties). headroom itself is left out.
pub fn own_trees<'a>(table: &ProcessTable<'a>, uid: u32, exclude: i32) -> Vec<OwnTree<'a>> {
    let mut trees: Vec<OwnTree<'a>> = table
        .snapshot
        .processes
        .iter()
        .filter(|p| p.uid == uid && p.pid > 1 && p.pid != exclude)
        // ppid 0 is the kernel's own (kthreadd and its threads on Linux): not a user's tree.
        .filter(|p| p.ppid != 0)
        .filter(|p| p.ppid == 1 || table.get(p.ppid).is_none_or(|pp| pp.uid != uid))
        .filter_map(|p| tree_at(table, p.pid, uid, exclude))
        .collect();
    sort_trees(&mut trees);
    trees
}

fn sort_trees(trees: &mut [OwnTree<'_>]) {
    trees.sort_by(|a, b| {
        b.footprint_bytes
            .cmp(&a.footprint_bytes)
            .then(a.root.pid.cmp(&b.root.pid))
    });
}

/// How a tree changed between two samples `dt_ms` apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeChange {
    /// Footprint growth in KiB/s (0 for a tree that did not exist at the first sample).
    pub growth_kb_s: i64,
    /// CPU of the whole tree as a fraction of one core; `None` when a member was not there
    /// at the first sample (its CPU use is unknown, so the tree is not known to be idle).
    pub cpu_fraction: Option<f64>,
}

pub fn change(
    before: &ProcessTable<'_>,
    after: &OwnTree<'_>,
    dt_ms: u64,
    uid: u32,
    exclude: i32,
) -> TreeChange {
    let dt = dt_ms.max(1) as f64 / 1000.0;
    let same = |p: &ProcessRecord| -> Option<&ProcessRecord> {
        let b = before.get(p.pid)?;
        (b.identity().is_some() && b.identity() == p.identity()).then_some(b)
    };
    // The same tree at the first sample: members that exited since count there, members
    // born since grew from nothing.
    let growth_kb_s =
        match same(after.root).and_then(|_| tree_at(before, after.root.pid, uid, exclude)) {
            Some(prev) => {
                let delta = after.footprint_bytes as f64 - prev.footprint_bytes as f64;
                (delta / 1024.0 / dt).round() as i64
            }
            None => 0,
        };
    let mut cpu_ns = 0u64;
    let mut known = true;
    for m in after.members.iter().filter(|m| !m.is_zombie()) {
        match (same(m).and_then(|b| b.cpu_ns), m.cpu_ns) {
            (Some(c0), Some(c1)) => cpu_ns += c1.saturating_sub(c0),
            _ => known = false,
        }
    }
    TreeChange {
        growth_kb_s,
        cpu_fraction: known.then(|| cpu_ns as f64 / (dt * 1e9)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::fixture::{OTHER_UID, UID, proc, snapshot};

    const MIB: u64 = 1 << 20;

    fn rec(pid: i32, ppid: i32, mib: u64, cpu_ms: u64) -> ProcessRecord {
        let mut p = proc(pid, ppid, &format!("p{pid}"));
        p.footprint_bytes = Some(mib * MIB);
        p.cpu_ns = Some(cpu_ms * 1_000_000);
        p
    }

    /// sshd 10 (root) → zsh 20 → headroom 30, vim 21; zsh → node 40 → 41;
    /// 50 a daemon of the user under init; 60 another user's; sudo 70 (root) under zsh → 71 (user).
    fn procs(cpu: u64, grow: u64) -> Vec<ProcessRecord> {
        let mut sshd = rec(10, 1, 5, 0);
        sshd.uid = OTHER_UID;
        let mut other = rec(60, 1, 900, 0);
        other.uid = OTHER_UID;
        let mut sudo = rec(70, 20, 1, 0);
        sudo.uid = OTHER_UID;
        vec![
            rec(1, 0, 0, 0),
            sshd,
            rec(20, 10, 4, 0),
            rec(21, 20, 30, 0),
            rec(30, 20, 8, cpu),
            rec(40, 20, 300, cpu),
            rec(41, 40, 300 + grow, 0),
            rec(50, 1, 100, 0),
            other,
            sudo,
            rec(71, 70, 2, 0),
        ]
    }

    #[test]
    fn own_trees_are_maximal_sorted_and_leave_headroom_out() {
        let mut s = snapshot("linux", procs(0, 0));
        s.self_pid = 30;
        let t = ProcessTable::new(&s);
        let trees = own_trees(&t, UID, 30);
        let rows: Vec<(i32, Vec<i32>, u64)> = trees
            .iter()
            .map(|t| (t.root.pid, t.pids(), t.footprint_bytes / MIB))
            .collect();
        assert_eq!(
            rows,
            vec![
                (20, vec![20, 21, 40, 41], 634),
                (50, vec![50], 100),
                (71, vec![71], 2),
            ]
        );
        let sub = tree_at(&t, 40, UID, 30).unwrap();
        assert_eq!((sub.pids(), sub.footprint_bytes / MIB), (vec![40, 41], 600));
    }

    #[test]
    fn growth_and_cpu_between_two_samples() {
        let s0 = snapshot("linux", procs(0, 0));
        let s1 = snapshot("linux", procs(5, 50));
        let (t0, t1) = (ProcessTable::new(&s0), ProcessTable::new(&s1));
        let tree = tree_at(&t1, 40, UID, 30).unwrap();
        let c = change(&t0, &tree, 500, UID, 30);
        assert_eq!(c.growth_kb_s, 50 * 1024 * 2, "50 MiB in half a second");
        assert!((c.cpu_fraction.unwrap() - 0.01).abs() < 1e-9, "{c:?}");
        // A member born in between makes the CPU unknown; a new tree has no growth yet.
        let mut p = procs(5, 50);
        p.push(rec(42, 40, 10, 0));
        p.push(rec(80, 1, 10, 0));
        let s2 = snapshot("linux", p);
        let t2 = ProcessTable::new(&s2);
        assert_eq!(
            change(&t0, &tree_at(&t2, 40, UID, 30).unwrap(), 500, UID, 30).cpu_fraction,
            None
        );
        assert_eq!(
            change(&t0, &tree_at(&t2, 80, UID, 30).unwrap(), 500, UID, 30).growth_kb_s,
            0
        );
    }
}
