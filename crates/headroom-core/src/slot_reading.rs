//! The one printed form of a slot reading. `probe`'s and `limits`' reports, `watch`'s
//! `reading` line, the `usage` of `reap`'s report and every row of the evidence log (its CSV
//! columns and `evidence --json`) carry these fields under these names, flattened in
//! (`reap`: as its `usage` object), so a field renamed here is renamed in all of them.

use serde::Serialize;

use crate::limits::LimitSource;
use crate::reading::{Level, Reading, Trend};

/// Two decimals, as every report shows percentages and rates.
pub fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// One reading of the user's process slots, with its trend when one was computed.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SlotReading {
    /// When the process table was read (RFC 3339, UTC).
    pub at: String,
    pub uid: u32,
    /// Processes the uid holds, zombies included.
    pub processes: u64,
    /// Tasks (threads) of the user's processes: what RLIMIT_NPROC counts on Linux; null on macOS.
    pub tasks: Option<u64>,
    pub zombies: u64,
    /// The slots compared with the limit (tasks on Linux, processes on macOS).
    pub used: u64,
    /// The effective limit: the lowest readable ceiling; null when none could be read.
    pub limit: Option<u64>,
    pub limit_source: Option<LimitSource>,
    pub usage_pct: Option<f64>,
    pub free_slots: Option<u64>,
    /// This reading's level against the warning and critical thresholds.
    pub level: Level,
    /// Slots per minute over the 10-minute window; null without enough readings, or where
    /// no history is kept (`--no-history`, a replay, `reap`).
    pub growth_per_min: Option<f64>,
    /// Whole seconds until the limit at that growth; null unless growing.
    pub eta_seconds: Option<i64>,
    /// Readings in the trend window (0 when no trend was computed).
    pub trend_samples: usize,
    /// The table may be missing processes (unreadable entries, other users hidden): the
    /// per-user counts are what could be read.
    pub partial: bool,
}

impl SlotReading {
    /// The fields, in the order they are printed (the evidence log's first columns).
    pub const FIELDS: [&'static str; 15] = [
        "at",
        "uid",
        "processes",
        "tasks",
        "zombies",
        "used",
        "limit",
        "limit_source",
        "usage_pct",
        "free_slots",
        "level",
        "growth_per_min",
        "eta_seconds",
        "trend_samples",
        "partial",
    ];

    /// `r` as printed, with `trend` (`None`: no history was consulted).
    pub fn new(r: &Reading, trend: Option<&Trend>) -> Self {
        Self {
            at: crate::time::format_ms(r.at_ms),
            uid: r.uid,
            processes: r.usage.processes,
            tasks: r.usage.tasks,
            zombies: r.usage.zombies,
            used: r.usage.used,
            limit: r.limit.limit,
            limit_source: r.limit.source,
            usage_pct: r.usage_pct.map(round2),
            free_slots: r.free_slots,
            level: r.level,
            growth_per_min: trend.and_then(|t| t.growth_per_min).map(round2),
            eta_seconds: trend.and_then(|t| t.eta_seconds).and_then(whole),
            trend_samples: trend.map_or(0, |t| t.samples),
            partial: r.partial,
        }
    }
}

/// Whole seconds, as every `*_seconds` field is printed (None when not finite).
#[allow(clippy::cast_possible_truncation)] // no ETA comes near i64's range
fn whole(v: f64) -> Option<i64> {
    v.is_finite().then(|| v.round() as i64)
}

/// A [`SlotReading`] as read back from the evidence log: the same fields, each null when
/// the row's file predates its column (or the cell does not parse).
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct RecordedReading {
    pub at: Option<String>,
    pub uid: Option<u32>,
    pub processes: Option<u64>,
    pub tasks: Option<u64>,
    pub zombies: Option<u64>,
    pub used: Option<u64>,
    pub limit: Option<u64>,
    pub limit_source: Option<String>,
    pub usage_pct: Option<f64>,
    pub free_slots: Option<u64>,
    pub level: Option<Level>,
    pub growth_per_min: Option<f64>,
    pub eta_seconds: Option<i64>,
    pub trend_samples: Option<usize>,
    pub partial: Option<bool>,
}

impl RecordedReading {
    /// The slots compared with the limit; a row written before the `used` column has only
    /// its process count.
    pub fn used_or_processes(&self) -> Option<u64> {
        self.used.or(self.processes)
    }
}

#[cfg(any(test, feature = "fixtures"))]
pub mod fixture {
    //! A reading for tests, here and in the main crate (the `fixtures` feature).
    use super::*;

    /// A reading of the first incident (3,869 of 4,000, growing at 10 a minute).
    pub fn sample() -> SlotReading {
        SlotReading {
            at: "2026-08-29T22:42:41Z".into(),
            uid: 501,
            processes: 3869,
            tasks: None,
            zombies: 3326,
            used: 3869,
            limit: Some(4000),
            limit_source: Some(LimitSource::PerUid),
            usage_pct: Some(96.73),
            free_slots: Some(131),
            level: Level::Critical,
            growth_per_min: Some(10.0),
            eta_seconds: Some(786),
            trend_samples: 4,
            partial: false,
        }
    }
}

#[cfg(test)]
mod tests;
