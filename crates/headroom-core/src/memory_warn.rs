//! The warning step before a memory limit is acted on: one warning when a tree's footprint
//! crosses `warn_pct` of its limit, and not another until it has dropped back below by a
//! margin — so a tree that hovers at the line warns once, and one that crosses, drops back
//! and crosses again warns twice. Pure: the callers (`run --limit`'s watchdog, `watch`'s
//! memory guards) feed it samples and emit what it returns.

use std::collections::HashMap;

/// The default: warn at 90 % of the limit.
pub const DEFAULT_WARN_PCT: f64 = 90.0;
/// Re-armed once the footprint is this many points of the limit below `warn_pct`.
pub const HYSTERESIS_PCT: f64 = 5.0;

/// One crossing of the warning line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Approaching {
    pub footprint_bytes: u64,
    pub limit_bytes: u64,
    /// The footprint as a percentage of the limit.
    pub pct: f64,
    pub warn_pct: f64,
}

/// The state of one tree's warning line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WarnLine {
    /// Warned and not yet dropped back below the re-arm line.
    warned: bool,
}

impl WarnLine {
    /// Feed one sample; `Some` exactly when this sample crosses the line while armed.
    pub fn observe(&mut self, footprint: u64, limit: u64, warn_pct: f64) -> Option<Approaching> {
        if limit == 0 || !(0.0..100.0).contains(&warn_pct) || warn_pct == 0.0 {
            return None;
        }
        let pct = footprint as f64 * 100.0 / limit as f64;
        if self.warned {
            if pct < warn_pct - HYSTERESIS_PCT {
                self.warned = false;
            }
            return None;
        }
        if pct >= warn_pct {
            self.warned = true;
            return Some(Approaching {
                footprint_bytes: footprint,
                limit_bytes: limit,
                pct: (pct * 10.0).round() / 10.0,
                warn_pct,
            });
        }
        None
    }
}

/// Warning lines of many trees (`watch`'s guards), by tree root; trees not seen in a round
/// are forgotten, so a reused pid starts armed.
#[derive(Debug, Clone, Default)]
pub struct WarnLines {
    lines: HashMap<i32, WarnLine>,
}

impl WarnLines {
    /// One round: `(root, footprint, limit)` of every guarded tree.
    pub fn round(&mut self, trees: &[(i32, u64, u64)], warn_pct: f64) -> Vec<(i32, Approaching)> {
        let mut next = HashMap::with_capacity(trees.len());
        let mut out = Vec::new();
        for &(root, footprint, limit) in trees {
            let mut line = self.lines.get(&root).copied().unwrap_or_default();
            if let Some(a) = line.observe(footprint, limit, warn_pct) {
                out.push((root, a));
            }
            next.insert(root, line);
        }
        self.lines = next;
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: u64 = 1000;

    fn warnings(samples: &[u64]) -> usize {
        let mut w = WarnLine::default();
        samples
            .iter()
            .filter(|&&f| w.observe(f, L, 90.0).is_some())
            .count()
    }

    #[test]
    fn cross_drop_back_cross_again_is_two_warnings_not_one_per_sample() {
        // Above the line for many samples: one warning.
        assert_eq!(warnings(&[100, 900, 950, 990, 999, 920]), 1);
        // Crosses, drops well back, crosses again: two.
        assert_eq!(warnings(&[500, 910, 950, 700, 930, 960]), 2);
        // Hovers around the line without dropping past the hysteresis: one.
        assert_eq!(warnings(&[899, 901, 880, 905, 860, 902]), 1);
        // The boundary: exactly 90 % warns; 84.9 % re-arms, 85 % does not.
        assert_eq!(warnings(&[900, 850, 900]), 1);
        assert_eq!(warnings(&[900, 849, 900]), 2);
        // Never reaching it: none.
        assert_eq!(warnings(&[0, 100, 899]), 0);
    }

    #[test]
    fn the_warning_says_how_close() {
        let mut w = WarnLine::default();
        let a = w.observe(955, L, 90.0).unwrap();
        assert_eq!(
            a,
            Approaching {
                footprint_bytes: 955,
                limit_bytes: L,
                pct: 95.5,
                warn_pct: 90.0
            }
        );
    }

    #[test]
    fn nonsense_lines_never_warn() {
        let mut w = WarnLine::default();
        assert_eq!(w.observe(10, 0, 90.0), None);
        assert_eq!(w.observe(10_000, L, 0.0), None);
        assert_eq!(w.observe(10_000, L, 100.0), None);
    }

    #[test]
    fn many_trees_each_have_their_line_and_a_vanished_one_is_forgotten() {
        let mut w = WarnLines::default();
        assert_eq!(w.round(&[(1, 950, L), (2, 100, L)], 90.0).len(), 1);
        assert_eq!(
            w.round(&[(1, 960, L), (2, 950, L)], 90.0),
            vec![(2, w_at(950))]
        );
        // Tree 1 gone for a round, then back (a reused pid): armed again.
        assert!(w.round(&[(2, 950, L)], 90.0).is_empty());
        assert_eq!(w.round(&[(1, 960, L), (2, 950, L)], 90.0).len(), 1);
    }

    fn w_at(f: u64) -> Approaching {
        Approaching {
            footprint_bytes: f,
            limit_bytes: L,
            pct: f as f64 / 10.0,
            warn_pct: 90.0,
        }
    }
}
