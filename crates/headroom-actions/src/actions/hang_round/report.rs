//! The report of one hang round (one `Serialize` struct per part), which `hangs` prints and
//! `watch` emits as its `hang` event: what the round found and did about each app.
//! Its human rendering is `hangs`' (`commands/hangs/report.rs`).

use serde::Serialize;

use crate::actions::recover::RecoveryStep;
use crate::core::hangs::{ActivationPolicy, HangState, RecoveryKind};

/// What became of a restart. The kebab-case names are stable (JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ActionOutcome {
    Restarted,
    RestartFailed,
    /// Not performed: `--dry-run` or a replay.
    Planned,
}

impl ActionOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Restarted => "restarted",
            Self::RestartFailed => "restart-failed",
            Self::Planned => "planned",
        }
    }
}

/// Whether a round acts: `live`, or only plans (`dry-run`, `replay`). Stable names (JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ActorMode {
    Live,
    DryRun,
    Replay,
}

impl ActorMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Live => "live",
            Self::DryRun => "dry-run",
            Self::Replay => "replay",
        }
    }
}

/// Whether the round could ask which apps respond. Stable names (JSON).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub enum RoundStatus {
    #[serde(rename = "ok")]
    Ok,
    #[serde(rename = "interface unavailable")]
    InterfaceUnavailable,
}

impl std::fmt::Display for RoundStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Ok => "ok",
            Self::InterfaceUnavailable => "interface unavailable",
        })
    }
}

/// What the round did about one app's hang.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ActionReport {
    pub outcome: ActionOutcome,
    pub performed: bool,
    pub detail: Option<String>,
    pub new_pid: Option<i32>,
    pub steps: Vec<RecoveryStep>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct NotificationReport {
    pub message: String,
    pub sent: bool,
    /// Why it was not sent (an error, or `--dry-run` / replay).
    pub note: Option<String>,
}

/// One unresponsive app.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct AppReport {
    pub identity: String,
    pub name: String,
    pub pid: i32,
    pub bundle_id: Option<String>,
    pub bundle_path: String,
    pub policy: ActivationPolicy,
    /// `app` or `service`; null when ignored.
    pub kind: Option<RecoveryKind>,
    pub state: HangState,
    pub reason: Option<String>,
    /// Consecutive unresponsive rounds (0 when ignored).
    pub rounds: u32,
    #[serde(rename = "cooldown_ends_at")]
    pub cooldown_until: Option<String>,
    pub action: Option<ActionReport>,
    pub notification: Option<NotificationReport>,
}

/// One check round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RoundReport {
    pub at: String,
    pub status: RoundStatus,
    pub unavailable_reason: Option<String>,
    pub mode: ActorMode,
    /// Apps examined.
    pub checked: usize,
    /// Pending observations cleared because the interface was unavailable.
    pub cleared_pending: usize,
    /// The unresponsive apps only.
    pub apps: Vec<AppReport>,
}

impl crate::schema::Document for RoundReport {
    const SCHEMA: &'static str = "headroom.hangs/2";
    const TYPE: Option<&'static str> = Some("round");
}

impl RoundReport {
    /// A confirmed hang is left over: blocked, a failed restart, or one only planned.
    pub fn unresolved(&self) -> bool {
        self.apps.iter().any(|a| match a.state {
            HangState::Blocked => true,
            HangState::Confirmed => a
                .action
                .as_ref()
                .is_none_or(|x| x.outcome != ActionOutcome::Restarted),
            _ => false,
        })
    }

    pub fn available(&self) -> bool {
        self.unavailable_reason.is_none()
    }
}
