//! The descriptors a pressure wait sleeps on (the PSI trigger, the signal handlers' pipe),
//! held in one epoll set made once. A `ppoll` on them asks each descriptor for its state
//! twice per call (before sleeping and on waking) and copies the set in and the time left
//! out; an `epoll_pwait` on a set where nothing fired only sleeps. A quiet `watch` round is
//! this wait and three reads (issue 31, BENCHMARKS.md), so the wait is most of its cost.
//!
//! Level-triggered: a readable pipe keeps firing until it is drained, as with `poll`. A PSI
//! trigger's event is consumed by any poll of it (`psi_trigger_poll`), the one epoll makes
//! when the descriptor is added included: an event pending then is lost to the wait after
//! it. So a trigger joins its set right after it is armed (`Pressure::psi`), and later
//! descriptors are added to the set (`add_wake`), never the set made again around it.
//! `EPOLLERR` and `EPOLLHUP` are reported whether asked for or not, as `poll`'s are.

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::time::Duration;

use rustix::event::PollFlags;
use rustix::event::epoll::{self, CreateFlags, Event, EventData, EventFlags};

const SOURCE: u64 = 0;

/// Below this soft RLIMIT_NOFILE the set is not made and the wait polls: the set is one
/// descriptor more for the whole run, and a guard at the fork wall with 16 descriptors
/// needs every one it has for the reads before a signal (`faults::exhaustion`: with the
/// set, reap's read of the leaker's `status` failed with EMFILE and nothing was cleaned).
const SET_NEEDS_NOFILE: u64 = 64;

/// Whether the descriptor limit leaves room for the set (`SET_NEEDS_NOFILE`).
fn descriptors_to_spare() -> bool {
    rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .is_none_or(|n| n >= SET_NEEDS_NOFILE)
}
const WAKE: u64 = 1;

/// An epoll set holding the source (with its `poll` events) and the wake pipe, either of
/// which may be absent.
#[derive(Debug)]
pub(crate) struct WaitSet {
    epoll: OwnedFd,
    /// Whether the wake pipe is in the set: a set made before the pipe existed gets it
    /// added once it does (`add_wake`).
    pub(crate) has_wake: bool,
}

/// What one wait saw: the source's events (as `poll` names them) and whether the wake pipe
/// was readable. `None` from `wait`: the timeout passed, or a signal cut it short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Readiness {
    pub(crate) source: PollFlags,
    pub(crate) wake: bool,
}

