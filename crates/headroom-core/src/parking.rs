//! Who may be stopped or continued, and in what order (all OSes, pure). `park`, `wake`,
//! `park-tree`, `wake-tree` and `top`'s park candidates all ask this module; the signalling
//! itself is in `actions::park`.
//!
//! Refused whatever the user asks: pid ≤ 1 (the kernel, init/launchd), another user's
//! process, headroom itself, and headroom's ancestors (stopping one would freeze the shell
//! the user typed the command into, and headroom with it).

use std::collections::HashSet;

use crate::process_table::ProcessTable;
use crate::snapshot::ProcessRecord;

/// Why a process may not be parked or woken. Exit 3.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParkRefusal {
    #[error("pid `{pid}` is never signalled: {}", reserved_why(*pid))]
    Reserved { pid: i64 },
    #[error("pid `{pid}` (`{name}`) belongs to uid {owner}, not to you (uid {uid})")]
    OtherUser {
        pid: i32,
        name: String,
        owner: u32,
        uid: u32,
    },
    #[error("pid `{pid}` is headroom itself")]
    Headroom { pid: i32 },
    #[error(
        "pid `{pid}` (`{name}`) is an ancestor of headroom: stopping it would stop the shell or \
         program this command was run from"
    )]
    Ancestor { pid: i32, name: String },
}

/// What the kill system call would make of a pid ≤ 1: each range means something else, and
/// a user who typed `-1` (every process) or `-4242` (a process group) meant neither pid 0
/// nor init.
fn reserved_why(pid: i64) -> String {
    match pid {
        1 => "pid 1 is init (launchd on macOS)".to_string(),
        0 => {
            "pid 0 is no process: as a signal target it means your whole process group".to_string()
        }
        -1 => "a negative pid is no process: as a signal target -1 means every process you may \
               signal"
            .to_string(),
        _ => format!(
            "a negative pid is no process: as a signal target {pid} means process group {}",
            pid.unsigned_abs()
        ),
    }
}

impl ParkRefusal {
    /// The stable name of the rule, the same one `reap`'s decision table uses for it.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Reserved { .. } => "init-process",
            Self::OtherUser { .. } => "foreign-uid",
            Self::Headroom { .. } | Self::Ancestor { .. } => "protected-ancestor",
        }
    }
}

/// The facts every refusal needs, read once per command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParkPermission {
    pub uid: u32,
    pub self_pid: i32,
    /// headroom's ancestors by live parent links, init included.
    pub ancestors: HashSet<i32>,
}

impl ParkPermission {
    /// The permission for the process that took `table` (its `self_pid` and `uid`).
    pub fn new(table: &ProcessTable<'_>) -> Self {
        let self_pid = table.snapshot.self_pid;
        let ancestors = table
            .self_and_ancestors(self_pid)
            .into_iter()
            .filter(|&p| p != self_pid)
            .collect();
        Self {
            uid: table.snapshot.uid,
            self_pid,
            ancestors,
        }
    }

    /// The pid alone: 0, 1 and negative numbers (process groups, "every process") never.
    pub fn check_pid(&self, pid: i64) -> Result<(), ParkRefusal> {
        if pid <= 1 {
            return Err(ParkRefusal::Reserved { pid });
        }
        Ok(())
    }

    /// Every rule, for a process that exists.
    pub fn check(&self, p: &ProcessRecord) -> Result<(), ParkRefusal> {
        self.check_pid(i64::from(p.pid))?;
        if p.uid != self.uid {
            return Err(ParkRefusal::OtherUser {
                pid: p.pid,
                name: p.name.clone(),
                owner: p.uid,
                uid: self.uid,
            });
        }
        if p.pid == self.self_pid {
            return Err(ParkRefusal::Headroom { pid: p.pid });
        }
        if self.ancestors.contains(&p.pid) {
            return Err(ParkRefusal::Ancestor {
                pid: p.pid,
                name: p.name.clone(),
            });
        }
        Ok(())
    }
}

/// The order to stop a tree in: the root first, then breadth first, so that no process can
/// fork a new child while its parent is already stopped... and every parent is stopped
/// before its children are.
pub fn stop_order<'a>(table: &ProcessTable<'a>, root: i32) -> Vec<&'a ProcessRecord> {
    table.subtree(root, |_| true).unwrap_or_default()
}

/// The order to continue a tree in: the deepest level first and the root last, so that a
/// parent never wakes to find its children still stopped.
pub fn wake_order<'a>(table: &ProcessTable<'a>, root: i32) -> Vec<&'a ProcessRecord> {
    let mut v = stop_order(table, root);
    v.reverse();
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::fixture::{OTHER_UID, proc, snapshot};

    /// init 1 → shell 20 → headroom 30; shell → job 40 → 41, 42 → 43; 50 another user's.
    fn table_snapshot() -> crate::snapshot::Snapshot {
        let mut other = proc(50, 1, "sshd");
        other.uid = OTHER_UID;
        let mut s = snapshot(
            "linux",
            vec![
                proc(1, 0, "init"),
                proc(20, 1, "zsh"),
                proc(30, 20, "headroom"),
                proc(40, 20, "job"),
                proc(42, 40, "b"),
                proc(41, 40, "a"),
                proc(43, 42, "c"),
                other,
            ],
        );
        s.self_pid = 30;
        s
    }

    #[test]
    fn a_reserved_pid_is_explained_as_what_kill_would_make_of_it() {
        let said = |pid: i64| ParkRefusal::Reserved { pid }.to_string();
        assert!(said(-1).contains("-1 means every process you may signal"));
        assert!(said(-4242).contains("-4242 means process group 4242"));
        assert!(said(0).contains("your whole process group"));
        for pid in [-1, -4242, 0] {
            assert!(!said(pid).contains("init"), "{}", said(pid));
        }
        // Control: pid 1 is init, and only pid 1 is explained as init.
        assert!(said(1).ends_with("pid 1 is init (launchd on macOS)"));
    }

    #[test]
    fn refusals_cover_reserved_pids_other_users_self_and_ancestors() {
        let snap = table_snapshot();
        let t = ProcessTable::new(&snap);
        let g = ParkPermission::new(&t);
        for pid in [-4096, -1, 0, 1] {
            assert_eq!(g.check_pid(pid), Err(ParkRefusal::Reserved { pid }));
        }
        assert!(matches!(
            g.check(t.get(50).unwrap()),
            Err(ParkRefusal::OtherUser {
                owner: OTHER_UID,
                ..
            })
        ));
        assert_eq!(
            g.check(t.get(30).unwrap()),
            Err(ParkRefusal::Headroom { pid: 30 })
        );
        let e = g.check(t.get(20).unwrap()).unwrap_err();
        assert!(matches!(e, ParkRefusal::Ancestor { pid: 20, .. }));
        assert!(e.to_string().contains("`zsh`"), "{e}");
        assert!(g.check(t.get(1).unwrap()).is_err());
        assert_eq!(g.check(t.get(40).unwrap()), Ok(()));
        assert_eq!(g.check(t.get(43).unwrap()), Ok(()));
    }

    #[test]
    fn trees_stop_root_first_and_wake_leaves_first() {
        let snap = table_snapshot();
        let t = ProcessTable::new(&snap);
        let stop: Vec<i32> = stop_order(&t, 40).iter().map(|p| p.pid).collect();
        assert_eq!(stop, vec![40, 41, 42, 43]);
        let wake: Vec<i32> = wake_order(&t, 40).iter().map(|p| p.pid).collect();
        assert_eq!(wake, vec![43, 42, 41, 40]);
        assert!(stop_order(&t, 999).is_empty());
    }
}
