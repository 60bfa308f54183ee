//! The last step of a guard's pass: end every tree still over its limit with one escalation
//! and one grace, SIGKILL only the grace survivors of a tree still over its limit when
//! re-read (the kill gate), and say how each tree ended.

use std::time::Duration;

use super::{GuardOutcome, Tree, read};
use crate::actions::clock::Clock;
use crate::actions::escalate::{self, Escalation, EscalationOutcome, EscalationTiming};
use crate::core::memory::effective_limit;
use crate::core::snapshot::{Identity, ProcState, ProcessRecord};
use crate::platform::{ProcessControl, ProcessSource, Signal};

/// A tree still to end: where it is in the pass, its live members, its limit.
struct Ending {
    tree: usize,
    ids: Vec<Identity>,
    limit: u64,
}

/// End every tree still over its limit, as just read: one escalation, one grace; SIGKILL
/// only the grace survivors of a tree still over its limit when re-read.
pub(super) fn end(
    source: &dyn ProcessSource,
    control: &dyn ProcessControl,
    clock: &dyn Clock,
    grace: Duration,
    trees: &mut [Tree],
) {
    let over = endings(trees);
    if over.is_empty() {
        return;
    }
    let live: Vec<Identity> = over.iter().flat_map(|e| e.ids.clone()).collect();
    let stopped: Vec<Identity> = over.iter().flat_map(|e| stopped(&trees[e.tree])).collect();
    let esc =
        Escalation::new(&live, EscalationTiming::with_grace(grace)).continue_after_term(&stopped);
    let mut notes: Vec<Option<String>> = vec![None; over.len()];
    let mut gate = |survivors: &[Identity]| kill_gate(source, &over, &mut notes, survivors);
    let ended = escalate::run_escalation(control, esc, clock, &mut gate);
    for (e, note) in over.iter().zip(notes) {
        record(&mut trees[e.tree], &e.ids, note, &ended);
    }
}

/// Per tree still to end: its live members' identities and its limit.
fn endings(trees: &[Tree]) -> Vec<Ending> {
    trees
        .iter()
        .enumerate()
        .filter(|(_, t)| t.now.is_some())
        .map(|(i, t)| Ending {
            tree: i,
            ids: t
                .members()
                .iter()
                .filter(|m| !m.is_zombie())
                .filter_map(ProcessRecord::identity)
                .collect(),
            limit: t.report.breach.limit_bytes,
        })
        .collect()
}

/// What of the tree must be continued after its SIGTERM: the members found stopped and
/// what the guard parked.
fn stopped(t: &Tree) -> Vec<Identity> {
    t.members()
        .iter()
        .filter(|m| m.state == ProcState::Stopped)
        .filter_map(ProcessRecord::identity)
        .chain(t.report.parked_ids.iter().copied())
        .collect()
}

/// The grace `survivors` to SIGKILL: those of a tree that, re-read now, still holds at least
/// its effective limit. A tree spared, or a read that fails, gets a note saying why.
fn kill_gate(
    source: &dyn ProcessSource,
    over: &[Ending],
    notes: &mut [Option<String>],
    survivors: &[Identity],
) -> Vec<Identity> {
    let snap = match read(source) {
        Ok(s) => s,
        Err(e) => {
            for n in notes.iter_mut() {
                *n = Some(format!("{e:#}: the survivors were not SIGKILLed"));
            }
            return Vec::new();
        }
    };
    let free = snap.memory.map(|m| m.free_pct());
    let mut kill = Vec::new();
    for (k, e) in over.iter().enumerate() {
        let mine: Vec<Identity> = survivors
            .iter()
            .filter(|s| e.ids.contains(s))
            .copied()
            .collect();
        if mine.is_empty() {
            continue;
        }
        let held: u64 = snap
            .processes
            .iter()
            .filter(|p| p.identity().is_some_and(|id| mine.contains(&id)))
            .filter_map(|p| p.footprint_bytes)
            .sum();
        let effective = effective_limit(e.limit, free);
        if held >= effective {
            kill.extend(mine);
        } else {
            notes[k] = Some(format!(
                "the grace survivors held {held} bytes, under the {effective}-byte limit: \
                 not SIGKILLed"
            ));
        }
    }
    kill
}

/// Put into the tree's report what the escalation did to its members `ids`, and how the
/// tree ended.
fn record(t: &mut Tree, ids: &[Identity], note: Option<String>, ended: &[escalate::EndedTarget]) {
    let r = &mut t.report;
    r.note = note;
    r.parked_ids.clear();
    let mine: Vec<&escalate::EndedTarget> =
        ended.iter().filter(|e| ids.contains(&e.identity)).collect();
    for e in &mine {
        if e.signals.contains(&Signal::Term) {
            r.terminated.push(e.identity.pid);
        }
        if e.signals.contains(&Signal::Kill) {
            r.killed.push(e.identity.pid);
        }
        if e.outcome == EscalationOutcome::Spared {
            r.spared.push(e.identity.pid);
        }
    }
    let any = |o: &[EscalationOutcome]| mine.iter().any(|e| o.contains(&e.outcome));
    r.outcome = if any(&[EscalationOutcome::Survived, EscalationOutcome::SignalFailed]) {
        GuardOutcome::Survived
    } else if any(&[EscalationOutcome::Spared]) {
        GuardOutcome::Spared
    } else if any(&[EscalationOutcome::Killed]) {
        GuardOutcome::Sigkill
    } else if r.terminated.is_empty() {
        GuardOutcome::Gone
    } else {
        GuardOutcome::Sigterm
    };
}
