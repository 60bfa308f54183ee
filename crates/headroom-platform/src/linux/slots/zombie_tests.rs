//! Zombies served without a system call of their own (`dead_and_still_parented`), for real,
//! in both ways `begin` learns of exits: the edge-triggered exit set (`exits.rs`, the
//! default where the unchanged check runs) and one `poll` over every kept pidfd (where the
//! set could not be made). Each test runs in both, so the poll fallback stays tested too.

use std::process::Command;

use super::round_tests::{
    Repeating, Started, repeating, require_pidfd_info, round, start, wait_status, zombie_child_of,
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

/// Whether the source's last round asked the kernel about `pid` (`PIDFD_GET_INFO`).
fn asked(src: &Repeating, pid: i32) -> bool {
    src.reader.kept_status.borrow().asked.contains(&pid)
}

/// Whether a round whose listing reads pids in ascending order opened `parent`'s pidfd
/// after it read `zombie`'s `status`: its parent is then not taken on its word in the next
/// round (the parent's pid may have been reused between), and the zombie is asked once.
fn parent_opened_after(parent: i32, zombie: i32) -> bool {
    parent > zombie
}

/// A zombie under a live parent is served from the second round on without its
/// `PIDFD_GET_INFO` (once asked, where its parent's pidfd was opened after its read); the
/// live parent is asked in the same rounds. Once the parent exits (it is reparented, or
/// reaped), the next round does not serve the old record.
fn zombie_under_a_live_parent(mode: Mode) {
    // `true &` exits at once and nobody waits for it: after the exec, `cat` never does.
    let mut c = start("true & exec cat");
    let pid = c.0.id() as i32;
    wait_status(pid, |s| s.starts_with("Name:\tcat\n"));
    let zombie = zombie_child_of(pid);
    let src = source(mode);
    let (first, served) = round(&src, zombie);
    assert!(!served && first.is_some_and(|z| z.is_zombie() && z.ppid == pid));
    let (second, served) = round(&src, zombie);
    assert!(served, "{mode:?}: unchanged");
    assert_eq!(
        asked(&src, zombie),
        parent_opened_after(pid, zombie),
        "{mode:?}"
    );
    assert_eq!(second.map(|z| z.ppid), Some(pid));
    let (third, served) = round(&src, zombie);
    assert!(served, "{mode:?}: unchanged");
    assert!(!asked(&src, zombie), "{mode:?}: served without its ioctl");
    assert_eq!(third.map(|z| z.ppid), Some(pid));
    assert_eq!(uses_exit_set(&src), mode == Mode::Exits);
    // The control: its live parent, served in the same round, was asked.
    let kept = src.reader.kept_status.borrow();
    assert!(kept.served_unchanged().contains(&pid) && asked(&src, pid));
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

/// A zombie under a live parent (the child `sh`, become `cat`), and its source after three
/// rounds, the last of which served it without asking (the control of what follows).
fn served_without_asking(mode: Mode) -> (Started, i32, i32, Repeating) {
    let c = start("true & exec cat");
    let pid = c.0.id() as i32;
    wait_status(pid, |s| s.starts_with("Name:\tcat\n"));
    let zombie = zombie_child_of(pid);
    let src = source(mode);
    for _ in 0..3 {
        round(&src, zombie);
    }
    assert!(
        !asked(&src, zombie),
        "{mode:?}: the control: served without asking"
    );
    (c, pid, zombie, src)
}

/// A parent whose pidfd was opened after the zombie was last read (here its entry dropped
/// between rounds, as a shed drops it, so the next round lists `/proc` and opens it
/// afresh) could be a new process with the old parent's pid: that round asks the zombie,
/// and the one after, its parent now confirmed, does not.
fn parent_opened_since(mode: Mode) {
    let (c, pid, zombie, src) = served_without_asking(mode);
    // As after a shed: the next round lists all of `/proc` (counters that moved by more
    // than a lap of pids; `listing.rs`), since not every process is kept.
    src.reader.kept_status.borrow_mut().remove(pid);
    src.listing.borrow_mut().fixed = Some(crate::linux::listing::Mark {
        created: u64::MAX / 2,
        cursor: 0,
    });
    let (reopened, served) = round(&src, zombie);
    assert!(served && reopened.is_some_and(|z| z.ppid == pid));
    assert!(
        asked(&src, zombie),
        "{mode:?}: its parent's pidfd is newer: asked"
    );
    let (_, served) = round(&src, zombie);
    assert!(served && !asked(&src, zombie), "{mode:?}: confirmed since");
    drop(c);
}

#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn a_parent_opened_since_the_zombie_was_read_is_not_taken_on_its_word_by_the_exit_set() {
    require_pidfd_info();
    parent_opened_since(Mode::Exits);
}

#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn a_parent_opened_since_the_zombie_was_read_is_not_taken_on_its_word_by_the_poll() {
    require_pidfd_info();
    parent_opened_since(Mode::Poll);
}

/// The rule itself, where no listing order shows it on this machine (a parent with a
/// greater pid than its child's, after the pids wrapped): a zombie last confirmed just
/// before its parent's pidfd was opened is asked, though the parent is alive and kept.
fn confirmed_before_its_parent_was_opened(mode: Mode) {
    let (c, pid, zombie, src) = served_without_asking(mode);
    {
        let mut kept = src.reader.kept_status.borrow_mut();
        let opened = kept.files[&pid].opened_at;
        let check = kept.files.get_mut(&zombie).and_then(|k| k.check.as_mut());
        check.unwrap().verified_at = opened - 1;
    }
    let (_, served) = round(&src, zombie);
    assert!(served && asked(&src, zombie), "{mode:?}: asked");
    drop(c);
}

#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn a_zombie_confirmed_before_its_parent_was_opened_is_asked_by_the_exit_set() {
    require_pidfd_info();
    confirmed_before_its_parent_was_opened(Mode::Exits);
}

#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn a_zombie_confirmed_before_its_parent_was_opened_is_asked_by_the_poll() {
    require_pidfd_info();
    confirmed_before_its_parent_was_opened(Mode::Poll);
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
        assert!(rec.is_some_and(|z| z.is_zombie()));
        served && !asked(src, zombie)
    };
    let me = std::process::id() as i32;
    let rounds = (0..3).filter(|_| !served_without_asking(&src)).count();
    let expected = 1 + usize::from(parent_opened_after(me, zombie));
    assert_eq!(rounds, expected, "{mode:?}: then served without asking");
    assert!(served_without_asking(&src), "{mode:?}: and the round after");
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
