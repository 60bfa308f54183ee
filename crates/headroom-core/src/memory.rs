//! Memory caps, pure (all OSes): the pressure-aware limit, which processes belong to a
//! watched tree as they fork, exit and get reparented, and the tree's footprint. What may
//! be parked when it is over is in `core::idle`.
//!
//! Everything here works on `ProcessRecord`s a backend already read; nothing touches the OS,
//! so every rule is tested with hand-built records.

use std::collections::{HashMap, HashSet, VecDeque};

use crate::snapshot::{Identity, ProcessRecord};

/// Below this much free memory the limit is lowered (caproom's threshold).
pub const PRESSURE_FREE_PCT: f64 = 15.0;

/// The limit a tree is held to now: `limit` while at least 15 % of memory is free, else
/// `limit × (80 + 20 × free% / 15) / 100`, i.e. down to 80 % of it at 0 % free, so a tree is
/// stopped earlier when the whole machine is short.
///
/// Unknown free memory leaves the limit as configured: lowering it on no evidence would end
/// a user's work for a reading that failed.
pub fn effective_limit(limit: u64, free_pct: Option<f64>) -> u64 {
    let Some(free) = free_pct.filter(|f| f.is_finite()) else {
        return limit;
    };
    if free >= PRESSURE_FREE_PCT {
        return limit;
    }
    let pct = 80.0 + 20.0 * free.max(0.0) / PRESSURE_FREE_PCT;
    (limit as f64 * pct / 100.0).floor() as u64
}

/// What a watched tree is: every descendant of `root` by live parent links (the root itself
/// excluded: it is headroom), plus every process in `pgid` (the command's process group),
/// plus processes seen as members before that still carry the same identity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeSpec {
    /// headroom's own pid. On Linux headroom is a child subreaper, so orphans of the tree
    /// are reparented to it and stay its descendants.
    pub root: i32,
    /// The command's process group, while the command has not been reaped (after that the
    /// group id could be reused by an unrelated group).
    pub pgid: Option<i32>,
}

/// Remembers who belonged to a watched tree, so that a member reparented away from it (to
/// init or launchd: macOS has no subreaper) is still followed, by identity, until it exits.
#[derive(Debug, Default, Clone)]
pub struct TreeTracker {
    known: HashMap<i32, Identity>,
}

impl TreeTracker {
    /// Pids to read again in the next sample, beyond what the walk from the root finds.
    pub fn known_pids(&self) -> Vec<i32> {
        let mut v: Vec<i32> = self.known.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// The members among `records`, parents before children. Remembers new members and
    /// forgets those that are gone (absent, or their pid now holds another process).
    pub fn update<'a>(
        &mut self,
        records: &'a [ProcessRecord],
        spec: &TreeSpec,
    ) -> Vec<&'a ProcessRecord> {
        let members = tree_members(records, spec, &self.known);
        let mut next = HashMap::with_capacity(members.len());
        for m in &members {
            if let Some(id) = m.identity() {
                next.insert(m.pid, id);
            }
        }
        self.known = next;
        members
    }
}

/// Members of the tree described by `spec` among `records` (see `TreeSpec`), parents before
/// children. `known` holds identities seen as members before: a record matching one (same
/// pid *and* start time) is still a member wherever it now hangs; a reused pid is not.
pub fn tree_members<'a>(
    records: &'a [ProcessRecord],
    spec: &TreeSpec,
    known: &HashMap<i32, Identity>,
) -> Vec<&'a ProcessRecord> {
    let mut children: HashMap<i32, Vec<usize>> = HashMap::new();
    for (i, p) in records.iter().enumerate() {
        if p.ppid != p.pid {
            children.entry(p.ppid).or_default().push(i);
        }
    }
    // 1. Who is in: the seeds and everything below them.
    let mut member: HashSet<i32> = HashSet::new();
    let mut queue: VecDeque<usize> = VecDeque::new();
    for (i, p) in records.iter().enumerate() {
        if p.pid == spec.root {
            continue;
        }
        let child_of_root = p.ppid == spec.root;
        let in_group = spec.pgid.is_some() && p.pgid == spec.pgid;
        let still_known = known
            .get(&p.pid)
            .is_some_and(|id| p.identity().as_ref() == Some(id));
        if (child_of_root || in_group || still_known) && member.insert(p.pid) {
            queue.push_back(i);
        }
    }
    while let Some(i) = queue.pop_front() {
        for &c in children.get(&records[i].pid).into_iter().flatten() {
            if records[c].pid != spec.root && member.insert(records[c].pid) {
                queue.push_back(c);
            }
        }
    }
    // 2. In what order: breadth first from the members whose parent is not one, so every
    //    parent comes before its children (parking stops parents first).
    let mut tops: Vec<usize> = records
        .iter()
        .enumerate()
        .filter(|(_, p)| member.contains(&p.pid) && (p.ppid == p.pid || !member.contains(&p.ppid)))
        .map(|(i, _)| i)
        .collect();
    tops.sort_by_key(|&i| records[i].pid);
    let mut out: Vec<&ProcessRecord> = Vec::with_capacity(member.len());
    let mut placed: HashSet<i32> = HashSet::with_capacity(member.len());
    let mut queue: VecDeque<usize> = tops.into();
    while let Some(i) = queue.pop_front() {
        let p = &records[i];
        if !placed.insert(p.pid) {
            continue;
        }
        out.push(p);
        for &c in children.get(&p.pid).into_iter().flatten() {
            if member.contains(&records[c].pid) {
                queue.push_back(c);
            }
        }
    }
    // A parent cycle (only possible in a torn read) has no top: keep its members anyway.
    if out.len() < member.len() {
        let mut rest: Vec<&ProcessRecord> = records
            .iter()
            .filter(|p| member.contains(&p.pid) && !placed.contains(&p.pid))
            .collect();
        rest.sort_by_key(|p| p.pid);
        rest.dedup_by_key(|p| p.pid);
        out.extend(rest);
    }
    out
}

