//! The run's one-line summary: what was ended and freed, or why nothing was ("no
//! candidates" kept apart from "some parents could not be read").

use std::fmt::Write as _;

use super::{ReapReport, TargetReport, VERIFY_BOUND};
use crate::core::policy::{Selection, SkipReason};
use crate::output::{human_duration, plural, thousands};
use crate::sanitize::sanitize;

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
pub(crate) fn summary(r: &ReapReport, sel: &Selection) -> String {
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
