//! Which processes of a table make up a watched tree: below some roots, in a process
//! group, named pids, and everything below those. Pure logic over `(pid, ppid, pgid)`
//! rows; the platform layer reads the rows (`ProcessSource::tree_sample`), walking only the
//! tree where the OS allows it and selecting from a whole snapshot otherwise.

use super::snapshot::{ProcessRecord, Snapshot};

/// The records of `snap` that `query` selects (see `reachable`).
pub fn select_tree(snap: Snapshot, query: &TreeQuery<'_>) -> Vec<ProcessRecord> {
    let wanted = reachable(
        snap.processes.iter().map(|p| (p.pid, p.ppid, p.pgid)),
        query,
    );
    snap.processes
        .into_iter()
        .filter(|p| wanted.contains(&p.pid))
        .collect()
}

/// What `ProcessSource::tree_sample` reads.
#[derive(Debug, Clone, Copy)]
pub struct TreeQuery<'a> {
    pub roots: &'a [i32],
    pub pgid: Option<i32>,
    pub extra: &'a [i32],
}

/// The pids `query` selects from a table of `(pid, ppid, pgid)`: below the roots (roots
/// excluded), in the group, the extra pids, and everything below those.
pub fn reachable(
    table: impl Iterator<Item = (i32, i32, Option<i32>)>,
    query: &TreeQuery<'_>,
) -> std::collections::HashSet<i32> {
    use std::collections::{HashMap, HashSet, VecDeque};
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    let mut queue: VecDeque<i32> = VecDeque::new();
    let mut present: HashSet<i32> = HashSet::new();
    for (pid, ppid, pgid) in table {
        present.insert(pid);
        if ppid != pid {
            children.entry(ppid).or_default().push(pid);
        }
        if query.pgid.is_some() && pgid == query.pgid {
            queue.push_back(pid);
        }
    }
    for r in query.roots {
        queue.extend(children.get(r).into_iter().flatten().copied());
    }
    queue.extend(query.extra.iter().copied().filter(|p| present.contains(p)));
    let mut out = HashSet::new();
    while let Some(pid) = queue.pop_front() {
        if query.roots.contains(&pid) || !out.insert(pid) {
            continue;
        }
        queue.extend(children.get(&pid).into_iter().flatten().copied());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reachable_follows_roots_group_and_extra_but_not_the_roots() {
        // 10 (headroom) → 100 → 101; 200 in group 100 under init; 300 extra → 301; 400 unrelated.
        let table = [
            (10, 1, Some(10)),
            (100, 10, Some(100)),
            (101, 100, Some(100)),
            (200, 1, Some(100)),
            (300, 1, Some(300)),
            (301, 300, Some(300)),
            (400, 1, Some(400)),
        ];
        let q = TreeQuery {
            roots: &[10],
            pgid: Some(100),
            extra: &[300, 999],
        };
        let mut got: Vec<i32> = reachable(table.iter().copied(), &q).into_iter().collect();
        got.sort_unstable();
        assert_eq!(got, vec![100, 101, 200, 300, 301]);
        let q = TreeQuery {
            roots: &[10],
            pgid: None,
            extra: &[],
        };
        let mut got: Vec<i32> = reachable(table.iter().copied(), &q).into_iter().collect();
        got.sort_unstable();
        assert_eq!(got, vec![100, 101]);
    }
}
