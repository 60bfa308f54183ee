//! The monotonic clock the actions wait on: injected so that an escalation's grace, a
//! watch run's reap cooldown and the memory guards' waits take no real time in tests.

use std::time::{Duration, Instant};

/// Time, injectable: `run` sleeps on it, tests advance a fake one.
pub trait Clock {
    fn now(&self) -> Instant;
    fn sleep(&self, d: Duration);
}

/// The real clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealClock;

impl Clock for RealClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
    fn sleep(&self, d: Duration) {
        std::thread::sleep(d);
    }
}
