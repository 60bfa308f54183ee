//! The evidence log as a picture, before any picture is drawn (all OSes, pure): readings,
//! the effective limit as a step series with its `limit_source`, thresholds, cleanups
//! (emergency apart) with the slots they freed, gaps in the record, and the rows the reader
//! could not interpret — placed on one time axis, bucketed into columns and scaled.
//!
//! The terminal chart and the SVG are two drawings of this one model (commands/
//! evidence_chart.rs, commands/evidence_svg.rs), so they cannot disagree about what the log
//! says. No file, no clock, no glyph here.

use crate::evidence_csv::{Anomaly, ReadRow};
use crate::time::parse_secs;

/// One reading (a `poll` row, or a row of an older layout that is not a cleanup).
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Unix seconds.
    pub at: i64,
    /// The slots compared with the limit (the `used` column; a row of an older layout has
    /// only `processes`, the processes the uid holds, zombies included).
    pub used: u64,
    pub zombies: Option<u64>,
    pub limit: Option<u64>,
    pub source: Option<String>,
}

/// The effective limit held from `from` to `to` (Unix seconds, `to` ≥ `from`). Steps are
/// split where the limit or its source changes and where the record has a gap.
#[derive(Debug, Clone, PartialEq)]
pub struct LimitStep {
    pub from: i64,
    pub to: i64,
    pub limit: u64,
    /// `per-uid`, `rlimit-nproc`, …; None for a layout older than the column.
    pub source: Option<String>,
}

/// A cleanup row: one per terminated parent, or one `cleanup,no-targets`.
#[derive(Debug, Clone, PartialEq)]
pub struct CleanupMark {
    pub at: i64,
    /// The usage the row recorded (the reading the cleanup acted on), when it has one.
    pub used: Option<u64>,
    /// The `override=emergency` column: the session guard was relaxed at the wall.
    pub emergency: bool,
    /// `freed=N` of the result; None when nothing was terminated or the result lacks it.
    pub freed: Option<u64>,
    /// A run that found nothing to do (`no-targets`).
    pub no_targets: bool,
}

/// A row the reader could not interpret, at the time its first field names when that
/// parses (the archived 14-field row does), else without a place on the axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Unread {
    pub at: Option<i64>,
    pub file: String,
    pub line: u64,
}

/// A stretch with no readings much longer than the usual interval (the machine was off,
/// asleep, or nothing polled): drawn as a break, never as a line across it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    pub from: i64,
    pub to: i64,
}

/// Everything a chart draws, on one time axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// The time axis, `end` > `start` (a single instant is widened to a minute).
    pub start: i64,
    pub end: i64,
    pub points: Vec<Point>,
    pub limits: Vec<LimitStep>,
    pub cleanups: Vec<CleanupMark>,
    pub unread: Vec<Unread>,
    pub gaps: Vec<Gap>,
    /// Warning and critical thresholds in percent of the effective limit.
    pub warn_pct: f64,
    pub crit_pct: f64,
}

/// An interval counts as a gap when it exceeds this many typical (median) intervals…
const GAP_FACTOR: i64 = 5;
/// …and at least this long: a few missed polls are not a gap worth drawing.
const GAP_MIN_SECS: i64 = 15 * 60;
/// The most of the axis one gap takes, as a share of the time with readings.
const GAP_SHARE: f64 = 0.05;
/// The highest value axis: a corrupt row with a 20-digit count must not overflow it.
pub const MAX_TOP: u64 = 1 << 52;

pub fn is_cleanup(action: &str) -> bool {
    action.starts_with("kill:") || action == "cleanup"
}

