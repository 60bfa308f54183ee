//! The unchanged check of repeated slot rounds (`slots.rs`), for real: processes this test
//! starts (children of the test process, ended by it) read through `LinuxSource`'s slot
//! snapshots, served unchanged while they are, read in full the round they change.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::*;
use crate::ProcessSource;
use crate::core::snapshot::Detail;
use crate::linux::{LinuxSource, Roots};

/// The first line of a test of the unchanged check, gated on `hr_pidfd_info` (build.rs: Linux
/// 6.13): it fails, saying why, where the check cannot run after all (no `PIDFD_GET_INFO`,
/// or too few descriptors to keep).
pub(crate) fn require_pidfd_info() {
    if let Some(why) = unavailable() {
        panic!("the unchanged check cannot run here: {why}");
    }
}

fn unavailable() -> Option<String> {
    raise_nofile();
    if KeptStatus::budget_now() < 64 {
        return Some("RLIMIT_NOFILE leaves no descriptors to keep".into());
    }
    let me = pidfd_info::open(std::process::id() as i32).ok()?;
    pidfd_info::info(&me)
        .err()
        .map(|e| format!("no PIDFD_GET_INFO here (Linux before 6.13?): {e}"))
}

/// A source whose slot rounds keep descriptors between them, as `watch`'s do.
///
/// Each such source keeps up to two descriptors per process on the machine, within a
/// budget it takes from RLIMIT_NOFILE as if it were the process's only one (in `watch` it
/// is). Tests run in parallel threads of one process, so while one test's sources are open
/// another test's wait their turn: on a machine with thousands of other processes, two
/// sources at once would run out of descriptors and neither could keep its own. A test
/// that opens a second source in the same thread (a control) already holds the turn.
pub(crate) fn repeating() -> Repeating {
    let turn = Turn::take();
    let src = LinuxSource::new(Roots::default());
    src.keep_between_rounds();
    Repeating { src, _turn: turn }
}

/// A source that never serves a process unchanged: every round reads every `status`, by
/// path. It keeps no descriptor: as a control beside a `repeating` source in the same
/// thread it would otherwise take a budget of its own from the same RLIMIT_NOFILE, and on a
/// machine with thousands of processes leave the source under test short (which then
/// sheds and reads by path: counted right, but not served unchanged as the test expects).
pub(crate) fn full_reads() -> Repeating {
    let src = repeating();
    {
        let mut kept = src.reader.kept_status.borrow_mut();
        kept.check = Some(false);
        kept.budget = 0;
        kept.growth = super::Growth::Pinned;
    }
    src
}

/// A repeating source and its turn; the source's descriptors close before the turn passes.
pub(crate) struct Repeating {
    src: LinuxSource,
    _turn: Option<Turn>,
}

impl std::ops::Deref for Repeating {
    type Target = LinuxSource;
    fn deref(&self) -> &LinuxSource {
        &self.src
    }
}

static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

