//! One slot reading: usage against the effective limit, level, and the growth trend with its
//! ETA to the wall (all OSes, pure).
//!
//! The ETA is the single most useful number: during the incident the machine was ~11 minutes
//! from lockup and nothing said so.

use serde::{Deserialize, Serialize};

use crate::limits::{EffectiveLimit, LimitSource, effective_limit};
use crate::snapshot::{ProcessTable, SlotUsage, Snapshot, ZombieParent};

/// Warning and critical thresholds in percent of the effective limit, inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Thresholds {
    pub warn_pct: f64,
    pub crit_pct: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            warn_pct: 50.0,
            crit_pct: 75.0,
        }
    }
}

impl Thresholds {
    /// Both in (0, 100] and warn ≤ crit; the message names the offending value.
    pub fn new(warn_pct: f64, crit_pct: f64) -> Result<Self, String> {
        for (flag, v) in [("--warn", warn_pct), ("--crit", crit_pct)] {
            if !v.is_finite() || v <= 0.0 || v > 100.0 {
                return Err(format!(
                    "{flag} `{v}` is out of range: expected a percentage above 0 and at most 100"
                ));
            }
        }
        if warn_pct > crit_pct {
            return Err(format!(
                "--warn `{warn_pct}` is above --crit `{crit_pct}`: the warning threshold must not exceed the critical one"
            ));
        }
        Ok(Self { warn_pct, crit_pct })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    Normal,
    Warning,
    Critical,
    Unknown,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "normal",
            Self::Warning => "warning",
            Self::Critical => "critical",
            Self::Unknown => "unknown",
        }
    }

    /// The level named `s` (its JSON name), as the evidence log stores it.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Normal, Self::Warning, Self::Critical, Self::Unknown]
            .into_iter()
            .find(|l| l.as_str() == s)
    }
}

pub fn level(usage_pct: Option<f64>, t: Thresholds) -> Level {
    match usage_pct {
        None => Level::Unknown,
        Some(u) if u >= t.crit_pct => Level::Critical,
        Some(u) if u >= t.warn_pct => Level::Warning,
        Some(_) => Level::Normal,
    }
}

/// A reading as kept in the history file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub at_ms: i64,
    pub used: u64,
}

/// Growth over the window, and the time left until `limit`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Trend {
    pub samples: usize,
    pub growth_per_min: Option<f64>,
    pub eta_seconds: Option<f64>,
}

impl Trend {
    /// No rate and no ETA from `samples` readings.
    pub fn none(samples: usize) -> Self {
        Self {
            samples,
            growth_per_min: None,
            eta_seconds: None,
        }
    }
}

/// Window of the least-squares fit.
pub const TREND_WINDOW_MS: i64 = 10 * 60 * 1000;
/// Readings needed before a rate is reported.
pub const TREND_MIN_SAMPLES: usize = 3;

/// Ordinary least-squares slope of `used` over time for the samples in the window ending at
/// the newest one. The ETA is given only while growing: `max(0, limit − last) / slope`.
pub fn trend(samples: &[Sample], limit: Option<u64>) -> Trend {
    let Some(last) = samples.iter().max_by_key(|s| s.at_ms) else {
        return Trend::none(0);
    };
    let window: Vec<&Sample> = samples
        .iter()
        .filter(|s| s.at_ms >= last.at_ms - TREND_WINDOW_MS)
        .collect();
    let n = window.len();
    if n < TREND_MIN_SAMPLES {
        return Trend::none(n);
    }
    let t0 = window.iter().map(|s| s.at_ms).min().unwrap_or(last.at_ms);
    let xs: Vec<f64> = window
        .iter()
        .map(|s| (s.at_ms - t0) as f64 / 1000.0)
        .collect();
    let ys: Vec<f64> = window.iter().map(|s| s.used as f64).collect();
    let mx = xs.iter().sum::<f64>() / n as f64;
    let my = ys.iter().sum::<f64>() / n as f64;
    let var: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    if var <= f64::EPSILON {
        return Trend::none(n);
    }
    let cov: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let slope = cov / var; // slots per second
    let eta = match limit {
        Some(l) if slope > 0.0 => Some(l.saturating_sub(last.used) as f64 / slope),
        _ => None,
    };
    Trend {
        samples: n,
        growth_per_min: Some(slope * 60.0),
        eta_seconds: eta,
    }
}

