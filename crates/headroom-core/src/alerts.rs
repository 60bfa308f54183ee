//! Threshold crossings with hysteresis, for `watch`'s notifications and its auto-reap gate
//! (all OSes, pure).
//!
//! A level becomes effective only after two consecutive readings at it (one spike is not a
//! crossing); each level fires once per crossing and re-arms only when usage falls below 90 %
//! of its threshold; firing critical also disarms warning (no "warning" after "critical" on
//! the way down); de-escalation is immediate and silent. An unknown reading changes nothing.

use serde::{Deserialize, Serialize};

use crate::reading::{Level, Thresholds};

/// Readings in a row needed to confirm a level.
pub const CONFIRMATIONS: u32 = 2;
/// A fired level re-arms below this fraction of its threshold.
pub const RELEASE_FRACTION: f64 = 0.9;

/// What the monitor remembers between readings (persisted by `watch`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertState {
    /// The level of the last readings and how many in a row.
    pub streak_level: Option<Level>,
    pub streak: u32,
    /// The confirmed level (what the destructive path acts on).
    pub confirmed: Level,
    pub warning_armed: bool,
    pub critical_armed: bool,
}

impl Default for AlertState {
    fn default() -> Self {
        Self {
            streak_level: None,
            streak: 0,
            confirmed: Level::Normal,
            warning_armed: true,
            critical_armed: true,
        }
    }
}

/// A crossing that deserves a notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Crossing {
    Warning,
    Critical,
}

impl AlertState {
    /// Feed one reading; returns the crossing to announce, if any.
    pub fn observe(
        &mut self,
        level: Level,
        usage_pct: Option<f64>,
        t: Thresholds,
    ) -> Option<Crossing> {
        let usage = usage_pct.filter(|_| level != Level::Unknown)?;
        // Re-arm below 90 % of each threshold.
        if usage < t.warn_pct * RELEASE_FRACTION {
            self.warning_armed = true;
        }
        if usage < t.crit_pct * RELEASE_FRACTION {
            self.critical_armed = true;
        }
        if self.streak_level == Some(level) {
            // Counted up to what confirms and no further: past it every value means the
            // same, and a count that grew every reading made `watch` rewrite its state
            // file every table round while nothing changed.
            self.streak = self.streak.saturating_add(1).min(CONFIRMATIONS);
        } else {
            self.streak_level = Some(level);
            self.streak = 1;
        }
        if rank(level) < rank(self.confirmed) {
            // De-escalation: immediate and silent.
            self.confirmed = level;
            return None;
        }
        if self.streak < CONFIRMATIONS {
            return None;
        }
        self.confirmed = level;
        match level {
            Level::Critical if self.critical_armed => {
                self.critical_armed = false;
                self.warning_armed = false;
                Some(Crossing::Critical)
            }
            Level::Warning if self.warning_armed => {
                self.warning_armed = false;
                Some(Crossing::Warning)
            }
            _ => None,
        }
    }
}

fn rank(l: Level) -> u8 {
    match l {
        Level::Normal | Level::Unknown => 0,
        Level::Warning => 1,
        Level::Critical => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reading::level;

    fn feed(state: &mut AlertState, usages: &[f64]) -> Vec<Option<Crossing>> {
        let t = Thresholds::default();
        usages
            .iter()
            .map(|&u| state.observe(level(Some(u), t), Some(u), t))
            .collect()
    }

    #[test]
    fn one_spike_is_not_a_crossing_two_readings_are() {
        let mut s = AlertState::default();
        assert_eq!(feed(&mut s, &[80.0, 40.0]), vec![None, None]);
        assert_eq!(s.confirmed, Level::Normal);
        assert_eq!(
            feed(&mut s, &[80.0, 81.0]),
            vec![None, Some(Crossing::Critical)]
        );
        assert_eq!(s.confirmed, Level::Critical);
    }

    #[test]
    fn a_crossing_fires_once_however_long_it_lasts() {
        let mut s = AlertState::default();
        let fired: Vec<_> = feed(&mut s, &[80.0; 20]).into_iter().flatten().collect();
        assert_eq!(fired, vec![Crossing::Critical]);
    }

    /// A steady level leaves the state as it was once confirmed, so `watch` has nothing to
    /// rewrite; a change of level still changes it. A state saved with a count past the
    /// confirmation (before the cap) reads on, the same.
    #[test]
    fn a_steady_level_stops_changing_the_state() {
        let mut s = AlertState::default();
        feed(&mut s, &[10.0, 10.0]);
        let steady = s.clone();
        feed(&mut s, &[11.0, 12.0, 10.0]);
        assert_eq!(s, steady, "steady at normal");
        feed(&mut s, &[60.0]);
        assert_ne!(s, steady, "a new level starts a new streak");
        let mut old = steady.clone();
        old.streak = u32::MAX;
        assert_eq!(feed(&mut old, &[10.0]), vec![None]);
        assert_eq!(old, steady);
    }

    #[test]
    fn flapping_around_the_threshold_does_not_re_fire() {
        let mut s = AlertState::default();
        let fired: Vec<_> = feed(&mut s, &[76.0, 76.0, 74.0, 76.0, 76.0, 73.0, 76.0, 76.0])
            .into_iter()
            .flatten()
            .collect();
        assert_eq!(
            fired,
            vec![Crossing::Critical],
            "74 % is above 90 % of 75: still disarmed"
        );
    }

    #[test]
    fn re_arms_only_below_90_percent_of_the_threshold() {
        let mut s = AlertState::default();
        feed(&mut s, &[76.0, 76.0]);
        feed(&mut s, &[68.0, 76.0, 76.0]);
        assert!(!s.critical_armed, "68 ≥ 67.5 does not re-arm");
        let r = feed(&mut s, &[67.0, 76.0, 76.0]);
        assert_eq!(r, vec![None, None, Some(Crossing::Critical)]);
    }

    #[test]
    fn warning_then_critical_notifies_both_and_critical_suppresses_later_warning() {
        let mut s = AlertState::default();
        let r = feed(&mut s, &[55.0, 55.0, 80.0, 80.0, 60.0, 60.0]);
        assert_eq!(
            r,
            vec![
                None,
                Some(Crossing::Warning),
                None,
                Some(Crossing::Critical),
                None,
                None
            ]
        );
        assert_eq!(
            s.confirmed,
            Level::Warning,
            "de-escalation is immediate and silent"
        );
    }

    #[test]
    fn unknown_readings_change_nothing() {
        let mut s = AlertState::default();
        feed(&mut s, &[80.0]);
        assert_eq!(s.observe(Level::Unknown, None, Thresholds::default()), None);
        assert_eq!(feed(&mut s, &[80.0]), vec![Some(Crossing::Critical)]);
    }
}
