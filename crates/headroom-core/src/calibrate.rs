//! `calibrate`'s arithmetic (all OSes, pure): the peak footprint of each tree over a
//! sampling period, the lowest free memory seen, and the suggested `run --limit`.

use std::collections::HashMap;

use serde::Serialize;

use crate::proc_tree::OwnTree;
use crate::snapshot::Identity;

const MIB: u64 = 1 << 20;
/// The suggestion never goes below this ...
pub const SUGGEST_FLOOR_BYTES: u64 = 4 << 30;

/// The suggested `--limit` for a machine with `total_bytes` of RAM: 60 % of it, at least
/// 4 GiB, at most 80 % (which wins on machines under 5 GiB), rounded down to a MiB.
///
/// All in bytes: caproom's floor was compared in KB against a value in GB, so its "4 G
/// minimum" never applied.
pub fn suggested_limit(total_bytes: u64) -> u64 {
    let sixty = total_bytes / 5 * 3;
    let eighty = total_bytes / 5 * 4;
    let v = sixty.max(SUGGEST_FLOOR_BYTES).min(eighty);
    v / MIB * MIB
}

/// The largest footprint one tree reached while sampling.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TreePeak {
    pub pid: i32,
    pub name: String,
    pub peak_bytes: u64,
    /// Processes in the tree when it peaked.
    pub processes: usize,
}

/// Peaks over many samples, keyed by the tree root's identity (a reused pid is another tree).
#[derive(Debug, Default, Clone)]
pub struct Peaks {
    trees: HashMap<Identity, TreePeak>,
    pub samples: usize,
    pub min_free_pct: Option<f64>,
    pub last_free_pct: Option<f64>,
}

impl Peaks {
    pub fn add(&mut self, trees: &[OwnTree<'_>], free_pct: Option<f64>) {
        self.samples += 1;
        for t in trees {
            let Some(id) = t.root.identity() else {
                continue;
            };
            let e = self.trees.entry(id).or_insert_with(|| TreePeak {
                pid: t.root.pid,
                name: t.root.name.clone(),
                peak_bytes: 0,
                processes: 0,
            });
            if t.footprint_bytes >= e.peak_bytes {
                e.peak_bytes = t.footprint_bytes;
                e.processes = t.members.len();
            }
        }
        if let Some(f) = free_pct {
            self.min_free_pct = Some(self.min_free_pct.map_or(f, |m| m.min(f)));
        }
        self.last_free_pct = free_pct;
    }

    /// The `n` largest peaks, largest first (pid breaks ties).
    pub fn largest(&self, n: usize) -> Vec<TreePeak> {
        let mut v: Vec<TreePeak> = self.trees.values().cloned().collect();
        v.sort_by(|a, b| b.peak_bytes.cmp(&a.peak_bytes).then(a.pid.cmp(&b.pid)));
        v.truncate(n);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::fixture::proc;

    const GIB: u64 = 1 << 30;

    #[test]
    fn suggestion_is_sixty_percent_clamped_in_bytes() {
        // 24 GiB → 14.4 GiB (caproom's 14745 MB).
        assert_eq!(suggested_limit(24 * GIB) / MIB, 14745);
        assert_eq!(
            suggested_limit(8 * GIB) / MIB,
            4915,
            "60 % of 8 GiB is above the floor"
        );
        assert_eq!(
            suggested_limit(6 * GIB),
            4 * GIB,
            "raised to the 4 GiB floor"
        );
        assert_eq!(suggested_limit(4 * GIB) / MIB, 3276, "but never above 80 %");
        assert_eq!(suggested_limit(0), 0);
        assert_eq!(suggested_limit(64 * GIB) / MIB, 39321);
    }

    #[test]
    fn peaks_keep_the_maximum_per_root_identity() {
        let mut a = proc(10, 1, "node");
        let b = proc(20, 1, "cargo");
        fn tree(r: &crate::snapshot::ProcessRecord, mib: u64) -> OwnTree<'_> {
            OwnTree {
                root: r,
                members: vec![r],
                footprint_bytes: mib * MIB,
            }
        }
        let mut p = Peaks::default();
        p.add(&[tree(&a, 100), tree(&b, 50)], Some(40.0));
        p.add(&[tree(&a, 300), tree(&b, 20)], Some(22.0));
        p.add(&[tree(&a, 200)], Some(30.0));
        a.start_time = Some(99); // pid 10 reused by another program
        p.add(&[tree(&a, 10)], None);
        let l = p.largest(3);
        assert_eq!(
            l.iter()
                .map(|t| (t.pid, t.peak_bytes / MIB))
                .collect::<Vec<_>>(),
            vec![(10, 300), (20, 50), (10, 10)]
        );
        assert_eq!(p.samples, 4);
        assert_eq!(p.min_free_pct, Some(22.0));
        assert_eq!(p.last_free_pct, None);
        assert_eq!(p.largest(1).len(), 1);
    }
}
