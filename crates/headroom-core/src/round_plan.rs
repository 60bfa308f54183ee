//! Whether a `watch` round must read the whole process table, or can wait because the wall
//! is provably far.
//!
//! The user's slots can never exceed every task on the machine together (Linux: the total
//! of `/proc/loadavg`'s fourth field; macOS: the number of processes), and the usage a
//! reading reports only grows with the slots counted: for a per-user ceiling `used / limit`;
//! for a shared one `used / (value − (in_use − used))`, which grows with `used` while the
//! ceiling is not already exceeded by everybody else (and when it is, the bound's usage is
//! 100 % or more, so nothing waits). So the usage at the bound is an upper bound of the
//! exact usage: while it stays below the warning threshold less a margin, no exact reading
//! could be at warning or above, and the round that would list every process can wait. A
//! bound that cannot be read proves nothing: the round reads the table.
//!
//! Exact rounds still happen: the first, every round once the bound nears the threshold,
//! every round while the last reading or the confirmed alert is above normal (the
//! hysteresis clears on readings), whenever something else needs the table (memory guards,
//! parked trees), and at least every `RoundFacts::exact_every_ms` (by default [`EXACT_EVERY_MS`])
//! for the trend and the evidence row.

use serde::Serialize;

use crate::limits::{Ceiling, effective_limit};
use crate::reading::{Level, Thresholds};

/// A round waits only while the bound's usage is below this fraction of the warning
/// threshold (40 % at the default 50 %): the exact rounds start before any reading could
/// warn, so the trend and the hysteresis have readings of the approach.
pub const MARGIN: f64 = 0.8;

/// By default an exact round at least this often, however far the wall: the trend's
/// 10-minute window keeps three readings (its minimum, `reading::TREND_MIN_SAMPLES`), and
/// the evidence log a row every four minutes. It was 2 minutes: over one such period a
/// table round cost `watch` more than `earlyoom`'s whole period at the same 1 s interval.
pub const EXACT_EVERY_MS: u64 = 4 * 60 * 1000;

/// What a platform reads in place of the table: an upper bound of the user's slots, and
/// the ceilings as they stand now (the same ceilings a snapshot carries).
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// Every task (Linux) or process (macOS) on the machine; `None`: unreadable.
    pub slots: Option<u64>,
    pub ceilings: Vec<Ceiling>,
    /// Whose slots (a system-wide ceiling keeps its last slot from anyone but root).
    pub uid: u32,
}

/// What the round knows before it reads the table.
#[derive(Debug, Clone, Copy)]
pub struct RoundFacts<'a> {
    /// `None` when the platform has no bound (or the table is not the live one).
    pub bound: Option<&'a Bound>,
    pub thresholds: Thresholds,
    /// The last exact round: how long ago (ms, monotonic) and its level; `None` before the
    /// first.
    pub last_exact: Option<(u64, Level)>,
    /// The alerts' confirmed level.
    pub confirmed: Level,
    /// Something else this round needs the table (memory guards, parked trees).
    pub table_needed: bool,
    /// An exact round at least this often (ms); 0: every round.
    pub exact_every_ms: u64,
}

/// Why a round reads the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Why {
    First,
    TableNeeded,
    /// The last reading, or the confirmed alert, is above normal.
    NotNormal,
    /// `exact_every_ms` since the last exact round.
    Due,
    /// No bound could be read.
    NoBound,
    /// No ceiling gives a limit at the bound.
    NoLimit,
    /// The bound's usage is at or above the margin.
    Near,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Round {
    /// Read the whole table.
    Exact(Why),
    /// The wall is far: the usage at the bound, in percent (below the margin).
    Wait { bound_pct: f64 },
}

/// The usage a reading would report if the user held all of `bound.slots`; `None` without
/// a bound or a limit at it, or when an enforced ceiling could not be read.
pub fn bound_pct(bound: &Bound) -> Option<f64> {
    // This process runs: the user holds at least one slot, whatever a file says.
    let slots = bound.slots?.max(1);
    let limit = effective_limit(&bound.ceilings, slots, bound.uid);
    // An unread ceiling may be the tightest: the bound proves nothing against the others.
    if limit.incomplete() {
        return None;
    }
    let limit = limit.limit?;
    Some(slots as f64 * 100.0 / limit.max(1) as f64)
}

pub fn plan(f: &RoundFacts<'_>) -> Round {
    let Some((since, level)) = f.last_exact else {
        return Round::Exact(Why::First);
    };
    if f.table_needed {
        return Round::Exact(Why::TableNeeded);
    }
    if level != Level::Normal || f.confirmed != Level::Normal {
        return Round::Exact(Why::NotNormal);
    }
    if since >= f.exact_every_ms {
        return Round::Exact(Why::Due);
    }
    let Some(bound) = f.bound.filter(|b| b.slots.is_some()) else {
        return Round::Exact(Why::NoBound);
    };
    match bound_pct(bound) {
        None => Round::Exact(Why::NoLimit),
        Some(p) if p < f.thresholds.warn_pct * MARGIN => Round::Wait { bound_pct: p },
        Some(_) => Round::Exact(Why::Near),
    }
}

#[cfg(test)]
mod tests;