thread_local! {
    static HOLDS_TURN: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The one turn of the test process to keep descriptors, held by one test thread.
struct Turn(#[allow(dead_code, reason = "held, not read")] std::sync::MutexGuard<'static, ()>);

impl Turn {
    /// The turn, or `None` when this thread holds it already.
    fn take() -> Option<Turn> {
        if HOLDS_TURN.with(|h| h.get()) {
            return None;
        }
        // A test that failed while holding it poisoned it; the turn is still free.
        let guard = TURN.lock().unwrap_or_else(|e| e.into_inner());
        HOLDS_TURN.with(|h| h.set(true));
        Some(Turn(guard))
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        HOLDS_TURN.with(|h| h.set(false));
    }
}

/// One slot round: `pid`'s record, and whether it was served unchanged.
pub(super) fn round(src: &LinuxSource, pid: i32) -> (Option<ProcessRecord>, bool) {
    let snap = src.snapshot(Detail::Slots).unwrap();
    let rec = snap.processes.iter().find(|p| p.pid == pid).cloned();
    let served = src
        .reader
        .kept_status
        .borrow()
        .served_unchanged()
        .contains(&pid);
    (rec, served)
}

/// What `probe` finds once it finds something (10 s at most: a condition, not a nap); the
/// failure names `what` and the last text `probe` read.
pub(super) fn until<T>(what: &str, mut probe: impl FnMut(&mut String) -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut text = String::new();
    loop {
        if let Some(found) = probe(&mut text) {
            return found;
        }
        assert!(Instant::now() < deadline, "{what}: {text}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Until `cond` holds for `/proc/PID/status`'s text.
pub(crate) fn wait_status(pid: i32, cond: impl Fn(&str) -> bool) {
    until(&format!("pid {pid} never got there"), |text| {
        *text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        cond(text).then_some(())
    });
}

/// The pid of a zombie child of `pid`, once there is one.
pub(super) fn zombie_child_of(pid: i32) -> i32 {
    let children = format!("/proc/{pid}/task/{pid}/children");
    until(&format!("no zombie under {pid}"), |text| {
        *text = std::fs::read_to_string(&children).unwrap_or_default();
        text.split_whitespace()
            .filter_map(|p| p.parse().ok())
            .find(|p: &i32| {
                std::fs::read_to_string(format!("/proc/{p}/status"))
                    .is_ok_and(|s| s.contains("State:\tZ"))
            })
    })
}

/// Ends the child at the end of the test, also when an assertion failed first: every
/// script here ends in a `cat` of its stdin, which ends when the pipe closes (no signal).
pub(super) struct Started(pub(super) Child);

impl Drop for Started {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

/// `script` started (it begins with `read x`, so it waits as `sh` until [`go`]) and read in
/// two rounds: the second serves it unchanged. Its source and that round's record.
fn start_served(script: &str) -> (Started, i32, Repeating, ProcessRecord) {
    let c = start(script);
    let pid = c.0.id() as i32;
    wait_status(pid, |s| s.starts_with("Name:\tsh\n"));
    let src = repeating();
    round(&src, pid);
    let (before, served) = round(&src, pid);
    assert!(served);
    (c, pid, src, before.unwrap())
}

/// Lets a script started by [`start_served`] past its `read x`.
fn go(c: &mut Started) {
    c.0.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
}

pub(super) fn start(script: &str) -> Started {
    Started(
        Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// A process that stays as it was is served unchanged from the second round on; the round
/// after it exits reads it in full (a zombie now); a zombie is then served unchanged too.
#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn an_unchanged_process_is_served_and_its_exit_is_read_in_full() {
    require_pidfd_info();
    let mut c = start("exec cat");
    let pid = c.0.id() as i32;
    wait_status(pid, |s| s.starts_with("Name:\tcat\n"));
    let src = repeating();
    let (first, served) = round(&src, pid);
    let first = first.unwrap();
    assert!(!served, "the first round reads in full");
    assert_eq!((first.name.as_str(), first.threads), ("cat", Some(1)));
    let (second, served) = round(&src, pid);
    assert!(served, "unchanged: served from the last full read");
    assert_eq!(second.as_ref(), Some(&first));
    // The control: it exits (the pipe closed), and is not waited for: a zombie.
    drop(c.0.stdin.take());
    wait_status(pid, |s| s.contains("State:\tZ"));
    let (third, served) = round(&src, pid);
    assert!(!served, "exited since: read in full");
    assert!(third.unwrap().is_zombie());
    let (fourth, served) = round(&src, pid);
    assert!(served && fourth.unwrap().is_zombie());
    c.0.wait().unwrap();
    assert_eq!(round(&src, pid), (None, false), "reaped: gone");
}

/// The parent of a zombie is named as it is now, though nothing the check compares
/// changed when it `exec`ed (`sh` became `cat`, the same uid, parent and one thread).
#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn the_parent_of_a_zombie_is_named_as_it_is_now() {
    require_pidfd_info();
    // `true &` exits at once and nobody waits for it: after the exec, `cat` never does.
    let (mut c, pid, src, before) = start_served("read x; true & exec cat");
    assert_eq!(before.name, "sh");
    go(&mut c);
    wait_status(pid, |s| s.starts_with("Name:\tcat\n"));
    let zombie = zombie_child_of(pid);
    let snap = src.snapshot(Detail::Slots).unwrap();
    let z = snap.processes.iter().find(|p| p.pid == zombie).unwrap();
    assert!(z.is_zombie() && z.ppid == pid);
    let parent = snap.processes.iter().find(|p| p.pid == pid).unwrap();
    assert_eq!(
        parent.name, "cat",
        "the zombie's parent, read in full again"
    );
}

/// A process whose real uid changes between rounds (root only: `setpriv` drops to
/// nobody and execs `cat`, keeping its pid, parent and one thread) is seen with the new
/// uid in the next round.
#[test]
#[cfg_attr(
    not(all(hr_pidfd_info, hr_root, hr_tool_setpriv)),
    ignore = "needs PIDFD_GET_INFO (Linux 6.13), root and setpriv"
)]
fn a_changed_real_uid_is_seen_the_next_round() {
    require_pidfd_info();
    let root = rustix::process::getuid().is_root();
    assert!(
        root && std::path::Path::new("/usr/bin/setpriv").exists(),
        "changing a process's real uid needs root and /usr/bin/setpriv"
    );
    let (mut c, pid, src, before) =
        start_served("read x; exec setpriv --reuid=65534 --regid=65534 --clear-groups cat");
    assert_eq!(before.uid, 0);
    go(&mut c);
    wait_status(pid, |s| s.contains("\nUid:\t65534\t"));
    let (after, served) = round(&src, pid);
    assert!(!served, "the uid changed: read in full");
    assert_eq!(after.unwrap().uid, 65534);
}

/// Each value the check compares, changed alone, sends the process to a full read.
#[test]
fn any_compared_change_means_a_full_read() {
    let mut rec = crate::core::snapshot::fixture::proc(100, 1, "cat");
    rec.threads = Some(1);
    let info = pidfd_info::PidfdInfo {
        pid: 100,
        ppid: 1,
        ruid: rec.uid,
    };
    let same = |rec: &ProcessRecord, i, threads, exited, leader| {
        still_unchanged(rec, 100, i, Some(threads), exited, leader)
    };
    assert!(same(&rec, info, 1, false, None));
    let other = |f: fn(&mut pidfd_info::PidfdInfo)| {
        let mut i = info;
        f(&mut i);
        i
    };
    assert!(!same(&rec, other(|i| i.ruid += 1), 1, false, None));
    assert!(!same(&rec, other(|i| i.ppid = 2), 1, false, None));
    assert!(!same(&rec, other(|i| i.pid = 7), 1, false, None));
    assert!(!same(&rec, info, 2, false, None), "a second thread");
    assert!(
        !still_unchanged(&rec, 100, info, None, false, None),
        "reaped"
    );
    assert!(!same(&rec, info, 1, true, None), "exited");
    // Multi-threaded: the main thread's exit (`statm`) must match the record's state.
    rec.threads = Some(3);
    assert!(same(&rec, info, 3, false, Some(false)), "the same count");
    assert!(!same(&rec, info, 4, false, Some(false)), "a thread started");
    assert!(!same(&rec, info, 2, false, Some(false)), "a thread ended");
    assert!(!same(&rec, info, 3, false, None), "`statm` unread");
    assert!(
        !same(&rec, info, 3, false, Some(true)),
        "its main thread exited"
    );
    assert!(!same(&rec, info, 3, true, Some(true)), "it exited");
    rec.state = crate::core::snapshot::ProcState::Zombie;
    assert!(
        same(&rec, info, 3, false, Some(true)),
        "a zombie leader stays one"
    );
    assert!(same(&rec, info, 3, true, Some(true)), "a zombie stays one");
    assert!(
        !same(&rec, info, 3, false, Some(false)),
        "a main thread with memory again (another thread's exec took its pid)"
    );
    rec.threads = Some(1);
    assert!(same(&rec, info, 1, true, None), "a single-threaded zombie");
}

/// Only a process that was a single-threaded zombie and has exited since skips its thread
/// count: a zombie leader whose other threads still run, a live process, and a zombie whose
/// pidfd has not polled exited are counted as before.
#[test]
fn only_a_dead_single_threaded_zombie_keeps_its_thread_count() {
    let mut zombie = crate::core::snapshot::fixture::proc(100, 1, "leak");
    zombie.state = crate::core::snapshot::ProcState::Zombie;
    zombie.threads = Some(1);
    assert!(dead(&zombie, true));
    assert!(!dead(&zombie, false), "its pidfd has not polled exited");
    let mut leader = zombie.clone();
    leader.threads = Some(3);
    assert!(
        !dead(&leader, true),
        "a zombie leader, its other threads running"
    );
    let mut live = zombie.clone();
    live.state = crate::core::snapshot::ProcState::Sleeping;
    assert!(!dead(&live, true), "not a zombie at its last read");
}

/// A dead zombie is served without a system call of its own only while it is not reaped and
/// its parent as last read polled alive in this snapshot.
#[test]
fn a_dead_zombie_is_served_without_asking_only_while_its_parent_lives() {
    let mut zombie = crate::core::snapshot::fixture::proc(100, 1, "leak");
    zombie.state = crate::core::snapshot::ProcState::Zombie;
    zombie.threads = Some(1);
    assert!(dead_and_still_parented(true, false, true, &zombie));
    assert!(
        !dead_and_still_parented(true, false, false, &zombie),
        "its parent exited or is not kept: it may have been reparented"
    );
    assert!(
        !dead_and_still_parented(true, true, true, &zombie),
        "reaped: its pid may name another process"
    );
    assert!(
        !dead_and_still_parented(false, false, true, &zombie),
        "not polled exited"
    );
    let mut live = zombie.clone();
    live.state = crate::core::snapshot::ProcState::Sleeping;
    assert!(
        !dead_and_still_parented(true, false, true, &live),
        "a live process is always asked"
    );
}

/// While no task was created since a complete listing, a round walks the kept pids instead
/// of listing `/proc` (`listing.rs`): shown with fixed counters, under which a process
/// started since is not seen. The controls: counters moved by a whole lap of pids (all of
/// `/proc` listed), and counters moved by one from a cursor of 1 (the tail from pid 1 on),
/// both find it.
#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn a_round_lists_proc_again_only_when_a_task_was_created() {
    require_pidfd_info();
    let fixed = |created, cursor| Some(crate::linux::listing::Mark { created, cursor });
    let src = repeating();
    src.listing.borrow_mut().fixed = fixed(1000, 1);
    let first = src.snapshot(Detail::Slots).unwrap();
    assert!(first.unreadable == 0, "a complete listing");
    let c = start("exec cat");
    let pid = c.0.id() as i32;
    wait_status(pid, |s| s.starts_with("Name:\tcat\n"));
    src.listing.borrow_mut().last_list = None;
    let (walked, _) = round(&src, pid);
    assert_eq!(src.listing.borrow().last_list, None, "not listed");
    assert_eq!(walked, None, "nothing created: the kept pids were walked");
    src.listing.borrow_mut().fixed = fixed(1000 + 10_000_000, 2);
    let (listed, _) = round(&src, pid);
    assert_eq!(src.listing.borrow().last_list, Some(None), "all listed");
    assert_eq!(
        listed.map(|p| p.name),
        Some("cat".to_string()),
        "listed again"
    );
    let d = start("exec cat");
    let other = d.0.id() as i32;
    wait_status(other, |s| s.starts_with("Name:\tcat\n"));
    src.listing.borrow_mut().fixed = fixed(1000 + 10_000_001, 2);
    let (tailed, _) = round(&src, other);
    let below = src.listing.borrow().last_list;
    assert!(
        matches!(below, Some(Some(p)) if p <= 2),
        "the tail: {below:?}"
    );
    assert_eq!(
        tailed.map(|p| p.name),
        Some("cat".to_string()),
        "in the tail"
    );
    drop((c, d));
}

/// procfs can say ENOENT for a process that is there (no inode under memory pressure): on
/// this machine's `/proc` a `status` that reads ENOENT is confirmed by `pidfd_open`, so a
/// live process (this one, its `status` path made to miss) is an error, counted unreadable,
/// never gone. The controls: a reaped child is gone; a fake `/proc`'s word is taken.
#[test]
fn an_enoent_of_a_live_process_is_not_gone() {
    let missing = std::path::Path::new("/proc/self/no-such-status");
    let me = std::process::id() as i32;
    let mut buf = String::new();
    let mut real = KeptStatus::with_budget(0).on_real_proc(true);
    let e = real
        .read(me, missing, &mut buf)
        .expect_err("there, so not gone");
    assert!(e.to_string().contains("no-such-status"), "{e}");
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let reaped = child.id() as i32;
    child.wait().unwrap();
    assert!(matches!(real.read(reaped, missing, &mut buf), Ok(None)));
    let mut fake = KeptStatus::with_budget(0);
    assert!(matches!(fake.read(me, missing, &mut buf), Ok(None)));
}
