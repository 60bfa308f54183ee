//! The trees `watch`'s memory guards parked to relief: kept between rounds, re-judged every
//! round, and woken before `watch` exits (it never leaves anything stopped behind).

use crate::actions::memory_guard::{self, MemoryGuardReport, ParkedTree, Rejudge};
use crate::core::snapshot::{Identity, Snapshot};

/// The parked trees, at most one per root identity.
#[derive(Debug, Default)]
pub(crate) struct ParkedTrees {
    trees: Vec<ParkedTree>,
}

impl ParkedTrees {
    pub(crate) fn is_empty(&self) -> bool {
        self.trees.is_empty()
    }

    /// Re-judges every tree against this round's snapshot and returns those to wake (under
    /// 90 % of the limit, or the root gone or changed); the rest stay, including the trees
    /// over their limit again, which are among the round's breaches.
    #[must_use = "the trees returned are still stopped until woken"]
    pub(crate) fn rejudge(&mut self, snap: &Snapshot) -> Vec<ParkedTree> {
        let (wake, keep) = std::mem::take(&mut self.trees)
            .into_iter()
            .partition(|p| memory_guard::rejudge(snap, p) == Rejudge::Wake);
        self.trees = keep;
        wake
    }

    /// The tree parked under `root` (a breach's root), taken out: the guard acting on the
    /// breach gets its members, and `remember`s what is still parked afterwards.
    pub(crate) fn take(&mut self, root: Option<Identity>) -> Option<ParkedTree> {
        let i = self.trees.iter().position(|p| Some(p.root) == root)?;
        Some(self.trees.swap_remove(i))
    }

    /// Puts back a tree taken for a guard that failed before acting: it is still parked.
    pub(crate) fn put_back(&mut self, tree: Option<ParkedTree>) {
        self.trees.extend(tree);
    }

    /// Remembers what an enforcement left parked (nothing, when it parked nothing or its
    /// root has no identity to re-judge it by).
    pub(crate) fn remember(&mut self, r: &MemoryGuardReport) {
        if let (false, Some(root)) = (r.parked_ids.is_empty(), r.breach.identity) {
            self.trees.push(ParkedTree {
                root,
                pattern: r.breach.pattern.clone(),
                limit_bytes: r.breach.limit_bytes,
                ids: r.parked_ids.clone(),
            });
        }
    }

    /// Every parked process, tree by tree, in the order they were stopped.
    pub(crate) fn ids(&self) -> Vec<Identity> {
        self.trees
            .iter()
            .flat_map(|t| t.ids.iter().copied())
            .collect()
    }

