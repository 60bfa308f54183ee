//! The unresponsive-app monitor: a pure state machine over check rounds (all OSes).
//!
//! Each round is what the WindowServer said about the GUI apps at one instant (live on
//! macOS, or recorded with `hangs --observations`). The clock is an input (`HangRound::at_ms`),
//! so every rule here is tested with controlled time and nothing in this file touches the OS.
//!
//! Lifecycle of an app identity (bundle id, else absolute bundle path):
//! - the first unresponsive observation creates a *pending* observation;
//! - responsive, or gone from the list, clears pending and blocked;
//! - stopped (SIGSTOP: parked by `park`, `top`'s suggestion, a shell's Ctrl-Z) or traced
//!   (a debugger attached, at a breakpoint) clears pending and blocked too, and is never
//!   recovered, however long it lasts: such a process cannot drain its event queue, so the
//!   WindowServer calls it not responding, and a restart would end the parked app and its
//!   unsaved work (seed 002: "a responsive or stopped app clears its pending observation");
//! - a second consecutive unresponsive round of the same process *confirms* the hang;
//! - confirmed and the cooldown permits (one automatic restart per identity per hour) →
//!   restart. Only a performed restart starts the cooldown: whoever acted records it
//!   ([`record_restart`]) once something was signalled (or, in a replay, planned). A restart
//!   refused before acting, or one that signalled nothing (the process already gone, its
//!   pid another process's), is no restart: the hang stays confirmed and the restart is
//!   tried again at the next counted round, never reported as "again after a restart";
//! - confirmed again while cooling down → *blocked*, and the user is notified once
//!   (third-party apps only); blocked stays until the app responds or goes;
//! - restart times older than 24 h are pruned;
//! - the interface unavailable → every pending observation is cleared, nothing is done.
//!
//! Rounds are consecutive when no more than `MAX_ROUND_GAP_MS` separates them (a machine
//! that slept, or a cron job that stopped, does not confirm a hang across the gap), and the
//! pending observation is for the same process (pid and, when known, start time).
//!
//! Every map is bounded: observations and blocked are rebuilt each round from the apps seen
//! in it (and capped at `MAX_TRACKED`), restarts are pruned to 24 h and capped, and an
//! identity longer than `MAX_IDENTITY_LEN` is never tracked.

pub mod cooldown;
pub mod eligibility;
mod round;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::hangs::eligibility::{
    Ineligible, Resolve, eligibility, is_app_bundle_path, lexical_only,
};
use crate::snapshot::ProcState;
pub use round::{record_restart, round};

/// The one system service that is restarted automatically (seed 002, Behavior 5).
pub const CURSOR_SERVICE_ID: &str = "com.apple.TextInputUI.xpc.CursorUIViewService";
/// Its XPC bundle: the service is accepted only at exactly this path.
pub const CURSOR_SERVICE_PATH: &str = "/System/Library/PrivateFrameworks/TextInputUIMacHelper.framework/Versions/A/XPCServices/CursorUIViewService.xpc";
/// Consecutive unresponsive rounds that confirm a hang.
pub const CONFIRM_ROUNDS: u32 = 2;
/// At most one automatic restart per identity in this long (the default and the minimum).
pub const COOLDOWN_MS: i64 = 3_600_000;
/// Restart times are kept this long.
pub const RESTART_RETENTION_MS: i64 = 24 * 3_600_000;
/// Two rounds further apart than this are not consecutive.
pub const MAX_ROUND_GAP_MS: i64 = 10 * 60_000;
/// Two observations of one process closer together than this are one observation (two
/// rounds with the same `at`, a manual `hangs` just after `watch`'s round): a hang is
/// confirmed only by rounds at least this far apart. The default, and its bounds.
pub const MIN_ROUND_GAP_MS: i64 = 5_000;
pub const MIN_ROUND_GAP_RANGE_MS: (i64, i64) = (1_000, 60_000);
/// Most identities held in any one map.
pub const MAX_TRACKED: usize = 256;
/// Longest identity tracked, in bytes.
pub const MAX_IDENTITY_LEN: usize = 1024;
/// Schema of the persisted monitor state.
pub const STATE_SCHEMA: &str = "headroom.hangs-state/1";

