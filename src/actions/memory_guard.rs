//! Enforcing a `watch` memory guard on one breaching tree, like `run --limit`: park the idle
//! subtrees first (SIGSTOP; idle = under 2 % of a core over one second, at least 512 MiB, no
//! session or group leader inside, not the root), re-sample after a second; still over,
//! SIGTERM the tree (continuing what is stopped so it can act on it), wait the grace, and
//! SIGKILL the grace survivors only if they are still over the limit. The escalation is
//! `actions::escalate`'s.
//!
//! The breach names the root's identity (pid, start time, uid). Before every step (park,
//! SIGTERM) the tree is read again: the root must still be that process and still match the
//! guard's pattern (a pid handed to another process is not the guarded tree), and the tree
//! must still be over its pressure-aware limit (a spike that has passed is not ended). The
//! footprint reported with the action is the one read just before it.
//!
//! Parked subtrees are remembered by `watch` as a `ParkedTree` and re-judged every round
//! (`rejudge`): woken once the tree is under 90 % of its limit, or its root is gone or
//! changed; ended when the tree is over its limit again (it breaches, and `enforce` gets the
//! parked members so they are continued with their SIGTERM). `watch` wakes whatever is still
//! parked when it exits. A one-shot round (`watch --once`) does not park at all.

use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::actions::escalate::{self, Clock, Escalation, Outcome, Settings};
use crate::actions::park::signal_each;
use crate::core::idle::{CpuHistory, IDLE_WINDOW_MS, Leaders, PARK_MIN_BYTES, idle_subtrees};
use crate::core::memory::{effective_limit, tree_footprint};
use crate::core::memory_guard::{Breach, matches};
use crate::core::parking::ParkPermission;
use crate::core::proc_tree::tree_at;
use crate::core::snapshot::{Detail, Identity, ProcessRecord, ProcessTable, Snapshot};
use crate::platform::{Delivery, ProcessControl, ProcessSource, Signal};

/// After parking, look again this much later.
const RELIEF_WAIT: Duration = Duration::from_secs(1);
/// A parked tree is woken once under this fraction of its effective limit.
const WAKE_BELOW: f64 = 0.9;

/// How the tree ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum GuardOutcome {
    /// Parking idle subtrees brought it under the limit.
    Parked,
    /// It ended after SIGTERM.
    Sigterm,
    /// It needed SIGKILL.
    Sigkill,
    /// Members were still alive after SIGKILL (or a signal could not be sent).
    Survived,
    /// SIGTERM was sent; the survivors of the grace were under the limit, so no SIGKILL.
    Spared,
    /// Under its limit again when re-read: nothing was done.
    UnderLimit,
    /// The root is gone, or its pid now names another process, or it no longer matches the
    /// pattern: nothing was done.
    RootChanged,
    /// Every member was gone by the time SIGTERM was to be sent.
    Gone,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GuardReport {
    /// When the last step was taken (the last signal sent, or the re-read that decided
    /// nothing was to be done), RFC 3339 UTC.
    pub at: String,
    #[serde(flatten)]
    pub breach: Breach,
    pub outcome: GuardOutcome,
    /// The footprint and effective limit read just before the last step taken (or the
    /// reason nothing was done): what was true when headroom acted.
    pub acted_footprint_bytes: Option<u64>,
    pub acted_effective_bytes: Option<u64>,
    /// Processes stopped while parking.
    pub parked: Vec<i32>,
    /// Processes sent SIGTERM / SIGKILL; grace survivors spared because under the limit.
    pub terminated: Vec<i32>,
    pub killed: Vec<i32>,
    pub spared: Vec<i32>,
    /// Why nothing (more) was done, when that is not obvious from the outcome.
    pub note: Option<String>,
    /// Every process of the tree still parked (this round's and earlier rounds').
    #[serde(skip)]
    pub parked_ids: Vec<Identity>,
}

/// A tree `watch` parked to relief and must wake or end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkedTree {
    pub root: Identity,
    pub pattern: String,
    pub limit_bytes: u64,
    pub ids: Vec<Identity>,
}

/// What to do with a parked tree this round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejudge {
    /// Under 90 % of its limit, or its root is gone or changed: continue the parked.
    Wake,
    /// Between 90 % and the limit: stays parked.
    Keep,
    /// At or over its limit: enforce again (it is among the round's breaches).
    Enforce,
}

/// How `enforce` may act.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Park idle subtrees before ending anything (not in a one-shot round, whose exit would
    /// wake them at once).
    pub park: bool,
    /// Members parked in earlier rounds: continued with their SIGTERM, or still parked.
    pub parked_before: Vec<Identity>,
}

/// The guarded tree as `snap` shows it.
struct Sample {
    members: Vec<ProcessRecord>,
    footprint: u64,
    effective: u64,
}

