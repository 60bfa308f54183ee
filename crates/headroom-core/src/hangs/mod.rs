//! The unresponsive-app monitor: a pure state machine over check rounds (all OSes).
//!
//! Each round is what the WindowServer said about the GUI apps at one instant (live on
//! macOS, or recorded with `hangs --observations`). The clock is an input (`Round::at_ms`),
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

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::hangs::cooldown::{prune_restarts, since_restart};
pub use crate::hangs::eligibility::{
    Ineligible, Resolve, eligibility, is_app_bundle_path, lexical_only,
};
use crate::snapshot::ProcState;

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
pub enum Policy {
    /// A Dock app (`Foreground` in LaunchServices).
    Regular,
    /// A menu-bar or UI-element app (`UIElement`).
    Accessory,
    /// No UI of its own (`BackgroundOnly`), like the CursorUIViewService XPC service.
    Prohibited,
}

impl Policy {
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
    pub policy: Policy,
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
pub struct Round {
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
pub enum Kind {
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
    /// The same restarts on the boot clock (`Round::boot_ms`), for those made in a live
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
    pub kind: Option<Kind>,
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

/// Run one round: update `state` and say what to do. Pure: `round.at_ms` is the clock.
pub fn round(state: &mut MonitorState, round: &Round, cfg: &MonitorConfig) -> RoundOutcome {
    let now = round.at_ms;
    let cooldown = cfg.cooldown_ms.max(COOLDOWN_MS);
    let (lo, hi) = MIN_ROUND_GAP_RANGE_MS;
    let min_gap = cfg.min_gap_ms.clamp(lo, hi);
    prune_restarts(state, round, cooldown);
    let consecutive = state
        .last_round_ms
        .is_some_and(|last| now >= last && now - last <= MAX_ROUND_GAP_MS);
    state.last_round_ms = Some(now);

    if !round.available {
        let cleared = state.observations.len();
        state.observations.clear();
        return RoundOutcome {
            at_ms: now,
            available: false,
            unavailable_reason: round.unavailable_reason.clone(),
            checked: 0,
            decisions: Vec::new(),
            cleared_pending: cleared,
        };
    }

    // Eligible processes per identity: two of them (`open -n`) cannot be told apart by
    // identity, so neither is acted on; an ineligible lookalike does not count.
    let verdicts: Vec<Result<Kind, Ineligible>> =
        round.apps.iter().map(|a| eligibility(a, cfg)).collect();
    let mut instances: BTreeMap<&str, usize> = BTreeMap::new();
    for (app, v) in round.apps.iter().zip(&verdicts) {
        if v.is_ok() {
            *instances.entry(app.identity()).or_default() += 1;
        }
    }
    let mut observations = BTreeMap::new();
    let mut blocked = BTreeMap::new();
    let mut decisions = Vec::new();
    // Restarts decided this round, not yet recorded (`record_restart` follows the act): they
    // count against the cap on restart times as if they were.
    let mut decided = 0usize;
    for (app, verdict) in round.apps.iter().zip(verdicts.iter().cloned()) {
        if app.responsive {
            continue;
        }
        let identity = app.identity().to_string();
        let mut d = AppDecision {
            app: app.clone(),
            identity: identity.clone(),
            kind: None,
            state: HangState::Ignored,
            reason: None,
            rounds: 0,
            cooldown_until_ms: None,
            detected: false,
            restart: false,
            newly_blocked: false,
        };
        let eligible =
            verdict.and_then(
                |kind| match instances.get(identity.as_str()).copied().unwrap_or(0) {
                    n if n > 1 => Err(Ineligible::SharedIdentity(n)),
                    _ if observations.len() >= MAX_TRACKED => Err(Ineligible::TooMany),
                    _ => Ok(kind),
                },
            );
        let kind = match eligible {
            Ok(k) => k,
            Err(reason) => {
                d.reason = Some(reason.to_string());
                decisions.push(d);
                continue;
            }
        };
        if let Some(held) = app.held() {
            // Neither pending nor blocked is carried on: both maps are rebuilt from this
            // round, and a held app enters neither.
            d.kind = Some(kind);
            d.state = held;
            d.reason = Some(match held {
                HangState::Traced => {
                    "a debugger holds it (traced): it cannot answer until released; never restarted"
                        .into()
                }
                _ => "stopped (parked, SIGSTOP): it cannot answer until continued; never restarted"
                    .into(),
            });
            decisions.push(d);
            continue;
        }
        d.kind = Some(kind);
        let prev = state
            .observations
            .get(&identity)
            .filter(|p| consecutive && p.pid == app.pid && p.start_time == app.start_time);
        // An observation too soon after the last counted one is the same observation: it
        // neither counts as a round nor moves the time the next one is measured from.
        let last_ms = prev.map(|p| p.last_ms.unwrap_or(p.since_ms));
        let too_soon = last_ms.is_some_and(|l| now.saturating_sub(l) < min_gap);
        let rounds = match prev {
            None => 1,
            Some(p) if too_soon => p.rounds,
            Some(p) => p.rounds.saturating_add(1),
        };
        let since_ms = prev.map_or(now, |p| p.since_ms);
        let counted_ms = if too_soon {
            last_ms.unwrap_or(now)
        } else {
            now
        };
        let attempts = prev.map_or(0, |p| p.attempts);
        d.rounds = rounds;
        d.cooldown_until_ms = since_restart(state, &identity, round)
            .filter(|elapsed| *elapsed < cooldown)
            .map(|elapsed| now.saturating_add(cooldown - elapsed));
        let mut pending = Pending {
            pid: app.pid,
            start_time: app.start_time,
            rounds,
            since_ms,
            last_ms: Some(counted_ms),
            attempts,
        };
        if let Some(since) = state.blocked.get(&identity) {
            // Blocked lasts until the app responds or goes from the list, whatever happens
            // to the round count (a gap, a relaunch between two rounds): notified once.
            blocked.insert(identity.clone(), *since);
            d.state = HangState::Blocked;
            d.reason = Some("still unresponsive; already reported".into());
        } else if rounds < CONFIRM_ROUNDS {
            d.state = if d.cooldown_until_ms.is_some() {
                HangState::CoolingDown
            } else {
                HangState::Pending
            };
        } else if d.cooldown_until_ms.is_some() {
            blocked.insert(identity.clone(), now);
            d.state = HangState::Blocked;
            d.detected = true;
            d.newly_blocked = true;
            d.reason = Some(format!(
                "unresponsive again within {} min of an automatic restart",
                cooldown / 60_000
            ));
        } else if too_soon && attempts > 0 {
            // Confirmed before, and the restart then performed nothing (a performed one would
            // have started the cooldown): tried again only at a counted round.
            d.state = HangState::Confirmed;
            d.reason = Some(
                "the last restart performed nothing; it is tried again at the next round".into(),
            );
        } else if !state.restarts.contains_key(&identity)
            && state.restarts.len().saturating_add(decided) >= MAX_TRACKED
        {
            // Forgetting a restart time to make room would allow a second restart within the
            // cooldown: refuse instead (the observation is kept; it restarts once room frees).
            d.kind = None;
            d.state = HangState::Ignored;
            d.reason = Some(format!(
                "{MAX_TRACKED} apps were restarted within the cooldown: no room to record \
                 another restart, so none is made"
            ));
        } else {
            decided += 1;
            d.state = HangState::Confirmed;
            // Detected once per observation: a retry of a restart that performed nothing is
            // not a new detection.
            d.detected = attempts == 0;
            d.restart = true;
            if attempts > 0 {
                d.reason = Some(format!(
                    "restart tried again: {} earlier attempt(s) performed nothing",
                    attempts
                ));
            }
            pending.attempts = attempts.saturating_add(1);
        }
        observations.insert(identity.clone(), pending);
        decisions.push(d);
    }
    // Blocked lasts until the app responds or quits, whatever the instance count does: an
    // identity skipped this round (a second instance, `open -n`) that is still unresponsive
    // stays blocked, so it is not notified again when the extra instance goes.
    for (identity, since) in &state.blocked {
        let still = round
            .apps
            .iter()
            .any(|a| !a.responsive && a.held().is_none() && a.identity() == identity.as_str());
        if still && !blocked.contains_key(identity) && blocked.len() < MAX_TRACKED {
            blocked.insert(identity.clone(), *since);
        }
    }
    state.observations = observations;
    state.blocked = blocked;
    RoundOutcome {
        at_ms: now,
        available: true,
        unavailable_reason: None,
        checked: round.apps.len(),
        decisions,
        cleared_pending: 0,
    }
}

/// Record that the restart `round` decided for `identity` was performed (something was
/// signalled; in a replay or dry run, planned): this, and only this, starts the cooldown. A
/// restart refused before acting, or one that signalled nothing, is not recorded, so the app
/// is neither reported as unresponsive "again after a restart" nor kept from a retry.
pub fn record_restart(state: &mut MonitorState, identity: &str, round: &Round) {
    state.restarts.insert(identity.to_string(), round.at_ms);
    match round.boot_ms {
        Some(b) => state.restarts_boot.insert(identity.to_string(), b),
        None => state.restarts_boot.remove(identity),
    };
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
pub fn should_notify(kind: Kind, event: EventKind, signalled: bool) -> bool {
    match (kind, event) {
        (Kind::Service, _) => false,
        (Kind::App, EventKind::Blocked) => true,
        (Kind::App, EventKind::RestartFailed) => signalled,
        (Kind::App, EventKind::Detected | EventKind::Restarted) => false,
    }
}

#[cfg(test)]
mod state_tests;
#[cfg(test)]
mod tests;