/// `NSApplicationActivationPolicy`, as the running-app list reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "Policy")]
pub enum ActivationPolicy {
    /// A Dock app (`Foreground` in LaunchServices).
    Regular,
    /// A menu-bar or UI-element app (`UIElement`).
    Accessory,
    /// No UI of its own (`BackgroundOnly`), like the CursorUIViewService XPC service.
    Prohibited,
}

impl ActivationPolicy {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Regular => "regular",
            Self::Accessory => "accessory",
            Self::Prohibited => "prohibited",
        }
    }
}

/// One running GUI app as one round saw it. Never carries arguments or document content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppObservation {
    pub pid: i32,
    /// Process start token (see `ProcessRecord::start_time`) when it was read: it makes the
    /// identity that a signal is addressed to, and tells a restarted app from the old one.
    pub start_time: Option<u64>,
    /// Real uid of the process, when read.
    pub uid: Option<u32>,
    pub bundle_id: Option<String>,
    pub bundle_path: String,
    pub name: String,
    pub policy: ActivationPolicy,
    pub responsive: bool,
    /// The process's scheduling state, when read (the live round reads it from the process
    /// table, a recorded round may carry it): `Stopped` or `Traced` is never recovered.
    pub state: Option<ProcState>,
}

impl AppObservation {
    /// Held by a stop signal or a debugger: it cannot answer, and must not be restarted.
    pub fn held(&self) -> Option<HangState> {
        match self.state {
            Some(ProcState::Stopped) => Some(HangState::Stopped),
            Some(ProcState::Traced) => Some(HangState::Traced),
            _ => None,
        }
    }

    /// The app identity: the bundle identifier when there is one, else the bundle path.
    pub fn identity(&self) -> &str {
        match self.bundle_id.as_deref() {
            Some(id) if !id.is_empty() => id,
            _ => &self.bundle_path,
        }
    }
}

/// One check round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HangRound {
    pub at_ms: i64,
    /// The same instant on a clock that is never stepped and counts time asleep, from boot
    /// (`platform::boot_ms`), when the round is live; `None` for a recorded round. The
    /// cooldown is measured on it, so a wall clock set forward cannot end it early and one
    /// set back cannot stretch it.
    pub boot_ms: Option<i64>,
    /// False when the WindowServer interface could not be used (no GUI session, a symbol
    /// missing); `apps` is then ignored.
    pub available: bool,
    pub unavailable_reason: Option<String>,
    pub apps: Vec<AppObservation>,
}

/// What kind of recovery an eligible identity gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[schemars(rename = "Kind")]
pub enum RecoveryKind {
    /// A third-party app: stopped, then reopened with `open -g`.
    App,
    /// The allowlisted system service: stopped, then started by launchd. Never notifies.
    Service,
}

/// Extra allow/deny entries (bundle ids or absolute bundle paths), the cooldown, and how
/// bundle paths are resolved.
#[derive(Debug, Clone)]
pub struct MonitorConfig {
    /// Lifts the default Apple/system-path exclusion for these regular apps.
    pub allow: Vec<String>,
    /// Never acted on, whatever else matches (the service included).
    pub deny: Vec<String>,
    pub cooldown_ms: i64,
    /// Observations of one process closer than this count once (`MIN_ROUND_GAP_MS`;
    /// clamped to `MIN_ROUND_GAP_RANGE_MS`).
    pub min_gap_ms: i64,
    /// Resolves a bundle path's symlinks (`eligibility`): [`lexical_only`] by default, the
    /// file system's (`platform::canonical_path`) in `hangs` and `watch`.
    pub resolve_path: Resolve,
}

impl Default for MonitorConfig {
    fn default() -> Self {
        Self {
            allow: Vec::new(),
            deny: Vec::new(),
            cooldown_ms: COOLDOWN_MS,
            min_gap_ms: MIN_ROUND_GAP_MS,
            resolve_path: lexical_only,
        }
    }
}

