//! The real `RecoveryOps`: signals through `ProcessControl` (identity re-checked before
//! each), helpers through `exec::run`, the service's replacement from a fresh process table.

use std::time::{Duration, Instant};

use crate::actions::exec::{self, ExecOutput};
use crate::actions::recover::RecoveryOps;
use crate::core::snapshot::{Detail, Identity};
use crate::platform::{Delivery, Presence, ProcessControl, ProcessSource, Signal};

/// The real world: signals through `ProcessControl`, helpers through `exec::run`, the
/// replacement from a fresh process table.
pub(crate) struct LiveOps<'a> {
    source: &'a dyn ProcessSource,
    control: &'a dyn ProcessControl,
    start: Instant,
}

impl std::fmt::Debug for LiveOps<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LiveOps")
    }
}

impl<'a> LiveOps<'a> {
    pub(crate) fn new(source: &'a dyn ProcessSource, control: &'a dyn ProcessControl) -> Self {
        Self {
            source,
            control,
            start: Instant::now(),
        }
    }
}

impl RecoveryOps for LiveOps<'_> {
    fn signal(&mut self, target: &Identity, sig: Signal) -> Result<Delivery, String> {
        self.control.signal(target, sig).map_err(|e| e.to_string())
    }

    fn presence(&mut self, target: &Identity) -> Result<Presence, String> {
        self.control.presence(target).map_err(|e| e.to_string())
    }

    fn exec(&mut self, argv: &[String]) -> Result<ExecOutput, String> {
        exec::run(argv, exec::TIMEOUT)
    }

    fn find_replacement(
        &mut self,
        dir: &str,
        uid: u32,
        old: &Identity,
    ) -> Result<Option<i32>, String> {
        let snap = self
            .source
            .snapshot(Detail::Full)
            .map_err(|e| e.to_string())?;
        Ok(snap
            .processes
            .iter()
            .find(|p| {
                p.uid == uid
                    && !p.is_zombie()
                    && p.identity() != Some(*old)
                    && p.exe.as_deref().is_some_and(|e| e.starts_with(dir))
            })
            .map(|p| p.pid))
    }

    fn sleep(&mut self, d: Duration) {
        std::thread::sleep(d);
    }

    fn now(&mut self) -> Duration {
        self.start.elapsed()
    }
}
