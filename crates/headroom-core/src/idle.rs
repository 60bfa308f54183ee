//! Idleness (all OSes, pure): CPU use from successive samples, and the idle-subtree
//! predicate `run --limit` parks by before it terminates anything.

use std::collections::{HashMap, HashSet, VecDeque};

use serde::Serialize;

use crate::snapshot::{Identity, ProcState, ProcessRecord};

/// A subtree using less than this fraction of one core is idle.
pub const IDLE_CPU_FRACTION: f64 = 0.02;
/// ... measured over at least this window.
pub const IDLE_WINDOW_MS: u64 = 1000;
/// A subtree must hold at least this much to be worth parking.
pub const PARK_MIN_BYTES: u64 = 512 << 20;

/// CPU time samples per process identity, to tell how busy each one was over the last
/// second. Samples older than needed are dropped; identities not seen in a round are
/// forgotten.
#[derive(Debug, Default, Clone)]
pub struct CpuSamples {
    samples: HashMap<Identity, VecDeque<(u64, u64)>>,
}

impl CpuSamples {
    /// Add one round of samples taken at `at_ms` (any monotonic millisecond clock).
    pub fn record(&mut self, at_ms: u64, members: &[&ProcessRecord]) {
        let mut next: HashMap<Identity, VecDeque<(u64, u64)>> =
            HashMap::with_capacity(members.len());
        for m in members {
            let (Some(id), Some(cpu)) = (m.identity(), m.cpu_ns) else {
                continue;
            };
            let mut q = self.samples.remove(&id).unwrap_or_default();
            q.push_back((at_ms, cpu));
            // Keep the newest sample that is at least a window old, and everything after it.
            while q.len() > 2 && q.get(1).is_some_and(|s| at_ms - s.0 >= IDLE_WINDOW_MS) {
                q.pop_front();
            }
            next.insert(id, q);
        }
        self.samples = next;
    }

    /// CPU used as a fraction of one core over at least `window_ms` ending at the newest
    /// sample; `None` while the history is shorter than the window (a process seen for the
    /// first time is not known to be idle).
    pub fn fraction(&self, id: &Identity, window_ms: u64) -> Option<f64> {
        let q = self.samples.get(id)?;
        let &(t1, c1) = q.back()?;
        let &(t0, c0) = q.iter().rev().find(|(t, _)| t1 - t >= window_ms)?;
        if t1 <= t0 {
            return None;
        }
        Some(c1.saturating_sub(c0) as f64 / ((t1 - t0) as f64 * 1e6))
    }
}

/// The tree's head (`pgid`: the command, which leads its own group; for a `watch` guard the
/// matched root, whether or not it leads a group) and its session: never parked. Beyond
/// these, every member that leads its own session (pid == sid) or process group
/// (pid == pgid, caproom's fallback) is protected wherever it is in the tree: those are the
/// interactive shells of a terminal or an editor, the processes a person is talking to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leaders {
    pub pgid: i32,
    pub sid: Option<i32>,
}

impl Leaders {
    fn protects(&self, p: &ProcessRecord) -> bool {
        p.pid == self.pgid
            || Some(p.pid) == self.sid
            || Some(p.pid) == p.sid
            || Some(p.pid) == p.pgid
    }
}

/// A subtree `run --limit` may park: idle, big enough, no leader inside.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IdleSubtree {
    pub root: i32,
    pub name: String,
    /// Processes to stop, parents before children (so none can fork meanwhile).
    #[serde(skip)]
    pub targets: Vec<Identity>,
    pub pids: Vec<i32>,
    pub footprint_bytes: u64,
    pub cpu_fraction: f64,
}

/// The subtrees of a breaching tree to park first: for a member `p`, its subtree is `p` and
/// every member below it. It qualifies when
/// - it holds no leader (see `Leaders`: the tree's head, its session leader, and any
///   member leading its own session or group),
/// - every live process in it has a known identity and a CPU history of at least one
///   second, and together they used less than 2 % of a core over it,
/// - its footprint is at least `min_bytes` (512 MiB),
/// - its top process is not already stopped.
///
/// Only maximal subtrees are returned (a qualifying parent takes its children with it).
/// `members` must be parents-before-children, as `tree_members` returns them.
pub fn idle_subtrees<'a>(
    members: &[&'a ProcessRecord],
    leaders: &Leaders,
    cpu: &CpuSamples,
    min_bytes: u64,
) -> Vec<IdleSubtree> {
    let pids: HashSet<i32> = members.iter().map(|m| m.pid).collect();
    let mut children: HashMap<i32, Vec<&'a ProcessRecord>> = HashMap::new();
    for m in members {
        if pids.contains(&m.ppid) && m.ppid != m.pid {
            children.entry(m.ppid).or_default().push(m);
        }
    }
    let subtree = |top: &'a ProcessRecord| -> Vec<&'a ProcessRecord> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut queue = VecDeque::from([top]);
        while let Some(p) = queue.pop_front() {
            if !seen.insert(p.pid) {
                continue;
            }
            out.push(p);
            queue.extend(children.get(&p.pid).into_iter().flatten().copied());
        }
        out
    };
    let mut covered: HashSet<i32> = HashSet::new();
    let mut found = Vec::new();
    for top in members {
        if covered.contains(&top.pid) || top.is_zombie() || top.state == ProcState::Stopped {
            continue;
        }
        let sub = subtree(top);
        if let Some(s) = qualify(top, &sub, leaders, cpu, min_bytes) {
            covered.extend(s.pids.iter().copied());
            found.push(s);
        }
    }
    found
}

