//! The `headroom.reap/3` report and its human rendering (the decision table is always shown).

mod human;
mod summary;

use std::fmt::Write as _;

use serde::Serialize;

use crate::actions::terminate::{Termination, TerminationOutcome};
use crate::core::liveness::{Blind, SessionVerdict};
use crate::core::policy::{Decision, Policy, ReapVerdict, Selection, SkipReason};
use crate::core::reading::Reading;
use crate::core::slot_reading::SlotReading;
use crate::core::snapshot::Snapshot;
use crate::core::time::format_ms;
use crate::platform::Signal;
use crate::store::evidence::Row;

pub(crate) use summary::summary;

/// The longest `reap`'s verification waits for an inheritor to reap the zombies of the
/// parents it ended (`reap_verify`). launchd and most inits reap at once; a container's pid 1
/// or a busy subreaper may take seconds (1.4 s was measured where a fixed one-second window
/// called a working cleanup a failure).
pub(crate) const VERIFY_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ParentReport {
    pub pid: i32,
    pub name: String,
    pub exe: Option<String>,
    pub zombies: u64,
    pub verdict: ReapVerdict,
    pub reason: Option<SkipReason>,
    pub session_children: Vec<i32>,
    pub session: SessionVerdict,
    #[serde(serialize_with = "crate::schema::whole_seconds")]
    #[schemars(with = "Option<i64>")]
    pub cpu_idle_seconds: Option<f64>,
    #[serde(serialize_with = "crate::schema::whole_seconds")]
    #[schemars(with = "Option<i64>")]
    pub log_age_seconds: Option<f64>,
    /// Why the session gives no evidence (a stopped session child, unread table entries).
    pub session_blind: Option<Blind>,
    #[serde(rename = "override")]
    pub override_: Option<&'static str>,
}

/// Who holds the zombies of an ended parent that were not reaped: whoever inherited them
/// (launchd, init, a container's pid 1, a subreaper) and has not waited for them yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Holder")]
pub struct ZombieHolder {
    pub pid: i32,
    pub name: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TargetReport {
    pub pid: i32,
    pub name: String,
    pub outcome: TerminationOutcome,
    pub signals: Vec<Signal>,
    /// Its zombies at the last reading before the signal that ended it (the decision's
    /// table for SIGTERM, the table read again before SIGKILL for SIGKILL).
    pub zombies_before: u64,
    /// Those of them gone once it was gone: only a parent headroom ended is credited (a
    /// zombie its parent reaped itself, or one of a parent that went by itself, is not).
    pub zombies_reaped: u64,
    /// Those of them still there when verification ended.
    pub zombies_left: u64,
    /// Who holds those: the parent headroom ended is gone, and they now belong to this
    /// process, which had not reaped them when verification ended.
    pub held_by: Option<ZombieHolder>,
    /// headroom ended it and every one of its zombies is gone.
    pub verified: bool,
    #[serde(rename = "override")]
    pub override_: Option<&'static str>,
    pub error: Option<String>,
    #[serde(skip)]
    pub signal_list: String,
    #[serde(skip)]
    pub session_signal: String,
}

impl TargetReport {
    pub(crate) fn new(d: &Decision, t: &Termination, zombies_before: u64) -> Self {
        Self {
            pid: d.pid,
            name: d.name.clone(),
            outcome: t.outcome,
            signals: t.signals.clone(),
            zombies_before,
            zombies_reaped: 0,
            zombies_left: zombies_before,
            held_by: None,
            verified: false,
            override_: d.override_,
            error: t.error.clone(),
            signal_list: t.signal_list(),
            session_signal: d.session.signal_text(),
        }
    }

    /// Nothing is left undone for it: headroom ended it and its zombies are gone, or it
    /// stopped being a target before the signal that would have ended it (it went by
    /// itself, or the table read again at the end of the grace no longer chose it).
    pub fn settled(&self) -> bool {
        self.verified || self.stood_down()
    }

