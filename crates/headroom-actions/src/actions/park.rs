//! Stopping and continuing processes (`park`, `wake`, `park-tree`, `wake-tree`, and the
//! idle subtrees `run --limit` parks): SIGSTOP from the root down, SIGCONT from the leaves
//! up, every target approved by `core::parking::ParkPermission` and every signal
//! identity-checked by `ProcessControl`. Then the result is read back, so what is printed is what happened.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::core::parking::{ParkPermission, stop_order, wake_order};
use crate::core::process_table::ProcessTable;
use crate::core::snapshot::{Detail, Identity, ProcState, ProcessRecord};
use crate::platform::{Delivery, PlatformError, ProcessControl, ProcessSource, Signal};

/// New children found after the first pass are stopped too, for at most this many passes.
const RESCANS: usize = 5;
/// How long to wait for a stop or continue to show in the process state.
const CONFIRM: Duration = Duration::from_secs(2);

/// What happened to one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[schemars(rename = "Outcome")]
pub enum ParkOutcome {
    /// SIGSTOP sent and the process is now stopped.
    Stopped,
    /// SIGCONT sent and the process is no longer stopped.
    Continued,
    AlreadyStopped,
    NotStopped,
    /// Exited before or while it was signalled.
    Gone,
    /// The pid now names another process: nothing was sent.
    IdentityChanged,
    /// A safety rule said no (another user's process inside the tree).
    Refused,
    /// The signal could not be sent (permission denied, start time unreadable).
    Failed,
    /// Sent, but the state had not changed within two seconds (e.g. in uninterruptible
    /// sleep; it takes effect when the process next runs).
    Unconfirmed,
}

impl ParkOutcome {
    pub fn changed(self) -> bool {
        matches!(self, Self::Stopped | Self::Continued | Self::Unconfirmed)
    }
}

