//! Values mapped to the levels of a drawing's height, and the round top of the value axis.

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
