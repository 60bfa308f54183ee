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
pub mod ticks;

pub use axis::{Axis, Gap, Shortened};
pub use columns::{Column, Envelope, Held, Kind};

use crate::evidence_csv::{Anomaly, RowView};
use crate::limits::LimitSource;

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
/// The most limit changes kept (a log whose source flips at every row names the first).
const MAX_CHANGES: usize = 1000;

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

/// An interval counts as a gap when it exceeds this many typical (median) intervals…
const GAP_FACTOR: i64 = 5;
/// …and at least this long: a few missed polls are not a gap worth drawing.
const GAP_MIN_SECS: i64 = 15 * 60;
/// The highest value axis: a corrupt row with a 20-digit count must not overflow it, and a
/// limit at or above it (an `unlimited` written as a number) is off the scale, drawn at the
/// top edge by both drawings.
pub const MAX_TOP: u64 = 1 << 52;
/// How far past the last time the axis grows to show where the projection reaches the limit
/// (a share of the axis); a projection reaching it later is not drawn.
const PROJECTION_ROOM: f64 = 0.25;
/// The most distinct source names told apart (a hostile log could hold a million).
const MAX_SOURCES: usize = 64;

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

/// Whether a limit of `source` is shared with other users (its effective value is what
/// everybody else leaves, so it moves at almost every reading). Unknown names count as
/// shared; a layout without the column (None) recorded the per-user ceiling.
fn shared(source: Option<&str>) -> bool {
    match source.map(LimitSource::parse) {
        None => false,
        Some(None) => true,
        Some(Some(s)) => match s {
            LimitSource::PerUid | LimitSource::RlimitNproc => false,
            LimitSource::CgroupPids
            | LimitSource::SystemWide
            | LimitSource::ThreadsMax
            | LimitSource::PidMax => true,
        },
    }
}

/// The last reading by time, with the growth it recorded.
#[derive(Debug, Clone, Copy)]
struct Last {
    point: Point,
    growth_per_min: Option<f64>,
    eta_seconds: Option<i64>,
}

/// The rows of a log, given one at a time, becoming a [`Chart`].
#[derive(Debug, Default)]
pub struct Survey {
    points: Vec<Point>,
    cleanups: Vec<CleanupMark>,
    unread: Vec<Unread>,
    sources: Vec<String>,
    last: Option<Last>,
}

impl Survey {
    pub fn new() -> Self {
        Self::default()
    }

    fn source_index(&mut self, name: &str) -> u16 {
        if let Some(i) = self.sources.iter().position(|s| s == name) {
            return i as u16;
        }
        if self.sources.len() >= MAX_SOURCES {
            // Past the cap every further name is "other".
            return self.source_index("other");
        }
        self.sources.push(name.to_string());
        (self.sources.len() - 1) as u16
    }

    /// One reading.
    #[allow(clippy::too_many_arguments)]
    pub fn reading(
        &mut self,
        at: i64,
        used: u64,
        zombies: Option<u64>,
        limit: Option<u64>,
        source: Option<&str>,
        growth_per_min: Option<f64>,
        eta_seconds: Option<i64>,
    ) {
        let source = source.map(|s| self.source_index(s));
        let point = Point::new(at, used, zombies, limit, source);
        self.points.push(point);
        if self.last.is_none_or(|l| at >= l.point.at) {
            self.last = Some(Last {
                point,
                growth_per_min,
                eta_seconds,
            });
        }
    }

    /// A row as the reader gives it (`file` names its file for an unread mark).
    pub fn row(&mut self, file: &str, v: &RowView<'_>) {
        let Some(at) = v.at_secs() else {
            self.unread(Unread {
                at: None,
                file: file.to_string(),
                line: v.line(),
            });
            return;
        };
        if v.is_cleanup() {
            let action = v.action();
            let result = v.result();
            let (pid, name, zombies) = v.top_parent();
            self.cleanup(CleanupMark {
                at,
                used: v.used(),
                emergency: v.is_emergency(),
                killed: action.starts_with("kill:"),
                freed: result_field(&result, "freed"),
                reaped: result_field(&result, "reaped"),
                pid,
                name: name.map(|n| n.into_owned()),
                zombies,
                result: result.into_owned(),
            });
        } else if let Some(used) = v.used() {
            let source = v.limit_source();
            self.reading(
                at,
                used,
                v.zombies(),
                v.limit(),
                source.as_deref(),
                v.growth_per_min(),
                v.eta_seconds(),
            );
        }
    }

    /// A row the reader could not interpret: a mark at its time when it names one.
    pub fn anomaly(&mut self, a: &Anomaly) {
        self.unread(Unread {
            at: anomaly_time(a),
            file: a.file.clone(),
            line: a.line,
        });
    }

    pub fn cleanup(&mut self, mark: CleanupMark) {
        self.cleanups.push(mark);
    }

    pub fn unread(&mut self, u: Unread) {
        self.unread.push(u);
    }

