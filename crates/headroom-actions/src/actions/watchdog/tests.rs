//! The watchdog's state machine without a Supervisor: a scripted process table that obeys
//! the signals it is sent (every one recorded), driven through `step`, `on_signal` and
//! `finish` as the event loop drives them. headroom is pid 10, the command 100 (its group
//! 100) with a child 101; pid 300 is a stranger in a group of its own under init.

use super::*;
use crate::actions::test_double::Table;
use crate::core::snapshot::fixture::{MIB, member, proc, snapshot};
use crate::core::snapshot::{MemoryTotals, ProcState};
use crate::exit::ExitStatus;
use crate::platform::Signal;

type World = Table;

/// The command holding `cmd_mib` and its child `child_mib`, a 5 GiB stranger, plenty of
/// memory free (the effective limit is the configured one).
fn world(cmd_mib: u64, child_mib: u64) -> World {
    let mut stranger = proc(300, 1, "stranger");
    stranger.footprint_bytes = Some(5 * 1024 * MIB);
    let mut w = Table::new(snapshot(
        "linux",
        vec![
            proc(10, 1, "headroom"),
            member(100, 10, cmd_mib),
            member(101, 100, child_mib),
            stranger,
        ],
    ));
    w.memory = Some(MemoryTotals {
        total_bytes: 64 * 1024 * MIB,
        available_bytes: 60 * 1024 * MIB,
    });
    w
}

fn config(limit_mib: u64) -> WatchdogConfig {
    WatchdogConfig {
        command: vec!["cmd".into()],
        limit: limit_mib * MIB,
        interval: Duration::from_millis(100),
        grace: Duration::from_secs(30),
        warn_pct: 100.0,
        notify: false,
        timeout: None,
    }
}

/// A watch of `world` as `run` starts one (not a subreaper: every sample scans the group).
fn watch<'a, 'e>(
    world: &'a World,
    cfg: &'a WatchdogConfig,
    emit: &'e mut dyn FnMut(&RunEvent),
) -> Watchdog<'a, 'e> {
    Watchdog::new(
        world,
        world,
        cfg,
        Start {
            at: Instant::now(),
            self_pid: 10,
            cmd_pid: 100,
            subreaper: false,
        },
        emit,
    )
}

/// A watch of `world` under a 1 GiB limit, handed to `f`; the names of the events it
/// emitted, once `f` is done with it.
fn watching(world: &World, f: impl FnOnce(Watchdog<'_, '_>)) -> Vec<String> {
    let cfg = config(1024);
    let mut events = Vec::new();
    let mut emit = |e: &RunEvent| events.push(name(e));
    f(watch(world, &cfg, &mut emit));
    events
}

fn kinds(events: &[String]) -> Vec<&str> {
    events.iter().map(String::as_str).collect()
}

fn name(e: &RunEvent) -> String {
    serde_json::to_value(e).unwrap()["type"]
        .as_str()
        .unwrap_or("?")
        .to_string()
}

#[test]
fn under_the_limit_a_step_samples_the_tree_and_signals_nothing() {
    let world = world(100, 100);
    let events = watching(&world, |mut w| {
        w.step();
        assert!(matches!(w.phase, WatchdogPhase::Watching));
        let last = w.last.as_ref().unwrap();
        let mut pids: Vec<i32> = last.members.iter().map(|m| m.pid).collect();
        pids.sort_unstable();
        assert_eq!(pids, [100, 101], "the tree, not headroom, not the stranger");
        assert_eq!(last.footprint, 200 * MIB);
        assert_eq!(w.summary.peak_footprint_bytes, 200 * MIB);
    });
    assert!(world.sent().is_empty());
    assert!(events.is_empty(), "{events:?}");
}

#[test]
fn over_the_limit_with_nothing_idle_to_park_the_tree_and_only_the_tree_is_sigtermed() {
    let world = world(700, 500);
    let events = watching(&world, |mut w| {
        w.step();
        assert!(matches!(
            w.phase,
            WatchdogPhase::Ending {
                reason: EndReason::Limit,
                ..
            }
        ));
        assert_eq!(w.summary.breaches, 1);
        assert_eq!(w.summary.terminated, 2);
    });
    let mut sent = world.sent();
    sent.sort_by_key(|s| s.0);
    assert_eq!(sent, [(100, Signal::Term), (101, Signal::Term)]);
    assert!(
        world.has(300) && world.has(10),
        "the stranger and headroom untouched"
    );
    assert_eq!(kinds(&events)[..1], ["breach"], "{events:?}");
}