    /// It stopped being a target before headroom ended it (a survivor left alone because
    /// its selection could not be made again carries that error, and did not).
    pub(crate) fn stood_down(&self) -> bool {
        match self.outcome {
            TerminationOutcome::AlreadyGone => true,
            TerminationOutcome::Spared => self.error.is_none(),
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ReapReport {
    pub at: String,
    pub uid: u32,
    pub dry_run: bool,
    /// The emergency trigger fired: free slots at or below its threshold.
    pub pressure: bool,
    /// The reading the decisions were made on, as `probe` prints it (no trend: `reap`
    /// keeps no history).
    pub usage: SlotReading,
    pub policy: Policy,
    pub grace_ms: u64,
    pub parents: Vec<ParentReport>,
    pub targets: Vec<TargetReport>,
    pub slots_freed: u64,
    /// How long verification waited for the ended parents' zombies to be reaped (at most
    /// `reap`'s documented bound).
    pub verify_ms: u64,
    /// Targets of this run's first reading that were no longer targets when it read the
    /// table again after waiting for the cleanup lock (another cleanup, a `watch` or a `reap`
    /// from cron, handled them, or they stopped leaking): not signalled.
    pub already_handled: Vec<i32>,
    pub summary: String,
}

impl crate::schema::Document for ReapReport {
    const SCHEMA: &'static str = "headroom.reap/3";
    const TYPE: Option<&'static str> = Some("reap");
}

impl ReapReport {
    pub fn new(
        snap: &Snapshot,
        reading: &Reading,
        sel: &Selection,
        dry_run: bool,
        policy: &Policy,
        grace: std::time::Duration,
    ) -> Self {
        Self {
            at: format_ms(snap.taken_at_ms),
            uid: snap.uid,
            dry_run,
            pressure: sel.pressure,
            usage: SlotReading::new(reading, None),
            policy: policy.clone(),
            grace_ms: grace.as_millis() as u64,
            parents: sel
                .decisions
                .iter()
                .map(|d| ParentReport {
                    pid: d.pid,
                    name: d.name.clone(),
                    exe: d.exe.clone(),
                    zombies: d.zombies,
                    verdict: d.verdict,
                    reason: d.reason,
                    session_children: d.session.children.clone(),
                    session: d.session_verdict,
                    cpu_idle_seconds: d.session.cpu_idle_s.map(f64::round),
                    log_age_seconds: d.session.log_age_s.map(f64::round),
                    session_blind: d.session.blind,
                    override_: d.override_,
                })
                .collect(),
            targets: Vec::new(),
            slots_freed: 0,
            verify_ms: 0,
            already_handled: Vec::new(),
            summary: String::new(),
        }
    }
}

/// The evidence rows of a cleanup stamped `at`: one per target, or one `cleanup,no-targets`
/// row. The reading's columns are those of the decision (no forecast: the pre-cleanup curve
/// says nothing about after it).
pub(crate) fn evidence_rows(
    reading: &Reading,
    selection: &Selection,
    report: &ReapReport,
    at: String,
) -> Vec<Row> {
    let mut base = Row::poll(reading, None);
    base.reading.at = at;
    if report.targets.is_empty() {
        let unreadable = selection.skipped_for(SkipReason::SessionSignalUnavailable);
        let result = if unreadable > 0 {
            format!("no-targets;unreadable={unreadable}")
        } else {
            "no-targets".into()
        };
        let top = selection.decisions.first();
        return vec![Row {
            action: "cleanup".into(),
            result,
            top_parent: top.map(|d| (d.pid, d.name.clone(), d.zombies)),
            session_signal: top.map(|d| d.session.signal_text()).unwrap_or_default(),
            ..base
        }];
    }
    report
        .targets
        .iter()
        .map(|t| {
            let mut result = format!(
                "{};reaped={};freed={};verified={}",
                t.outcome.as_str(),
                t.zombies_reaped,
                t.zombies_reaped + u64::from(t.outcome.ended()),
                t.verified
            );
            if let Some(h) = &t.held_by {
                let _ = write!(result, ";left={};held_by={}", t.zombies_left, h.pid);
            }
            Row {
                action: format!("kill:{}", t.signal_list),
                result,
                top_parent: Some((t.pid, t.name.clone(), t.zombies_before)),
                session_signal: t.session_signal.clone(),
                override_: t.override_.map(str::to_string).unwrap_or_default(),
                ..base.clone()
            }
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests;