    /// The model, with the thresholds in percent of the limit.
    pub fn finish(mut self, warn_pct: f64, crit_pct: f64) -> Chart {
        if !self.points.is_sorted_by_key(|p| p.at) {
            // Stable: readings of one instant keep the order they were logged in.
            self.points.sort_by_key(|p| p.at);
        }
        self.cleanups.sort_by_key(|c| c.at);
        self.unread.sort_by_key(|u| u.at);
        let gaps = gaps(&self.points);
        let times = self
            .points
            .first()
            .map(|p| p.at)
            .into_iter()
            .chain(self.points.last().map(|p| p.at))
            .chain(self.cleanups.iter().map(|c| c.at))
            .chain(self.unread.iter().filter_map(|u| u.at));
        let (mut start, mut end) =
            times.fold((i64::MAX, i64::MIN), |(lo, hi), t| (lo.min(t), hi.max(t)));
        if start > end {
            (start, end) = (0, 60);
        }
        let projection = self.projection();
        if let Some(p) = projection {
            // The axis reaches the projected time when it is near; a limit reached much
            // later is said in words only, so the axis (and the title's range) stays the
            // record's instead of running on for weeks of nothing.
            let room = ((end - start).max(60) as f64 * PROJECTION_ROOM) as i64;
            if p.at <= end.saturating_add(room) {
                end = end.max(p.at);
            }
        }
        let (changes, changes_left_out) = changes(&self.points, &self.sources);
        let worst = self
            .points
            .iter()
            .filter_map(|p| {
                Some(Worst {
                    at: p.at,
                    used: p.used,
                    limit: p.limit().filter(|&l| l > 0)?,
                    source: p.source(),
                })
            })
            .fold(None::<Worst>, |best, w| match best {
                // used/limit compared without division: u128 cannot overflow.
                Some(b)
                    if u128::from(w.used) * u128::from(b.limit)
                        <= u128::from(b.used) * u128::from(w.limit) =>
                {
                    Some(b)
                }
                _ => Some(w),
            });
        Chart {
            axis: Axis::new(start, end, gaps),
            points: self.points,
            sources: self.sources,
            changes,
            changes_left_out,
            cleanups: self.cleanups,
            unread: self.unread,
            projection,
            worst,
            warn_pct,
            crit_pct,
        }
    }

    /// From the last reading to its limit at the growth it recorded, when it is below the
    /// limit and growing, and no cleanup came after it (that changed the course).
    fn projection(&self) -> Option<Projection> {
        let last = self.last?;
        let p = last.point;
        let limit = p.limit()?;
        let per_min = last.growth_per_min.filter(|g| *g > 0.0)?;
        if p.used >= limit || limit >= MAX_TOP || self.cleanups.iter().any(|c| c.at > p.at) {
            return None;
        }
        let secs = match last.eta_seconds.filter(|e| *e > 0) {
            Some(e) => e,
            None => ((limit - p.used) as f64 / per_min * 60.0).ceil() as i64,
        };
        Some(Projection {
            from_at: p.at,
            from_used: p.used,
            at: p.at.saturating_add(secs),
            limit,
            source: p.source(),
            per_min,
        })
    }
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

    /// `v` as a share of the height, 0..=1 (clamped to the top).
    pub fn frac(self, v: u64) -> f64 {
        v.min(self.top) as f64 / self.top as f64
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
/// `GAP_MIN_SECS` (`points` sorted).
fn gaps(points: &[Point]) -> Vec<Gap> {
    if points.len() < 2 {
        return vec![];
    }
    let mut steps: Vec<i64> = points.windows(2).map(|w| w[1].at - w[0].at).collect();
    let mid = steps.len() / 2;
    let median = (*steps.select_nth_unstable(mid).1).max(1);
    let threshold = median.saturating_mul(GAP_FACTOR).max(GAP_MIN_SECS);
    points
        .windows(2)
        .filter(|w| w[1].at - w[0].at > threshold)
        .map(|w| Gap {
            from: w[0].at,
            to: w[1].at,
        })
        .collect()
}

/// The limit changes worth naming, in time order (`points` sorted), and how many more there
/// were past `MAX_CHANGES`.
fn changes(points: &[Point], sources: &[String]) -> (Vec<LimitChange>, usize) {
    let mut out: Vec<LimitChange> = Vec::new();
    let mut left_out = 0;
    let mut last: Option<LimitChange> = None;
    for p in points {
        let Some(limit) = p.limit() else { continue };
        let source = p.source();
        let name = source.and_then(|i| sources.get(usize::from(i)).map(String::as_str));
        let new = match last {
            None => true,
            Some(l) if l.source != source => true,
            Some(l) if shared(name) => {
                let step = l.limit as f64 * SHARED_STEP_PCT / 100.0;
                (limit as f64 - l.limit as f64).abs() > step
            }
            Some(l) => l.limit != limit,
        };
        if new {
            let c = LimitChange {
                at: p.at,
                limit,
                source,
            };
            last = Some(c);
            if out.len() < MAX_CHANGES {
                out.push(c);
            } else {
                left_out += 1;
            }
        }
    }
    (out, left_out)
}

#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;
#[cfg(test)]
mod tests;