/// Everything `probe` reports about one instant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reading {
    pub at_ms: i64,
    pub uid: u32,
    pub usage: SlotUsage,
    pub limit: EffectiveLimit,
    pub usage_pct: Option<f64>,
    pub free_slots: Option<u64>,
    pub level: Level,
    pub top_parents: Vec<ZombieParent>,
    /// The table may be missing processes (`Snapshot::partial`).
    pub partial: bool,
}

impl Reading {
    pub fn limit_source(&self) -> Option<LimitSource> {
        self.limit.source
    }

    pub fn sample(&self) -> Sample {
        Sample {
            at_ms: self.at_ms,
            used: self.usage.used,
        }
    }
}

/// How many zombie parents a reading names.
pub const TOP_PARENTS: usize = 5;

pub fn read(snapshot: &Snapshot, thresholds: Thresholds) -> Reading {
    let table = ProcessTable::new(snapshot);
    let usage = table.usage(snapshot.uid);
    let limit = effective_limit(&snapshot.ceilings, usage.used, snapshot.uid);
    let usage_pct = limit.limit.map(|l| usage.used as f64 * 100.0 / l as f64);
    let free_slots = limit.limit.map(|l| l.saturating_sub(usage.used));
    let mut top_parents = table.zombie_parents(snapshot.uid);
    top_parents.truncate(TOP_PARENTS);
    Reading {
        at_ms: snapshot.taken_at_ms,
        uid: snapshot.uid,
        usage,
        level: level(usage_pct, thresholds),
        limit,
        usage_pct,
        free_slots,
        top_parents,
        partial: snapshot.partial(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::fixture::mac;
    use crate::snapshot::fixture::*;

    fn th() -> Thresholds {
        Thresholds::default()
    }

    #[test]
    fn levels_are_inclusive_at_50_and_75() {
        for (u, l) in [
            (49.0, Level::Normal),
            (50.0, Level::Warning),
            (74.9, Level::Warning),
            (75.0, Level::Critical),
            (150.0, Level::Critical),
        ] {
            assert_eq!(level(Some(u), th()), l, "{u}");
        }
        assert_eq!(level(None, th()), Level::Unknown);
    }

    #[test]
    fn thresholds_reject_inverted_and_out_of_range() {
        assert!(Thresholds::new(90.0, 80.0).unwrap_err().contains("`90`"));
        assert!(
            Thresholds::new(150.0, 160.0)
                .unwrap_err()
                .contains("--warn `150`")
        );
        assert!(Thresholds::new(0.0, 10.0).is_err());
        assert!(Thresholds::new(f64::NAN, 10.0).is_err());
        assert!(Thresholds::new(80.0, 80.0).is_ok());
    }

    fn incident(n_procs: usize, zombies: usize, ceilings: Vec<crate::limits::Ceiling>) -> Snapshot {
        let mut procs = leaker(87537, zombies, 100_000);
        procs.extend((0..n_procs - zombies - 1).map(|i| proc(10_000 + i as i32, 1, "zsh")));
        let mut s = snapshot("macos", procs);
        s.ceilings = ceilings;
        s
    }

    #[test]
    fn replay_2744_processes_against_rlimit_2666_is_critical_and_full() {
        let s = incident(2744, 2038, mac(Some(4000), Some(2666), Some(4000), 2744, 0));
        let r = read(&s, th());
        assert_eq!(r.limit.limit, Some(2666));
        assert_eq!(r.limit_source(), Some(LimitSource::RlimitNproc));
        assert_eq!(r.free_slots, Some(0));
        assert_eq!(format!("{:.1}", r.usage_pct.unwrap_or_default()), "102.9");
        assert_eq!(r.level, Level::Critical);
    }

    #[test]
    fn replay_the_per_uid_only_regression_is_unknown_not_67_5_percent() {
        // What the watchdog showed that night from kern.maxprocperuid alone: 2701 of 4000,
        // 1299 free, never critical. fork never checks that sysctl (core::limits): with
        // nothing else read the limit is unknown, never a reassuring number.
        let s = incident(2701, 2038, mac(Some(4000), None, None, 2701, 0));
        let r = read(&s, th());
        assert_eq!((r.limit.limit, r.limit_source()), (None, None));
        assert_eq!((r.usage_pct, r.free_slots), (None, None));
        assert_eq!(r.level, Level::Unknown);
    }

    #[test]
    fn first_incident_3869_of_4000_with_top_parent() {
        let s = incident(3869, 3326, mac(Some(4000), Some(4000), Some(6000), 3869, 0));
        let r = read(&s, th());
        assert_eq!(
            (r.usage.processes, r.usage.zombies, r.free_slots),
            (3869, 3326, Some(131))
        );
        assert_eq!(r.limit_source(), Some(LimitSource::RlimitNproc));
        assert_eq!(r.level, Level::Critical);
        assert_eq!(r.top_parents[0].pid, 87537);
        assert_eq!(r.top_parents[0].zombies, 3326);
    }

    #[test]
    fn nothing_readable_reads_unknown() {
        let s = incident(3000, 10, mac(None, None, None, 3000, 0));
        let r = read(&s, th());
        assert_eq!(
            (r.limit.limit, r.usage_pct, r.free_slots, r.level),
            (None, None, None, Level::Unknown)
        );
    }

    fn samples(pairs: &[(i64, u64)]) -> Vec<Sample> {
        pairs
            .iter()
            .map(|&(s, used)| Sample {
                at_ms: s * 1000,
                used,
            })
            .collect()
    }

    #[test]
    fn trend_needs_three_samples() {
        let t = trend(&samples(&[(0, 3839), (60, 3849)]), Some(4000));
        assert_eq!((t.growth_per_min, t.eta_seconds), (None, None));
    }

    #[test]
    fn trend_at_ten_per_minute_gives_the_incident_eta() {
        let t = trend(
            &samples(&[(0, 3839), (60, 3849), (120, 3859), (180, 3869)]),
            Some(4000),
        );
        let rate = t.growth_per_min.unwrap_or_default();
        assert!((rate - 10.0).abs() < 1e-9, "{rate}");
        let eta = t.eta_seconds.unwrap_or_default();
        assert!((eta - 786.0).abs() < 1.0, "{eta}"); // ≈ 13.1 min
    }

    #[test]
    fn flat_or_falling_has_no_eta_and_at_limit_eta_is_zero() {
        let flat = trend(&samples(&[(0, 10), (60, 10), (120, 10)]), Some(100));
        assert_eq!(flat.eta_seconds, None);
        let falling = trend(&samples(&[(0, 30), (60, 20), (120, 10)]), Some(100));
        assert!(falling.growth_per_min.unwrap_or_default() < 0.0);
        assert_eq!(falling.eta_seconds, None);
        let at = trend(&samples(&[(0, 80), (60, 90), (120, 100)]), Some(100));
        assert_eq!(at.eta_seconds, Some(0.0));
    }

    #[test]
    fn trend_ignores_samples_older_than_ten_minutes_and_identical_times() {
        let t = trend(
            &samples(&[(0, 5000), (700, 10), (760, 20), (820, 30)]),
            Some(100),
        );
        assert_eq!(t.samples, 3);
        assert!((t.growth_per_min.unwrap_or_default() - 10.0).abs() < 1e-9);
        let same = trend(&samples(&[(5, 1), (5, 2), (5, 3)]), Some(100));
        assert_eq!(same.growth_per_min, None);
    }

    #[test]
    fn unknown_limit_has_rate_but_no_eta() {
        let t = trend(&samples(&[(0, 1), (60, 2), (120, 3)]), None);
        assert!(t.growth_per_min.is_some());
        assert_eq!(t.eta_seconds, None);
    }
}
