//! The emergency override: at the wall, the idle rule protects nothing (a session that cannot
//! fork is already broken, and every other session with it), so it may relax exactly one
//! rule, `has-active-session`, and only as far as the projection says is needed.
//!
//! Replayed on 2026-08-30 01:25: one override per run freed 295 slots and left the machine at
//! 84 % while the leak spent that in three minutes. So relief is a target, not a count: take
//! targets until the projected usage falls below the recovery target, counting each kill as
//! its zombies + 1 (an underestimate: an optimistic projection stops too early).

use std::cmp::Ordering;

use serde::Serialize;

/// The emergency override (`[emergency]`): at the wall `reap` may relax
/// `has-active-session`, until the projected usage is back under the recovery fraction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Emergency {
    pub enabled: bool,
    /// Pressure when free slots ≤ this fraction of the effective limit (capped at 0.5).
    pub free_fraction: f64,
    /// Stop overriding once projected usage is below this fraction of the limit.
    pub recovery_fraction: f64,
}

impl Default for Emergency {
    fn default() -> Self {
        Self {
            enabled: true,
            free_fraction: 0.05,
            recovery_fraction: 0.75,
        }
    }
}

impl Emergency {
    /// Clamp the settings: the trigger to [0, 0.5]; the recovery target to
    /// [0.1, 1 − trigger], so a run that reaches it has left the pressure zone and the
    /// override cannot fire again next poll (reaping in a loop).
    pub fn clamped(self) -> Self {
        let free_fraction = self.free_fraction.clamp(0.0, 0.5);
        let recovery_fraction = self.recovery_fraction.clamp(0.1, 1.0 - free_fraction);
        Self {
            enabled: self.enabled,
            free_fraction,
            recovery_fraction,
        }
    }

    /// Whether the machine is at the wall. An unknown or zero limit is never pressure.
    pub fn under_pressure(&self, used: u64, limit: Option<u64>) -> bool {
        let Some(limit) = limit.filter(|&l| l > 0) else {
            return false;
        };
        let free = limit.saturating_sub(used) as f64 / limit as f64;
        self.enabled && free <= self.free_fraction
    }

    /// Whether more relief is needed at `projected` slots used.
    pub fn needs_more_relief(&self, projected: u64, limit: Option<u64>) -> bool {
        match limit {
            Some(l) if l > 0 => projected as f64 / l as f64 >= self.recovery_fraction,
            _ => false,
        }
    }
}

/// Slots a kill is projected to free: its zombies and the parent's own slot.
pub fn relief(zombies: u64) -> u64 {
    zombies + 1
}

/// Candidate order among parents whose session is active: the oldest sign of life first
/// (log age descending, then CPU idle descending, unknown last), never by zombie count alone
/// (at 93 % the zombie ranking picked the session the user was typing in); zombies and pid
/// only break ties. Strict weak order: `None` compares below every `Some`.
pub fn oldest_sign_of_life_first(
    a: (Option<f64>, Option<f64>, u64, i32),
    b: (Option<f64>, Option<f64>, u64, i32),
) -> Ordering {
    let desc = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => y.total_cmp(&x),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    };
    desc(a.0, b.0)
        .then(desc(a.1, b.1))
        .then(b.2.cmp(&a.2))
        .then(a.3.cmp(&b.3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e18_recovery_target_is_clamped_below_the_trigger() {
        let e = Emergency {
            enabled: true,
            free_fraction: 0.05,
            recovery_fraction: 0.99,
        }
        .clamped();
        assert!((e.recovery_fraction - 0.95).abs() < 1e-12);
        let e = Emergency::default().clamped();
        assert!((e.recovery_fraction - 0.75).abs() < 1e-12);
        let e = Emergency {
            enabled: true,
            free_fraction: 0.9,
            recovery_fraction: 0.01,
        }
        .clamped();
        assert_eq!((e.free_fraction, e.recovery_fraction), (0.5, 0.1));
    }

    #[test]
    fn pressure_needs_a_known_positive_limit() {
        let e = Emergency::default();
        assert!(e.under_pressure(2666, Some(2666)));
        assert!(e.under_pressure(2534 + 1, Some(2666)));
        assert!(!e.under_pressure(1000, Some(4000)));
        assert!(
            !e.under_pressure(3000, None),
            "limit unknown is never pressure"
        );
        assert!(!e.under_pressure(3000, Some(0)));
        assert!(
            !Emergency {
                enabled: false,
                ..e
            }
            .under_pressure(2666, Some(2666))
        );
    }

    #[test]
    fn no_relief_is_needed_against_an_unknown_or_zero_limit() {
        let e = Emergency::default().clamped();
        for projected in [0, 5, 2666] {
            assert!(!e.needs_more_relief(projected, Some(0)), "{projected} of 0");
            assert!(
                !e.needs_more_relief(projected, None),
                "{projected} of unknown"
            );
        }
        // Control: a positive limit is judged against the recovery target.
        assert!(e.needs_more_relief(2666, Some(2666)));
        assert!(!e.needs_more_relief(1, Some(2666)));
    }

    #[test]
    fn relief_projection() {
        // Ending a parent frees its zombies and its own slot.
        assert_eq!((relief(0), relief(526)), (1, 527));
        let e = Emergency::default();
        assert!(
            e.needs_more_relief(2666 - relief(526), Some(2666)),
            "2139 = 80 % ≥ 75 %"
        );
        assert!(
            !e.needs_more_relief(2666 - relief(526) - relief(402), Some(2666)),
            "1736 = 65 %"
        );
        assert!(!e.needs_more_relief(5000, None));
    }

    #[test]
    fn ordering_is_transitive_with_unknowns() {
        let s = |log: Option<f64>, cpu: Option<f64>, z: u64, pid: i32| (log, cpu, z, pid);
        let mut v = vec![
            s(Some(16.0), Some(0.0), 262, 9126),
            s(None, Some(0.0), 900, 1),
            s(Some(5206.0), Some(0.0), 249, 18251),
            s(Some(0.0), None, 5, 2),
            s(Some(4736.0), Some(6.0), 257, 14515),
        ];
        v.sort_by(|a, b| oldest_sign_of_life_first(*a, *b));
        let pids: Vec<i32> = v.iter().map(|x| x.3).collect();
        assert_eq!(pids, vec![18251, 14515, 9126, 2, 1]);
        for a in &v {
            assert_eq!(oldest_sign_of_life_first(*a, *a), Ordering::Equal);
        }
    }
}
