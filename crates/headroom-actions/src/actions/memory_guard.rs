//! Enforcing `watch`'s memory guards on a round's breaching trees, like `run --limit`: park
//! the idle subtrees first (SIGSTOP; idle = under 2 % of a core over one second, at least
//! 512 MiB, no session or group leader inside, not the root), re-sample after a second;
//! still over, SIGTERM the tree (continuing what is stopped so it can act on it), wait the
//! grace, and SIGKILL the grace survivors only if they are still over the limit. The
//! escalation is `actions::escalate`'s.
//!
//! All the round's breaching trees go through each step together (one pass): one idle
//! window, one re-read after it, one relief wait and re-read after parking, one escalation
//! with one grace, and one re-read for the kill gate, whatever the number of trees; a
//! one-shot round acts on the round's own table and reads again only for the gate. Each
//! signal is identity-checked once, by the signal path itself.
//!
//! The breach names the root's identity (pid, start time, uid). Before every step (park,
//! SIGTERM) the tree is judged on the newest table: the root must still be that process,
//! still match the guard's pattern (a pid handed to another process is not the guarded
//! tree) and still be one a guard may hold, its members are those `core::memory_guard::
//! Holding` allows (never a session leader, a shell at its prompt, headroom or an ancestor),
//! and the tree must still be over its pressure-aware limit (a spike that has passed is not
//! ended). The footprint reported with the action is the one read just before it.
//!
//! Parked subtrees are remembered by `watch` as a `ParkedTree` and re-judged every round
//! (`rejudge`): woken once the tree is under 90 % of its limit, or its root is gone or
//! changed; ended when the tree is over its limit again (it breaches, and `enforce` gets the
//! parked members so they are continued with their SIGTERM). `watch` wakes whatever is still
//! parked when it exits. A one-shot round (`watch --once`) does not park at all.