/// The tree of `root` in `snap`, if the root is still that process and still matches
/// `pattern`; else why not.
fn sample(snap: &Snapshot, root: &Identity, pattern: &str, limit: u64) -> Result<Sample, String> {
    let table = ProcessTable::new(snap);
    let Some(r) = table.get(root.pid) else {
        return Err(format!("root pid `{}` has exited", root.pid));
    };
    if r.identity() != Some(*root) || r.is_zombie() {
        return Err(format!(
            "pid `{}` is no longer the guarded process (start time or uid changed, or it exited)",
            root.pid
        ));
    }
    if !matches(pattern, r) {
        return Err(format!(
            "pid `{}` (`{}`) no longer matches the pattern `{pattern}`",
            root.pid, r.name
        ));
    }
    let members: Vec<ProcessRecord> = tree_at(&table, root.pid, snap.uid, snap.self_pid)
        .map(|t| t.members.into_iter().cloned().collect())
        .unwrap_or_default();
    let footprint = tree_footprint(&members.iter().collect::<Vec<_>>()).0;
    Ok(Sample {
        members,
        footprint,
        effective: effective_limit(limit, snap.memory.map(|m| m.free_pct())),
    })
}

/// Re-judge a parked tree against this round's snapshot.
pub fn rejudge(snap: &Snapshot, p: &ParkedTree) -> Rejudge {
    match sample(snap, &p.root, &p.pattern, p.limit_bytes) {
        Err(_) => Rejudge::Wake,
        Ok(s) if s.footprint >= s.effective => Rejudge::Enforce,
        Ok(s) if (s.footprint as f64) < WAKE_BELOW * s.effective as f64 => Rejudge::Wake,
        Ok(_) => Rejudge::Keep,
    }
}

/// Enforce `breach`, found in `a` (full detail, the first CPU sample); `grace` is the wait
/// between SIGTERM and SIGKILL. Nothing this call stopped is left stopped unless it is
/// returned in `parked_ids` (a read failing after parking wakes what it parked; a root that
/// changed wakes every parked member of its tree).
pub fn enforce(
    source: &dyn ProcessSource,
    control: &dyn ProcessControl,
    a: &Snapshot,
    breach: Breach,
    grace: Duration,
    clock: &dyn Clock,
    opts: &Options,
) -> Result<GuardReport> {
    let mut report = GuardReport {
        at: String::new(),
        breach,
        outcome: GuardOutcome::RootChanged,
        acted_footprint_bytes: None,
        acted_effective_bytes: None,
        parked: vec![],
        terminated: vec![],
        killed: vec![],
        spared: vec![],
        note: None,
        parked_ids: opts.parked_before.clone(),
    };
    let before = opts.parked_before.len();
    if let Err(e) = steps(source, control, a, grace, clock, opts, &mut report) {
        wake(control, report.parked_ids.get(before..).unwrap_or_default());
        return Err(e);
    }
    if report.outcome == GuardOutcome::RootChanged {
        wake(control, &std::mem::take(&mut report.parked_ids));
    }
    // Right after the last step (a signal, or the re-read that decided against one): when
    // this report happened, not when `watch` prints it.
    report.at = crate::core::time::format_ms(crate::platform::now_ms());
    Ok(report)
}

