//! Enforcing a `watch` memory guard on one breaching tree, like `run --limit`: park the idle
//! subtrees first (SIGSTOP; idle = under 2 % of a core over one second, at least 512 MiB, not
//! the tree's group or session leader), re-sample after a second; still over, SIGTERM the
//! tree (continuing what is stopped so it can act on it), wait the grace, SIGKILL what is
//! left. Every member passes `core::parking::Guard` and every signal is identity-checked.
//! Subtrees parked to relief are remembered by `watch`, woken once the tree is back under
//! 90 % of its limit, and woken at exit: never left stopped.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::actions::park::signal_each;
use crate::actions::terminate::{KILL_SETTLE, Sleeper};
use crate::core::idle::{CpuHistory, IDLE_WINDOW_MS, Leaders, PARK_MIN_BYTES, idle_subtrees};
use crate::core::memory::{effective_limit, tree_footprint};
use crate::core::memory_guard::Breach;
use crate::core::parking::Guard;
use crate::core::snapshot::{Detail, Identity, ProcessTable, Snapshot};
use crate::core::top::tree_at;
use crate::platform::{ProcessControl, ProcessSource, Signal};

/// How the tree ended up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GuardOutcome {
    /// Parking idle subtrees brought it under the limit.
    Parked,
    /// It ended after SIGTERM.
    Sigterm,
    /// It needed SIGKILL.
    Sigkill,
    /// Members were still alive after SIGKILL.
    Survived,
    /// It was gone (or under the limit) by the time headroom acted.
    Gone,
}

#[derive(Debug, Clone, Serialize)]
pub struct GuardReport {
    #[serde(flatten)]
    pub breach: Breach,
    pub outcome: GuardOutcome,
    /// Processes stopped while parking.
    pub parked: Vec<i32>,
    /// Processes sent SIGTERM.
    pub terminated: Vec<i32>,
    #[serde(skip)]
    pub parked_ids: Vec<Identity>,
}

fn members(snap: &Snapshot, root: i32) -> Vec<crate::core::snapshot::ProcessRecord> {
    let table = ProcessTable::new(snap);
    tree_at(&table, root, snap.uid, snap.self_pid)
        .map(|t| t.members.into_iter().cloned().collect())
        .unwrap_or_default()
}

fn footprint(snap: &Snapshot, root: i32) -> u64 {
    let m = members(snap, root);
    tree_footprint(&m.iter().collect::<Vec<_>>()).0
}

fn free_pct(snap: &Snapshot) -> Option<f64> {
    snap.memory.map(|m| m.free_pct())
}

/// Enforce `breach`, found in `a` (full detail, the first CPU sample); `grace` is the wait
/// between SIGTERM and SIGKILL.
pub fn enforce(
    source: &dyn ProcessSource,
    control: &dyn ProcessControl,
    a: &Snapshot,
    breach: Breach,
    grace: Duration,
    clock: &dyn Sleeper,
) -> Result<GuardReport> {
    let read = || {
        source
            .snapshot(Detail::Full)
            .context("cannot read the process table")
    };
    let mut report = GuardReport {
        breach,
        outcome: GuardOutcome::Gone,
        parked: vec![],
        terminated: vec![],
        parked_ids: vec![],
    };
    let root = report.breach.root;
    // Two samples a second apart tell which subtrees are idle.
    let start = Instant::now();
    let mut cpu = CpuHistory::default();
    let ma = members(a, root);
    cpu.record(0, &ma.iter().collect::<Vec<_>>());
    clock.sleep(Duration::from_millis(IDLE_WINDOW_MS));
    let b = read()?;
    let mb = members(&b, root);
    if mb.is_empty() {
        return Ok(report);
    }
    let refs: Vec<_> = mb.iter().collect();
    cpu.record(
        start.elapsed().as_millis().max(u128::from(IDLE_WINDOW_MS)) as u64,
        &refs,
    );
    let guard = Guard::new(&ProcessTable::new(&b));
    // The root itself is the tree's head, protected whether or not it leads its group.
    let leaders = Leaders {
        pgid: root,
        sid: mb[0].sid,
    };
    let allowed = |id: &Identity| {
        refs.iter()
            .any(|m| m.pid == id.pid && guard.check(m).is_ok())
    };
    let idle = idle_subtrees(&refs, &leaders, &cpu, PARK_MIN_BYTES);
    let stop: Vec<Identity> = idle
        .iter()
        .flat_map(|s| s.targets.iter().copied())
        .filter(allowed)
        .collect();
    if !stop.is_empty() {
        for (id, r) in signal_each(control, &stop, Signal::Stop) {
            if matches!(r, Ok(crate::platform::Delivery::Sent)) {
                report.parked.push(id.pid);
                report.parked_ids.push(id);
            }
        }
        clock.sleep(Duration::from_secs(1));
        let c = read()?;
        let limit = effective_limit(report.breach.limit_bytes, free_pct(&c));
        if footprint(&c, root) < limit {
            report.outcome = GuardOutcome::Parked;
            return Ok(report);
        }
    }
    // Still over: end the tree.
    let now = read()?;
    let live: Vec<Identity> = members(&now, root)
        .iter()
        .filter(|m| !m.is_zombie() && guard.check(m).is_ok())
        .filter_map(|m| m.identity())
        .collect();
    if live.is_empty() {
        return Ok(report);
    }
    for (id, r) in signal_each(control, &live, Signal::Term) {
        if matches!(r, Ok(crate::platform::Delivery::Sent)) {
            report.terminated.push(id.pid);
        }
    }
    // Stopped members act on SIGTERM only once continued.
    let _ = signal_each(control, &report.parked_ids, Signal::Cont);
    report.parked_ids.clear();
    // Who of `ids` is still alive once all are gone or `limit` has passed (unreadable
    // counts as alive), polled every 50 ms.
    let wait_left = |ids: &[Identity], limit: Duration| {
        let step = Duration::from_millis(50);
        let mut waited = Duration::ZERO;
        loop {
            let left: Vec<Identity> = ids
                .iter()
                .filter(|id| control.alive(id).unwrap_or(true))
                .copied()
                .collect();
            if left.is_empty() || waited >= limit {
                return left;
            }
            clock.sleep(step);
            waited += step;
        }
    };
    let left = wait_left(&live, grace);
    if left.is_empty() {
        report.outcome = GuardOutcome::Sigterm;
        return Ok(report);
    }
    let _ = signal_each(control, &left, Signal::Kill);
    report.outcome = if wait_left(&left, KILL_SETTLE).is_empty() {
        GuardOutcome::Sigkill
    } else {
        GuardOutcome::Survived
    };
    Ok(report)
}

/// Continue parked processes, leaves first (the reverse of the order they were stopped in).
pub fn wake(control: &dyn ProcessControl, parked: &[Identity]) {
    let rev: Vec<Identity> = parked.iter().rev().copied().collect();
    let _ = signal_each(control, &rev, Signal::Cont);
}
