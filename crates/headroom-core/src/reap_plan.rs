//! What a cleanup runs with: `reap`'s flags and `watch`'s settings resolved into the policy,
//! the grace and the thresholds (by `config::reap_plan`), so the cleanup itself
//! (`actions::cleanup`) takes no flag and no setting.

use std::time::Duration;

use crate::policy::Policy;
use crate::reading::Thresholds;

#[derive(Debug, Clone)]
pub struct ReapPlan {
    pub policy: Policy,
    pub grace: Duration,
    pub dry_run: bool,
    pub active_fraction: f64,
    /// What the reading is judged by: `[probe]`'s thresholds (for `watch`'s cleanup, its own,
    /// flags included), so the level `reap` reports and records is the one `probe` reads.
    pub thresholds: Thresholds,
    pub warnings: Vec<String>,
}
