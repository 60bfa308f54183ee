//! The rows of a log, given one at a time, becoming a [`Chart`]: readings packed, source
//! names told apart, then at the end the points sorted, the gaps found, the limit's changes
//! worth naming picked and the projection from the last reading made.

use super::{
    Axis, Chart, CleanupMark, Gap, LimitChange, MAX_TOP, Point, Projection, SHARED_STEP_PCT,
    Unread, Worst, anomaly_time, result_field,
};
use crate::evidence_csv::{Anomaly, RowView};
use crate::limits::LimitSource;

/// The most limit changes kept (a log whose source flips at every row names the first).
const MAX_CHANGES: usize = 1000;

/// An interval counts as a gap when it exceeds this many typical (median) intervals…
const GAP_FACTOR: i64 = 5;
/// …and at least this long: a few missed polls are not a gap worth drawing.
const GAP_MIN_SECS: i64 = 15 * 60;

/// How far past the last time the axis grows to show where the projection reaches the limit
/// (a share of the axis); a projection reaching it later is not drawn.
const PROJECTION_ROOM: f64 = 0.25;
/// The most distinct source names told apart (a hostile log could hold a million).
const MAX_SOURCES: usize = 64;

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
