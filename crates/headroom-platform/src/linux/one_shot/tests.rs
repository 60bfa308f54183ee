//! The one-shot reading for real: a live child and a zombie child of this test process,
//! read by pidfd (`LinuxSource` without `keep_between_rounds`), against the control, a
//! source that reads every `status` in full. Children are `cat`s on a pipe: closing the pipe
//! ends them, no signal needed; each is waited for at the end.

use std::process::{Child, Command, Stdio};

use crate::ProcessSource;
use crate::core::snapshot::{Detail, ProcessRecord, Snapshot};
use crate::linux::slots::round_tests::{full_reads, require_pidfd_info, wait_status};
use crate::linux::{LinuxSource, Roots};

struct Cat(Child);

impl Cat {
    fn start() -> Self {
        let c = Command::new("cat").stdin(Stdio::piped()).spawn().unwrap();
        let cat = Self(c);
        wait_status(cat.pid(), |s| s.starts_with("Name:\tcat\n"));
        cat
    }

    fn pid(&self) -> i32 {
        self.0.id() as i32
    }
}

impl Drop for Cat {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

fn find(snap: &Snapshot, pid: i32) -> Option<&ProcessRecord> {
    snap.processes.iter().find(|p| p.pid == pid)
}

/// What slot counting uses of a record.
fn counted(r: &ProcessRecord) -> (i32, u32, Option<u32>, bool) {
    (r.ppid, r.uid, r.threads, r.is_zombie())
}

/// A live and a zombie child are counted as a full read counts them (uid, parent, one
/// thread; zombie or not: the zombie only from the pidfd's `poll`, so reading `POLLIN` as
/// alive fails here), the zombie's parent (this process) is named as `status` names it
/// (`refresh_zombie_parents`; without it the name is empty), and once reaped the zombie is
/// gone from the reading.
#[test]
#[cfg_attr(not(hr_pidfd_info), ignore = "needs PIDFD_GET_INFO (Linux 6.13)")]
fn a_one_shot_reading_counts_live_and_zombie_children_as_a_full_read_does() {
    require_pidfd_info();
    let live = Cat::start();
    let mut zombie = Cat::start();
    drop(zombie.0.stdin.take());
    wait_status(zombie.pid(), |s| s.contains("State:\tZ"));
    let me = std::process::id() as i32;
    let once = LinuxSource::new(Roots::default())
        .snapshot(Detail::Slots)
        .unwrap();
    let control = full_reads().snapshot(Detail::Slots).unwrap();
    for pid in [live.pid(), zombie.pid()] {
        let (a, b) = (find(&once, pid).unwrap(), find(&control, pid).unwrap());
        assert_eq!(counted(a), counted(b), "pid {pid}");
        assert_eq!(a.ppid, me);
    }
    assert!(find(&once, zombie.pid()).unwrap().is_zombie());
    assert!(!find(&once, live.pid()).unwrap().is_zombie());
    let parent = find(&once, me).unwrap();
    assert_eq!(parent.name, find(&control, me).unwrap().name);
    assert!(!parent.name.is_empty());
    // Not a zombie's parent: its name is not read.
    assert_eq!(find(&once, live.pid()).unwrap().name, "");
    zombie.0.wait().unwrap();
    let after = LinuxSource::new(Roots::default())
        .snapshot(Detail::Slots)
        .unwrap();
    assert!(find(&after, zombie.pid()).is_none(), "reaped: gone");
    assert!(find(&after, live.pid()).is_some());
}