/// The `key=N` field of a `;`-separated result.
fn result_field(result: &str, key: &str) -> Option<u64> {
    result
        .split(';')
        .find_map(|f| f.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// The time the first field of an uninterpretable row names (the timestamp column comes
/// first in every layout).
pub fn anomaly_time(a: &Anomaly) -> Option<i64> {
    let first = a.text.split(',').next()?;
    parse_secs(first.trim()).ok()
}

/// The slots `marks` freed, added up (saturating: a corrupt row must not wrap the total).
pub fn freed_total<'a>(marks: impl IntoIterator<Item = &'a CleanupMark>) -> u64 {
    marks
        .into_iter()
        .filter_map(|m| m.freed)
        .fold(0, u64::saturating_add)
}

impl Chart {
    /// The model of `rows` (any order; sorted here) and `anomalies`. Rows whose timestamp
    /// does not parse cannot be placed: they join the uninterpretable ones.
    pub fn build(rows: &[ReadRow], anomalies: &[Anomaly], warn_pct: f64, crit_pct: f64) -> Self {
        let mut points = Vec::new();
        let mut cleanups = Vec::new();
        let mut unread: Vec<Unread> = anomalies
            .iter()
            .map(|a| Unread {
                at: anomaly_time(a),
                file: a.file.clone(),
                line: a.line,
            })
            .collect();
        for r in rows {
            let Some(at) = r.at_secs else {
                unread.push(Unread {
                    at: None,
                    file: String::new(),
                    line: 0,
                });
                continue;
            };
            if is_cleanup(&r.action) {
                cleanups.push(CleanupMark {
                    at,
                    used: r.reading.used_or_processes(),
                    emergency: r.override_.as_deref() == Some("emergency"),
                    freed: result_field(&r.result, "freed"),
                    no_targets: r.result.starts_with("no-targets"),
                });
            } else if let Some(used) = r.reading.used_or_processes() {
                points.push(Point {
                    at,
                    used,
                    zombies: r.reading.zombies,
                    limit: r.reading.limit,
                    source: r.reading.limit_source.clone(),
                });
            }
        }
        points.sort_by_key(|p| p.at);
        cleanups.sort_by_key(|c| c.at);
        unread.sort_by_key(|u| u.at);
        let gaps = gaps(&points);
        let limits = limit_steps(&points, &gaps);
        let times = points
            .iter()
            .map(|p| p.at)
            .chain(cleanups.iter().map(|c| c.at))
            .chain(unread.iter().filter_map(|u| u.at));
        let (mut start, mut end) =
            times.fold((i64::MAX, i64::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)));
        if start > end {
            (start, end) = (0, 60);
        } else if end - start < 60 {
            let mid = start + (end - start) / 2;
            (start, end) = (mid - 30, mid + 30);
        }
        Self {
            start,
            end,
            points,
            limits,
            cleanups,
            unread,
            gaps,
            warn_pct,
            crit_pct,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty() && self.cleanups.is_empty() && self.unread.is_empty()
    }

    /// The top of the value axis: above every reading, limit and cleanup, rounded up (see
    /// `nice_ceiling`) so its labels read as round numbers.
    pub fn y_top(&self) -> u64 {
        let max = self
            .points
            .iter()
            .map(|p| p.used.max(p.limit.unwrap_or(0)))
            .chain(self.cleanups.iter().filter_map(|c| c.used))
            .max()
            .unwrap_or(0);
        // Capped where f64 (the SVG's coordinates) still counts exactly.
        nice_ceiling(max.saturating_add(max / 20)).min(MAX_TOP)
    }

    /// The limit in force at `at` (the step that covers it), if any.
    pub fn limit_at(&self, at: i64) -> Option<&LimitStep> {
        self.limits.iter().find(|s| s.from <= at && at <= s.to)
    }

    /// Whether `at` falls inside a gap of the record.
    pub fn in_gap(&self, at: i64) -> bool {
        self.gaps.iter().any(|g| g.from < at && at < g.to)
    }

    /// Where time `at` falls on the axis, 0 at `start` to 1 at `end`: real time, except
    /// that each gap is shrunk to at most `GAP_SHARE` of the time with readings, so that
    /// hours with the machine off do not squeeze the incident into a sliver.
    pub fn x(&self, at: i64) -> f64 {
        let at = at.clamp(self.start, self.end);
        let mut x = 0.0;
        let mut t = self.start;
        for g in &self.gaps {
            if at <= g.from {
                break;
            }
            x += (g.from - t) as f64;
            let shown = self.gap_shown(g);
            if at < g.to {
                return (x + shown * (at - g.from) as f64 / (g.to - g.from) as f64)
                    / self.axis_len();
            }
            x += shown;
            t = g.to;
        }
        (x + (at - t) as f64) / self.axis_len()
    }

    /// The time at axis position `x` (0..=1), the inverse of `x()`.
    pub fn time_at(&self, x: f64) -> i64 {
        let mut left = x.clamp(0.0, 1.0) * self.axis_len();
        let mut t = self.start;
        for g in &self.gaps {
            let before = (g.from - t) as f64;
            if left <= before {
                break;
            }
            left -= before;
            let shown = self.gap_shown(g);
            if left < shown {
                return g.from + ((g.to - g.from) as f64 * left / shown).round() as i64;
            }
            left -= shown;
            t = g.to;
        }
        (t + left.round() as i64).min(self.end)
    }

    fn gap_shown(&self, g: &Gap) -> f64 {
        let gaps: i64 = self.gaps.iter().map(|g| g.to - g.from).sum();
        let with_readings = (self.end - self.start - gaps).max(60) as f64;
        ((g.to - g.from) as f64).min(with_readings * GAP_SHARE)
    }

    /// The axis length in displayed seconds (gaps shrunk).
    pub fn axis_len(&self) -> f64 {
        let gaps: i64 = self.gaps.iter().map(|g| g.to - g.from).sum();
        let shown: f64 = self.gaps.iter().map(|g| self.gap_shown(g)).sum();
        ((self.end - self.start - gaps) as f64 + shown).max(1.0)
    }

    /// The column (of `n`) that time `at` falls in.
    pub fn column(&self, at: i64, n: usize) -> usize {
        let n = n.max(1);
        let x = (self.x(at) * n as f64).floor();
        (x.max(0.0) as usize).min(n - 1)
    }

    /// The axis cut into `n` equal columns.
    pub fn buckets(&self, n: usize) -> Vec<Bucket> {
        let n = n.max(1);
        let mut out: Vec<Bucket> = (0..n)
            .map(|i| Bucket {
                from: self.time_at(i as f64 / n as f64),
                to: self.time_at((i + 1) as f64 / n as f64),
                ..Bucket::default()
            })
            .collect();
        // The points are sorted: the last one written to a column is its latest.
        let mut latest: Vec<Option<u64>> = vec![None; n];
        for p in &self.points {
            let i = self.column(p.at, n);
            latest[i] = Some(p.used);
            let b = &mut out[i];
            b.readings += 1;
            b.used_max = b.used_max.max(Some(p.used));
            b.used_min = Some(b.used_min.map_or(p.used, |m| m.min(p.used)));
            if let Some(z) = p.zombies {
                b.zombies_max = b.zombies_max.max(Some(z));
            }
        }
        for c in &self.cleanups {
            let b = &mut out[self.column(c.at, n)];
            if c.emergency {
                b.emergency += 1;
            } else {
                b.cleanups += 1;
            }
            if let Some(f) = c.freed {
                b.freed = b.freed.saturating_add(f);
            }
        }
        for u in &self.unread {
            if let Some(at) = u.at {
                out[self.column(at, n)].unread += 1;
            }
        }
        // The limit of a column is the lowest in force during it: the binding one wins.
        for s in &self.limits {
            let (a, b) = (self.column(s.from, n), self.column(s.to, n));
            for bucket in &mut out[a..=b] {
                if bucket.limit.is_none_or(|l| s.limit < l) {
                    bucket.limit = Some(s.limit);
                    bucket.source = s.source.clone();
                }
            }
        }
        // A column between two readings (more columns than readings) holds the last value,
        // as the machine did; in a gap nothing is held.
        let mut last: Option<u64> = None;
        for (b, latest) in out.iter_mut().zip(latest) {
            let mid = b.from + (b.to - b.from) / 2;
            b.gap = b.readings == 0 && self.in_gap(mid);
            if latest.is_some() {
                last = latest;
            } else if b.gap {
                last = None;
            } else {
                b.held = last;
            }
        }
        out
    }
}

/// One column of the time axis.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bucket {
    pub from: i64,
    pub to: i64,
    pub readings: usize,
    pub used_max: Option<u64>,
    pub used_min: Option<u64>,
    pub zombies_max: Option<u64>,
    /// The lowest limit in force during the column, and its source.
    pub limit: Option<u64>,
    pub source: Option<String>,
    pub cleanups: usize,
    pub emergency: usize,
    pub freed: u64,
    pub unread: usize,
    /// No reading and inside a gap of the record (draw as a break).
    pub gap: bool,
    /// No reading, not in a gap, after a reading: the last value read before it.
    pub held: Option<u64>,
}

