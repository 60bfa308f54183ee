//! `watch`'s sleep between rounds, on the OS's memory-pressure signal
//! (`platform::pressure`): when it fires, a memory round starts at once instead of at the
//! next tick. Without a signal (or with `--once`, `--snapshot`) it is the plain sleep.

use std::time::Instant;

/// What woke the sleep early.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EarlyWake {
    /// Memory pressure started: run the memory guards now.
    Pressure,
    /// The source went away (its file was removed); from now on the timer only.
    Gone(String),
}

#[derive(Debug)]
pub(crate) struct Waiter {
    #[cfg(unix)]
    source: Option<crate::platform::pressure::Pressure>,
}

impl Waiter {
    /// Arm the system's source, unless there is nothing to wait for.
    pub(crate) fn arm(ctx: &crate::commands::Ctx<'_>, once: bool) -> Self {
        #[cfg(unix)]
        {
            let source = (!once && !ctx.replaying()).then(|| ctx.pressure_source());
            Self { source }
        }
        #[cfg(not(unix))]
        {
            let _ = (ctx, once);
            Self {}
        }
    }

    /// The line `watch` says once at start: which source it waits on, or why none, and the
    /// level it reads now.
    pub(crate) fn announce(&self) -> Option<String> {
        #[cfg(unix)]
        {
            self.source.as_ref().map(|s| {
                let level = s
                    .level()
                    .map(|(l, from)| format!("; level {} ({from})", l.name()))
                    .unwrap_or_default();
                format!("memory pressure source: {}{level}", s.describe())
            })
        }
        #[cfg(not(unix))]
        {
            None
        }
    }

    /// Sleep until `deadline` or a stop request; `on_fire` runs each time the source fires
    /// meanwhile (and the sleep goes on to the deadline after it).
    pub(crate) fn sleep_until(&mut self, deadline: Instant, on_fire: &mut dyn FnMut(EarlyWake)) {
        use crate::platform::stop_flag;
        #[cfg(unix)]
        if let Some(src) = self.source.as_mut() {
            use crate::platform::pressure::Woke;
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match src.wait(left, &|| stop_flag::requested().is_some()) {
                    Woke::Pressure => on_fire(EarlyWake::Pressure),
                    Woke::Gone => on_fire(EarlyWake::Gone(src.describe())),
                    Woke::Timeout | Woke::Stop => return,
                }
            }
        }
        #[cfg(not(unix))]
        let _ = on_fire;
        stop_flag::sleep(deadline.saturating_duration_since(Instant::now()));
    }
}
