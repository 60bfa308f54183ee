//! The one place that calls `kill(2)` and `pidfd_send_signal(2)` (Unix). Every signal is
//! preceded by a fresh read of the target and a comparison with the identity the core
//! approved.

use crate::core::snapshot::Identity;
use crate::{Delivery, PlatformError, Presence, ProcessControl, ProcessSource, Signal};

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
    fn reread(&self, target: &Identity) -> Result<Presence, PlatformError> {
        match self.source.process(target.pid)? {
            None => Ok(Presence::Gone),
            Some(p) if p.identity() != Some(*target) => Ok(
                if p.is_zombie() && p.start_time == Some(target.start_time) {
                    Presence::Gone
                } else {
                    Presence::Changed
                },
            ),
            Some(p) if p.is_zombie() => Ok(Presence::Gone),
            Some(_) => Ok(Presence::Alive),
        }
    }
}

/// The signal as rustix names it.
fn os_signal(sig: Signal) -> rustix::process::Signal {
    use rustix::process::Signal as S;
    match sig {
        Signal::Term => S::TERM,
        Signal::Kill => S::KILL,
        Signal::Stop => S::STOP,
        Signal::Cont => S::CONT,
        Signal::Int => S::INT,
        Signal::Hup => S::HUP,
    }
}

/// `kill(2)`, where no pidfd can be had (macOS; Linux before 5.3). The caller refused
/// pid <= 1, so neither a process group nor "every process" can be addressed.
fn kill(pid: i32, sig: Signal) -> rustix::io::Result<()> {
    let Some(pid) = rustix::process::Pid::from_raw(pid.max(0)) else {
        return Err(rustix::io::Errno::INVAL);
    };
    #[allow(clippy::disallowed_methods)]
    rustix::process::kill_process(pid, os_signal(sig))
}

/// How signals are delivered on this machine: `pidfd` (Linux 5.3+) or `kill` (the pid is
/// then re-checked just before, but a reuse in the instant between cannot be excluded).
pub(super) fn delivery() -> super::SignalPath {
    #[cfg(target_os = "linux")]
    if pidfd::open(std::process::id() as i32).is_some() {
        return super::SignalPath::Pidfd;
    }
    super::SignalPath::Kill
}

#[cfg(target_os = "linux")]
mod pidfd {
    use std::os::fd::OwnedFd;

    use rustix::process::{Pid, PidfdFlags};

    /// `pidfd_open(pid, 0)`; `None` when unavailable (ENOSYS, a seccomp filter) or the pid
    /// is gone, and the caller falls back to `kill`.
    pub(super) fn open(pid: i32) -> Option<OwnedFd> {
        let pid = Pid::from_raw(pid.max(0))?;
        rustix::process::pidfd_open(pid, PidfdFlags::empty()).ok()
    }

    /// `pidfd_send_signal(fd, sig, NULL, 0)`.
    pub(super) fn send_signal(fd: &OwnedFd, sig: crate::Signal) -> rustix::io::Result<()> {
        rustix::process::pidfd_send_signal(fd, super::os_signal(sig))
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
        // Linux: a pidfd opened before the identity check names exactly the process that
        // was checked, so a pid reused between the check and the signal cannot be hit.
        #[cfg(target_os = "linux")]
        let pidfd = pidfd::open(target.pid);
        match self.reread(target)? {
            Presence::Alive => {}
            Presence::Gone => return Ok(Delivery::Gone),
            Presence::Changed => return Ok(Delivery::IdentityChanged),
        }
        #[cfg(target_os = "linux")]
        let sent = match &pidfd {
            Some(fd) => pidfd::send_signal(fd, sig),
            None => kill(target.pid, sig),
        };
        #[cfg(not(target_os = "linux"))]
        let sent = kill(target.pid, sig);
        let err = match sent {
            Ok(()) => return Ok(Delivery::Sent),
            Err(e) => std::io::Error::from(e),
        };
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
        Ok(self.reread(target)? == Presence::Alive)
    }

    fn presence(&self, target: &Identity) -> Result<Presence, PlatformError> {
        self.reread(target)
    }
}

#[cfg(test)]
mod tests {
    //! The identity guard, against a recorded table: only mismatches are signalled here, so
    //! these tests never reach `kill(2)`.
    use super::*;
    use crate::core::snapshot::ProcState;
    use crate::core::snapshot::fixture::{proc, snapshot};
    use crate::replay::ReplaySource;

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
        let live = crate::native()
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
        let control = crate::native_control(&fake);
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

    #[test]
    #[cfg(target_os = "linux")]
    fn a_checked_signal_reaches_the_process_through_the_pidfd_or_kill() {
        use std::os::unix::process::ExitStatusExt;
        // A process this test starts, and only it, is signalled.
        let Ok(mut child) = std::process::Command::new("sleep").arg("30").spawn() else {
            return; // no `sleep` on this machine: nothing to signal
        };
        let pid = child.id() as i32;
        let id = crate::native()
            .process(pid)
            .ok()
            .flatten()
            .and_then(|p| p.identity());
        let control = crate::native_control(&crate::unsupported::Unsupported);
        let sent = id.map(|id| control.signal(&id, Signal::Term));
        let status = child.wait();
        assert!(matches!(sent, Some(Ok(Delivery::Sent))), "{sent:?}");
        assert_eq!(status.ok().and_then(|s| s.signal()), Some(libc::SIGTERM));
        // Where pidfds work, they are what is used (this test's own pid can be opened).
        #[cfg(target_os = "linux")]
        assert_eq!(
            delivery() == crate::SignalPath::Pidfd,
            pidfd::open(std::process::id() as i32).is_some()
        );
    }
}
