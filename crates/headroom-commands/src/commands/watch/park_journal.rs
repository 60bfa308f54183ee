//! What survives `watch`'s own SIGKILL (issue 25 item 8): every process a memory guard is
//! about to stop is written to `watch-parked.json` *before* its SIGSTOP (a `watch` killed
//! between the signal and the write would otherwise lose it), the record follows the parked
//! trees after every round and is removed when nothing is parked; at start-up a `watch`
//! continues what an earlier one left recorded, each by its identity (pid, start time, uid,
//! in this boot), so a pid now held by another process is never signalled. A record that
//! cannot be written is said once and the guard acts anyway, as a cleanup does (item 9).

use std::cell::RefCell;
use std::path::PathBuf;

use crate::core::snapshot::Identity;
use crate::platform::{self, Delivery, PlatformError, Presence, ProcessControl, Signal};
use crate::store::parked::{self, Recorded};

/// The record of parked processes, as this `watch` keeps it.
#[derive(Debug, Default)]
pub(super) struct ParkJournal {
    /// The state directory and this boot; `None` when either is unknown (nothing recorded,
    /// said once).
    place: Option<(PathBuf, String)>,
    /// Why not, said at the first stop.
    why_not: Option<String>,
    uid: u32,
    /// What the record should hold.
    want: Vec<Identity>,
    /// What it holds, as last written (or read); `None` until then, or after a failed write.
    on_disk: Option<Vec<Identity>>,
    /// Whether a failed write was said; lines not yet said.
    said: bool,
    notices: Vec<String>,
}

/// What waking an earlier `watch`'s record did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Woken {
    pub(super) woken: Vec<i32>,
    /// Gone, or the pid now another process (or another user's): not signalled.
    pub(super) not_the_same: Vec<i32>,
    pub(super) failed: Vec<(i32, String)>,
}

impl ParkJournal {
    /// The journal in `dir` (the state directory, if it could be made) for `uid`.
    pub(super) fn new(dir: Option<PathBuf>, uid: u32) -> Self {
        let mut j = Self {
            uid,
            ..Self::default()
        };
        match (dir, platform::boot_id()) {
            (Some(d), Ok(boot)) => j.place = Some((d, boot)),
            (None, _) => j.why_not = Some("no state directory".into()),
            (_, Err(e)) => j.why_not = Some(format!("the boot identity cannot be read ({e})")),
        }
        j
    }

    /// A write that did not happen: said once, and only when something is parked.
    fn lost(&mut self, why: String) {
        if !self.want.is_empty() && !std::mem::replace(&mut self.said, true) {
            self.notices.push(format!(
                "parked processes not recorded ({why}); parking anyway: if this watch is \
                 killed by SIGKILL while they are parked, the next one cannot wake them \
                 (said once)"
            ));
        }
    }

    /// Lines to say (as warnings), taken.
    pub(super) fn take_notices(&mut self) -> Vec<String> {
        std::mem::take(&mut self.notices)
    }

    /// Continue what an earlier `watch` recorded and did not continue (it was killed), each
    /// by its identity through `control`, then clear the record. `None` when there was
    /// nothing to wake; a record of another boot or uid is removed unused (said).
    pub(super) fn wake_recorded(&mut self, control: &dyn ProcessControl) -> Option<Woken> {
        let (dir, boot) = self.place.clone()?;
        if let Err(why) = crate::store::state::check_dir(&dir, self.uid) {
            // Anyone else who can write it can name processes: not acted on, not touched.
            self.notices
                .push(format!("parked-process record not used: {why}"));
            return None;
        }
        let ids = match parked::load(&dir, self.uid, &boot) {
            Ok(Recorded::None) => return None,
            Ok(Recorded::Parked(ids)) => ids,
            Ok(Recorded::Unusable(why)) => {
                self.notices
                    .push(format!("parked-process record not used: {why}"));
                self.on_disk = None;
                self.write(Vec::new());
                return None;
            }
            Err(e) => {
                self.notices
                    .push(format!("parked-process record not read: {e:#}"));
                return None;
            }
        };
        let mut w = Woken::default();
        // Leaves first: the reverse of the order they were stopped in.
        for id in ids.iter().rev() {
            if id.uid != self.uid {
                w.not_the_same.push(id.pid);
                continue;
            }
            match control.signal(id, Signal::Cont) {
                Ok(Delivery::Sent) => w.woken.push(id.pid),
                Ok(Delivery::Gone | Delivery::IdentityChanged) => w.not_the_same.push(id.pid),
                Err(e) => w.failed.push((id.pid, e.to_string())),
            }
        }
        self.on_disk = Some(ids);
        self.write(Vec::new());
        Some(w)
    }

    /// `id` is about to be stopped: recorded first.
    pub(super) fn before_stop(&mut self, id: Identity) {
        if !self.want.contains(&id) {
            let mut ids = self.want.clone();
            ids.push(id);
            self.write(ids);
        }
    }

