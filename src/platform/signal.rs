//! The one place that calls `kill(2)` (Unix). Every signal is preceded by a fresh read of
//! the target and a comparison with the identity the core approved.

use crate::core::snapshot::Identity;
use crate::platform::{Delivery, PlatformError, ProcessControl, ProcessSource, Signal};

#[derive(Debug)]
pub(crate) struct UnixControl<'a> {
    source: &'a dyn ProcessSource,
}

impl std::fmt::Debug for dyn ProcessSource + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ProcessSource({})", self.os())
    }
}

impl<'a> UnixControl<'a> {
    pub(crate) fn new(source: &'a dyn ProcessSource) -> Self {
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

impl ProcessControl for UnixControl<'_> {
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
}