/// The footprint of `members` and how many of them had none to read (zombies, kernel
/// threads, unreadable entries: they count as zero, and the count says so).
pub fn tree_footprint(members: &[&ProcessRecord]) -> (u64, usize) {
    let mut bytes = 0u64;
    let mut unknown = 0usize;
    for m in members {
        match m.footprint_bytes {
            Some(b) => bytes = bytes.saturating_add(b),
            None if m.is_zombie() => {}
            None => unknown += 1,
        }
    }
    (bytes, unknown)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::ProcState;
    use crate::snapshot::fixture::{MIB, member as rec};

    #[test]
    fn pressure_aware_limit() {
        let l = 4096 * MIB;
        assert_eq!(effective_limit(l, Some(35.0)), l);
        assert_eq!(
            effective_limit(l, Some(15.0)),
            l,
            "15 % is not yet pressure"
        );
        assert_eq!(effective_limit(l, Some(0.0)), l * 80 / 100);
        assert_eq!(effective_limit(l, Some(7.5)), l * 90 / 100);
        assert_eq!(effective_limit(100 * MIB, Some(3.0)), 84 * MIB);
        assert_eq!(
            effective_limit(l, Some(-4.0)),
            l * 80 / 100,
            "clamped at 80 %"
        );
        assert_eq!(
            effective_limit(l, None),
            l,
            "unknown free memory changes nothing"
        );
        assert_eq!(effective_limit(l, Some(f64::NAN)), l);
    }

    #[test]
    fn tree_follows_live_links_the_group_and_known_identities() {
        // headroom 10 → cmd 100 → 101 → 102; 103 reparented to init but in the group;
        // 104 reparented to init, out of the group, known from an earlier round;
        // 105 an unrelated process; 106 holds a known pid with a new start time (reused).
        let mut records = vec![
            rec(10, 1, 1),
            rec(100, 10, 1),
            rec(101, 100, 1),
            rec(102, 101, 1),
            rec(103, 1, 1),
            rec(104, 1, 1),
            rec(107, 104, 1),
            rec(105, 1, 1),
            rec(106, 1, 1),
        ];
        records[0].pgid = Some(10);
        for i in [5, 6, 7, 8] {
            records[i].pgid = Some(900 + i as i32);
        }
        let spec = TreeSpec {
            root: 10,
            pgid: Some(100),
        };
        let mut t = TreeTracker::default();
        let first: Vec<i32> = t.update(&records, &spec).iter().map(|p| p.pid).collect();
        assert_eq!(first, vec![100, 103, 101, 102]);

        // Next round: 104 and 106 were members under 101 before the reparenting.
        let before: Vec<ProcessRecord> = vec![rec(104, 101, 1), rec(106, 101, 1)];
        let mut merged = records.clone();
        merged.retain(|p| p.pid != 104 && p.pid != 106);
        merged.extend(before);
        t.update(&merged, &spec);
        assert!(t.known_pids().contains(&104) && t.known_pids().contains(&106));
        records[8].start_time = Some(999_999); // 106 now names another process
        let now: Vec<i32> = t.update(&records, &spec).iter().map(|p| p.pid).collect();
        assert!(
            now.contains(&104),
            "reparented member still followed: {now:?}"
        );
        assert!(now.contains(&107), "its children too: {now:?}");
        assert!(!now.contains(&106), "a reused pid is not a member: {now:?}");
        assert!(!now.contains(&105) && !now.contains(&10));

        // Exited processes drop out; the group is not used once the command is reaped.
        records.retain(|p| p.pid != 102 && p.pid != 104 && p.pid != 107);
        let spec = TreeSpec {
            root: 10,
            pgid: None,
        };
        let after: Vec<i32> = t.update(&records, &spec).iter().map(|p| p.pid).collect();
        assert_eq!(after, vec![100, 103, 101], "103 is still known by identity");
        assert!(!t.known_pids().contains(&102));
    }

    #[test]
    fn footprint_counts_zombies_as_zero_and_unreadable_as_unknown() {
        let a = rec(1, 0, 10);
        let mut z = rec(2, 1, 0);
        z.state = ProcState::Zombie;
        z.footprint_bytes = None;
        let mut k = rec(3, 1, 0);
        k.footprint_bytes = None;
        assert_eq!(tree_footprint(&[&a, &z, &k]), (10 * MIB, 1));
    }
}
