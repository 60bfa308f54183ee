//! The reports of `headroom hangs` (one `Serialize` struct per output) and their human
//! rendering, so the two views cannot drift.
//!
//! - one live round: one object, `{"schema": "headroom.hangs/2", ...RoundReport}`;
//! - `--watch` and `--observations`: JSON Lines, `{"schema": "headroom.hangs/2", "type": "round", ...RoundReport}` per
//!   round; `--watch` ends with `{"type": "summary", ...}`;
//! - `--events`: one object, `{"schema": "headroom.hangs-events/2", ...}`.

use std::fmt::Write as _;

use serde::Serialize;

use crate::actions::recover::Step;
use crate::core::hangs::{HangState, Kind, Policy};
use crate::output::{Printer, Style, plural};
use crate::sanitize::sanitize;
use crate::store::hang_events::HangEvent;

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
    pub steps: Vec<Step>,
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
    pub policy: Policy,
    /// `app` or `service`; null when ignored.
    pub kind: Option<Kind>,
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

/// The last line of `--watch`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Summary {
    /// When the watch (or replay) ended (RFC 3339, UTC).
    pub at: String,
    pub rounds: u64,
    pub restarted: u64,
    pub restart_failed: u64,
    pub blocked: u64,
    pub unavailable_rounds: u64,
    /// `SIGINT` or `SIGTERM`.
    pub stopped_by: Option<String>,
}

impl crate::schema::Document for Summary {
    const SCHEMA: &'static str = "headroom.hangs/2";
    const TYPE: Option<&'static str> = Some("summary");
}

impl Summary {
    pub fn add(&mut self, r: &RoundReport) {
        self.rounds += 1;
        if !r.available() {
            self.unavailable_rounds += 1;
        }
        for a in &r.apps {
            match a.action.as_ref().map(|x| x.outcome) {
                Some(ActionOutcome::Restarted) => self.restarted += 1,
                Some(ActionOutcome::RestartFailed) => self.restart_failed += 1,
                Some(ActionOutcome::Planned) | None => {}
            }
            if a.state == HangState::Blocked && a.notification.is_some() {
                self.blocked += 1;
            }
        }
    }
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct EventsReport {
    /// The first instant listed (`--since`); null when the whole history is.
    pub since_at: Option<String>,
    /// Lines of the events file that could not be read.
    pub skipped_lines: usize,
    pub events: Vec<HangEvent>,
}

impl crate::schema::Document for EventsReport {
    const SCHEMA: &'static str = "headroom.hangs-events/2";
    const TYPE: Option<&'static str> = Some("hangs-events");
}

fn state_style(s: HangState) -> Style {
    match s {
        HangState::Pending | HangState::CoolingDown => Style::Yellow,
        HangState::Confirmed | HangState::Blocked => Style::Red,
        HangState::Ignored | HangState::Stopped | HangState::Traced => Style::Dim,
    }
}

/// The block a person reads for one round.
pub(crate) fn human_round(r: &RoundReport, p: &Printer) -> String {
    let mut s = String::new();
    let mode = match r.mode {
        ActorMode::Live => String::new(),
        m => format!("  ({}: nothing is done)", m.as_str()),
    };
    let _ = writeln!(
        s,
        "{}  {}{mode}",
        p.paint("headroom hangs", Style::Bold),
        r.at
    );
    if let Some(reason) = &r.unavailable_reason {
        let _ = writeln!(
            s,
            "  {}: {}; no action taken{}",
            p.paint("interface unavailable", Style::Red),
            sanitize(reason),
            match r.cleared_pending {
                0 => String::new(),
                n => format!(", {n} pending observation(s) cleared"),
            }
        );
        return s;
    }
    if r.apps.is_empty() {
        let _ = writeln!(
            s,
            "  no unresponsive apps ({} checked)",
            plural(r.checked as u64, "app")
        );
        return s;
    }
    for a in &r.apps {
        let id = if a.identity == a.bundle_path {
            String::new()
        } else {
            format!(" ({})", sanitize(&a.identity))
        };
        let state = p.paint(a.state.as_str(), state_style(a.state));
        let rounds = match a.rounds {
            0 => String::new(),
            n => format!(" after {}", plural(u64::from(n), "round")),
        };
        let _ = writeln!(
            s,
            "  {}{id} pid {}: {state}{rounds}",
            sanitize(&a.name),
            a.pid
        );
        if let Some(reason) = &a.reason {
            let _ = writeln!(s, "    {}", sanitize(reason));
        }
        if let Some(until) = &a.cooldown_until {
            let _ = writeln!(s, "    restarted recently; cooling down until {until}");
        }
        if let Some(x) = &a.action {
            let head = match x.outcome {
                ActionOutcome::Planned => "would restart",
                o => o.as_str(),
            };
            let _ = writeln!(s, "    {head}:");
            for (i, step) in x.steps.iter().enumerate() {
                let _ = writeln!(s, "      {}. {}", i + 1, sanitize(&step.describe()));
            }
            if let Some(d) = &x.detail {
                let _ = writeln!(s, "    {}", sanitize(d));
            }
        }
        if let Some(n) = &a.notification {
            let sent = if n.sent {
                "notified".to_string()
            } else {
                format!(
                    "notification not sent ({})",
                    n.note.as_deref().unwrap_or("unknown")
                )
            };
            let _ = writeln!(s, "    {sent}: {}", sanitize(&n.message));
        }
    }
    let _ = writeln!(s, "  {} checked", plural(r.checked as u64, "app"));
    s
}

pub(crate) fn human_summary(sm: &Summary) -> String {
    format!(
        "headroom hangs: {}, {} restarted, {}, {} blocked{}\n",
        plural(sm.rounds, "round"),
        sm.restarted,
        plural(sm.restart_failed, "restart failure"),
        sm.blocked,
        sm.stopped_by
            .as_deref()
            .map(|s| format!("; stopped by {s}"))
            .unwrap_or_default()
    )
}

pub(crate) fn human_events(r: &EventsReport) -> String {
    let mut s = String::new();
    if r.events.is_empty() {
        let _ = writeln!(
            s,
            "no hang events{}",
            r.since_at
                .as_deref()
                .map(|t| format!(" since {t}"))
                .unwrap_or_default()
        );
    }
    for e in &r.events {
        let _ = write!(
            s,
            "{}  {:<14}  {}  {}  pid {}  {}",
            e.at,
            e.event.as_str(),
            sanitize(&e.name),
            sanitize(&e.identity),
            e.pid,
            sanitize(&e.bundle_path)
        );
        if let Some(p) = e.new_pid {
            let _ = write!(s, "  new pid {p}");
        }
        if let Some(reason) = &e.reason {
            let _ = write!(s, "  ({})", sanitize(reason));
        }
        if e.replayed {
            let _ = write!(s, "  [replayed]");
        }
        s.push('\n');
    }
    s
}