    /// Every tree, taken out: at exit, to be woken.
    #[must_use = "the trees returned are still stopped until woken"]
    pub(crate) fn take_all(&mut self) -> Vec<ParkedTree> {
        std::mem::take(&mut self.trees)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::memory_guard::GuardOutcome;
    use crate::core::memory_guard::Breach;
    use crate::core::snapshot::fixture::{MIB, member, proc, snapshot};

    /// Root 100 (10 MiB) with children 101 (`mib` MiB) and 102 (500 MiB), all `p<pid>`.
    fn table(mib: u64) -> Snapshot {
        snapshot(
            "linux",
            vec![
                proc(1, 0, "init"),
                member(100, 1, 10),
                member(101, 100, mib),
                member(102, 100, 500),
                proc(9000, 1, "headroom"),
            ],
        )
    }

    fn id(snap: &Snapshot, pid: i32) -> Identity {
        snap.processes
            .iter()
            .find(|p| p.pid == pid)
            .and_then(|p| p.identity())
            .unwrap()
    }

    fn report(root: Option<Identity>, parked_ids: Vec<Identity>) -> MemoryGuardReport {
        MemoryGuardReport {
            at: "2026-12-01T00:00:00Z".into(),
            breach: Breach {
                root: 100,
                identity: root,
                name: "p100".into(),
                pattern: "p100".into(),
                footprint_bytes: 1110 * MIB,
                limit_bytes: 1000 * MIB,
                effective_bytes: 1000 * MIB,
            },
            outcome: GuardOutcome::Parked,
            acted_footprint_bytes: None,
            acted_effective_bytes: None,
            parked: parked_ids.iter().map(|i| i.pid).collect(),
            terminated: vec![],
            killed: vec![],
            spared: vec![],
            note: None,
            parked_ids,
        }
    }

    /// A list holding the tree of root 100 with 101 parked, limit 1000 MiB.
    fn parked_101() -> (ParkedTrees, Identity, Identity) {
        let s = table(600);
        let (root, child) = (id(&s, 100), id(&s, 101));
        let mut p = ParkedTrees::default();
        p.remember(&report(Some(root), vec![child]));
        (p, root, child)
    }

    #[test]
    fn an_enforcement_that_parked_is_remembered_with_its_rule() {
        let (mut p, root, child) = parked_101();
        assert!(!p.is_empty());
        let t = p.take(Some(root)).unwrap();
        assert_eq!(
            t,
            ParkedTree {
                root,
                pattern: "p100".into(),
                limit_bytes: 1000 * MIB,
                ids: vec![child],
            }
        );
        assert!(p.is_empty(), "taken out");
    }

    #[test]
    fn nothing_parked_or_no_root_identity_is_not_remembered() {
        let s = table(600);
        let mut p = ParkedTrees::default();
        p.remember(&report(Some(id(&s, 100)), vec![]));
        assert!(p.is_empty(), "nothing parked: nothing to wake later");
        p.remember(&report(None, vec![id(&s, 101)]));
        assert!(p.is_empty(), "no identity: it could not be re-judged");
    }

    #[test]
    fn a_breach_gets_the_parked_members_of_its_own_root_only() {
        let (mut p, root, _) = parked_101();
        assert_eq!(p.take(None), None, "a breach without identity");
        let reused = Identity {
            start_time: root.start_time + 1,
            ..root
        };
        assert_eq!(p.take(Some(reused)), None, "the pid of another process now");
        let other = id(&table(600), 102);
        assert_eq!(p.take(Some(other)), None);
        // The control: its own root gets them.
        assert!(p.take(Some(root)).is_some());
    }

    #[test]
    fn a_tree_taken_for_a_failed_guard_is_put_back() {
        let (mut p, root, _) = parked_101();
        let t = p.take(Some(root));
        p.put_back(None);
        assert!(p.is_empty());
        p.put_back(t);
        assert!(p.take(Some(root)).is_some(), "still tracked, woken later");
    }

    #[test]
    fn rejudging_returns_the_trees_to_wake_and_keeps_the_rest() {
        // 10 + 300 + 500 = 810 MiB, under 90 % of 1000: woken.
        let (mut p, root, child) = parked_101();
        let wake = p.rejudge(&table(300));
        assert_eq!(wake.len(), 1);
        assert_eq!(wake[0].ids, vec![child]);
        assert!(p.is_empty());
        // 950 MiB: kept parked; 1110 MiB: kept (it is among the breaches, enforced again).
        for mib in [440, 600] {
            let (mut p, _, _) = parked_101();
            assert!(p.rejudge(&table(mib)).is_empty(), "{mib} MiB");
            assert!(p.take(Some(root)).is_some(), "{mib} MiB");
        }
        // The root gone, or its pid reused: woken.
        let (mut p, _, _) = parked_101();
        let mut gone = table(600);
        gone.processes.retain(|r| r.pid != 100);
        assert_eq!(p.rejudge(&gone).len(), 1);
        let (mut p, _, _) = parked_101();
        let mut reused = table(600);
        reused.processes[1].start_time = Some(1);
        assert_eq!(p.rejudge(&reused).len(), 1);
    }

    #[test]
    fn at_exit_every_tree_is_handed_over_to_be_woken() {
        let (mut p, _, child) = parked_101();
        let s = table(600);
        let other = Identity {
            pid: 7,
            ..id(&s, 102)
        };
        p.remember(&report(Some(other), vec![id(&s, 102)]));
        let all = p.take_all();
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].ids, vec![child]);
        assert!(p.is_empty());
    }
}
