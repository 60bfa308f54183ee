//! The one place that calls `kill(2)` (Unix). Every signal is preceded by a fresh read of
//! the target and a comparison with the identity the core approved.

use crate::core::snapshot::Identity;
use crate::platform::{Delivery, PlatformError, Presence, ProcessControl, ProcessSource, Signal};

#[derive(Debug)]
pub(crate) struct UnixControl {
    /// What identities are re-read from: the live OS (`platform::native_control`); a
    /// recorded table only in the tests below, which never reach `kill(2)`.
    source: Box<dyn ProcessSource>,
}

impl std::fmt::Debug for dyn ProcessSource + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ProcessSource({})", self.os())
    }
}

impl UnixControl {
    pub(crate) fn new(source: Box<dyn ProcessSource>) -> Self {
        Self { source }
    }

    /// Re-read `target.pid` and say whether it is still the same, live process.
    fn check(&self, target: &Identity) -> Result<Delivery, PlatformError> {
        match self.source.process(target.pid)? {
            None => Ok(Delivery::Gone),
            Some(p) if p.identity() != Some(*target) => Ok(
                if p.is_zombie() && p.start_time == Some(target.start_time) {
                    Delivery::Gone
                } else {
                    Delivery::IdentityChanged
                },
            ),
            Some(p) if p.is_zombie() => Ok(Delivery::Gone),
            Some(_) => Ok(Delivery::Sent),
        }
    }
}

impl ProcessControl for UnixControl {
    fn signal(&self, target: &Identity, sig: Signal) -> Result<Delivery, PlatformError> {
        // Last line of defence, whatever the caller decided: never the kernel task or init.
        if target.pid <= 1 {
            return Err(PlatformError::Invalid(format!(
                "refusing to signal pid `{}`: pid 0 and 1 are never signalled",
                target.pid
            )));
        }
        let verdict = self.check(target)?;
        if verdict != Delivery::Sent {
            return Ok(verdict);
        }
        #[allow(clippy::disallowed_methods)]
        // SAFETY: kill has no memory-safety preconditions; pid > 1 was checked above, so
        // neither a process group nor "every process" can be addressed.
        let rc = unsafe { libc::kill(target.pid, sig.number()) };
        if rc == 0 {
            return Ok(Delivery::Sent);
        }
        let err = std::io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::ESRCH) => Ok(Delivery::Gone),
            Some(libc::EPERM) => Err(PlatformError::PermissionDenied { pid: target.pid }),
            _ => Err(PlatformError::io(
                format!("{} to pid `{}`", sig.name(), target.pid),
                err,
            )),
        }
    }

    fn alive(&self, target: &Identity) -> Result<bool, PlatformError> {
        Ok(self.check(target)? == Delivery::Sent)
    }

    fn presence(&self, target: &Identity) -> Result<Presence, PlatformError> {
        Ok(match self.check(target)? {
            Delivery::Sent => Presence::Alive,
            Delivery::Gone => Presence::Gone,
            Delivery::IdentityChanged => Presence::Changed,
        })
    }
}

#[cfg(test)]
mod tests {
    //! The identity guard, against a recorded table: only mismatches are signalled here, so
    //! these tests never reach `kill(2)`.
    use super::*;
    use crate::core::snapshot::ProcState;
    use crate::core::snapshot::fixture::{proc, snapshot};
    use crate::platform::replay::ReplaySource;

    fn source() -> ReplaySource {
        let mut zombie = proc(300, 1, "gone");
        zombie.state = ProcState::Zombie;
        ReplaySource::new(snapshot("linux", vec![proc(200, 1, "job"), zombie]))
    }

    #[test]
    fn a_signal_goes_only_to_the_identity_it_was_approved_for() {
        let src = source();
        let control = UnixControl::new(Box::new(source()));
        let job = src.process(200).unwrap().unwrap().identity().unwrap();
        assert!(control.alive(&job).unwrap(), "same pid, start time and uid");
        // The pid now names another process (reused: other start time) or another user.
        let reused = Identity {
            start_time: job.start_time + 1,
            ..job
        };
        assert_eq!(
            control.signal(&reused, Signal::Term).unwrap(),
            Delivery::IdentityChanged
        );
        let other_uid = Identity {
            uid: job.uid + 1,
            ..job
        };
        assert_eq!(
            control.signal(&other_uid, Signal::Kill).unwrap(),
            Delivery::IdentityChanged
        );
        // Gone, or a zombie of the same identity: already dead, nothing sent.
        let absent = Identity { pid: 999, ..job };
        assert_eq!(
            control.signal(&absent, Signal::Term).unwrap(),
            Delivery::Gone
        );
        let z = src.process(300).unwrap().unwrap().identity().unwrap();
        assert_eq!(control.signal(&z, Signal::Stop).unwrap(), Delivery::Gone);
        assert!(!control.alive(&z).unwrap());
        // pid 0 and 1 are refused whatever the caller decided. (Safe to try: the recorded
        // table has no such pids, so even without the refusal nothing would reach kill.)
        for pid in [0, 1, -1] {
            let t = Identity { pid, ..job };
            assert!(control.signal(&t, Signal::Kill).is_err(), "pid {pid}");
        }
    }

    #[test]
    #[cfg(any(target_os = "linux", target_os = "macos"))]
    fn the_identity_check_reads_the_live_os_not_the_source_the_decision_came_from() {
        let me = std::process::id() as i32;
        let live = crate::platform::native()
            .process(me)
            .unwrap()
            .and_then(|p| p.identity())
            .unwrap();
        // A recording (or a fake /proc) that names this real process, with its own start
        // time: it must not be able to vouch for the pid.
        let mut claimed = proc(me, 1, "agency");
        claimed.uid = live.uid;
        claimed.start_time = Some(live.start_time + 1);
        let fake = ReplaySource::new(snapshot("linux", vec![claimed.clone()]));
        let control = crate::platform::native_control(&fake);
        let id = claimed.identity().unwrap();
        // SIGCONT: harmless to this test process, should the check ever pass wrongly.
        assert_eq!(
            control.signal(&id, Signal::Cont).unwrap(),
            Delivery::IdentityChanged
        );
        assert_eq!(control.presence(&id).unwrap(), Presence::Changed);
        // Control: the live identity is alive.
        assert_eq!(control.presence(&live).unwrap(), Presence::Alive);
    }
}
