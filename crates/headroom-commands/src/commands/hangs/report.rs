//! The reports of `headroom hangs` (one `Serialize` struct per output; a round's is
//! `actions::hang_round::report`'s, which `watch` emits too) and their human rendering, so
//! the two views cannot drift.
//!
//! - one live round: one object, `{"schema": "headroom.hangs/2", ...RoundReport}`;
//! - `--watch` and `--observations`: JSON Lines, `{"schema": "headroom.hangs/2", "type": "round", ...RoundReport}` per
//!   round; `--watch` ends with `{"type": "summary", ...}`;
//! - `--events`: one object, `{"schema": "headroom.hangs-events/2", ...}`.

use std::fmt::Write as _;

use serde::Serialize;

use crate::actions::hang_round::report::{ActionOutcome, ActorMode, RoundReport};
use crate::core::hangs::HangState;
use crate::output::{Printer, Style, plural};
use crate::sanitize::sanitize;
use crate::store::hang_events::HangEvent;

/// The last line of `--watch`.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Summary")]
pub struct HangsSummary {
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

impl crate::schema::Document for HangsSummary {
    const SCHEMA: &'static str = "headroom.hangs/2";
    const TYPE: Option<&'static str> = Some("summary");
}

impl HangsSummary {
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
pub struct EventsReport {
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

pub(crate) fn human_summary(sm: &HangsSummary) -> String {
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