/// A pending (or confirmed) unresponsive observation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    pub pid: i32,
    #[serde(default)]
    pub start_time: Option<u64>,
    /// Consecutive unresponsive rounds so far.
    pub rounds: u32,
    pub since_ms: i64,
    /// When the last counted observation was made (`since_ms` in older state files).
    #[serde(default)]
    pub last_ms: Option<i64>,
    /// Restarts decided for this observation so far; more than one means the earlier ones
    /// performed nothing (a performed restart starts the cooldown, so there is no second).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The monitor state persisted between rounds (`hangs.json` in the state directory).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MonitorState {
    pub schema: String,
    pub last_round_ms: Option<i64>,
    pub observations: BTreeMap<String, Pending>,
    /// Last automatic restart performed per identity (`record_restart`).
    pub restarts: BTreeMap<String, i64>,
    /// The same restarts on the boot clock (`HangRound::boot_ms`), for those made in a live
    /// round; absent in older state files.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub restarts_boot: BTreeMap<String, i64>,
    /// Identities that already caused a notification, and since when.
    pub blocked: BTreeMap<String, i64>,
}

impl Default for MonitorState {
    fn default() -> Self {
        Self {
            schema: STATE_SCHEMA.into(),
            last_round_ms: None,
            observations: BTreeMap::new(),
            restarts: BTreeMap::new(),
            restarts_boot: BTreeMap::new(),
            blocked: BTreeMap::new(),
        }
    }
}

/// The state an unresponsive app is in after a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum HangState {
    /// First unresponsive round.
    Pending,
    /// First unresponsive round, while a restart of this identity is less than the cooldown
    /// old: confirming it will block, not restart.
    CoolingDown,
    /// Confirmed hang, restart decided.
    Confirmed,
    /// Confirmed while cooling down: left alone; the user was (or is now) told once.
    Blocked,
    /// Not eligible (see `reason`): never acted on.
    Ignored,
    /// Stopped (SIGSTOP, parked): not responding because it cannot run; never recovered, and
    /// its pending and blocked state is cleared.
    Stopped,
    /// A debugger holds it (traced, at a breakpoint): the same as stopped.
    Traced,
}

impl HangState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::CoolingDown => "cooling-down",
            Self::Confirmed => "confirmed",
            Self::Blocked => "blocked",
            Self::Ignored => "ignored",
            Self::Stopped => "stopped",
            Self::Traced => "traced",
        }
    }
}

/// The monitor's verdict on one unresponsive app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppDecision {
    pub app: AppObservation,
    pub identity: String,
    /// `None` when ignored.
    pub kind: Option<RecoveryKind>,
    pub state: HangState,
    /// Why an app is ignored or blocked.
    pub reason: Option<String>,
    pub rounds: u32,
    pub cooldown_until_ms: Option<i64>,
    /// The hang was confirmed in this round (log `detected`).
    pub detected: bool,
    /// Restart now.
    pub restart: bool,
    /// Became blocked in this round (log `blocked`, notify a third-party app once).
    pub newly_blocked: bool,
}

/// Everything one round decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundOutcome {
    pub at_ms: i64,
    pub available: bool,
    pub unavailable_reason: Option<String>,
    /// Apps examined.
    pub checked: usize,
    /// Unresponsive apps only, in the order the round listed them.
    pub decisions: Vec<AppDecision>,
    /// Pending observations dropped because the interface was unavailable.
    pub cleared_pending: usize,
}

/// Events the monitor logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    Detected,
    Restarted,
    RestartFailed,
    Blocked,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Detected => "detected",
            Self::Restarted => "restarted",
            Self::RestartFailed => "restart-failed",
            Self::Blocked => "blocked",
        }
    }
}

/// The notification policy: whom to tell, and when.
///
/// - The allowlisted service is recovered silently, even when its restart fails (logged).
/// - A successful restart is silent.
/// - A third-party app blocked during the cooldown is notified once (the caller passes
///   `newly_blocked` events only).
/// - A third-party app that headroom signalled but could not bring back is notified: the
///   user's app is gone and nothing else would say so. (The seed is silent on this case.)
pub fn should_notify(kind: RecoveryKind, event: EventKind, signalled: bool) -> bool {
    match (kind, event) {
        (RecoveryKind::Service, _) => false,
        (RecoveryKind::App, EventKind::Blocked) => true,
        (RecoveryKind::App, EventKind::RestartFailed) => signalled,
        (RecoveryKind::App, EventKind::Detected | EventKind::Restarted) => false,
    }
}

#[cfg(test)]
mod restart_tests;
#[cfg(test)]
mod state_tests;
#[cfg(test)]
mod tests;
