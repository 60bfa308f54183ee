//! Time ticks at round instants, as gnuplot places them: the step is the smallest of a
//! 1-2-5 ladder over calendar units (seconds, minutes, hours, days, weeks, months, years)
//! that leaves room for a label, and ticks fall on its multiples in the reader's clock
//! (UTC, or local time by the offset the caller gives for each instant): two-hour ticks at
//! 12:00, 14:00 …, never 15:08, 17:17. A tick inside a gap stays, where the axis draws its
//! instant in the gap's narrower stretch (a laptop asleep every night has every midnight
//! in a gap: leaving those out left a 90-day chart without a date); one that would crowd
//! the last kept is left out.

use super::axis::Axis;
use crate::time::{civil_from_days, days_from_civil};

/// The calendar unit of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    Second,
    Minute,
    Hour,
    Day,
    Month,
    Year,
}

/// A tick step: `n` of `unit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TickStep {
    pub unit: Unit,
    pub n: i64,
}

impl TickStep {
    /// Its length in seconds (months as 30 days, years as 365: only to choose the step).
    pub fn secs(self) -> i64 {
        self.n
            * match self.unit {
                Unit::Second => 1,
                Unit::Minute => 60,
                Unit::Hour => 3600,
                Unit::Day => 86_400,
                Unit::Month => 30 * 86_400,
                Unit::Year => 365 * 86_400,
            }
    }
}

const LADDER: [(Unit, i64); 24] = [
    (Unit::Second, 1),
    (Unit::Second, 2),
    (Unit::Second, 5),
    (Unit::Second, 10),
    (Unit::Second, 15),
    (Unit::Second, 30),
    (Unit::Minute, 1),
    (Unit::Minute, 2),
    (Unit::Minute, 5),
    (Unit::Minute, 10),
    (Unit::Minute, 15),
    (Unit::Minute, 30),
    (Unit::Hour, 1),
    (Unit::Hour, 2),
    (Unit::Hour, 3),
    (Unit::Hour, 6),
    (Unit::Hour, 12),
    (Unit::Day, 1),
    (Unit::Day, 2),
    (Unit::Day, 7),
    (Unit::Month, 1),
    (Unit::Month, 3),
    (Unit::Month, 6),
    (Unit::Year, 1),
];

/// One tick: its instant and where it falls on the axis (0..=1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tick {
    pub at: i64,
    pub x: f64,
}

/// The step for an axis whose labels need `spacing` of its width (0..1) apart.
pub fn step_for(axis: &Axis, spacing: f64) -> TickStep {
    let want = axis.len() * spacing.max(1e-6);
    for (unit, n) in LADDER {
        let s = TickStep { unit, n };
        if s.secs() as f64 >= want {
            return s;
        }
    }
    // Years in 1-2-5 steps beyond the ladder.
    let mut n = 2;
    loop {
        for m in [1, 2, 5] {
            let s = TickStep {
                unit: Unit::Year,
                n: n * m / 2,
            };
            if s.secs() as f64 >= want || s.n > 1_000_000 {
                return s;
            }
        }
        n *= 10;
    }
}

/// Ticks of `step` along `axis`, at least `spacing` apart (a share of the width), with
/// `offset(t)` the clock's offset from UTC in seconds at instant `t`.
pub fn ticks(axis: &Axis, step: TickStep, spacing: f64, offset: &dyn Fn(i64) -> i32) -> Vec<Tick> {
    let mut out: Vec<Tick> = Vec::new();
    let mut t = first_at_or_after(axis.start, step, offset);
    // Each round either keeps a tick or jumps to the first round instant that could be
    // kept (past a long gap drawn narrow, that skips its many steps at once): the rounds
    // are bounded by the labels that fit, however long the gaps.
    let mut guard = 0;
    while t <= axis.end && guard < 100_000 {
        guard += 1;
        let x = axis.x(t);
        let mut next = after(t, step, offset);
        match out.last() {
            Some(l) if x - l.x < spacing => {
                let room = axis.time_at((l.x + spacing).min(1.0));
                next = next.max(first_at_or_after(room, step, offset));
            }
            _ => out.push(Tick { at: t, x }),
        }
        if next <= t {
            break;
        }
        t = next;
    }
    out
}

/// Local seconds of UTC `t`.
fn local(t: i64, offset: &dyn Fn(i64) -> i32) -> i64 {
    t + i64::from(offset(t))
}

/// UTC of local seconds `l` (the offset taken at the instant itself, so a tick lands on the
/// round local time on either side of a daylight-saving change).
fn utc(l: i64, offset: &dyn Fn(i64) -> i32) -> i64 {
    let guess = l - i64::from(offset(l));
    l - i64::from(offset(guess))
}

/// The first round instant of `step` at or after `t`.
fn first_at_or_after(t: i64, step: TickStep, offset: &dyn Fn(i64) -> i32) -> i64 {
    let l = local(t, offset);
    let rounded = match step.unit {
        Unit::Second | Unit::Minute | Unit::Hour => {
            // Multiples of the step since the local midnight.
            let s = step.secs();
            let day = l.div_euclid(86_400) * 86_400;
            day + (l - day + s - 1).div_euclid(s) * s
        }
        Unit::Day => {
            let d = l.div_euclid(86_400) + i64::from(l.rem_euclid(86_400) != 0);
            let d = if step.n == 7 {
                // Weeks start on Monday (1970-01-01 was a Thursday).
                d + (7 - (d + 3).rem_euclid(7)) % 7
            } else {
                let (_, _, dom) = civil_from_days(d);
                d + (step.n - (dom - 1).rem_euclid(step.n)) % step.n
            };
            d * 86_400
        }
        Unit::Month | Unit::Year => {
            let months = if step.unit == Unit::Year {
                step.n * 12
            } else {
                step.n
            };
            let (y, m, dom) = civil_from_days(l.div_euclid(86_400));
            let mut idx = y * 12 + (m - 1);
            if dom != 1 || l.rem_euclid(86_400) != 0 {
                idx += 1;
            }
            idx += (months - idx.rem_euclid(months)) % months;
            month_start(idx)
        }
    };
    utc(rounded, offset)
}

/// Local seconds of the first of month `idx` (year × 12 + month − 1).
fn month_start(idx: i64) -> i64 {
    days_from_civil(idx.div_euclid(12), idx.rem_euclid(12) + 1, 1) * 86_400
}

/// The next round instant of `step` after the round instant `t`.
fn after(t: i64, step: TickStep, offset: &dyn Fn(i64) -> i32) -> i64 {
    let l = local(t, offset);
    let next = match step.unit {
        Unit::Second | Unit::Minute | Unit::Hour | Unit::Day => l + step.secs(),
        Unit::Month | Unit::Year => {
            let months = if step.unit == Unit::Year {
                step.n * 12
            } else {
                step.n
            };
            let (y, m, _) = civil_from_days(l.div_euclid(86_400));
            month_start(y * 12 + (m - 1) + months)
        }
    };
    let t2 = utc(next, offset);
    if step.unit == Unit::Day && step.n != 7 {
        // Every n-th day of the month restarts on the 1st.
        first_at_or_after(t2, step, offset)
    } else {
        t2
    }
}