fn qualify(
    top: &ProcessRecord,
    sub: &[&ProcessRecord],
    leaders: &Leaders,
    cpu: &CpuSamples,
    min_bytes: u64,
) -> Option<IdleSubtree> {
    let mut footprint = 0u64;
    let mut used = 0.0;
    let mut targets = Vec::new();
    let mut pids = Vec::new();
    for p in sub {
        if leaders.protects(p) {
            return None;
        }
        if p.is_zombie() {
            continue;
        }
        let id = p.identity()?;
        used += cpu.fraction(&id, IDLE_WINDOW_MS)?;
        footprint = footprint.saturating_add(p.footprint_bytes.unwrap_or(0));
        if p.state != ProcState::Stopped {
            targets.push(id);
            pids.push(p.pid);
        }
    }
    (used < IDLE_CPU_FRACTION && footprint >= min_bytes && !targets.is_empty()).then(|| {
        IdleSubtree {
            root: top.pid,
            name: top.name.clone(),
            targets,
            pids,
            footprint_bytes: footprint,
            cpu_fraction: used,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::fixture::{MIB, member as rec};

    fn with_cpu(mut p: ProcessRecord, ns: u64) -> ProcessRecord {
        p.cpu_ns = Some(ns);
        p
    }

    #[test]
    fn cpu_fraction_needs_a_full_window() {
        let mut h = CpuSamples::default();
        let p = rec(5, 1, 1);
        let id = p.identity().unwrap();
        h.record(0, &[&with_cpu(p.clone(), 0)]);
        h.record(500, &[&with_cpu(p.clone(), 5_000_000)]);
        assert_eq!(h.fraction(&id, 1000), None, "half a second is not enough");
        h.record(1000, &[&with_cpu(p.clone(), 10_000_000)]);
        assert!((h.fraction(&id, 1000).unwrap() - 0.01).abs() < 1e-9);
        for t in (1200..=3000).step_by(200) {
            h.record(
                t,
                &[&with_cpu(p.clone(), 10_000_000 + (t - 1000) * 100_000)],
            );
        }
        // 100 µs of CPU per ms = 10 % of a core over the last second.
        assert!((h.fraction(&id, 1000).unwrap() - 0.1).abs() < 1e-9);
        assert!(h.samples[&id].len() <= 7, "old samples are dropped");
        h.record(3200, &[]);
        assert_eq!(h.fraction(&id, 1000), None, "gone processes are forgotten");
    }

    /// headroom 10 → cmd 100 (group leader) → 101 (idle, 600 MiB) → 102 (idle, 100 MiB);
    /// cmd → 103 (busy, 900 MiB); cmd → 104 (idle, 400 MiB).
    fn breaching() -> Vec<ProcessRecord> {
        vec![
            rec(100, 10, 50),
            rec(101, 100, 600),
            rec(103, 100, 900),
            rec(104, 100, 400),
            rec(102, 101, 100),
        ]
    }

    fn history(records: &[ProcessRecord], busy: &[i32], seconds: u64) -> CpuSamples {
        let mut h = CpuSamples::default();
        for step in 0..=(seconds * 5) {
            let t = step * 200;
            let round: Vec<ProcessRecord> = records
                .iter()
                .map(|p| {
                    let rate = if busy.contains(&p.pid) {
                        500_000
                    } else {
                        1_000
                    };
                    with_cpu(p.clone(), t * rate)
                })
                .collect();
            let refs: Vec<&ProcessRecord> = round.iter().collect();
            h.record(t, &refs);
        }
        h
    }

    fn leaders() -> Leaders {
        Leaders {
            pgid: 100,
            sid: Some(50),
        }
    }

    #[test]
    fn idle_subtree_happy_path_takes_children_and_skips_busy_small_and_leaders() {
        let records = breaching();
        let refs: Vec<&ProcessRecord> = records.iter().collect();
        let h = history(&records, &[103], 2);
        let found = idle_subtrees(&refs, &leaders(), &h, PARK_MIN_BYTES);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].root, 101);
        assert_eq!(
            found[0].pids,
            vec![101, 102],
            "parent first, grandchild included"
        );
        assert_eq!(found[0].footprint_bytes, 700 * MIB);
        assert!(found[0].cpu_fraction < IDLE_CPU_FRACTION);
        // The command itself (group leader, 2 GiB in total, idle) is never a candidate.
        assert!(found.iter().all(|s| !s.pids.contains(&100)));
    }

    #[test]
    fn idle_subtree_rules_one_by_one() {
        let records = breaching();
        let refs: Vec<&ProcessRecord> = records.iter().collect();
        // Busy at 5 % of a core: not idle.
        let mut busy = history(&records, &[], 2);
        for step in 11..=15u64 {
            let t = step * 200;
            let round: Vec<ProcessRecord> = records
                .iter()
                .map(|p| with_cpu(p.clone(), 10_000_000 + t * 50_000))
                .collect();
            let r: Vec<&ProcessRecord> = round.iter().collect();
            busy.record(t, &r);
        }
        assert!(idle_subtrees(&refs, &leaders(), &busy, PARK_MIN_BYTES).is_empty());
        // Too little history (half a second): unknown, so not idle.
        let short = history(&records, &[], 0);
        assert!(idle_subtrees(&refs, &leaders(), &short, PARK_MIN_BYTES).is_empty());
        // 400 MiB alone is below 512 MiB; with a lower threshold it qualifies.
        let h = history(&records, &[103], 2);
        let small = idle_subtrees(&refs, &leaders(), &h, 300 * MIB);
        assert_eq!(
            small.iter().map(|s| s.root).collect::<Vec<_>>(),
            vec![101, 104]
        );
        // The command's session leader inside the subtree protects the whole subtree.
        let sid_inside = Leaders {
            pgid: 100,
            sid: Some(102),
        };
        assert!(idle_subtrees(&refs, &sid_inside, &h, PARK_MIN_BYTES).is_empty());
        // A process without identity (start time unread) is never parked.
        let mut anon = records.clone();
        anon[4].start_time = None;
        let anon_refs: Vec<&ProcessRecord> = anon.iter().collect();
        assert!(idle_subtrees(&anon_refs, &leaders(), &h, PARK_MIN_BYTES).is_empty());
        // An already stopped top is not parked again.
        let mut stopped = records.clone();
        stopped[1].state = ProcState::Stopped;
        let st: Vec<&ProcessRecord> = stopped.iter().collect();
        let again = idle_subtrees(&st, &leaders(), &h, PARK_MIN_BYTES);
        assert!(again.iter().all(|s| s.root != 101), "{again:?}");
    }

    #[test]
    fn session_and_group_leaders_anywhere_in_the_tree_are_never_parked() {
        let h = history(&breaching(), &[103], 2);
        // An interactive shell inside the tree (an editor's terminal): it leads its session.
        let mut shell = breaching();
        shell[1].sid = Some(101);
        let r: Vec<&ProcessRecord> = shell.iter().collect();
        assert!(idle_subtrees(&r, &leaders(), &h, PARK_MIN_BYTES).is_empty());
        // A job-control group below it: its leader (the grandchild) protects its subtree and,
        // through it, 101's; nothing else of 700 MiB is idle.
        let mut group = breaching();
        group[4].pgid = Some(102);
        let r: Vec<&ProcessRecord> = group.iter().collect();
        assert!(idle_subtrees(&r, &leaders(), &h, PARK_MIN_BYTES).is_empty());
        // A session leader is protected even when its group id was not read.
        let mut no_pgid = breaching();
        no_pgid[1].pgid = None;
        no_pgid[1].sid = Some(101);
        let r: Vec<&ProcessRecord> = no_pgid.iter().collect();
        assert!(idle_subtrees(&r, &leaders(), &h, PARK_MIN_BYTES).is_empty());
        // The tree's head is protected even when it leads no group (a `watch` guard's
        // root): 100 idle with 2 GiB below it is never a candidate.
        let head = Leaders {
            pgid: 100,
            sid: None,
        };
        let mut root_not_leader = breaching();
        root_not_leader[0].pgid = Some(7);
        let h_all = history(&root_not_leader, &[], 2);
        let r: Vec<&ProcessRecord> = root_not_leader.iter().collect();
        let found = idle_subtrees(&r, &head, &h_all, PARK_MIN_BYTES);
        assert!(found.iter().all(|s| !s.pids.contains(&100)), "{found:?}");
        // Control: members that lead nothing are still parked, leaders' siblings included.
        assert_eq!(
            found.iter().map(|s| s.root).collect::<Vec<_>>(),
            vec![101, 103],
            "{found:?}"
        );
    }

    #[test]
    fn zombies_in_a_subtree_are_skipped_not_signalled() {
        let mut records = breaching();
        records[4].state = ProcState::Zombie;
        records[4].footprint_bytes = None;
        let refs: Vec<&ProcessRecord> = records.iter().collect();
        let h = history(&records, &[103], 2);
        let found = idle_subtrees(&refs, &leaders(), &h, PARK_MIN_BYTES);
        assert_eq!(found[0].pids, vec![101]);
    }
}
