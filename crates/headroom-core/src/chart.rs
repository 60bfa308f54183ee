//! The evidence log as a picture, before any picture is drawn (all OSes, pure): readings
//! (used slots, zombies, the effective limit and its `limit_source`), cleanups with what
//! they ended, rows the reader could not interpret, gaps in the record, the changes of the
//! limit worth naming, and the projection to the limit from the last reading — placed on
//! one time axis (`axis.rs`) and cut into columns (`columns.rs`), with round time ticks
//! (`ticks.rs`).
//!
//! The terminal chart and the SVG are two drawings of this one model (commands/
//! evidence_chart.rs, commands/evidence_svg.rs), so they cannot disagree about what the log
//! says. The rows come one at a time (`Survey`); a reading is kept as 40 bytes of numbers,
//! nothing else of a row is. No file, no clock, no glyph here.

pub mod axis;
pub mod columns;
mod scale;
mod survey;
pub mod ticks;

pub use axis::{Axis, Gap, Shortened};
pub use columns::{Column, ColumnKind, Envelope, Held};
pub use scale::{Scale, nice_ceiling};
pub use survey::Survey;

use crate::evidence_csv::Anomaly;

/// Absent, in the packed fields of a [`Point`].
const NONE: u64 = u64::MAX;
const HAS_LIMIT: u8 = 1;
const HAS_SOURCE: u8 = 2;

/// One reading (a `poll` row, or a row of an older layout that is not a cleanup), packed:
/// a million of them are 40 MB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Point {
    /// Unix seconds.
    pub at: i64,
    /// The slots compared with the limit (the `used` column; a row of an older layout has
    /// only `processes`, the processes the uid holds, zombies included).
    pub used: u64,
    zombies: u64,
    limit: u64,
    source: u16,
    flags: u8,
}

impl Point {
    pub fn new(
        at: i64,
        used: u64,
        zombies: Option<u64>,
        limit: Option<u64>,
        source: Option<u16>,
    ) -> Self {
        Self {
            at,
            used,
            zombies: zombies.map_or(NONE, |z| z.min(NONE - 1)),
            limit: limit.unwrap_or(0),
            source: source.unwrap_or(0),
            flags: if limit.is_some() { HAS_LIMIT } else { 0 }
                | if source.is_some() { HAS_SOURCE } else { 0 },
        }
    }

    pub fn zombies(&self) -> Option<u64> {
        (self.zombies != NONE).then_some(self.zombies)
    }

    pub fn limit(&self) -> Option<u64> {
        (self.flags & HAS_LIMIT != 0).then_some(self.limit)
    }

    /// The index of its `limit_source` in [`Chart::sources`].
    pub fn source(&self) -> Option<u16> {
        (self.flags & HAS_SOURCE != 0).then_some(self.source)
    }
}

/// A cleanup row: one per terminated parent, or one `cleanup,no-targets`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CleanupMark {
    pub at: i64,
    /// The usage the row recorded (the reading the cleanup acted on), when it has one.
    pub used: Option<u64>,
    /// The `override=emergency` column: the session guard was relaxed at the wall.
    pub emergency: bool,
    /// A parent was terminated (`kill:…`); otherwise the run found nothing to do.
    pub killed: bool,
    /// `freed=N` and `reaped=N` of the result, when it says.
    pub freed: Option<u64>,
    pub reaped: Option<u64>,
    /// The terminated parent (the top parent a run without targets looked at), as logged.
    pub pid: Option<i32>,
    pub name: Option<String>,
    pub zombies: Option<u64>,
    /// The `result` column as logged.
    pub result: String,
}

/// A row the reader could not interpret, at the time its first field names when that
/// parses (the archived 14-field row does), else without a place on the axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Unread {
    pub at: Option<i64>,
    pub file: String,
    pub line: u64,
}

/// A change of the limit worth naming: its source changed, a per-user ceiling's value
/// changed, or a shared ceiling (what is left of `pid_max`, `threads-max`, `kern.maxproc`
/// or a pids cgroup after everybody else) moved more than `SHARED_STEP_PCT` from the value
/// last named — a shared ceiling moves at almost every reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitChange {
    pub at: i64,
    pub limit: u64,
    pub source: Option<u16>,
}