fn steps(
    source: &dyn ProcessSource,
    control: &dyn ProcessControl,
    a: &Snapshot,
    grace: Duration,
    clock: &dyn Clock,
    opts: &Options,
    report: &mut GuardReport,
) -> Result<()> {
    let read = || {
        source
            .snapshot(Detail::Full)
            .context("cannot read the process table")
    };
    let Some(root) = report.breach.identity else {
        report.note = Some(format!(
            "the start time of pid `{}` was not read, so its identity cannot be checked; \
             nothing was signalled",
            report.breach.root
        ));
        return Ok(());
    };
    let pattern = report.breach.pattern.clone();
    let limit = report.breach.limit_bytes;
    let now_of = |snap: &Snapshot, report: &mut GuardReport| -> Option<Sample> {
        match sample(snap, &root, &pattern, limit) {
            Ok(s) => {
                report.acted_footprint_bytes = Some(s.footprint);
                report.acted_effective_bytes = Some(s.effective);
                Some(s)
            }
            Err(why) => {
                report.outcome = GuardOutcome::RootChanged;
                report.note = Some(why);
                None
            }
        }
    };
    let Some(sa) = now_of(a, report) else {
        return Ok(());
    };
    // Two samples a second apart tell which subtrees are idle.
    let start = clock.now();
    let mut cpu = CpuHistory::default();
    if opts.park {
        cpu.record(0, &sa.members.iter().collect::<Vec<_>>());
        clock.sleep(Duration::from_millis(IDLE_WINDOW_MS));
    }
    // Re-sampled before any step: the breach may have been a spike that has passed.
    let b = read()?;
    let Some(mut current) = now_of(&b, report) else {
        return Ok(());
    };
    if current.footprint < current.effective {
        report.outcome = GuardOutcome::UnderLimit;
        return Ok(());
    }
    let permission = ParkPermission::new(&ProcessTable::new(&b));
    if opts.park {
        let refs: Vec<&ProcessRecord> = current.members.iter().collect();
        let elapsed = clock.now().saturating_duration_since(start).as_millis();
        cpu.record(
            u64::try_from(elapsed)
                .unwrap_or(u64::MAX)
                .max(IDLE_WINDOW_MS),
            &refs,
        );
        // The root heads the tree: protected whether or not it leads its group.
        let leaders = Leaders {
            pgid: root.pid,
            sid: current.members.first().and_then(|m| m.sid),
        };
        let allowed = |id: &Identity| {
            refs.iter()
                .any(|m| m.pid == id.pid && permission.check(m).is_ok())
        };
        let stop: Vec<Identity> = idle_subtrees(&refs, &leaders, &cpu, PARK_MIN_BYTES)
            .iter()
            .flat_map(|s| s.targets.iter().copied())
            .filter(allowed)
            .collect();
        for (id, r) in signal_each(control, &stop, Signal::Stop) {
            if matches!(r, Ok(Delivery::Sent)) {
                report.parked.push(id.pid);
                report.parked_ids.push(id);
            }
        }
        if !report.parked.is_empty() {
            clock.sleep(RELIEF_WAIT);
            let c = read()?;
            match now_of(&c, report) {
                Some(s) if s.footprint < s.effective => {
                    report.outcome = GuardOutcome::Parked;
                    return Ok(());
                }
                Some(s) => current = s,
                // Not the guarded tree any more: `enforce` wakes what was parked.
                None => return Ok(()),
            }
        }
    }
    // Still over, as just read: end the tree.
    let live: Vec<Identity> = current
        .members
        .iter()
        .filter(|m| !m.is_zombie() && permission.check(m).is_ok())
        .filter_map(ProcessRecord::identity)
        .collect();
    let stopped: Vec<Identity> = current
        .members
        .iter()
        .filter(|m| m.state == crate::core::snapshot::ProcState::Stopped)
        .filter_map(ProcessRecord::identity)
        .chain(report.parked_ids.iter().copied())
        .collect();
    let esc = Escalation::new(&live, Settings::with_grace(grace)).continue_after_term(&stopped);
    // SIGKILL only the grace survivors, and only if they are still over the limit.
    let mut gate_note = None;
    let mut gate = |survivors: &[Identity]| -> Vec<Identity> {
        let snap = match read() {
            Ok(s) => s,
            Err(e) => {
                gate_note = Some(format!("{e:#}: the survivors were not SIGKILLed"));
                return Vec::new();
            }
        };
        let held: u64 = snap
            .processes
            .iter()
            .filter(|p| p.identity().is_some_and(|id| survivors.contains(&id)))
            .filter_map(|p| p.footprint_bytes)
            .sum();
        let effective = effective_limit(limit, snap.memory.map(|m| m.free_pct()));
        if held >= effective {
            survivors.to_vec()
        } else {
            gate_note = Some(format!(
                "the grace survivors held {held} bytes, under the {effective}-byte limit: \
                 not SIGKILLed"
            ));
            Vec::new()
        }
    };
    let ended = escalate::run_escalation(control, esc, clock, &mut gate);
    report.note = gate_note;
    report.parked_ids.clear();
    for e in &ended {
        if e.signals.contains(&Signal::Term) {
            report.terminated.push(e.identity.pid);
        }
        if e.signals.contains(&Signal::Kill) {
            report.killed.push(e.identity.pid);
        }
        if e.outcome == Outcome::Spared {
            report.spared.push(e.identity.pid);
        }
    }
    let any = |o: &[Outcome]| ended.iter().any(|e| o.contains(&e.outcome));
    report.outcome = if any(&[Outcome::Survived, Outcome::SignalFailed]) {
        GuardOutcome::Survived
    } else if any(&[Outcome::Spared]) {
        GuardOutcome::Spared
    } else if any(&[Outcome::Killed]) {
        GuardOutcome::Sigkill
    } else if report.terminated.is_empty() {
        GuardOutcome::Gone
    } else {
        GuardOutcome::Sigterm
    };
    Ok(())
}

/// Continue parked processes, leaves first (the reverse of the order they were stopped in).
pub fn wake(control: &dyn ProcessControl, parked: &[Identity]) {
    let rev: Vec<Identity> = parked.iter().rev().copied().collect();
    let _ = signal_each(control, &rev, Signal::Cont);
}

#[cfg(test)]
mod tests;
