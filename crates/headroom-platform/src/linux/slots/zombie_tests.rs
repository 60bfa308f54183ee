//! Zombies served without a system call of their own (`dead_and_still_parented`), for real,
//! in both ways `begin` learns of exits: the edge-triggered exit set (`exits.rs`, the
//! default where the unchanged check runs) and one `poll` over every kept pidfd (where the
//! set could not be made). Each test runs in both, so the poll fallback stays tested too.

use std::process::Command;

use super::round_tests::{
    Repeating, repeating, require_pidfd_info, round, start, wait_status, zombie_child_of,
};

/// A repeating source that learns of exits the way `mode` says.
fn source(mode: Mode) -> Repeating {
    let src = repeating();
    if mode == Mode::Poll {
        src.reader.kept_status.borrow_mut().exits_tried = true;
    }
    src
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Mode {
    Exits,
    Poll,
}

/// Whether the source's last snapshot used the exit set (the control that each mode is the
/// one it says).
fn uses_exit_set(src: &Repeating) -> bool {
    src.reader.kept_status.borrow().exits.is_some()
}

/// A zombie under a live parent: its second round still asks (its parent's entry was opened
/// in the same snapshot as the zombie's read, so it may be a new process with the parent's
/// old pid), and from the third on it is served without its `PIDFD_GET_INFO`. Once the
/// parent exits (it is reparented, or reaped), the next round does not serve the old record.
fn zombie_under_a_live_parent(mode: Mode) {
    // `true &` exits at once and nobody waits for it: after the exec, `cat` never does.
    let mut c = start("true & exec cat");
    let pid = c.0.id() as i32;
    wait_status(pid, |s| s.starts_with("Name:\tcat\n"));
    let zombie = zombie_child_of(pid);
    let src = source(mode);
    let asked = |src: &Repeating| src.reader.kept_status.borrow().asked.contains(&zombie);
    let (first, served) = round(&src, zombie);
    assert!(!served && first.is_some_and(|z| z.is_zombie() && z.ppid == pid));
    let (second, served) = round(&src, zombie);
    assert!(served, "{mode:?}: unchanged");
    assert!(
        asked(&src),
        "{mode:?}: its parent was not yet confirmed: asked"
    );
    assert_eq!(second.map(|z| z.ppid), Some(pid));
    let (third, served) = round(&src, zombie);
    assert!(served, "{mode:?}: unchanged");
    assert!(!asked(&src), "{mode:?}: served without its ioctl");
    assert_eq!(third.map(|z| z.ppid), Some(pid));
    assert_eq!(uses_exit_set(&src), mode == Mode::Exits);
    // The control: its live parent, served in the same round, was asked.
    let kept = src.reader.kept_status.borrow();
    assert!(kept.served_unchanged().contains(&pid) && kept.asked.contains(&pid));
    drop(kept);
    // The parent exits (its stdin closed) and is left a zombie of this test until the end.
    drop(c.0.stdin.take());
    wait_status(pid, |s| s.contains("State:\tZ"));
    let (after, served) = round(&src, zombie);
    assert!(
        !served,
        "{mode:?}: its parent exited: not served from the old read"
    );
    assert!(
        after.is_none_or(|z| z.ppid != pid),
        "{mode:?}: reaped, or read with its new parent"
    );
}

#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn a_zombie_under_a_live_parent_is_served_without_asking_by_the_exit_set() {
    require_pidfd_info();
    zombie_under_a_live_parent(Mode::Exits);
}

#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn a_zombie_under_a_live_parent_is_served_without_asking_by_the_poll() {
    require_pidfd_info();
    zombie_under_a_live_parent(Mode::Poll);
}

/// A zombie served without asking is not served once reaped, though its parent (this test
/// process) lives on: the reap is the pidfd's hang-up, the only word of it. `begin` and
/// `unchanged` are asked directly, without the listing, which would no longer list it.
fn reaped_zombie(mode: Mode) {
    // Reaped at the end of the test whatever happens first: `Child` does not wait on drop.
    struct Reap(std::process::Child);
    impl Drop for Reap {
        fn drop(&mut self) {
            let _ = self.0.wait();
        }
    }
    let mut reap = Reap(Command::new("true").spawn().unwrap());
    let zombie = reap.0.id() as i32;
    wait_status(zombie, |s| s.contains("State:\tZ"));
    let src = source(mode);
    let served_without_asking = |src: &Repeating| {
        let (rec, served) = round(src, zombie);
        let asked = src.reader.kept_status.borrow().asked.contains(&zombie);
        assert!(rec.is_some_and(|z| z.is_zombie()));
        served && !asked
    };
    let rounds = (0..3).filter(|_| !served_without_asking(&src)).count();
    assert_eq!(
        rounds, 2,
        "{mode:?}: the third round serves it without asking"
    );
    assert!(served_without_asking(&src), "{mode:?}: and the fourth");
    assert_eq!(uses_exit_set(&src), mode == Mode::Exits);
    let status = reap.0.wait().unwrap();
    assert!(status.success());
    let mut kept = src.reader.kept_status.borrow_mut();
    kept.begin();
    assert!(
        kept.unchanged(zombie).is_none(),
        "{mode:?}: reaped: its pid may name another process"
    );
}

#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn a_reaped_zombie_is_not_served_by_the_exit_set() {
    require_pidfd_info();
    reaped_zombie(Mode::Exits);
}

#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn a_reaped_zombie_is_not_served_by_the_poll() {
    require_pidfd_info();
    reaped_zombie(Mode::Poll);
}
