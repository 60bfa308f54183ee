//! `headroom park PID`, `wake PID`, `park-tree PID`, `wake-tree PID`: SIGSTOP / SIGCONT one
//! process or a whole tree (root first when stopping, leaves first when continuing). The
//! safety rules are `core::parking`'s, the sequence `actions::park`'s; this file resolves the
//! pid, prints what was stopped or woken, and picks the exit code: 0 done (or nothing to
//! do), 2 no such process or a signal failed, 3 refused.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::actions::park::{self, ParkMode, ParkOutcome, ParkStep};
use crate::cli::PidArgs;
use crate::commands::Ctx;
use crate::core::parking::ParkPermission;
use crate::core::process_table::ProcessTable;
use crate::core::snapshot::Detail;
use crate::exit::{ExitStatus, Failure, UsageError};
use crate::sanitize::sanitize;

/// Which of the four commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    Park,
    Wake,
    ParkTree,
    WakeTree,
}

impl Action {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Park => "park",
            Self::Wake => "wake",
            Self::ParkTree => "park-tree",
            Self::WakeTree => "wake-tree",
        }
    }

    fn mode(self) -> ParkMode {
        match self {
            Self::Park | Self::ParkTree => ParkMode::Park,
            Self::Wake | Self::WakeTree => ParkMode::Wake,
        }
    }

    fn tree(self) -> bool {
        matches!(self, Self::ParkTree | Self::WakeTree)
    }
}

/// The `headroom.park/1` (`wake`, `park-tree`, `wake-tree`) report.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ParkReport {
    pub action: &'static str,
    pub pid: i32,
    pub name: String,
    /// Processes whose state this command changed.
    pub changed: usize,
    /// Tree actions: members it could not change (refused, or signalled without the state
    /// changing): left running by `park-tree`, left stopped by `wake-tree`. Exit 1.
    pub left: Vec<i32>,
    pub processes: Vec<ParkStep>,
}

impl crate::schema::Document for ParkReport {
    const SCHEMA: &'static str = "headroom.park/1";
    const TYPE: Option<&'static str> = Some("park");
}

/// Members of a tree action left as they were although they should have changed.
fn left_unchanged(steps: &[ParkStep], tree: bool) -> Vec<i32> {
    if !tree {
        return Vec::new();
    }
    steps
        .iter()
        .filter(|s| matches!(s.outcome, ParkOutcome::Refused | ParkOutcome::Unconfirmed))
        .map(|s| s.pid)
        .collect()
}

/// 2 when a signal failed, 1 when a tree was left half parked (or half woken), else 0.
fn exit_code(r: &ParkReport) -> ExitStatus {
    if r.processes.iter().any(|s| s.outcome == ParkOutcome::Failed) {
        ExitStatus::Error
    } else if !r.left.is_empty() {
        ExitStatus::Unhappy
    } else {
        ExitStatus::Ok
    }
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &PidArgs, action: Action) -> Result<ExitStatus> {
    if let Some(flag) = ctx.redirected() {
        return Err(UsageError(format!(
            "`{}` signals real processes; it cannot run against `{flag}`",
            action.name()
        ))
        .into());
    }
    let source = crate::platform::native();
    let snap = source
        .snapshot(Detail::Full)
        .context("cannot read the process table")?;
    let table = ProcessTable::new(&snap);
    let permission = ParkPermission::new(&table);
    // The refusal itself is the error (exit 3), so `headroom mcp` can name its rule.
    permission.check_pid(args.pid)?;
    let no_such =
        || -> anyhow::Error { Failure::Failed(format!("no such process `{}`", args.pid)).into() };
    let pid = i32::try_from(args.pid).map_err(|_| no_such())?;
    let target = table.get(pid).ok_or_else(no_such)?;
    permission.check(target)?;
    if target.is_zombie() {
        return Err(Failure::Failed(format!(
            "pid `{pid}` (`{}`) has already exited (zombie); there is nothing to {}",
            sanitize(&target.name),
            action.name()
        ))
        .into());
    }
    let id = target.identity().ok_or_else(|| {
        Failure::Failed(format!(
            "the start time of pid `{pid}` could not be read; nothing was signalled"
        ))
    })?;
    let control = crate::platform::native_control(source.as_ref());
    let steps = park::apply(
        source.as_ref(),
        control.as_ref(),
        &permission,
        id,
        action.mode(),
        action.tree(),
    )?;
    let report = ParkReport {
        action: action.name(),
        pid,
        name: target.name.clone(),
        changed: steps.iter().filter(|s| s.outcome.changed()).count(),
        left: left_unchanged(&steps, action.tree()),
        processes: steps,
    };
    if ctx.printer.is_json() {
        ctx.printer.json_value(&report)?;
    } else {
        ctx.printer.text(&human(&report, action))?;
    }
    Ok(exit_code(&report))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "es" }
}

