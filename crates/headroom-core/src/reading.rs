//! One slot reading: usage against the effective limit, level, and the growth trend with its
//! ETA to the wall (all OSes, pure).
//!
//! The ETA is the single most useful number: during the incident the machine was ~11 minutes
//! from lockup and nothing said so.

use serde::{Deserialize, Serialize};

use crate::limits::{EffectiveLimit, LimitSource, effective_limit};
use crate::process_table::ProcessTable;
use crate::snapshot::{SlotUsage, Snapshot, ZombieParent};

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

/// The level of a reading at `usage_pct` against a limit that is `incomplete`
/// (`EffectiveLimit::incomplete`: an enforced ceiling could not be read, so the limit is an
/// upper bound and the usage a floor): warning and critical stand, since the real usage is
/// at least that; normal is unknown, since the unread ceiling may be nearly full.
pub fn judged_level(usage_pct: Option<f64>, t: Thresholds, incomplete: bool) -> Level {
    match level(usage_pct, t) {
        Level::Normal if incomplete => Level::Unknown,
        l => l,
    }
}

/// A reading as kept in the history file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HistorySample {
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
/// The shortest time the fitted readings must span: three readings taken within seconds
/// (`probe` run three times in a row, a 1 s `watch` just started) measure noise, not a leak.
pub const TREND_MIN_SPAN_MS: i64 = 60 * 1000;
/// A fall between two consecutive readings of at least this many slots and at least
/// [`DROP_MIN_FRACTION`] of the earlier reading is a drop (a cleanup, a parent that reaped,
/// a build that ended): the fit restarts after it, because the climb before it says nothing
/// about the table after it. A reaped parent frees at least `min_zombies` (100) slots, so
/// a cleanup always is one; the coming and going of a shell's children mostly is not.
pub const DROP_MIN_SLOTS: u64 = 5;
/// See [`DROP_MIN_SLOTS`].
pub const DROP_MIN_FRACTION: f64 = 0.02;

/// Whether `from` → `to` is a drop (see [`DROP_MIN_SLOTS`]).
fn is_drop(from: u64, to: u64) -> bool {
    let fall = from.saturating_sub(to);
    fall >= DROP_MIN_SLOTS && fall as f64 >= DROP_MIN_FRACTION * from as f64
}

/// The readings the fit uses: those of the window ending at the newest reading, in time
/// order, after the last drop among them.
fn segment(samples: &[HistorySample]) -> Vec<HistorySample> {
    let Some(newest) = samples.iter().map(|s| s.at_ms).max() else {
        return Vec::new();
    };
    let mut window: Vec<HistorySample> = samples
        .iter()
        .filter(|s| s.at_ms >= newest - TREND_WINDOW_MS)
        .copied()
        .collect();
    window.sort_by_key(|s| s.at_ms);
    let start = window
        .windows(2)
        .rposition(|w| is_drop(w[0].used, w[1].used))
        .map_or(0, |i| i + 1);
    window.split_off(start)
}

/// Ordinary least-squares slope of `used` over time for the readings of the window ending
/// at the newest one, after the last drop in it (so a cleanup restarts the fit), once they
/// number [`TREND_MIN_SAMPLES`] and span [`TREND_MIN_SPAN_MS`]. The ETA,
/// `max(0, limit − newest) / slope`, is given only while the slope is positive and the
/// table grew over the newest [`TREND_MIN_SPAN_MS`] (the newest reading above the last one
/// at least that much older): flat or falling newest readings have no ETA, whatever
/// the readings before them did.
pub fn trend(samples: &[HistorySample], limit: Option<u64>) -> Trend {
    let seg = segment(samples);
    let n = seg.len();
    let (Some(first), Some(last)) = (seg.first(), seg.last()) else {
        return Trend::none(0);
    };
    if n < TREND_MIN_SAMPLES || last.at_ms - first.at_ms < TREND_MIN_SPAN_MS {
        return Trend::none(n);
    }
    let xs: Vec<f64> = seg
        .iter()
        .map(|s| (s.at_ms - first.at_ms) as f64 / 1000.0)
        .collect();
    let ys: Vec<f64> = seg.iter().map(|s| s.used as f64).collect();
    let mx = xs.iter().sum::<f64>() / n as f64;
    let my = ys.iter().sum::<f64>() / n as f64;
    let var: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    if var <= f64::EPSILON {
        return Trend::none(n);
    }
    let cov: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let slope = cov / var; // slots per second
    // The newest reading against the last one a span before it (the segment spans that much,
    // so there is one).
    let rising = seg
        .iter()
        .rev()
        .find(|s| s.at_ms <= last.at_ms - TREND_MIN_SPAN_MS)
        .is_some_and(|before| last.used > before.used);
    let eta = match limit {
        Some(l) if slope > 0.0 && rising => Some(l.saturating_sub(last.used) as f64 / slope),
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

    pub fn sample(&self) -> HistorySample {
        HistorySample {
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
        level: judged_level(usage_pct, thresholds, limit.incomplete()),
        limit,
        usage_pct,
        free_slots,
        top_parents,
        partial: snapshot.partial(),
    }
}

#[cfg(test)]
mod tests;