/// How far a shared ceiling must move from the value last named to be named again.
pub const SHARED_STEP_PCT: f64 = 5.0;

/// The dashed line from the last reading to the limit it is heading for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Projection {
    /// The last reading.
    pub from_at: i64,
    pub from_used: u64,
    /// When the limit is reached at `per_min` (the growth the reading recorded).
    pub at: i64,
    pub limit: u64,
    pub source: Option<u16>,
    pub per_min: f64,
}

impl Projection {
    /// The projected usage at `t` (between `from_at` and `at`).
    pub fn value_at(&self, t: i64) -> u64 {
        if t <= self.from_at {
            return self.from_used;
        }
        let v = self.from_used as f64 + self.per_min * (t - self.from_at) as f64 / 60.0;
        (v.round() as u64).min(self.limit)
    }
}

/// The worst moment: the reading nearest to (or furthest past) its limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Worst {
    pub at: i64,
    pub used: u64,
    pub limit: u64,
    pub source: Option<u16>,
}

impl Worst {
    pub fn pct(&self) -> f64 {
        self.used as f64 * 100.0 / self.limit.max(1) as f64
    }
}

/// Everything a chart draws, on one time axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub axis: Axis,
    /// By time.
    pub points: Vec<Point>,
    /// The `limit_source` names the points refer to, as logged.
    pub sources: Vec<String>,
    pub changes: Vec<LimitChange>,
    /// Changes past `MAX_CHANGES`, counted only.
    pub changes_left_out: usize,
    /// By time.
    pub cleanups: Vec<CleanupMark>,
    pub unread: Vec<Unread>,
    pub projection: Option<Projection>,
    pub worst: Option<Worst>,
    /// Warning and critical thresholds in percent of the effective limit.
    pub warn_pct: f64,
    pub crit_pct: f64,
}

/// The highest value axis: a corrupt row with a 20-digit count must not overflow it, and a
/// limit at or above it (an `unlimited` written as a number) is off the scale, drawn at the
/// top edge by both drawings.
pub const MAX_TOP: u64 = 1 << 52;

pub use crate::evidence_csv::is_cleanup;

/// The time the first field of an uninterpretable row names (the time column comes first in
/// every layout).
pub fn anomaly_time(a: &Anomaly) -> Option<i64> {
    let first = a.text.split(',').next()?;
    crate::time::parse_secs(first.trim()).ok()
}

/// The `key=N` field of a `;`-separated result.
pub fn result_field(result: &str, key: &str) -> Option<u64> {
    result
        .split(';')
        .find_map(|f| f.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// The slots `marks` freed, added up (saturating: a corrupt row must not wrap the total).
pub fn freed_total<'a>(marks: impl IntoIterator<Item = &'a CleanupMark>) -> u64 {
    marks
        .into_iter()
        .filter_map(|m| m.freed)
        .fold(0, u64::saturating_add)
}

impl Chart {
    /// The projection when the axis reaches its time: the one both drawings draw (a later
    /// one is said in words only).
    pub fn drawn_projection(&self) -> Option<Projection> {
        self.projection.filter(|p| p.at <= self.axis.end)
    }

    /// Nothing to draw and nothing to mark.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty() && self.cleanups.is_empty() && self.unread.is_empty()
    }

    /// The name of source `i`.
    pub fn source_name(&self, i: Option<u16>) -> Option<&str> {
        self.sources.get(usize::from(i?)).map(String::as_str)
    }

    /// The top of the value axis: above every reading, limit below `MAX_TOP` and cleanup,
    /// rounded up (see `nice_ceiling`) so its labels read as round numbers.
    pub fn y_top(&self) -> u64 {
        let max = self
            .points
            .iter()
            .map(|p| {
                let l = p.limit().filter(|&l| l < MAX_TOP).unwrap_or(0);
                p.used.max(l).max(p.zombies().unwrap_or(0))
            })
            .chain(self.cleanups.iter().filter_map(|c| c.used))
            .max()
            .unwrap_or(0)
            .min(MAX_TOP);
        nice_ceiling(max.saturating_add(max / 20)).min(MAX_TOP)
    }
}

#[cfg(test)]
mod axis_tests;
#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;
#[cfg(test)]
mod tests;