pub(crate) fn human(r: &ParkReport, action: Action) -> String {
    let mut s = String::new();
    let name = sanitize(&r.name);
    let root = r.processes.iter().find(|p| p.pid == r.pid);
    if !action.tree() {
        let outcome = root.map_or(ParkOutcome::Gone, |p| p.outcome);
        let detail = root.and_then(|p| p.detail.clone()).unwrap_or_default();
        let _ = match outcome {
            ParkOutcome::Stopped => writeln!(
                s,
                "parked pid {} (`{name}`) with SIGSTOP; its memory can be reclaimed under \
                 pressure. Continue it with `headroom wake {}`",
                r.pid, r.pid
            ),
            ParkOutcome::Continued => writeln!(s, "woke pid {} (`{name}`) with SIGCONT", r.pid),
            ParkOutcome::AlreadyStopped => writeln!(
                s,
                "pid {} (`{name}`) is already parked (stopped); nothing to do",
                r.pid
            ),
            ParkOutcome::NotStopped => writeln!(
                s,
                "pid {} (`{name}`) is not parked ({detail}); nothing to do",
                r.pid
            ),
            other => writeln!(s, "pid {} (`{name}`): {}", r.pid, describe(other, &detail)),
        };
        return s;
    }
    let changed: Vec<&ParkStep> = r.processes.iter().filter(|p| p.outcome.changed()).collect();
    if changed.is_empty() {
        let _ = match action.mode() {
            ParkMode::Park => writeln!(
                s,
                "every process of the tree of pid {} (`{name}`) is already parked; nothing to do",
                r.pid
            ),
            ParkMode::Wake => writeln!(
                s,
                "nothing in the tree of pid {} (`{name}`) is parked; nothing to do",
                r.pid
            ),
        };
    } else {
        let (verb, order) = match action.mode() {
            ParkMode::Park => ("parked", "root first"),
            ParkMode::Wake => ("woke", "leaves first"),
        };
        let _ = writeln!(
            s,
            "{verb} {} process{} of the tree of pid {} (`{name}`), {order}:",
            changed.len(),
            plural(changed.len()),
            r.pid
        );
    }
    for p in &r.processes {
        if matches!(
            p.outcome,
            ParkOutcome::NotStopped | ParkOutcome::AlreadyStopped
        ) {
            continue;
        }
        let detail = p.detail.clone().unwrap_or_default();
        let _ = writeln!(
            s,
            "  {:>8}  {:<16}  {}",
            p.pid,
            sanitize(&p.name),
            describe(p.outcome, &detail)
        );
    }
    if !r.left.is_empty() {
        let state = match action.mode() {
            ParkMode::Park => "left running",
            ParkMode::Wake => "left stopped",
        };
        let who: Vec<String> = r
            .processes
            .iter()
            .filter(|p| r.left.contains(&p.pid))
            .map(|p| format!("{} (`{}`)", p.pid, sanitize(&p.name)))
            .collect();
        let _ = writeln!(
            s,
            "not the whole tree: {} process{} {state}: {}",
            who.len(),
            plural(who.len()),
            who.join(", ")
        );
    }
    if action.mode() == ParkMode::Park && !changed.is_empty() {
        let _ = writeln!(s, "continue them with `headroom wake-tree {}`", r.pid);
    }
    s
}