use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::actions::clock::Clock;
use crate::actions::park::signal_each;
use crate::core::idle::{CpuSamples, IDLE_WINDOW_MS, Leaders, PARK_MIN_BYTES, idle_subtrees};
use crate::core::memory::{effective_limit, tree_footprint};
use crate::core::memory_guard::{Breach, Holding, matches};
use crate::core::process_table::ProcessTable;
use crate::core::snapshot::{Detail, Identity, ProcessRecord, Snapshot};
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
#[schemars(rename = "GuardReport")]
pub struct MemoryGuardReport {
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
#[derive(Debug, Clone, Copy)]
pub struct EnforceOptions {
    /// Park idle subtrees before ending anything (not in a one-shot round, whose exit would
    /// wake them at once).
    pub park: bool,
    /// The wait between SIGTERM and SIGKILL.
    pub grace: Duration,
}

/// One breaching tree to enforce: the breach, and the members of its tree earlier rounds
/// parked (continued with their SIGTERM, or still parked).
#[derive(Debug, Clone)]
pub struct BreachingTree {
    pub breach: Breach,
    pub parked_before: Vec<Identity>,
}

/// The guarded tree as a table shows it.
struct GuardedTree {
    members: Vec<ProcessRecord>,
    footprint: u64,
    effective: u64,
}

/// The tree of `root` in `snap`, if the root is still that process, still matches
/// `pattern` and is still one a guard may hold; else why not.
fn sample(
    snap: &Snapshot,
    root: &Identity,
    pattern: &str,
    limit: u64,
) -> Result<GuardedTree, String> {
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
    let holding = Holding::new(&table);
    if let Some(why) = holding.refusal(r) {
        return Err(format!("{why}: a guard never holds it"));
    }
    let members: Vec<ProcessRecord> = holding
        .members(root.pid)
        .map(|m| m.into_iter().cloned().collect())
        .unwrap_or_default();
    let footprint = tree_footprint(&members.iter().collect::<Vec<_>>()).0;
    Ok(GuardedTree {
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

/// One tree through the pass: its report so far and, while it is still to be acted on, the
/// tree as last read.
struct Tree {
    report: MemoryGuardReport,
    /// `report.parked_ids[..before]` were parked in earlier rounds.
    before: usize,
    now: Option<GuardedTree>,
}

impl Tree {
    fn new(t: BreachingTree) -> Self {
        let before = t.parked_before.len();
        Self {
            report: MemoryGuardReport {
                at: String::new(),
                breach: t.breach,
                outcome: GuardOutcome::RootChanged,
                acted_footprint_bytes: None,
                acted_effective_bytes: None,
                parked: vec![],
                terminated: vec![],
                killed: vec![],
                spared: vec![],
                note: None,
                parked_ids: t.parked_before,
            },
            before,
            now: None,
        }
    }

    /// Judge the tree on `snap`: still the guarded one (then it is `now`), or why not.
    fn judge(&mut self, snap: &Snapshot) {
        let b = &self.report.breach;
        let Some(root) = b.identity else {
            self.report.note = Some(format!(
                "the start time of pid `{}` was not read, so its identity cannot be checked; \
                 nothing was signalled",
                b.root
            ));
            self.now = None;
            return;
        };
        match sample(snap, &root, &b.pattern, b.limit_bytes) {
            Ok(s) => {
                self.report.acted_footprint_bytes = Some(s.footprint);
                self.report.acted_effective_bytes = Some(s.effective);
                self.now = Some(s);
            }
            Err(why) => {
                self.report.outcome = GuardOutcome::RootChanged;
                self.report.note = Some(why);
                self.now = None;
            }
        }
    }

    /// Judge on `snap` a tree still to be acted on; one under its limit there is done with
    /// `under` (nothing more to do, or parking brought it there).
    fn rejudge(&mut self, snap: &Snapshot, under: GuardOutcome) {
        if self.now.is_none() {
            return;
        }
        self.judge(snap);
        if self.now.as_ref().is_some_and(|s| s.footprint < s.effective) {
            self.report.outcome = under;
            self.now = None;
        }
    }

    /// The members of the tree as last read, while it is still to be acted on.
    fn members(&self) -> &[ProcessRecord] {
        self.now.as_ref().map_or(&[], |s| s.members.as_slice())
    }
}

/// Enforce the round's breaching `targets`, found in `a` (full detail, the first CPU
/// sample): one report per target, in order. Nothing this call stopped is left stopped
/// unless it is returned in a report's `parked_ids` (a read failing after parking wakes
/// what this call parked; a root that changed wakes every parked member of its tree).
pub fn enforce(
    source: &dyn ProcessSource,
    control: &dyn ProcessControl,
    a: &Snapshot,
    targets: Vec<BreachingTree>,
    clock: &dyn Clock,
    opts: EnforceOptions,
) -> Result<Vec<MemoryGuardReport>> {
    let mut trees: Vec<Tree> = targets.into_iter().map(Tree::new).collect();
    if let Err(e) = pass(source, control, a, clock, opts, &mut trees) {
        for t in &trees {
            wake(
                control,
                t.report.parked_ids.get(t.before..).unwrap_or_default(),
            );
        }
        return Err(e);
    }
    // Right after the last step (a signal, or the re-read that decided against one): when
    // this report happened, not when `watch` prints it.
    let at = crate::core::time::format_ms(crate::platform::now_ms());
    Ok(trees
        .into_iter()
        .map(|mut t| {
            if t.report.outcome == GuardOutcome::RootChanged {
                wake(control, &std::mem::take(&mut t.report.parked_ids));
            }
            t.report.at = at.clone();
            t.report
        })
        .collect())
}

fn read(source: &dyn ProcessSource) -> Result<Snapshot> {
    source
        .snapshot(Detail::Full)
        .context("cannot read the process table")
}

fn pass(
    source: &dyn ProcessSource,
    control: &dyn ProcessControl,
    a: &Snapshot,
    clock: &dyn Clock,
    opts: EnforceOptions,
    trees: &mut [Tree],
) -> Result<()> {
    for t in trees.iter_mut() {
        t.judge(a);
    }
    if trees.iter().all(|t| t.now.is_none()) {
        return Ok(());
    }
    // Two samples a second apart tell which subtrees are idle.
    let start = clock.now();
    let mut cpu = CpuSamples::default();
    if opts.park {
        let all: Vec<&ProcessRecord> = trees.iter().flat_map(|t| t.members()).collect();
        cpu.record(0, &all);
        clock.sleep(Duration::from_millis(IDLE_WINDOW_MS));
    }
    // Re-read after the idle window, before any step: the breach may have been a spike that
    // has passed. A one-shot round steps at once, on the table the round just read.
    let b_read;
    let mut latest: &Snapshot = a;
    if opts.park {
        b_read = read(source)?;
        latest = &b_read;
    }
    for t in trees.iter_mut() {
        t.rejudge(latest, GuardOutcome::UnderLimit);
    }
    let c_read;
    if opts.park
        && park(
            control,
            trees,
            &mut cpu,
            clock.now().saturating_duration_since(start),
        )
    {
        clock.sleep(RELIEF_WAIT);
        c_read = read(source)?;
        latest = &c_read;
        for t in trees.iter_mut() {
            let under = if t.report.parked.is_empty() {
                GuardOutcome::UnderLimit
            } else {
                GuardOutcome::Parked
            };
            t.rejudge(latest, under);
        }
    }
    end::end(source, control, clock, opts.grace, trees);
    Ok(())
}

/// Park the idle subtrees of every tree still over its limit; whether anything was parked.
fn park(
    control: &dyn ProcessControl,
    trees: &mut [Tree],
    cpu: &mut CpuSamples,
    elapsed: Duration,
) -> bool {
    let all: Vec<&ProcessRecord> = trees.iter().flat_map(|t| t.members()).collect();
    let ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
    cpu.record(ms.max(IDLE_WINDOW_MS), &all);
    let mut any = false;
    for t in trees.iter_mut() {
        let Some(now) = &t.now else { continue };
        let refs: Vec<&ProcessRecord> = now.members.iter().collect();
        // The root heads the tree: protected whether or not it leads its group.
        let leaders = Leaders {
            pgid: t.report.breach.root,
            sid: refs.first().and_then(|m| m.sid),
        };
        let stop: Vec<Identity> = idle_subtrees(&refs, &leaders, cpu, PARK_MIN_BYTES)
            .iter()
            .flat_map(|s| s.targets.iter().copied())
            .collect();
        for (id, r) in signal_each(control, &stop, Signal::Stop) {
            if matches!(r, Ok(Delivery::Sent)) {
                t.report.parked.push(id.pid);
                t.report.parked_ids.push(id);
                any = true;
            }
        }
    }
    any
}

/// Continue parked processes, leaves first (the reverse of the order they were stopped in).
pub fn wake(control: &dyn ProcessControl, parked: &[Identity]) {
    let rev: Vec<Identity> = parked.iter().rev().copied().collect();
    let _ = signal_each(control, &rev, Signal::Cont);
}

mod end;

#[cfg(test)]
mod parking_tests;
#[cfg(test)]
mod tests;
