//! The time axis of an evidence chart: real time, except that gaps in the record (the
//! machine off or asleep) are drawn narrower, so a week with nightly sleeps does not squeeze
//! the days into slivers. Each gap is drawn at most `GAP_EACH` of the time with readings
//! wide, and all of them together at most `GAP_ALL` of it (shrunk alike when they would be
//! more); what was shortened, and to what, is said (`Shortened`). Positions are found by
//! binary search over the gaps, so placing every reading costs O(log gaps).

/// A stretch with no readings much longer than the usual interval: drawn as a break, never
/// as a line across it. `from` is the last reading before it, `to` the first after.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    pub from: i64,
    pub to: i64,
}

impl Gap {
    pub fn secs(&self) -> i64 {
        self.to - self.from
    }
}

/// The widest one gap is drawn, as a share of the time with readings…
const GAP_EACH: f64 = 0.05;
/// …and all gaps together.
const GAP_ALL: f64 = 0.25;

/// What drawing the gaps narrower did: how many were shortened, how long they were, how
/// long they are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Shortened {
    pub gaps: usize,
    pub real_secs: i64,
    pub shown_secs: i64,
}

/// Times ↔ positions 0..=1 along the axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    /// `end` > `start`.
    pub start: i64,
    pub end: i64,
    pub gaps: Vec<Gap>,
    /// Each gap's drawn length, in seconds of the axis.
    shown: Vec<f64>,
    /// Where each gap starts, in drawn seconds from `start`.
    pos: Vec<f64>,
    /// The drawn length of the whole axis.
    len: f64,
}

impl Axis {
    /// An axis from `start` to `end` (widened to a minute about its middle when shorter)
    /// with `gaps` (sorted, inside it, not overlapping).
    pub fn new(start: i64, end: i64, gaps: Vec<Gap>) -> Self {
        let (start, end) = if end - start < 60 {
            let mid = start + (end - start) / 2;
            (mid - 30, mid + 30)
        } else {
            (start, end)
        };
        let in_gaps: i64 = gaps.iter().map(Gap::secs).sum();
        let with_readings = (end - start - in_gaps).max(60) as f64;
        let mut shown: Vec<f64> = gaps
            .iter()
            .map(|g| (g.secs() as f64).min(with_readings * GAP_EACH))
            .collect();
        let total: f64 = shown.iter().sum();
        if total > with_readings * GAP_ALL {
            let k = with_readings * GAP_ALL / total;
            shown.iter_mut().for_each(|s| *s *= k);
        }
        let mut pos = Vec::with_capacity(gaps.len());
        let (mut at, mut t) = (0.0, start);
        for (g, s) in gaps.iter().zip(&shown) {
            at += (g.from - t) as f64;
            pos.push(at);
            at += s;
            t = g.to;
        }
        let len = (at + (end - t) as f64).max(1.0);
        Self {
            start,
            end,
            gaps,
            shown,
            pos,
            len,
        }
    }

    /// The drawn length of the axis in seconds (gaps shortened).
    pub fn len(&self) -> f64 {
        self.len
    }

    /// What was shortened: the gaps drawn narrower than they lasted.
    pub fn shortened(&self) -> Shortened {
        let mut s = Shortened::default();
        for (g, &shown) in self.gaps.iter().zip(&self.shown) {
            if shown + 0.5 < g.secs() as f64 {
                s.gaps += 1;
                s.real_secs += g.secs();
                s.shown_secs += shown.round() as i64;
            }
        }
        s
    }

    /// The drawn length of gap `i`, in seconds.
    pub fn shown_secs(&self, i: usize) -> f64 {
        self.shown.get(i).copied().unwrap_or(0.0)
    }

    /// Where `at` falls, 0 at `start` to 1 at `end`.
    pub fn x(&self, at: i64) -> f64 {
        let at = at.clamp(self.start, self.end);
        let k = self.gaps.partition_point(|g| g.from < at);
        let d = if k == 0 {
            (at - self.start) as f64
        } else {
            let (g, pos, shown) = (self.gaps[k - 1], self.pos[k - 1], self.shown[k - 1]);
            if at < g.to {
                pos + shown * (at - g.from) as f64 / g.secs() as f64
            } else {
                pos + shown + (at - g.to) as f64
            }
        };
        (d / self.len).clamp(0.0, 1.0)
    }

    /// The time at position `x` (0..=1), the inverse of `x()`.
    pub fn time_at(&self, x: f64) -> i64 {
        let d = x.clamp(0.0, 1.0) * self.len;
        let k = self.pos.partition_point(|&p| p <= d);
        let t = if k == 0 {
            self.start as f64 + d
        } else {
            let (g, pos, shown) = (self.gaps[k - 1], self.pos[k - 1], self.shown[k - 1]);
            if d < pos + shown && shown > 0.0 {
                g.from as f64 + g.secs() as f64 * (d - pos) / shown
            } else {
                g.to as f64 + (d - pos - shown)
            }
        };
        (t.round() as i64).clamp(self.start, self.end)
    }

    /// The index of the gap `at` falls strictly inside.
    pub fn gap_at(&self, at: i64) -> Option<usize> {
        let k = self.gaps.partition_point(|g| g.from < at);
        (k > 0 && at < self.gaps[k - 1].to).then(|| k - 1)
    }

    /// How many gaps end at or before `at`: the stretch of readings `at` belongs to (a
    /// reading at a gap's end starts the next stretch).
    pub fn stretch(&self, at: i64) -> usize {
        self.gaps.partition_point(|g| g.to <= at)
    }
}