impl WaitSet {
    pub(crate) fn new(
        source: Option<(BorrowedFd<'_>, PollFlags)>,
        wake: Option<BorrowedFd<'_>>,
    ) -> io::Result<Self> {
        let epoll = epoll::create(CreateFlags::CLOEXEC)?;
        if let Some((fd, events)) = source {
            epoll::add(&epoll, fd, EventData::new_u64(SOURCE), epoll_events(events))?;
        }
        if let Some(fd) = wake {
            epoll::add(&epoll, fd, EventData::new_u64(WAKE), EventFlags::IN)?;
        }
        Ok(Self {
            epoll,
            has_wake: wake.is_some(),
        })
    }

    /// The set, where the descriptor limit leaves room for it (`SET_NEEDS_NOFILE`) and it
    /// can be made; `Err` means: wait in `poll`.
    pub(crate) fn if_room(
        source: Option<(BorrowedFd<'_>, PollFlags)>,
        wake: Option<BorrowedFd<'_>>,
    ) -> Result<Self, ()> {
        if !descriptors_to_spare() {
            return Err(());
        }
        Self::new(source, wake).map_err(|_| ())
    }

    /// Add the wake pipe to a set made without it; the source in the set is not polled
    /// again.
    pub(crate) fn add_wake(&mut self, wake: BorrowedFd<'_>) -> io::Result<()> {
        epoll::add(&self.epoll, wake, EventData::new_u64(WAKE), EventFlags::IN)?;
        self.has_wake = true;
        Ok(())
    }

    /// The set's descriptor number: tests tell one set from a new one by it.
    #[cfg(test)]
    pub(crate) fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.epoll.as_raw_fd()
    }

    /// Sleep up to `timeout` (rounded up to the millisecond) for either descriptor.
    pub(crate) fn wait(&self, timeout: Duration) -> Option<Readiness> {
        let ts = crate::fd::poll_timeout(timeout);
        let mut events = [Event {
            flags: EventFlags::empty(),
            data: EventData::new_u64(u64::MAX),
        }; 2];
        let n = epoll::wait(&self.epoll, &mut events, Some(&ts)).ok()?;
        let mut fired = Readiness {
            source: PollFlags::empty(),
            wake: false,
        };
        for e in events.iter().take(n) {
            match e.data.u64() {
                SOURCE => fired.source = poll_events(e.flags),
                WAKE => fired.wake = true,
                _ => {}
            }
        }
        (n > 0).then_some(fired)
    }
}

/// `poll`'s events as epoll's (the ones a pressure source asks for).
fn epoll_events(p: PollFlags) -> EventFlags {
    let mut e = EventFlags::empty();
    if p.contains(PollFlags::IN) {
        e |= EventFlags::IN;
    }
    if p.contains(PollFlags::PRI) {
        e |= EventFlags::PRI;
    }
    e
}

/// epoll's reported events as `poll`'s, so the caller judges both the same way.
fn poll_events(e: EventFlags) -> PollFlags {
    let mut p = PollFlags::empty();
    for (from, to) in [
        (EventFlags::IN, PollFlags::IN),
        (EventFlags::PRI, PollFlags::PRI),
        (EventFlags::ERR, PollFlags::ERR),
        (EventFlags::HUP, PollFlags::HUP),
    ] {
        if e.contains(from) {
            p |= to;
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn pipe() -> (OwnedFd, OwnedFd) {
        crate::fd::nonblocking_pipe().unwrap()
    }

    #[test]
    fn nothing_fired_is_a_timeout() {
        let (r, _w) = pipe();
        let set = WaitSet::new(Some((r.as_fd(), PollFlags::IN)), None).unwrap();
        assert_eq!(set.wait(Duration::from_millis(20)), None);
    }

    #[test]
    fn a_readable_source_and_the_wake_pipe_are_told_apart() {
        let (src_r, src_w) = pipe();
        let (wake_r, wake_w) = pipe();
        let set = WaitSet::new(Some((src_r.as_fd(), PollFlags::IN)), Some(wake_r.as_fd())).unwrap();
        rustix::io::write(&src_w, b"x").unwrap();
        let f = set.wait(Duration::from_secs(30)).unwrap();
        assert_eq!((f.source, f.wake), (PollFlags::IN, false));
        // Level-triggered: still readable until drained, and now the pipe too.
        rustix::io::write(&wake_w, b"y").unwrap();
        let f = set.wait(Duration::from_secs(30)).unwrap();
        assert_eq!((f.source, f.wake), (PollFlags::IN, true));
        crate::fd::drain(src_r.as_fd());
        let f = set.wait(Duration::from_secs(30)).unwrap();
        assert_eq!((f.source, f.wake), (PollFlags::empty(), true));
        crate::fd::drain(wake_r.as_fd());
        assert_eq!(set.wait(Duration::from_millis(20)), None);
    }

    #[test]
    fn a_wake_pipe_added_later_is_seen_and_the_source_still_is() {
        let (src_r, src_w) = pipe();
        let (wake_r, wake_w) = pipe();
        let mut set = WaitSet::new(Some((src_r.as_fd(), PollFlags::IN)), None).unwrap();
        assert!(!set.has_wake);
        rustix::io::write(&wake_w, b"y").unwrap();
        assert_eq!(
            set.wait(Duration::from_millis(20)),
            None,
            "not in the set yet"
        );
        set.add_wake(wake_r.as_fd()).unwrap();
        assert!(set.has_wake);
        let f = set.wait(Duration::from_secs(30)).unwrap();
        assert_eq!((f.source, f.wake), (PollFlags::empty(), true));
        crate::fd::drain(wake_r.as_fd());
        rustix::io::write(&src_w, b"x").unwrap();
        let f = set.wait(Duration::from_secs(30)).unwrap();
        assert_eq!((f.source, f.wake), (PollFlags::IN, false));
    }

    #[test]
    fn a_source_that_hung_up_is_reported_though_not_asked_for() {
        let (r, w) = pipe();
        let set = WaitSet::new(Some((r.as_fd(), PollFlags::IN)), None).unwrap();
        drop(w);
        let f = set.wait(Duration::from_secs(30)).unwrap();
        assert!(f.source.contains(PollFlags::HUP), "{f:?}");
    }

    #[test]
    fn the_timeout_is_not_cut_short_by_rounding() {
        // 1.5 ms must not become a 1 ms wait that returns before the deadline.
        let (r, _w) = pipe();
        let set = WaitSet::new(Some((r.as_fd(), PollFlags::IN)), None).unwrap();
        let start = std::time::Instant::now();
        let wait = Duration::from_micros(1_500);
        assert_eq!(set.wait(wait), None);
        assert!(start.elapsed() >= wait, "{:?}", start.elapsed());
    }
}
