//! The `headroom.reap/3` report and its human rendering (the decision table is always shown).

use std::fmt::Write as _;

use serde::Serialize;

use crate::actions::terminate::{Termination, TerminationOutcome};
use crate::core::liveness::{Blind, SessionVerdict};
use crate::core::policy::{Decision, Policy, Selection, SkipReason, Verdict};
use crate::core::reading::Reading;
use crate::core::slot_reading::SlotReading;
use crate::core::snapshot::Snapshot;
use crate::core::time::format_ms;
use crate::output::{Printer, Style, human_duration, plural, thousands};
use crate::platform::Signal;
use crate::sanitize::sanitize;
use crate::store::evidence::Row;

/// The longest `reap`'s verification waits for an inheritor to reap the zombies of the
/// parents it ended (`reap_verify`). launchd and most inits reap at once; a container's pid 1
/// or a busy subreaper may take seconds (1.4 s was measured where a fixed one-second window
/// called a working cleanup a failure).
pub const VERIFY_BOUND: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ParentReport {
    pub pid: i32,
    pub name: String,
    pub exe: Option<String>,
    pub zombies: u64,
    pub verdict: Verdict,
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
pub struct Holder {
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
    pub held_by: Option<Holder>,
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
    pub fn new(d: &Decision, t: &Termination, zombies_before: u64) -> Self {
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
    pub fn stood_down(&self) -> bool {
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
            "{}: {} {} of uid {}; {} used, {limit}{}",
            p.paint("headroom reap", Style::Bold),
            crate::output::plural_verb(self.parents.len() as u64, "parent", "holds", "hold"),
            plural(total, "zombie"),
            self.uid,
            plural(u.used, "slot"),
            if self.pressure {
                " — AT THE WALL (emergency override armed)"
            } else {
                ""
            }
        );
        let width = crate::platform::screen_width();
        if self.parents.is_empty() {
            return match width {
                Some(w) => crate::output::screen::wrap_all(&s, w),
                None => s,
            };
        }
        // Narrow: CPU IDLE and LOG AGE go (the reason says which signal decided) and NAME
        // comes before the reason, which is cut to what is left of the line.
        let narrow = width.is_some_and(|w| w < 100);
        if narrow {
            let _ = writeln!(
                s,
                "  {:>8} {:>8}  {:<8} {:<14} REASON",
                "PID", "ZOMBIES", "VERDICT", "NAME"
            );
        } else {
            let _ = writeln!(
                s,
                "  {:>8} {:>8}  {:<8} {:<28} {:>9} {:>9}  NAME",
                "PID", "ZOMBIES", "VERDICT", "REASON", "CPU IDLE", "LOG AGE"
            );
        }
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
                (Some(r), _) => match x.session_blind.filter(|_| r.is_blind()) {
                    Some(b) => format!("{} ({})", r.as_str(), b.describe()),
                    None => r.as_str().to_string(),
                },
                (None, Some(o)) => format!("override: {o}"),
                (None, None) => String::new(),
            };
            let has = !x.session_children.is_empty();
            if narrow {
                let name: String = sanitize(&x.name).chars().take(14).collect();
                let _ = writeln!(
                    s,
                    "  {:>8} {:>8}  {verdict:<pad$} {name:<14} {reason}",
                    x.pid,
                    thousands(x.zombies),
                );
                continue;
            }
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
        match width {
            // The summary above the table is prose, wrapped; the rows are cut.
            Some(w) => s
                .lines()
                .enumerate()
                .map(|(i, l)| match i {
                    0 => crate::output::screen::wrap(l, w, 2).join("\n") + "\n",
                    _ => crate::output::screen::cut(l, w) + "\n",
                })
                .collect(),
            None => s,
        }
    }

    /// What was done, then the one-line summary.
    pub fn human_results(&self) -> String {
        let mut s = String::new();
        for t in &self.targets {
            let signals: Vec<&str> = t.signals.iter().map(|x| x.name()).collect();
            let _ = writeln!(
                s,
                "  {} ({}): {} [{}]; {} of {} reaped{}{}",
                t.pid,
                sanitize(&t.name),
                t.outcome.as_str(),
                if signals.is_empty() {
                    "no signal".to_string()
                } else {
                    signals.join(", ")
                },
                thousands(t.zombies_reaped),
                plural(t.zombies_before, "zombie"),
                match (&t.held_by, t.verified, t.stood_down()) {
                    (_, true, _) => ", verified".to_string(),
                    (_, _, true) => ", not ended: no longer a target at its signal".to_string(),
                    (Some(h), ..) => format!(
                        ", NOT verified: {} held by pid {} ({})",
                        thousands(t.zombies_left),
                        h.pid,
                        sanitize(&h.name)
                    ),
                    (None, ..) => ", NOT verified".to_string(),
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

/// "No candidates: 1 parent's session signals are unreadable." (or `N parents'`).
fn unreadable_signals(u: usize) -> String {
    let whose = if u == 1 {
        "1 parent's".to_string()
    } else {
        format!("{} parents'", thousands(u as u64))
    };
    format!("No candidates: {whose} session signals are unreadable.")
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
            (0, u) => unreadable_signals(u),
            (n, _) => format!(
                "{prefix}{} would be terminated.",
                plural(n as u64, "parent")
            ),
        };
    }
    if r.targets.is_empty() && !r.already_handled.is_empty() {
        let pids: Vec<String> = r.already_handled.iter().map(i32::to_string).collect();
        return format!(
            "Already handled while this one waited for another cleanup: pid {} no longer a \
             target when the table was read again.",
            pids.join(", ")
        );
    }
    if r.targets.is_empty() {
        return match unreadable {
            0 => "No candidates for cleanup.".into(),
            u => unreadable_signals(u),
        };
    }
    let reaped: u64 = r.targets.iter().map(|t| t.zombies_reaped).sum();
    let held: Vec<&TargetReport> = r.targets.iter().filter(|t| t.held_by.is_some()).collect();
    let stood_down: Vec<i32> = r
        .targets
        .iter()
        .filter(|t| t.stood_down())
        .map(|t| t.pid)
        .collect();
    let mut s = if reaped > 0 {
        format!(
            "{prefix}{} reaped, {} freed.",
            plural(reaped, "zombie"),
            plural(r.slots_freed, "slot")
        )
    } else if !held.is_empty() {
        format!("{prefix}Parent ended, but no zombie was reaped yet.")
    } else if r.targets.iter().all(TargetReport::stood_down) {
        format!("{prefix}Nothing was ended.")
    } else {
        let before: u64 = r.targets.iter().map(|t| t.zombies_before).sum();
        format!(
            "{prefix}Cleanup without effect: zombie count unchanged ({}).",
            thousands(before)
        )
    };
    let waited = human_duration(VERIFY_BOUND.as_secs_f64());
    for t in &held {
        if let Some(h) = &t.held_by {
            let _ = write!(
                s,
                " {} of pid {} now belong to pid {} (`{}`), which has not reaped them within \
                 {waited}: their slots stay taken until it does.",
                plural(t.zombies_left, "zombie"),
                t.pid,
                h.pid,
                sanitize(&h.name)
            );
        }
    }
    if !stood_down.is_empty() {
        let pids: Vec<String> = stood_down.iter().map(i32::to_string).collect();
        let _ = write!(
            s,
            " Not ended: pid {} was no longer a target at its signal (gone by itself, or its \
             zombies reaped by itself).",
            pids.join(", ")
        );
    }
    s
}

/// The evidence rows of a cleanup stamped `at`: one per target, or one `cleanup,no-targets`
/// row. The reading's columns are those of the decision (no forecast: the pre-cleanup curve
/// says nothing about after it).
pub fn evidence_rows(
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
pub(crate) mod tests {
    use super::*;
    use crate::actions::terminate::Termination;
    use crate::core::emergency::Emergency;
    use crate::core::liveness::Session;
    use crate::core::patterns::{AllowDeny, Patterns};

    /// A target `agency` with no session (shared with `reap_verify`'s tests).
    pub(crate) fn decision(pid: i32, zombies: u64, override_: Option<&'static str>) -> Decision {
        Decision {
            pid,
            name: "agency".into(),
            exe: None,
            zombies,
            verdict: Verdict::Target,
            reason: None,
            session: Session::none(),
            session_verdict: SessionVerdict::NoSession,
            override_,
            identity: None,
        }
    }

    fn report(sel: &Selection, reaped: u64) -> ReapReport {
        let t = Termination {
            outcome: TerminationOutcome::Sigkill,
            signals: vec![Signal::Term, Signal::Kill],
            error: None,
        };
        let mut targets: Vec<TargetReport> = sel
            .targets()
            .map(|d| TargetReport::new(d, &t, d.zombies))
            .collect();
        for x in &mut targets {
            x.zombies_reaped = reaped;
            x.verified = reaped > 0;
        }
        ReapReport {
            at: String::new(),
            uid: 501,
            dry_run: false,
            pressure: sel.pressure,
            usage: crate::core::slot_reading::fixture::sample(),
            policy: Policy {
                allow_deny: AllowDeny {
                    allow: Patterns::new(["agency"]),
                    deny: Patterns::default(),
                },
                min_zombies: 100,
                max_targets: 10,
                spare_sessions: true,
                idle_threshold_s: 7200.0,
                emergency: Emergency::default(),
            },
            grace_ms: 2000,
            parents: vec![],
            targets,
            slots_freed: reaped + 1,
            verify_ms: 0,
            already_handled: vec![],
            summary: String::new(),
        }
    }

    #[test]
    fn e20_an_override_kill_is_labelled_everywhere() {
        let sel = Selection {
            decisions: vec![decision(28979, 526, Some("emergency"))],
            pressure: true,
            projected_used: 2139,
        };
        let r = report(&sel, 526);
        assert_eq!(r.targets[0].override_, Some("emergency"));
        assert!(
            summary(&r, &sel).starts_with("Emergency cleanup: 526 zombies reaped"),
            "{}",
            summary(&r, &sel)
        );
        let json = serde_json::to_value(&r.targets[0]).unwrap_or_default();
        assert_eq!(json["override"], "emergency");
    }

    #[test]
    fn e21_an_ordinary_reap_is_not_labelled() {
        let sel = Selection {
            decisions: vec![decision(15428, 318, None)],
            pressure: false,
            projected_used: 0,
        };
        let s = summary(&report(&sel, 318), &sel);
        assert_eq!(s, "318 zombies reaped, 319 slots freed.");
        assert!(!s.contains("Emergency"));
    }

    #[test]
    fn summaries_say_one_in_the_singular() {
        let sel = Selection {
            decisions: vec![decision(15428, 1, None)],
            pressure: false,
            projected_used: 0,
        };
        let mut r = report(&sel, 1);
        r.slots_freed = 1;
        assert_eq!(summary(&r, &sel), "1 zombie reaped, 1 slot freed.");
        r.slots_freed = 2;
        assert_eq!(summary(&r, &sel), "1 zombie reaped, 2 slots freed.");
        r.dry_run = true;
        assert_eq!(summary(&r, &sel), "1 parent would be terminated.");
    }

    #[test]
    fn no_effect_and_degraded_summaries_are_distinct() {
        let sel = Selection {
            decisions: vec![decision(1, 600, None)],
            pressure: false,
            projected_used: 0,
        };
        assert_eq!(
            summary(&report(&sel, 0), &sel),
            "Cleanup without effect: zombie count unchanged (600)."
        );
        let mut blind = decision(2, 900, None);
        blind.verdict = Verdict::Skipped;
        blind.reason = Some(SkipReason::SessionSignalUnavailable);
        let sel = Selection {
            decisions: vec![blind],
            pressure: false,
            projected_used: 0,
        };
        let r = report(&sel, 0);
        assert_eq!(
            summary(&r, &sel),
            "No candidates: 1 parent's session signals are unreadable."
        );
    }
}