#[test]
fn a_signal_to_headroom_is_forwarded_to_the_group_and_a_second_one_ends_the_tree() {
    let mut world = world(100, 100);
    // The tree outlives the forwarded SIGINT (a shell that traps it): the second signal
    // must end the tree with SIGTERM.
    world.survives = vec![100, 101];
    let events = watching(&world, |mut w| {
        w.step();
        w.on_signal(Signal::Int);
        assert!(matches!(w.phase, WatchdogPhase::Forwarded { .. }));
        assert_eq!(w.summary.forwarded, [Signal::Int]);
        let forwarded: Vec<(i32, Signal)> = world.sent();
        assert_eq!(
            forwarded,
            [(100, Signal::Int), (101, Signal::Int)],
            "the command first, then its group"
        );
        w.on_signal(Signal::Term);
        assert!(matches!(
            w.phase,
            WatchdogPhase::Ending {
                reason: EndReason::Signal,
                ..
            }
        ));
        assert_eq!(w.summary.forwarded, [Signal::Int, Signal::Term]);
    });
    let after: Vec<(i32, Signal)> = world.sent()[2..].to_vec();
    let mut after_sorted = after.clone();
    after_sorted.sort_by_key(|s| s.0);
    assert_eq!(after_sorted, [(100, Signal::Term), (101, Signal::Term)]);
    assert!(world.sent().iter().all(|(p, _)| *p != 300 && *p != 10));
    assert_eq!(kinds(&events)[..1], ["forward"], "{events:?}");
}

#[test]
fn the_command_exiting_alone_is_done_and_keeps_its_code() {
    let world = world(100, 100);
    world.snap.borrow_mut().processes.retain(|p| p.pid != 101);
    let events = watching(&world, |mut w| {
        w.step();
        world.snap.borrow_mut().processes.retain(|p| p.pid != 100);
        w.cmd_status = Some(ChildEvent::Exited(7));
        w.step();
        assert!(matches!(w.phase, WatchdogPhase::Done));
        let s = w.finish();
        assert_eq!(s.exit_code, ExitStatus::Child(7));
        assert_eq!(s.ended_by, None);
        assert!(world.sent().is_empty());
    });
    assert_eq!(kinds(&events), ["summary"]);
}