    /// What is parked after a round (every tree's members): the record follows.
    pub(super) fn sync(&mut self, ids: Vec<Identity>) {
        if self.on_disk.as_ref() != Some(&ids) {
            self.write(ids);
        }
    }

    fn write(&mut self, ids: Vec<Identity>) {
        self.want = ids;
        let Some((dir, boot)) = &self.place else {
            let why = self.why_not.clone().unwrap_or_default();
            return self.lost(why);
        };
        match parked::save(dir, self.uid, boot, &self.want) {
            Ok(()) => self.on_disk = Some(self.want.clone()),
            Err(e) => {
                self.on_disk = None;
                self.lost(format!("{e:#}"));
            }
        }
    }
}

/// `control`, recording every process before it is stopped.
pub(super) struct Journaled<'a> {
    pub(super) inner: &'a dyn ProcessControl,
    pub(super) journal: &'a RefCell<ParkJournal>,
}

impl ProcessControl for Journaled<'_> {
    fn signal(&self, target: &Identity, sig: Signal) -> Result<Delivery, PlatformError> {
        if sig == Signal::Stop {
            self.journal.borrow_mut().before_stop(*target);
        }
        self.inner.signal(target, sig)
    }

    fn alive(&self, target: &Identity) -> Result<bool, PlatformError> {
        self.inner.alive(target)
    }

    fn presence(&self, target: &Identity) -> Result<Presence, PlatformError> {
        self.inner.presence(target)
    }
}

impl Woken {
    /// The notice for a non-empty wake.
    pub(super) fn line(&self) -> String {
        let list = |p: &[i32]| {
            p.iter()
                .map(|p| format!("`{p}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut line = format!(
            "an earlier watch ended without waking what it had parked (killed by SIGKILL?): \
             woke {} ({})",
            crate::output::plural(self.woken.len() as u64, "process"),
            list(&self.woken)
        );
        if !self.not_the_same.is_empty() {
            line.push_str(&format!(
                "; not signalled, gone or now another process: {}",
                list(&self.not_the_same)
            ));
        }
        for (pid, e) in &self.failed {
            line.push_str(&format!("; pid `{pid}` not woken: {e}"));
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::test_double::Table;
    use crate::core::snapshot::fixture::{proc, snapshot};

    #[test]
    fn a_process_is_recorded_before_its_stop_and_the_record_follows_the_rounds() {
        let d = tempfile::tempdir().unwrap();
        let uid = crate::core::snapshot::fixture::UID;
        let snap = snapshot("linux", vec![proc(1, 0, "init"), proc(40, 1, "job")]);
        let id = snap.processes[1].identity().unwrap();
        let t = Table::new(snap);
        let j = RefCell::new(ParkJournal::new(Some(d.path().to_path_buf()), uid));
        let boot = platform::boot_id().unwrap();
        let c = Journaled {
            inner: &t,
            journal: &j,
        };
        c.signal(&id, Signal::Stop).unwrap();
        assert_eq!(
            parked::load(d.path(), uid, &boot).unwrap(),
            Recorded::Parked(vec![id])
        );
        // Control: other signals record nothing.
        c.signal(&id, Signal::Term).unwrap();
        assert_eq!(j.borrow().want, vec![id]);
        j.borrow_mut().sync(Vec::new());
        assert!(!d.path().join(parked::PARKED_FILE).exists());
        assert!(j.borrow_mut().take_notices().is_empty());
    }

    /// A record that cannot be written never holds a stop back: the stop is sent, the lost
    /// write said once. Control: nothing parked, nothing said.
    #[test]
    fn a_record_that_cannot_be_written_is_said_once_and_the_stop_still_sent() {
        let d = tempfile::tempdir().unwrap();
        let gone = d.path().join("missing");
        let snap = snapshot(
            "linux",
            vec![proc(1, 0, "init"), proc(40, 1, "a"), proc(41, 1, "b")],
        );
        let (a, b) = (
            snap.processes[1].identity().unwrap(),
            snap.processes[2].identity().unwrap(),
        );
        let t = Table::new(snap);
        let j = RefCell::new(ParkJournal::new(
            Some(gone),
            crate::core::snapshot::fixture::UID,
        ));
        j.borrow_mut().sync(Vec::new());
        assert!(j.borrow_mut().take_notices().is_empty(), "nothing parked");
        let c = Journaled {
            inner: &t,
            journal: &j,
        };
        c.signal(&a, Signal::Stop).unwrap();
        c.signal(&b, Signal::Stop).unwrap();
        assert_eq!(t.sent(), [(40, Signal::Stop), (41, Signal::Stop)]);
        let said = j.borrow_mut().take_notices();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].contains("not recorded"), "{said:?}");
    }
}
