//! The `headroom.reap/1` report and its human rendering (the decision table is always shown).

use std::fmt::Write as _;

use serde::Serialize;

use crate::actions::terminate::{Outcome, Termination};
use crate::commands::probe::rfc3339_ms;
use crate::commands::reap::{ReapPlan, usage_report};
use crate::core::limits::LimitSource;
use crate::core::liveness::SessionVerdict;
use crate::core::policy::{Decision, Policy, Selection, SkipReason, Verdict};
use crate::core::reading::Reading;
use crate::core::snapshot::Snapshot;
use crate::output::{Printer, Style, human_duration, schema, thousands};
use crate::platform::Signal;
use crate::sanitize::sanitize;

#[derive(Debug, Clone, Serialize)]
pub struct UsageReport {
    pub used: u64,
    pub processes: u64,
    pub zombies: u64,
    pub limit: Option<u64>,
    pub limit_source: Option<LimitSource>,
    pub usage_pct: Option<f64>,
    pub free_slots: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ParentReport {
    pub pid: i32,
    pub name: String,
    pub exe: Option<String>,
    pub zombies: u64,
    pub verdict: Verdict,
    pub reason: Option<SkipReason>,
    pub session_children: Vec<i32>,
    pub session: SessionVerdict,
    pub cpu_idle_seconds: Option<f64>,
    pub log_age_seconds: Option<f64>,
    #[serde(rename = "override")]
    pub override_: Option<&'static str>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TargetReport {
    pub pid: i32,
    pub name: String,
    pub outcome: Outcome,
    pub signals: Vec<Signal>,
    pub zombies_before: u64,
    pub zombies_reaped: u64,
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
    pub fn new(d: &Decision, t: &Termination, zombies_before: u64) -> Self {
        Self {
            pid: d.pid,
            name: d.name.clone(),
            outcome: t.outcome,
            signals: t.signals.clone(),
            zombies_before,
            zombies_reaped: 0,
            verified: false,
            override_: d.override_,
            error: t.error.clone(),
            signal_list: t.signal_list(),
            session_signal: d.session.signal_text(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ReapReport {
    pub schema: String,
    pub at: String,
    pub uid: u32,
    pub dry_run: bool,
    /// The emergency trigger fired: free slots at or below its threshold.
    pub pressure: bool,
    pub usage: UsageReport,
    pub policy: Policy,
    pub grace_ms: u64,
    pub parents: Vec<ParentReport>,
    pub targets: Vec<TargetReport>,
    pub slots_freed: u64,
    pub summary: String,
}

impl ReapReport {
    pub fn new(snap: &Snapshot, reading: &Reading, sel: &Selection, plan: &ReapPlan) -> Self {
        Self {
            schema: schema("reap"),
            at: rfc3339_ms(snap.taken_at_ms),
            uid: snap.uid,
            dry_run: plan.dry_run,
            pressure: sel.pressure,
            usage: usage_report(reading),
            policy: plan.policy.clone(),
            grace_ms: plan.grace.as_millis() as u64,
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
                    override_: d.override_,
                })
                .collect(),
            targets: Vec::new(),
            slots_freed: 0,
            summary: String::new(),
        }
    }

    /// The decision table: every parent holding zombies, its verdict and the named reason.
    pub fn human_table(&self, p: &Printer) -> String {
        let mut s = String::new();
        let u = &self.usage;
        let limit = match (u.limit, u.limit_source, u.usage_pct) {
            (Some(l), Some(src), Some(pct)) => format!("{pct:.1} % of {} ({src})", thousands(l)),
            _ => "limit unknown".to_string(),
        };
        let total: u64 = self.parents.iter().map(|x| x.zombies).sum();
        let _ = writeln!(
            s,
            "{}: {} parents hold {} zombies of uid {}; {} slots used, {limit}{}",
            p.paint("headroom reap", Style::Bold),
            self.parents.len(),
            thousands(total),
            self.uid,
            thousands(u.used),
            if self.pressure {
                " — AT THE WALL (emergency override armed)"
            } else {
                ""
            }
        );
        if self.parents.is_empty() {
            return s;
        }
        let _ = writeln!(
            s,
            "  {:>8} {:>8}  {:<8} {:<28} {:>9} {:>9}  NAME",
            "PID", "ZOMBIES", "VERDICT", "REASON", "CPU IDLE", "LOG AGE"
        );
        let dur = |v: Option<f64>, has: bool| {
            if !has {
                "-".to_string()
            } else {
                v.map_or("unknown".into(), human_duration)
            }
        };
        for x in &self.parents {
            let verdict = match x.verdict {
                Verdict::Target => p.paint("target", Style::Red),
                Verdict::Skipped => "skipped".to_string(),
            };
            let pad = if x.verdict == Verdict::Target {
                8 + verdict.len() - "target".len()
            } else {
                8
            };
            let reason = match (x.reason, x.override_) {
                (Some(r), _) => r.as_str().to_string(),
                (None, Some(o)) => format!("override: {o}"),
                (None, None) => String::new(),
            };
            let has = !x.session_children.is_empty();
            let _ = writeln!(
                s,
                "  {:>8} {:>8}  {verdict:<pad$} {reason:<28} {:>9} {:>9}  {}",
                x.pid,
                thousands(x.zombies),
                dur(x.cpu_idle_seconds, has),
                dur(x.log_age_seconds, has),
                sanitize(&x.name)
            );
        }
        s
    }

    /// What was done, then the one-line summary.
    pub fn human_results(&self) -> String {
        let mut s = String::new();
        for t in &self.targets {
            let signals: Vec<&str> = t.signals.iter().map(|x| x.name()).collect();
            let _ = writeln!(
                s,
                "  {} ({}): {} [{}]; {} of {} zombies reaped{}{}",
                t.pid,
                sanitize(&t.name),
                t.outcome.as_str(),
                if signals.is_empty() {
                    "no signal".to_string()
                } else {
                    signals.join(", ")
                },
                thousands(t.zombies_reaped),
                thousands(t.zombies_before),
                if t.verified {
                    ", verified"
                } else {
                    ", NOT verified"
                },
                if t.override_.is_some() {
                    " (emergency override)"
                } else {
                    ""
                },
            );
        }
        if self.dry_run {
            let _ = writeln!(s, "dry run: nothing was signalled.");
        }
        let _ = writeln!(s, "{}", self.summary);
        s
    }
}

/// The run summary. "No candidates" has two meanings, kept apart: everything was read and is
/// working, or some parents could not be read at all (a degraded state, not a clean bill).
pub fn summary(r: &ReapReport, sel: &Selection) -> String {
    let prefix = if sel.used_override() {
        "Emergency cleanup: "
    } else {
        ""
    };
    let unreadable = sel.skipped_for(SkipReason::SessionSignalUnavailable);
    if r.dry_run {
        let n = sel.targets().count();
        return match (n, unreadable) {
            (0, 0) => "No candidates for cleanup.".into(),
            (0, u) => format!("No candidates: {u} parents' session signals are unreadable."),
            (n, _) => format!("{prefix}{n} parents would be terminated."),
        };
    }
    if r.targets.is_empty() {
        return match unreadable {
            0 => "No candidates for cleanup.".into(),
            u => format!("No candidates: {u} parents' session signals are unreadable."),
        };
    }
    let reaped: u64 = r.targets.iter().map(|t| t.zombies_reaped).sum();
    if reaped == 0 {
        let before: u64 = r.targets.iter().map(|t| t.zombies_before).sum();
        return format!(
            "{prefix}Cleanup without effect: zombie count unchanged ({}).",
            thousands(before)
        );
    }
    format!(
        "{prefix}{} zombies reaped, {} slots freed.",
        thousands(reaped),
        thousands(r.slots_freed)
    )
}
