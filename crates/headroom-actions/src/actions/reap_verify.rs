//! `reap`'s verification: once the escalation is over, wait until the zombies of every
//! parent headroom ended are gone, reaped by whoever inherited them (launchd, init, a
//! container's pid 1, a subreaper), for at most [`VERIFY_BOUND`].
//!
//! Only those zombies are waited for: a parent that is still there (it survived, or it was
//! spared) is not reaping its own, or it would not have been a target, so waiting says
//! nothing more about it. An inheritor that has not reaped by the bound is named in the
//! report (`held_by`): the parent is gone, and the slots are that process's to free.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

pub(crate) use crate::actions::reap_report::VERIFY_BOUND;
use crate::actions::reap_report::{ReapReport, ZombieHolder};
use crate::core::process_table::ProcessTable;
use crate::core::snapshot::{Detail, Snapshot};
use crate::platform::ProcessSource;

/// The first pause between re-samples; it doubles up to [`MAX_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const MAX_PAUSE: Duration = Duration::from_millis(500);

/// Re-sample until every ended parent's zombies are gone or [`VERIFY_BOUND`] has passed,
/// keeping `report` current after each sample (so a failed re-sample leaves it as far as it
/// was verified). `zombies_of` holds each target's zombies at its ending signal.
pub(crate) fn verify(
    source: &dyn ProcessSource,
    used_before: u64,
    zombies_of: &HashMap<i32, Vec<i32>>,
    report: &mut ReapReport,
) -> Result<()> {
    let start = Instant::now();
    let mut pause = FIRST_PAUSE;
    loop {
        std::thread::sleep(pause);
        let after = source
            .snapshot(Detail::Slots)
            .context("cannot re-sample the process table to verify")?;
        let awaited = settle(&after, zombies_of, report);
        let used_after = ProcessTable::new(&after).usage(after.uid).processes;
        report.slots_freed = used_before.saturating_sub(used_after);
        report.verify_ms = start.elapsed().as_millis() as u64;
        if awaited == 0 || start.elapsed() >= VERIFY_BOUND {
            return Ok(());
        }
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

/// Each target's credit, leftovers, holder and verdict by `after`; returns how many zombies
/// of ended parents are still there (what verification waits for).
pub(crate) fn settle(
    after: &Snapshot,
    zombies_of: &HashMap<i32, Vec<i32>>,
    report: &mut ReapReport,
) -> usize {
    // Zombie pid → the parent it belongs to now.
    let zombie_parent: HashMap<i32, i32> = after
        .processes
        .iter()
        .filter(|p| p.is_zombie())
        .map(|p| (p.pid, p.ppid))
        .collect();
    let mut awaited = 0;
    for t in &mut report.targets {
        let pids = zombies_of.get(&t.pid).map_or(&[][..], Vec::as_slice);
        let holders: Vec<i32> = pids
            .iter()
            .filter_map(|z| zombie_parent.get(z).copied())
            .collect();
        t.zombies_left = holders.len() as u64;
        if !t.outcome.ended() {
            // Not headroom's doing: nothing is credited, nothing awaited.
            t.zombies_reaped = 0;
            t.verified = false;
            t.held_by = None;
            continue;
        }
        t.zombies_reaped = (pids.len() - holders.len()) as u64;
        t.verified = holders.is_empty();
        t.held_by = most_common(&holders).map(|pid| ZombieHolder {
            pid,
            name: after
                .processes
                .iter()
                .find(|p| p.pid == pid)
                .map_or_else(|| "unknown".to_string(), |p| p.name.clone()),
        });
        awaited += holders.len();
    }
    awaited
}

/// The value most of `v` hold (the smallest among equals), or `None` for an empty `v`.
fn most_common(v: &[i32]) -> Option<i32> {
    let mut counts: HashMap<i32, usize> = HashMap::new();
    for &x in v {
        *counts.entry(x).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(x, _)| x)
}

#[cfg(test)]
mod tests {
    //! Credit and holders over recorded tables: only the parents headroom ended are credited.
    use super::*;
    use crate::actions::reap_report::TargetReport;
    use crate::actions::terminate::{Termination, TerminationOutcome};
    use crate::core::snapshot::fixture::{proc, snapshot, zombie};
    use crate::platform::Signal;

    fn target(pid: i32, outcome: TerminationOutcome, zombies: u64) -> TargetReport {
        let d = crate::actions::reap_report::tests::decision(pid, zombies, None);
        let t = Termination {
            outcome,
            signals: vec![Signal::Term],
            error: None,
        };
        TargetReport::new(&d, &t, zombies)
    }

    fn report(targets: Vec<TargetReport>) -> ReapReport {
        let snap = snapshot("linux", vec![]);
        let reading =
            crate::core::reading::read(&snap, crate::core::reading::Thresholds::default());
        let sel = crate::core::policy::Selection {
            decisions: vec![],
            pressure: false,
            projected_used: 0,
        };
        let policy = crate::core::policy::Policy {
            allow_deny: crate::core::patterns::AllowDeny {
                allow: crate::core::patterns::Patterns::new(["agency"]),
                deny: crate::core::patterns::Patterns::default(),
            },
            min_zombies: 1,
            max_targets: 10,
            spare_sessions: true,
            idle_threshold_s: 7200.0,
            emergency: crate::core::emergency::Emergency::default(),
        };
        let mut r = ReapReport::new(
            &snap,
            &reading,
            &sel,
            false,
            &policy,
            Duration::from_secs(1),
        );
        r.targets = targets;
        r
    }

    /// A parent that reaped its own zombies (spared, its zombies gone) and one that went by
    /// itself are credited nothing; the control, a parent headroom ended whose zombies init
    /// reaped, is credited all of them and verified.
    #[test]
    fn only_the_zombies_of_parents_headroom_ended_are_credited() {
        let zombies_of: HashMap<i32, Vec<i32>> = [
            (100, vec![101, 102]),
            (200, vec![201, 202, 203]),
            (300, vec![301]),
        ]
        .into();
        // Every one of those zombies is gone.
        let after = snapshot("linux", vec![proc(200, 1, "agency")]);
        let mut r = report(vec![
            target(100, TerminationOutcome::Sigkill, 2),
            target(200, TerminationOutcome::Spared, 3),
            target(300, TerminationOutcome::AlreadyGone, 1),
        ]);
        assert_eq!(settle(&after, &zombies_of, &mut r), 0);
        let got: Vec<(u64, bool, bool)> = r
            .targets
            .iter()
            .map(|t| (t.zombies_reaped, t.verified, t.settled()))
            .collect();
        assert_eq!(got, [(2, true, true), (0, false, true), (0, false, true)]);
        let s = crate::actions::reap_report::summary(
            &r,
            &crate::core::policy::Selection {
                decisions: vec![],
                pressure: false,
                projected_used: 0,
            },
        );
        assert!(s.starts_with("2 zombies reaped"), "{s}");
        assert!(s.contains("Not ended: pid 200, 300"), "{s}");
    }

    /// The parent is gone but its zombies belong to a pid 1 that has not reaped them: they
    /// are awaited, not credited, and the holder is named; once it reaps, the control,
    /// they are credited.
    #[test]
    fn zombies_an_inheritor_has_not_reaped_are_awaited_and_name_it() {
        let zombies_of: HashMap<i32, Vec<i32>> = [(100, vec![101, 102, 103])].into();
        let mut procs = vec![proc(1, 0, "tini")];
        procs.extend([101, 102].map(|z| zombie(z, 1)));
        let after = snapshot("linux", procs);
        let mut r = report(vec![target(100, TerminationOutcome::Sigterm, 3)]);
        assert_eq!(settle(&after, &zombies_of, &mut r), 2);
        let t = &r.targets[0];
        assert_eq!(
            (t.zombies_reaped, t.zombies_left, t.verified),
            (1, 2, false)
        );
        assert_eq!(
            t.held_by,
            Some(ZombieHolder {
                pid: 1,
                name: "tini".into()
            })
        );
        let reaped = snapshot("linux", vec![proc(1, 0, "tini")]);
        assert_eq!(settle(&reaped, &zombies_of, &mut r), 0);
        let t = &r.targets[0];
        assert_eq!((t.zombies_reaped, t.zombies_left, t.verified), (3, 0, true));
        assert_eq!(t.held_by, None);
    }

    /// A survivor's zombies are never awaited (it is not reaping them).
    #[test]
    fn a_survivors_zombies_are_not_awaited() {
        let zombies_of: HashMap<i32, Vec<i32>> = [(100, vec![101])].into();
        let after = snapshot("linux", vec![proc(100, 1, "agency"), zombie(101, 100)]);
        let mut r = report(vec![target(100, TerminationOutcome::Survived, 1)]);
        assert_eq!(settle(&after, &zombies_of, &mut r), 0);
        assert_eq!(r.targets[0].zombies_left, 1);
        assert!(!r.targets[0].settled());
    }

    /// A survivor left alone because the table could not be read again at the end of the
    /// grace was not "no longer a target": not settled (exit 1); the control, one the fresh
    /// selection no longer chose, is.
    #[test]
    fn a_survivor_spared_for_want_of_a_reading_is_not_settled() {
        let chosen_no_more = target(100, TerminationOutcome::Spared, 5);
        assert!(chosen_no_more.settled());
        let mut unread = target(200, TerminationOutcome::Spared, 5);
        unread.error = Some("cannot read the process table again".into());
        assert!(!unread.settled());
    }
}
