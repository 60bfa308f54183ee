//! `top`'s verdict on one tree (all OSes, pure): whether it is a park candidate, and
//! caproom's reason code for the row. The verdict holds numbers and kinds only;
//! `commands/top.rs` words it.

use serde::Serialize;

use crate::idle::IDLE_CPU_FRACTION;
use crate::memory::PRESSURE_FREE_PCT;
use crate::proc_tree::TreeChange;
use crate::snapshot::{ProcState, ProcessRecord};

/// Growth above this many KB/s is worth a look (caproom's threshold).
pub const GROWTH_KB_S: i64 = 200;

/// A tree's state, from its root (caproom's words).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TreeState {
    Running,
    Parked,
    Zombie,
}

impl TreeState {
    pub fn of(root: &ProcessRecord) -> Self {
        match root.state {
            ProcState::Stopped => Self::Parked,
            ProcState::Zombie => Self::Zombie,
            _ => Self::Running,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Parked => "parked",
            Self::Zombie => "zombie",
        }
    }
}

/// Why a row is flagged (caproom's codes; precedence as listed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReasonCode {
    /// Idle and big: parking it would make its memory reclaimable.
    ParkIdle,
    /// Growing faster than 200 KB/s.
    GrowthRate,
    /// The machine has less than 15 % free.
    Pressure,
    None,
}

/// Why a tree is not a park candidate: the first of these that holds.
#[derive(Debug, Clone, PartialEq)]
pub enum NotParkable {
    AlreadyParked,
    /// Its root has exited.
    Zombie,
    /// headroom may not park it (`core::parking`'s refusal, in words).
    Refused(String),
    /// A member started between the samples, so its CPU is unknown.
    CpuUnknown,
    /// Its CPU over the window, as a fraction of one core (at least `IDLE_CPU_FRACTION`).
    Busy(f64),
    /// Its footprint is under the park threshold.
    Small,
}

/// What `top` concludes for one tree.
#[derive(Debug, Clone, PartialEq)]
pub struct ParkVerdict {
    pub reason_code: ReasonCode,
    /// `None` for a park candidate.
    pub not_parkable: Option<NotParkable>,
}

impl ParkVerdict {
    pub fn park_candidate(&self) -> bool {
        self.not_parkable.is_none()
    }
}

/// The facts a verdict is drawn from.
#[derive(Debug, Clone)]
pub struct TreeFacts {
    pub state: TreeState,
    pub footprint_bytes: u64,
    pub change: TreeChange,
    /// Why the tree may not be parked at all (headroom's own shell, ...).
    pub refusal: Option<String>,
    pub window_ms: u64,
}

/// A park candidate is running, allowed, known to be idle (under 2 % of a core) and at
/// least `park_min_bytes`. Otherwise growth, then pressure, explain the row.
pub fn judge(f: &TreeFacts, park_min_bytes: u64, free_pct: Option<f64>) -> ParkVerdict {
    let not_parkable = match (f.state, &f.refusal, f.change.cpu_fraction) {
        (TreeState::Parked, _, _) => Some(NotParkable::AlreadyParked),
        (TreeState::Zombie, _, _) => Some(NotParkable::Zombie),
        (_, Some(r), _) => Some(NotParkable::Refused(r.clone())),
        (_, _, None) => Some(NotParkable::CpuUnknown),
        (_, _, Some(c)) if c >= IDLE_CPU_FRACTION => Some(NotParkable::Busy(c)),
        _ if f.footprint_bytes < park_min_bytes => Some(NotParkable::Small),
        _ => None,
    };
    let reason_code = if not_parkable.is_none() {
        ReasonCode::ParkIdle
    } else if f.change.growth_kb_s > GROWTH_KB_S {
        ReasonCode::GrowthRate
    } else if free_pct.is_some_and(|p| p < PRESSURE_FREE_PCT) {
        ReasonCode::Pressure
    } else {
        ReasonCode::None
    };
    ParkVerdict {
        reason_code,
        not_parkable,
    }
}