#[test]
fn a_leftover_after_the_command_exits_is_ended_and_the_command_code_kept() {
    let world = world(100, 100);
    watching(&world, |mut w| {
        w.step();
        // The command exits; its child 101 (a member seen before) stays behind.
        world.snap.borrow_mut().processes.retain(|p| p.pid != 100);
        w.cmd_status = Some(ChildEvent::Exited(3));
        w.step();
        assert!(matches!(
            w.phase,
            WatchdogPhase::Ending {
                reason: EndReason::Leftovers,
                ..
            }
        ));
        assert_eq!(world.sent(), [(101, Signal::Term)]);
        // The leftover went on SIGTERM: the next ticks see the tree gone.
        for _ in 0..200 {
            if matches!(w.phase, WatchdogPhase::Done) {
                break;
            }
            w.step();
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(matches!(w.phase, WatchdogPhase::Done));
        let s = w.finish();
        assert_eq!(
            (s.exit_code, s.ended_by),
            (ExitStatus::Child(3), Some(EndReason::Leftovers))
        );
        assert!(!world.has(101) && world.has(300));
    });
}

#[test]
fn parked_processes_are_continued_by_finish_never_left_stopped() {
    let world = world(100, 100);
    watching(&world, |mut w| {
        w.step();
        let child = world
            .snap
            .borrow()
            .processes
            .iter()
            .find(|p| p.pid == 101)
            .and_then(ProcessRecord::identity)
            .unwrap();
        let (pids, _, _) = w.deliver(&[child], Signal::Stop);
        assert_eq!(pids, [101]);
        w.parked.insert(child);
        w.cmd_status = Some(ChildEvent::Exited(0));
        let _ = w.finish();
        assert_eq!(world.sent(), [(101, Signal::Stop), (101, Signal::Cont)]);
        let state = world
            .snap
            .borrow()
            .processes
            .iter()
            .find(|p| p.pid == 101)
            .map(|p| p.state);
        assert_eq!(state, Some(ProcState::Sleeping));
    });
}

/// Over the limit: both get SIGTERM; `survivor` outlives it and alone holds less than the
/// limit, so it is spared SIGKILL. The escalation is driven to its end; the command's exit
/// is not reaped yet (as when the kill gate runs before the event loop's `waitpid`).
fn spared_after_term(survivor: i32) -> (World, Option<EndReason>) {
    spared_then(survivor, None)
}

/// `spared_after_term`, then the command's exit `status` reaped (if any).
fn spared_then(survivor: i32, status: Option<ChildEvent>) -> (World, Option<EndReason>) {
    let mut world = world(700, 500);
    world.survives = vec![survivor];
    let mut cfg = config(1024);
    cfg.grace = Duration::from_millis(1);
    let mut emit = |_: &RunEvent| {};
    let mut w = watch(&world, &cfg, &mut emit);
    w.step();
    for _ in 0..400 {
        if !matches!(w.phase, WatchdogPhase::Ending { .. }) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
        w.step();
    }
    assert!(
        matches!(w.phase, WatchdogPhase::Watching),
        "the escalation ended"
    );
    if let Some(status) = status {
        w.on_command_exit(status);
    }
    let ended_by = w.summary.ended_by;
    drop(w);
    (world, ended_by)
}

#[test]
fn a_command_gone_on_the_limit_s_sigterm_is_ended_by_the_limit_though_its_child_is_spared() {
    let (world, ended_by) = spared_after_term(101);
    assert!(
        !world.has(100) && world.has(101),
        "the child spared, not killed"
    );
    assert_eq!(ended_by, Some(EndReason::Limit));
    // Control: the command itself outlives SIGTERM and is spared: the tree was not ended,
    // and the command's own exit decides the code.
    let (world, ended_by) = spared_after_term(100);
    assert!(world.has(100) && !world.has(101));
    assert_eq!(ended_by, None);
}

/// Past `--timeout` the whole tree (under its limit) gets SIGTERM, and after the grace the
/// survivors SIGKILL whatever they hold (the gate narrows only a limit ending): 137,
/// `timeout`. Control: before the deadline a step signals nothing.
#[test]
fn past_the_timeout_the_tree_is_ended_and_survivors_killed_whatever_they_hold() {
    let mut world = world(100, 100);
    world.survives = vec![100, 101];
    let mut cfg = config(1024);
    cfg.grace = Duration::from_millis(1);
    cfg.timeout = Some(Duration::from_secs(3600));
    let mut emit = |_: &RunEvent| {};
    let mut w = watch(&world, &cfg, &mut emit);
    w.step();
    assert!(world.sent().is_empty(), "before the deadline");
    assert!(matches!(w.phase, WatchdogPhase::Watching));
    w.deadline = Some(Instant::now());
    w.step();
    assert!(matches!(
        w.phase,
        WatchdogPhase::Ending {
            reason: EndReason::Timeout,
            ..
        }
    ));
    for _ in 0..400 {
        if matches!(w.phase, WatchdogPhase::Done) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
        w.step();
    }
    let mut sent = world.sent();
    sent.sort_by_key(|s| (s.0, s.1 == Signal::Kill));
    assert_eq!(
        sent,
        [
            (100, Signal::Term),
            (100, Signal::Kill),
            (101, Signal::Term),
            (101, Signal::Kill)
        ]
    );
    w.cmd_status = Some(ChildEvent::Signaled(9));
    let s = w.finish();
    assert_eq!(
        (s.exit_code, s.ended_by),
        (ExitStatus::Signalled(9), Some(EndReason::Timeout))
    );
    assert!(world.has(300) && world.has(10), "only the tree");
}

/// The parent's exit ends the tree as the timeout does, once; an ending already under way
/// (the limit's) is left to finish, its reason kept.
#[test]
fn the_parents_exit_ends_the_tree_once_and_leaves_an_ending_under_way_alone() {
    let world = world(100, 100);
    let events = watching(&world, |mut w| {
        w.step();
        w.end_for(EndReason::ParentExited);
        assert!(matches!(
            w.phase,
            WatchdogPhase::Ending {
                reason: EndReason::ParentExited,
                ..
            }
        ));
        let n = world.sent().len();
        w.end_for(EndReason::ParentExited);
        assert_eq!(world.sent().len(), n, "no second SIGTERM");
    });
    assert_eq!(kinds(&events), ["signal"]);
    let world2 = self::world(700, 500);
    watching(&world2, |mut w| {
        w.step();
        assert!(matches!(
            w.phase,
            WatchdogPhase::Ending {
                reason: EndReason::Limit,
                ..
            }
        ));
        w.end_for(EndReason::ParentExited);
        assert!(matches!(
            w.phase,
            WatchdogPhase::Ending {
                reason: EndReason::Limit,
                ..
            }
        ));
    });
}

/// The command outlives the grace (spared: what is left holds less than the limit, as a
/// command freeing its memory on the way out does) and is then reaped dead of the limit's
/// SIGTERM: the limit ended it. Controls: the same spared command exiting by itself, or
/// killed by a signal headroom did not send, decides its own code.
#[test]
fn a_command_spared_by_the_gate_that_dies_of_the_limit_s_sigterm_was_ended_by_the_limit() {
    let term = Signal::Term.number();
    let (_, ended_by) = spared_then(100, Some(ChildEvent::Signaled(term)));
    assert_eq!(ended_by, Some(EndReason::Limit));
    let (_, ended_by) = spared_then(100, Some(ChildEvent::Exited(0)));
    assert_eq!(ended_by, None);
    let (_, ended_by) = spared_then(100, Some(ChildEvent::Signaled(Signal::Kill.number())));
    assert_eq!(ended_by, None);
}
