//! Whether a repeated slot round must list `/proc` again, or may walk the pids it kept.
//!
//! Listing `/proc` costs the kernel a dentry per process: 6.6 ms of CPU at 6,100 processes
//! here, most of a table round once its per-process reads are served unchanged
//! (`slots.rs`). The listing can only have changed by a new task: an exit keeps the pid
//! listed until it is reaped, and the kept pidfds' `poll` sees both (a zombie polls
//! readable, a reaped process hangs up, and its kept descriptors read ESRCH). Every new
//! task, process or thread, takes the next pid of the pid namespace's cursor, which
//! `/proc/loadavg`'s fifth field shows (the last pid allocated). So when the cursor has not
//! moved since it was read just before a complete listing, no process can be missing from
//! that listing's pids, and the round walks them (each still checked or read as before)
//! instead of listing.
//!
//! A listing is complete when every process it gave was kept (the descriptor budget did
//! not run out) and none was unreadable (a `hidepid` mount hides some). The cursor is read
//! before the listing, so a process started during it moves the cursor and the next round
//! lists. What this cannot see: a pid chosen by `clone3`'s `set_tid` or the cursor written
//! back through `ns_last_pid` (checkpoint/restore, which needs CAP_CHECKPOINT_RESTORE),
//! and a `/proc` of another pid namespace than this process's, whose cursor is not the one
//! `loadavg` shows: then the round always lists (`Listing::new` checks that `/proc/self`
//! names this process).

use std::fs::File;
use std::path::Path;

use super::read::read_whole;

#[derive(Debug, Default)]
pub(super) struct Listing {
    /// `/proc/loadavg`, kept open; `None`: every round lists.
    loadavg: Option<File>,
    /// The cursor read before the last complete listing.
    complete_at: Option<u64>,
    text: String,
    /// A test's cursor in place of `loadavg`'s.
    #[cfg(test)]
    pub(super) fixed: Option<u64>,
}

impl Listing {
    /// For the `/proc` at `proc`, when it is this machine's (`real_proc`) and of this
    /// process's pid namespace.
    pub(super) fn new(proc: &Path, real_proc: bool) -> Self {
        let own_ns = std::fs::read_link(proc.join("self"))
            .ok()
            .and_then(|p| p.to_str()?.parse::<u32>().ok())
            == Some(std::process::id());
        Self {
            loadavg: (real_proc && own_ns)
                .then(|| File::open(proc.join("loadavg")).ok())
                .flatten(),
            complete_at: None,
            text: String::with_capacity(128),
            #[cfg(test)]
            fixed: None,
        }
    }

    /// The pid namespace's last allocated pid now; `None` when it cannot be read.
    pub(super) fn cursor(&mut self) -> Option<u64> {
        #[cfg(test)]
        if self.fixed.is_some() {
            return self.fixed;
        }
        let f = self.loadavg.as_ref()?;
        read_whole(f, &mut self.text).ok()?;
        parse_last_pid(&self.text)
    }

    /// Whether the pids of the last complete listing are all the processes there can be,
    /// by the cursor read at the start of this round.
    pub(super) fn unchanged_since(&self, cursor: Option<u64>) -> bool {
        cursor.is_some() && cursor == self.complete_at
    }

    /// After a round that read `cursor` first: whether its processes were all kept and
    /// readable, so the next round may walk them.
    pub(super) fn finish(&mut self, cursor: Option<u64>, complete: bool) {
        self.complete_at = cursor.filter(|_| complete);
    }
}

/// The fifth field of `/proc/loadavg`: the last pid allocated in the reader's namespace.
fn parse_last_pid(s: &str) -> Option<u64> {
    s.split_ascii_whitespace().nth(4)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cursor_is_loadavg_s_fifth_field() {
        assert_eq!(parse_last_pid("0.00 0.01 0.05 2/345 6789\n"), Some(6789));
        assert_eq!(parse_last_pid("0.00 0.01 0.05 2/345"), None);
        assert_eq!(parse_last_pid("0.00 0.01 0.05 2/345 x"), None);
    }

    /// Only a complete listing, at the cursor read now, spares the next one.
    #[test]
    fn only_a_complete_listing_at_the_same_cursor_is_reused() {
        let mut l = Listing::default();
        assert!(!l.unchanged_since(Some(10)), "nothing listed yet");
        l.finish(Some(10), true);
        assert!(l.unchanged_since(Some(10)));
        assert!(!l.unchanged_since(Some(11)), "a task was created since");
        assert!(!l.unchanged_since(None), "the cursor cannot be read");
        l.finish(Some(11), false);
        assert!(
            !l.unchanged_since(Some(11)),
            "incomplete: some were not kept"
        );
        l.finish(None, true);
        assert!(!l.unchanged_since(None));
    }

    /// For real: a process started after a listing moves the cursor.
    #[test]
    fn a_new_process_moves_the_cursor() {
        let mut l = Listing::new(Path::new("/proc"), true);
        let before = l.cursor().expect("this machine's /proc/loadavg");
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        let after = l.cursor().unwrap();
        assert_ne!(before, after, "the cursor moved");
        assert!(
            Listing::new(Path::new("/nonexistent"), true)
                .cursor()
                .is_none()
        );
    }
}