/// One process and what happened to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Step")]
pub struct ParkStep {
    pub pid: i32,
    pub name: String,
    pub outcome: ParkOutcome,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParkMode {
    Park,
    Wake,
}

/// Park or wake `root` (alone, or with its whole tree). The root has already passed
/// `ParkPermission`; members are checked one by one.
pub fn apply(
    source: &dyn ProcessSource,
    control: &dyn ProcessControl,
    permission: &ParkPermission,
    root: Identity,
    mode: ParkMode,
    tree: bool,
) -> Result<Vec<ParkStep>> {
    let mut steps: Vec<ParkStep> = Vec::new();
    let mut handled: HashSet<Identity> = HashSet::new();
    let mut pending: Vec<(Identity, usize)> = Vec::new();
    for pass in 0..=RESCANS {
        let snap = source
            .snapshot(Detail::Full)
            .context("cannot read the process table")?;
        let table = ProcessTable::new(&snap);
        let Some(r) = table.get(root.pid).filter(|r| r.identity() == Some(root)) else {
            if pass == 0 {
                steps.push(gone_step(root.pid, "?"));
            }
            break;
        };
        let order = match (tree, mode) {
            (false, _) => vec![r],
            (true, ParkMode::Park) => stop_order(&table, root.pid),
            (true, ParkMode::Wake) => wake_order(&table, root.pid),
        };
        let mut acted = false;
        for p in order {
            let Some(id) = p.identity() else {
                steps.push(step(
                    p,
                    ParkOutcome::Failed,
                    Some("start time unreadable".into()),
                ));
                continue;
            };
            if !handled.insert(id) || p.is_zombie() {
                continue;
            }
            if let Some(outcome) = skip(p, permission, mode) {
                if pass == 0 || outcome.0 != ParkOutcome::NotStopped {
                    steps.push(step(p, outcome.0, outcome.1));
                }
                continue;
            }
            let sig = if mode == ParkMode::Park {
                Signal::Stop
            } else {
                Signal::Cont
            };
            match control.signal(&id, sig) {
                Ok(Delivery::Sent) => {
                    acted = true;
                    pending.push((id, steps.len()));
                    steps.push(step(p, ParkOutcome::Unconfirmed, None));
                }
                Ok(Delivery::Gone) => steps.push(step(p, ParkOutcome::Gone, None)),
                Ok(Delivery::IdentityChanged) => {
                    steps.push(step(p, ParkOutcome::IdentityChanged, None))
                }
                Err(e) => steps.push(step(p, ParkOutcome::Failed, Some(e.to_string()))),
            }
        }
        // Continuing needs one pass; stopping goes on while children keep appearing.
        if !tree || mode == ParkMode::Wake || !acted {
            break;
        }
    }
    confirm(source, &mut steps, &pending, mode);
    Ok(steps)
}

/// Why `p` is not signalled, if it is not.
fn skip(
    p: &ProcessRecord,
    permission: &ParkPermission,
    mode: ParkMode,
) -> Option<(ParkOutcome, Option<String>)> {
    if let Err(r) = permission.check(p) {
        return Some((ParkOutcome::Refused, Some(r.to_string())));
    }
    let stopped = p.state == ProcState::Stopped;
    match (mode, stopped) {
        (ParkMode::Park, true) => Some((ParkOutcome::AlreadyStopped, None)),
        (ParkMode::Wake, false) => Some((
            ParkOutcome::NotStopped,
            Some(format!("state {}", p.state.letter())),
        )),
        _ => None,
    }
}

/// Read each signalled process back until its state shows the change (or two seconds).
fn confirm(
    source: &dyn ProcessSource,
    steps: &mut [ParkStep],
    pending: &[(Identity, usize)],
    mode: ParkMode,
) {
    let deadline = Instant::now() + CONFIRM;
    let mut left: Vec<(Identity, usize)> = pending.to_vec();
    loop {
        left.retain(|(id, i)| {
            let now = match source.process(id.pid) {
                Ok(Some(p)) if p.identity() == Some(*id) && !p.is_zombie() => p,
                Ok(_) => {
                    steps[*i].outcome = ParkOutcome::Gone;
                    return false;
                }
                Err(_) => return true,
            };
            let done = match mode {
                ParkMode::Park => now.state == ProcState::Stopped,
                ParkMode::Wake => now.state != ProcState::Stopped,
            };
            if done {
                steps[*i].outcome = match mode {
                    ParkMode::Park => ParkOutcome::Stopped,
                    ParkMode::Wake => ParkOutcome::Continued,
                };
            } else {
                steps[*i].detail = Some(format!("state {}", now.state.letter()));
            }
            !done
        });
        if left.is_empty() || Instant::now() >= deadline {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn step(p: &ProcessRecord, outcome: ParkOutcome, detail: Option<String>) -> ParkStep {
    ParkStep {
        pid: p.pid,
        name: p.name.clone(),
        outcome,
        detail,
    }
}

fn gone_step(pid: i32, name: &str) -> ParkStep {
    ParkStep {
        pid,
        name: name.to_string(),
        outcome: ParkOutcome::Gone,
        detail: None,
    }
}

/// Send `sig` to each identity in order (no read-back: `run`'s loop samples again anyway).
pub(crate) fn signal_each(
    control: &dyn ProcessControl,
    targets: &[Identity],
    sig: Signal,
) -> Vec<(Identity, Result<Delivery, PlatformError>)> {
    targets
        .iter()
        .map(|id| (*id, control.signal(id, sig)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::test_double::Table;
    use crate::core::snapshot::fixture::{OTHER_UID, proc, snapshot};

    fn fake() -> Table {
        // shell 20 → headroom 30; shell → job 40 → 41 → 43, 40 → 42 (another user's).
        let mut other = proc(42, 40, "setuid");
        other.uid = OTHER_UID;
        let mut s = snapshot(
            "linux",
            vec![
                proc(1, 0, "init"),
                proc(20, 1, "zsh"),
                proc(30, 20, "headroom"),
                proc(40, 20, "job"),
                proc(41, 40, "a"),
                other,
                proc(43, 41, "b"),
            ],
        );
        s.self_pid = 30;
        Table::new(s)
    }

    #[test]
    fn park_tree_stops_root_first_skips_foreign_and_wake_tree_reverses() {
        let f = fake();
        let snap = f.snap.borrow().clone();
        let permission = ParkPermission::new(&ProcessTable::new(&snap));
        let root = snap.processes[3].identity().unwrap();
        let steps = apply(&f, &f, &permission, root, ParkMode::Park, true).unwrap();
        assert_eq!(
            *f.sent.borrow(),
            vec![(40, Signal::Stop), (41, Signal::Stop), (43, Signal::Stop)]
        );
        let refused = steps.iter().find(|s| s.pid == 42).unwrap();
        assert_eq!(refused.outcome, ParkOutcome::Refused);
        assert!(
            steps
                .iter()
                .filter(|s| s.pid != 42)
                .all(|s| s.outcome == ParkOutcome::Stopped)
        );
        // Parking again changes nothing.
        let again = apply(&f, &f, &permission, root, ParkMode::Park, true).unwrap();
        assert!(again.iter().all(|s| !s.outcome.changed()), "{again:?}");
        f.sent.borrow_mut().clear();
        apply(&f, &f, &permission, root, ParkMode::Wake, true).unwrap();
        assert_eq!(
            *f.sent.borrow(),
            vec![(43, Signal::Cont), (41, Signal::Cont), (40, Signal::Cont)]
        );
        // Waking a running process says so and sends nothing.
        f.sent.borrow_mut().clear();
        let steps = apply(&f, &f, &permission, root, ParkMode::Wake, false).unwrap();
        assert_eq!(steps[0].outcome, ParkOutcome::NotStopped);
        assert!(f.sent.borrow().is_empty());
    }

    #[test]
    fn a_reused_root_pid_is_not_signalled() {
        let f = fake();
        let snap = f.snap.borrow().clone();
        let permission = ParkPermission::new(&ProcessTable::new(&snap));
        let mut root = snap.processes[3].identity().unwrap();
        root.start_time += 1;
        let steps = apply(&f, &f, &permission, root, ParkMode::Park, true).unwrap();
        assert_eq!(steps[0].outcome, ParkOutcome::Gone);
        assert!(f.sent.borrow().is_empty());
    }
}