impl Bucket {
    /// The height to draw: the column's peak, else the value it holds.
    pub fn value(&self) -> Option<u64> {
        self.used_max.or(self.held)
    }
}

/// Values → `units` levels of height: 0 is the axis, `units` the top.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scale {
    pub top: u64,
    pub units: u32,
}

impl Scale {
    pub fn new(top: u64, units: u32) -> Self {
        Self {
            top: top.max(1),
            units,
        }
    }

    /// The level of `v`, rounded to the nearest and clamped to the top.
    pub fn level(self, v: u64) -> u32 {
        let l = (v.min(self.top) as f64 / self.top as f64 * self.units as f64).round();
        l as u32
    }

    /// The level of `pct` percent of `limit`.
    pub fn level_pct(self, limit: u64, pct: f64) -> u32 {
        self.level((limit as f64 * pct / 100.0).round() as u64)
    }
}

/// The smallest 1, 2, 3, 4, 5, 6 or 8 × 10^k at or above `v` (at least 10): round labels
/// without leaving most of the height empty.
pub fn nice_ceiling(v: u64) -> u64 {
    let mut step = 10u64;
    loop {
        for m in [1, 2, 3, 4, 5, 6, 8] {
            let c = step.saturating_mul(m);
            if c >= v || c == u64::MAX {
                return c;
            }
        }
        step = step.saturating_mul(10);
    }
}

