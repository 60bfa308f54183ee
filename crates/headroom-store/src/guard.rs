//! `watch.lock`: one guard per user, and who that guard is. The `watch` that takes the lock
//! writes a small JSON record into the lock file (pid, the service label it was started
//! under, whether it is a one-round `--once`, its version and program), so that a second
//! guard can say which one holds it and decide how to leave (`commands::watch::single`),
//! and `doctor` can say which guard runs. The lock itself is `flock`, released by the kernel
//! when the holder dies, so a stale record under a free lock means nothing.

use std::path::{Path, PathBuf};

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::fsio::Lock;

/// The file the lock is taken on (`<dir>/watch.lock`).
pub fn lock_path(dir: &Path) -> PathBuf {
    dir.join("watch.lock")
}

/// Who holds the guard lock, as it wrote itself into the lock file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Holder")]
pub struct LockHolder {
    pub pid: u32,
    /// The service definition that started it (`HEADROOM_SERVICE`: `homebrew.mxcl.headroom`,
    /// `dev.headroom.watch`, …); `null` when it was started by hand.
    pub label: Option<String>,
    /// A one-round `watch --once`, which lets go within seconds.
    pub once: bool,
    /// When it took the lock (RFC 3339).
    pub locked_at: String,
    /// headroom's version.
    pub version: String,
    /// The program it runs, as started (what its service manager would start again).
    pub program: Option<String>,
}

impl LockHolder {
    /// How a message names it: `` `homebrew.mxcl.headroom` (pid 812) ``, `a guard started
    /// by hand (pid 812)`, `` a `watch --once` (pid 7) ``.
    pub fn describe(&self) -> String {
        match (&self.label, self.once) {
            (_, true) => format!("a `watch --once` (pid {})", self.pid),
            (Some(l), false) => format!("`{l}` (pid {})", self.pid),
            (None, false) => format!("a guard started by hand (pid {})", self.pid),
        }
    }
}

/// What became of an attempt to take the guard lock.
#[derive(Debug)]
pub enum Taken {
    /// This process is the guard; the lock is held until the value is dropped.
    Held(Lock),
    /// Another process holds it; what it wrote about itself, when that could be read.
    Busy(Option<LockHolder>),
}

/// Take the guard lock in `dir` without waiting and, once held, write `me` into it. A record
/// that cannot be written does not cost the lock (the guard still guards; a second one then
/// only cannot say who holds it).
pub fn try_take(dir: &Path, me: &LockHolder) -> Result<Taken> {
    let base = dir.join("watch");
    match Lock::try_acquire(&base)? {
        Some(lock) => {
            if let Ok(json) = serde_json::to_vec(me) {
                let _ = lock.record(&json);
            }
            Ok(Taken::Held(lock))
        }
        None => Ok(Taken::Busy(read_holder(dir))),
    }
}

/// The record in `dir`'s lock file, if there is one that parses. It says who took the lock
/// last; whether it is still held is for the caller to know (`try_take` found it busy) or to
/// check (the pid still runs headroom).
pub fn read_holder(dir: &Path) -> Option<LockHolder> {
    let bytes = crate::fsio::read_private(&lock_path(dir)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me(pid: u32, label: Option<&str>, once: bool) -> LockHolder {
        LockHolder {
            pid,
            label: label.map(str::to_string),
            once,
            locked_at: "2026-12-02T10:00:00Z".into(),
            version: "0.1.0".into(),
            program: Some("/opt/homebrew/opt/headroom/bin/headroom".into()),
        }
    }

    #[test]
    fn the_second_taker_reads_who_holds_the_lock_and_the_first_lets_go_on_drop() {
        let d = tempfile::tempdir().unwrap();
        let first = me(812, Some("homebrew.mxcl.headroom"), false);
        let held = match try_take(d.path(), &first).unwrap() {
            Taken::Held(l) => l,
            Taken::Busy(h) => panic!("busy: {h:?}"),
        };
        match try_take(d.path(), &me(900, None, false)).unwrap() {
            Taken::Busy(Some(h)) => assert_eq!(h, first),
            other => panic!("{other:?}"),
        }
        assert_eq!(read_holder(d.path()), Some(first));
        drop(held);
        // Control: free again, the next one takes it and its record replaces the first's.
        let second = me(901, None, true);
        assert!(matches!(
            try_take(d.path(), &second).unwrap(),
            Taken::Held(_)
        ));
        assert_eq!(read_holder(d.path()), Some(second));
    }

    #[test]
    fn an_older_empty_lock_file_or_garbage_is_an_unknown_holder() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(read_holder(d.path()), None);
        std::fs::write(lock_path(d.path()), b"").unwrap();
        assert_eq!(read_holder(d.path()), None);
        std::fs::write(lock_path(d.path()), b"{\"pid\":").unwrap();
        assert_eq!(read_holder(d.path()), None);
    }

    #[test]
    fn a_holder_names_its_label_or_says_it_was_started_by_hand() {
        assert_eq!(
            me(812, Some("homebrew.mxcl.headroom"), false).describe(),
            "`homebrew.mxcl.headroom` (pid 812)"
        );
        assert_eq!(
            me(812, None, false).describe(),
            "a guard started by hand (pid 812)"
        );
        assert_eq!(
            me(7, Some("x"), true).describe(),
            "a `watch --once` (pid 7)"
        );
    }
}