fn describe(o: ParkOutcome, detail: &str) -> String {
    let with = |t: &str| {
        if detail.is_empty() {
            t.to_string()
        } else {
            format!("{t} ({detail})")
        }
    };
    match o {
        ParkOutcome::Stopped => "stopped".into(),
        ParkOutcome::Continued => "continued".into(),
        ParkOutcome::AlreadyStopped => "already stopped".into(),
        ParkOutcome::NotStopped => with("not stopped"),
        ParkOutcome::Gone => "exited meanwhile; nothing sent".into(),
        ParkOutcome::IdentityChanged => "the pid now names another process; nothing sent".into(),
        ParkOutcome::Refused => with("refused"),
        ParkOutcome::Failed => with("failed"),
        ParkOutcome::Unconfirmed => with("signalled, state not changed yet"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(pid: i32, outcome: ParkOutcome) -> ParkStep {
        ParkStep {
            pid,
            name: format!("p{pid}"),
            outcome,
            detail: None,
        }
    }

    #[test]
    fn human_output_says_what_changed_and_how_to_undo_it() {
        let r = ParkReport {
            action: "park-tree",
            pid: 40,
            name: "job\x1b[2J".into(),
            changed: 2,
            left: vec![42],
            processes: vec![
                step(40, ParkOutcome::Stopped),
                step(41, ParkOutcome::Stopped),
                step(42, ParkOutcome::Refused),
            ],
        };
        let h = human(&r, Action::ParkTree);
        assert!(
            h.contains("not the whole tree: 1 process left running: 42 (`p42`)"),
            "{h}"
        );
        assert!(
            h.starts_with(
                "parked 2 processes of the tree of pid 40 (`job\\u{1b}[2J`), root first:"
            ),
            "{h}"
        );
        assert!(h.contains("refused"), "{h}");
        assert!(
            h.ends_with("continue them with `headroom wake-tree 40`\n"),
            "{h}"
        );
        let r = ParkReport {
            action: "wake",
            pid: 41,
            name: "sleep".into(),
            changed: 0,
            left: vec![],
            processes: vec![ParkStep {
                detail: Some("state S".into()),
                ..step(41, ParkOutcome::NotStopped)
            }],
        };
        assert_eq!(
            human(&r, Action::Wake),
            "pid 41 (`sleep`) is not parked (state S); nothing to do\n"
        );
    }

    #[test]
    fn a_tree_left_half_parked_exits_1_and_a_whole_one_0() {
        let report = |steps: Vec<ParkStep>, action: Action| ParkReport {
            action: action.name(),
            pid: 40,
            name: "job".into(),
            changed: 0,
            left: left_unchanged(&steps, action.tree()),
            processes: steps,
        };
        // One member refused (another user's): the tree is half stopped. Used to exit 0.
        let half = report(
            vec![
                step(40, ParkOutcome::Stopped),
                step(41, ParkOutcome::Refused),
            ],
            Action::ParkTree,
        );
        assert_eq!(
            (half.left.clone(), exit_code(&half)),
            (vec![41], ExitStatus::Unhappy)
        );
        let slow = report(
            vec![
                step(40, ParkOutcome::Stopped),
                step(41, ParkOutcome::Unconfirmed),
            ],
            Action::WakeTree,
        );
        assert_eq!(exit_code(&slow), ExitStatus::Unhappy);
        // Controls: the whole tree (gone members do not count), and a failed signal is 2.
        let whole = report(
            vec![
                step(40, ParkOutcome::Stopped),
                step(41, ParkOutcome::AlreadyStopped),
                step(42, ParkOutcome::Gone),
            ],
            Action::ParkTree,
        );
        assert_eq!((whole.left.len(), exit_code(&whole)), (0, ExitStatus::Ok));
        let failed = report(
            vec![
                step(40, ParkOutcome::Failed),
                step(41, ParkOutcome::Refused),
            ],
            Action::ParkTree,
        );
        assert_eq!(exit_code(&failed), ExitStatus::Error);
    }
}