/// Intervals between readings longer than both `GAP_FACTOR` median intervals and
/// `GAP_MIN_SECS`.
fn gaps(points: &[Point]) -> Vec<Gap> {
    let mut steps: Vec<i64> = points.windows(2).map(|w| w[1].at - w[0].at).collect();
    if steps.is_empty() {
        return vec![];
    }
    steps.sort_unstable();
    let median = steps[steps.len() / 2].max(1);
    let threshold = (median * GAP_FACTOR).max(GAP_MIN_SECS);
    points
        .windows(2)
        .filter(|w| w[1].at - w[0].at > threshold)
        .map(|w| Gap {
            from: w[0].at,
            to: w[1].at,
        })
        .collect()
}

/// Runs of readings with one limit and one source; each step lasts until the next reading
/// (where the new value takes over) unless a gap comes first.
fn limit_steps(points: &[Point], gaps: &[Gap]) -> Vec<LimitStep> {
    let mut out: Vec<LimitStep> = Vec::new();
    for (i, p) in points.iter().enumerate() {
        let next = points.get(i + 1).map(|n| n.at);
        let broken = next.is_none_or(|n| gaps.iter().any(|g| g.from == p.at && g.to == n));
        let to = if broken { p.at } else { next.unwrap_or(p.at) };
        let Some(limit) = p.limit else { continue };
        match out.last_mut() {
            Some(s) if s.limit == limit && s.source == p.source && s.to == p.at => s.to = to,
            _ => out.push(LimitStep {
                from: p.at,
                to,
                limit,
                source: p.source.clone(),
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests;
