//! The slot round's read of every process (`Detail::Slots`: `watch` once a round, `probe`,
//! `limits`), made cheap for a reader that repeats it.
//!
//! Slot counting needs each process's real uid (RLIMIT_NPROC charges the real uid, and only
//! `status` has it: `stat` has none, and the owner of `/proc/PID` is the effective uid, or
//! root for a non-dumpable process), its state, parent, name and thread count: one `status`
//! per process, nothing else. Profiled at 1,400 processes, a quarter of that read was the
//! `open` (path walk, pid revalidation) and `close` around it, so each `status` stays open
//! between snapshots and is re-read with `pread` at offset 0 (procfs regenerates it). A
//! kept descriptor belongs to the process it was opened for: once that process is reaped it
//! reads ESRCH even if the pid was reused, and the pid is then opened afresh, so it never
//! reports another process. Descriptors of pids no longer listed are closed after each
//! snapshot; at most `budget` descriptors are kept, the rest are read by path as before.
//! The budget is a guess (other readers in the process hold descriptors too): an `open` that
//! finds none left (EMFILE, ENFILE, ENOMEM) closes up to `SHED` kept ones, lowers the budget
//! to what stays kept and tries once more, so a shortage costs speed, not a process; one
//! that fails again is an error (the snapshot counts it unreadable), never "gone". After a
//! shortage the budget doubles each snapshot back towards the limit's (`Growth`), so a
//! passing one (an ENFILE of another program's making) does not slow every later round, and
//! a lasting one costs at most one failed `open` and one shed a snapshot.
//!
//! Even kept, that read is mostly the kernel generating `status` (17.7 µs a process under
//! load here). So a repeated round does not read a process again that it can show is
//! unchanged in everything slot counting uses (Linux 6.13, `pidfd_info.rs`): its pidfd's
//! `PIDFD_GET_INFO` gives the real uid and parent now (the main thread's, which `status`
//! shows), its `/proc/PID/task` link count the thread count, its pidfd whether it exited. A multi-threaded process's main thread can also exit alone, leaving
//! a zombie leader (`status` reads `Z`, the thread count unchanged, the pidfd quiet until
//! the last thread) while the others run; its kept `statm` says so (all zeros once the
//! leader's memory is gone, ~2 µs, against 6.6 for `stat`'s state). A process whose uid,
//! parent and thread count match its last full read, which did not exit (or was a zombie
//! already), and, when multi-threaded, whose main thread has exited if and only if that
//! read was a zombie's, is served that read's record: 2.6 µs instead of 17.7 (~4 µs
//! multi-threaded). Its name and non-zombie state (running, sleeping, stopped) are then
//! those of that read: slot counting uses neither, except the names of zombies' parents,
//! which the snapshot reads in full again (`live.rs`). A single-threaded zombie whose pidfd
//! has polled exited is dead and keeps its thread count without the link count (`dead`);
//! while it is not reaped and its parent is alive by its pidfd, it is served with no system
//! call of its own (`dead_and_still_parented`): a table round over a leak of 6,000 zombies
//! is then the exit check and the listing, not 6,000 ioctls. The parent's entry must be
//! older than the zombie's last confirmation: one opened since may be a new process with
//! the old parent's pid, the zombie reparented.
//!
//! Whether a kept process exited is, once the unchanged check runs, an edge-triggered epoll
//! set of all kept pidfds (`exits.rs`): `begin` drains what fired since the last snapshot,
//! a few calls whatever the table's size, where a `poll` over 6,000 pidfds walks them all in
//! the kernel every round. Exit and reap each fire once and are for good, so an entry's `exited` and `reaped` stand until it is
//! dropped; a pidfd opened in this snapshot has not been drained yet and counts as no
//! word of life. The kernel must report both edges (checked once, `reap_wakes_waiters`);
//! where it does not, or a pidfd cannot be added, `begin` polls them all as before.
//! Without the ioctl (older kernels), or for a fake `--proc-root`, every round reads every
//! `status`, as before.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::Path;

use super::pidfd_info;
use super::read::{gone, out_of_resources, read_whole};
use crate::PlatformError;
use crate::core::pid_map::PidMap;
use crate::core::snapshot::ProcessRecord;
use exits::ExitSet;
use unchanged::{UnchangedCheck, asked_unchanged, dead_and_still_parented};
#[cfg(test)]
use unchanged::{dead, still_unchanged};

/// Descriptors left to the rest of the process whatever the budget: `run`'s tree keeps up to
/// 768 of its own (`tree.rs`), plus state files, pipes and pidfds.
const RESERVE: u64 = 1024;
/// Never more than this many kept, however high the limit.
const MAX_KEPT: u64 = 65_536;
/// Kept descriptors closed when an `open` finds none left, before it tries again.
const SHED: usize = 64;

/// One listed pid's kept descriptors.
#[derive(Debug)]
struct KeptPid {
    status: File,
    /// The snapshot that last listed it.
    seen: u64,
    /// Opened before `status`, so it names the process `status` was opened for (see
    /// `remember`); `None` without the unchanged check.
    pidfd: Option<OwnedFd>,
    /// The unchanged check's state, once the process was read in full and qualifies.
    check: Option<UnchangedCheck>,
    /// Set by `begin` (and `end`'s drain): its pidfd polled readable, or fired so in the exit set (its whole
    /// process exited, or it was reaped). Both are for good, so the set's word stands
    /// until the entry is removed.
    exited: bool,
    /// Set by `begin`: its pidfd polled (or fired) hung up (it was reaped: the pid may name
    /// another process now).
    reaped: bool,
    /// The last snapshot whose `begin` polled its pidfd not readable (0: none); `poll` only
    /// (with the exit set, `alive` asks `exited`).
    alive_at: u64,
    /// When its pidfd was opened, and when its `status` was last read (`KeptStatus::tick`):
    /// `alive`, and the parent rule of `unchanged`.
    opened_at: u64,
    read_at: u64,
    /// Tells this entry's events in the exit set from those of an earlier entry of the
    /// same pid (`exits::token`).
    serial: u32,
}

/// How a snapshot's `begin` sets the descriptor budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Growth {
    /// The limit's (`watch` raises its soft limit before its first round).
    FromLimit,
    /// After a shortage (`shed`): twice the last budget (at least `SHED`), never past the
    /// limit's; back to `FromLimit` once there.
    Regrowing,
    /// As set, for good: a test's control that keeps nothing.
    #[cfg(test)]
    Pinned,
}

impl Growth {
    fn next(self, budget: usize, from_limit: usize) -> usize {
        match self {
            Growth::FromLimit => budget.max(from_limit),
            Growth::Regrowing => budget.max(SHED).saturating_mul(2).min(from_limit),
            #[cfg(test)]
            Growth::Pinned => budget,
        }
    }
}

#[derive(Debug)]
pub(crate) struct KeptStatus {
    files: PidMap<KeptPid>,
    /// `files`' pids, sorted (`pids`), while no entry was added or removed since.
    order: Vec<i32>,
    order_stale: bool,
    /// Entries whose `seen` is this snapshot: when all are, `end` has nothing to close.
    seen_now: usize,
    /// The snapshot being taken; a descriptor not seen in it is closed at its end.
    generation: u64,
    /// Descriptors that may be kept open.
    budget: usize,
    /// Descriptors kept open now.
    open: usize,
    /// Whether the unchanged check may be used: the real `/proc` (a fake tree's pids are
    /// not this machine's), and `None` until the kernel was asked whether it has
    /// `PIDFD_GET_INFO`.
    check: Option<bool>,
    /// `begin`'s `poll` failed: nothing is served unchanged in this snapshot.
    poll_failed: bool,
    /// How `begin` sets the budget.
    growth: Growth,
    /// The `/proc` read is this machine's: an ENOENT is confirmed by pidfd
    /// (`confirmed_gone`).
    real_proc: bool,
    /// The next this many `open`s of `status` fail with EMFILE (a test's shortage).
    #[cfg(test)]
    fail_opens: u32,
    /// Pids served unchanged in this snapshot (`served_unchanged`).
    served: Vec<i32>,
    /// The `poll` array `begin` reuses, and the pid of each entry.
    polls: Vec<libc::pollfd>,
    poll_pids: Vec<i32>,
    /// The kept pidfds' edge-triggered set (`exits.rs`), made by the first `begin`: `None`
    /// before it, without the unchanged check, where this kernel cannot be trusted with
    /// it, or after a pidfd could not be added; `begin` then `poll`s them all.
    exits: Option<ExitSet>,
    /// Whether the set was tried (it is made once, never again after it was dropped).
    exits_tried: bool,
    /// The next kept entry's `serial`.
    next_serial: u32,
    /// A clock of this reader's steps (`next_tick`), to order a pidfd's opening before a
    /// read, also within one snapshot.
    tick: u64,
    /// Pids served unchanged after asking the kernel (`PIDFD_GET_INFO`) in this snapshot.
    #[cfg(test)]
    asked: Vec<i32>,
}

impl KeptStatus {
    /// Keep as many as the soft RLIMIT_NOFILE allows beyond `RESERVE` (none at the usual
    /// 1,024, where every read goes by path as before; `watch` raises its soft limit).
    /// `real_proc`: `/proc` is this machine's, so the unchanged check may be used.
    pub(crate) fn new(real_proc: bool) -> Self {
        let mut k = Self::with_budget(Self::budget_now()).on_real_proc(real_proc);
        k.check = (!real_proc).then_some(false);
        k
    }

    pub(crate) fn with_budget(budget: usize) -> Self {
        Self {
            files: PidMap::default(),
            order: Vec::new(),
            order_stale: false,
            seen_now: 0,
            generation: 0,
            budget,
            open: 0,
            check: Some(false),
            poll_failed: false,
            growth: Growth::FromLimit,
            real_proc: false,
            #[cfg(test)]
            fail_opens: 0,
            served: Vec::new(),
            polls: Vec::new(),
            poll_pids: Vec::new(),
            exits: None,
            exits_tried: false,
            next_serial: 0,
            tick: 0,
            #[cfg(test)]
            asked: Vec::new(),
        }
    }

    fn budget_now() -> usize {
        // `None` is RLIM_INFINITY.
        let cur = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(u64::MAX);
        cur.saturating_sub(RESERVE).min(MAX_KEPT) as usize
    }

    /// Start a snapshot: what the exit set fired since the last one (or one `poll` over
    /// the kept pidfds) says which processes exited.
    pub(crate) fn begin(&mut self) {
        self.begin_under(Self::budget_now());
    }

    /// `begin`, with what the limit allows to be kept (`budget_now`).
    fn begin_under(&mut self, from_limit: usize) {
        self.next_generation();
        self.served.clear();
        #[cfg(test)]
        self.asked.clear();
        self.budget = self.growth.next(self.budget, from_limit);
        if self.growth == Growth::Regrowing && self.budget >= from_limit {
            self.growth = Growth::FromLimit;
        }
        // Made at the first snapshot, so its pidfds join as they are opened there: adding
        // 6,000 at once later would cost a whole table round's worth at once.
        if self.check != Some(false) && !self.exits_tried {
            self.exits_tried = true;
            self.exits = ExitSet::new();
            if !self
                .files
                .iter()
                .all(|(pid, k)| watched(&self.exits, *pid, k))
            {
                self.exits = None;
            }
        }
        if let Some(drained) = self.take_exits() {
            self.poll_failed = drained.is_err();
            return;
        }
        self.polls.clear();
        self.poll_pids.clear();
        for (pid, k) in &self.files {
            if let (Some(fd), Some(_)) = (&k.pidfd, &k.check) {
                self.polls.push(libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                });
                self.poll_pids.push(*pid);
            }
        }
        self.poll_failed = !pidfd_info::exited(&mut self.polls);
        for (pid, p) in self.poll_pids.iter().zip(&self.polls) {
            if let Some(k) = self.files.get_mut(pid) {
                k.exited = p.revents != 0;
                k.reaped = p.revents & libc::POLLHUP != 0;
                if p.revents == 0 {
                    k.alive_at = self.generation;
                }
            }
        }
    }

    /// What the exit set fired since it was last drained, into the entries it names (`None`:
    /// no set). `Err`: not asked; what fired stays queued.
    fn take_exits(&mut self) -> Option<std::io::Result<()>> {
        let set = self.exits.as_mut()?;
        let files = &mut self.files;
        Some(set.drain(|f| {
            let (pid, serial) = exits::untoken(f.token);
            if let Some(k) = files.get_mut(&pid).filter(|k| k.serial == serial) {
                k.exited = true;
                k.reaped |= f.reaped;
            }
        }))
    }

    /// A new snapshot: no entry seen in it yet.
    fn next_generation(&mut self) {
        self.generation += 1;
        self.seen_now = 0;
    }

    /// The next step of `tick`.
    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// Whether `k`'s process was alive at this snapshot's `begin`, by its pidfd: with the
    /// exit set, one that has not fired exited. One added since `begin` was not drained
    /// yet: the one caller (`unchanged`'s parent rule) only asks of pidfds opened before
    /// a zombie's last confirmation, which was before this `begin`.
    fn alive(&self, k: &KeptPid) -> bool {
        if self.exits.is_some() {
            k.pidfd.is_some() && !k.exited
        } else {
            k.alive_at == self.generation
        }
    }

    /// `pid`'s record as last read in full, when nothing slot counting uses has changed
    /// since: same real uid and parent (`PIDFD_GET_INFO`), same thread count (`task`'s
    /// link count), not exited unless it was a zombie already, and, multi-threaded, its
    /// main thread exited (`statm`) if and only if it was a zombie then: a leader can exit
    /// alone while the other threads run, and `status` then reads `Z` with the same
    /// thread count, which neither the pidfd nor the count shows.
    pub(crate) fn unchanged(&mut self, pid: i32) -> Option<ProcessRecord> {
        if self.poll_failed {
            return None;
        }
        let generation = self.generation;
        // A parent whose pidfd was opened before the zombie's parent was last read or
        // confirmed, and which has not exited since, held that pid then: it is the parent.
        // One opened later may be a new process with the old pid (the parent died between,
        // and the zombie was reparented).
        let parent_alive = {
            let c = self.files.get(&pid)?.check.as_ref()?;
            self.files
                .get(&c.record.ppid)
                .is_some_and(|p| p.opened_at < c.verified_at && self.alive(p))
        };
        let k = self.files.get_mut(&pid)?;
        let (Some(fd), Some(c)) = (&k.pidfd, &k.check) else {
            return None;
        };
        let skip = dead_and_still_parented(k.exited, k.reaped, parent_alive, &c.record);
        self.tick += 1;
        let asked_at = self.tick;
        let same = skip || asked_unchanged(fd, c, pid, k.exited);
        if !same {
            self.open -= c.fds();
            k.check = None;
            return None;
        }
        if k.seen != generation {
            k.seen = generation;
            self.seen_now += 1;
        }
        let c = k.check.as_mut()?;
        if !skip {
            c.verified_at = asked_at;
        }
        let record = c.record.clone();
        self.served.push(pid);
        #[cfg(test)]
        if !skip {
            self.asked.push(pid);
        }
        Some(record)
    }

    /// `begin`'s `poll` answered (so exits since the last snapshot are known).
    pub(crate) fn answered(&self) -> bool {
        !self.poll_failed
    }

    /// The pids kept: those the last snapshot listed and read (sorted).
    pub(crate) fn pids(&mut self) -> Vec<i32> {
        if self.order_stale {
            self.order.clear();
            self.order.extend(self.files.keys().copied());
            self.order.sort_unstable();
            self.order_stale = false;
        }
        self.order.clone()
    }

    /// Whether `pid` is kept.
    pub(crate) fn has(&self, pid: i32) -> bool {
        self.files.contains_key(&pid)
    }

    /// The pids `unchanged` served in this snapshot.
    pub(crate) fn served_unchanged(&self) -> &[i32] {
        &self.served
    }

    /// Drop `pid`'s unchanged check, so the next read of it is a full one.
    pub(crate) fn forget(&mut self, pid: i32) {
        if let Some(k) = self.files.get_mut(&pid) {
            if let Some(c) = k.check.take() {
                self.open -= c.fds();
            }
        }
    }

    /// `pid`'s `status` (at `path`) into `buf`; `Ok(None)` when the process is gone.
    pub(crate) fn read(
        &mut self,
        pid: i32,
        path: &Path,
        buf: &mut String,
    ) -> Result<Option<()>, PlatformError> {
        let generation = self.generation;
        let read_at = self.next_tick();
        if let Some(k) = self.files.get_mut(&pid) {
            match read_whole(&k.status, buf) {
                Ok(len) if len > 0 => {
                    if k.seen != generation {
                        k.seen = generation;
                        self.seen_now += 1;
                    }
                    k.read_at = read_at;
                    return Ok(Some(()));
                }
                // Reaped since (ESRCH, or an empty read): the pid may name a new process
                // now, which is opened afresh below.
                Ok(_) => {}
                Err(e) if gone(&e) => {}
                Err(e) => {
                    return Err(PlatformError::io(
                        format!("cannot read `{}`", path.display()),
                        e,
                    ));
                }
            }
            self.remove(pid);
        }
        // The pidfd first: if the process it names is still there after `status` was read
        // (`remember`), `status` was that process's too.
        let pidfd = if self.check != Some(false) && self.open + 3 <= self.budget {
            pidfd_info::open(pid).ok()
        } else {
            None
        };
        // After the pidfd was opened and before `status` is read: this entry is both.
        let at = self.next_tick();
        let f = match self.open_status(path) {
            Ok(f) => f,
            Err(e) if gone(&e) && self.confirmed_gone(pid) => return Ok(None),
            Err(e) => {
                return Err(PlatformError::io(
                    format!("cannot read `{}`", path.display()),
                    e,
                ));
            }
        };
        match read_whole(&f, buf) {
            Ok(_) => {}
            Err(e) if gone(&e) && self.confirmed_gone(pid) => return Ok(None),
            Err(e) => {
                return Err(PlatformError::io(
                    format!("cannot read `{}`", path.display()),
                    e,
                ));
            }
        }
        if self.open < self.budget {
            self.open += 1 + usize::from(pidfd.is_some());
            let k = KeptPid {
                status: f,
                seen: generation,
                pidfd,
                check: None,
                exited: false,
                reaped: false,
                alive_at: 0,
                opened_at: at,
                read_at: at,
                serial: self.next_serial,
            };
            self.next_serial = self.next_serial.wrapping_add(1);
            if !watched(&self.exits, pid, &k) {
                self.exits = None;
            }
            // A no-op (a kept entry was read above, or removed): the counts stay true
            // whatever a later change makes of that.
            self.remove(pid);
            self.files.insert(pid, k);
            self.seen_now += 1;
            self.order_stale = true;
        }
        Ok(Some(()))
    }

    /// Whether `pid`, whose `status` read ESRCH or ENOENT, is gone: on this machine's
    /// `/proc` an ENOENT is confirmed by `pidfd_info::really_gone` (not gone: the read's
    /// error stands, and the process is counted unreadable); a fake `/proc`'s pids name no
    /// process here, so its word is taken.
    fn confirmed_gone(&self, pid: i32) -> bool {
        !self.real_proc || pidfd_info::really_gone(pid)
    }

    /// This reader's `/proc` is this machine's (`confirmed_gone`).
    pub(crate) fn on_real_proc(mut self, real_proc: bool) -> Self {
        self.real_proc = real_proc;
        self
    }

    /// `status` at `path`, opened; when no descriptor is left (EMFILE, ENFILE, ENOMEM),
    /// again once after `shed`.
    fn open_status(&mut self, path: &Path) -> std::io::Result<File> {
        match self.try_open(path) {
            Err(e) if out_of_resources(&e) => {
                self.shed();
                self.try_open(path)
            }
            other => other,
        }
    }

    fn try_open(&mut self, path: &Path) -> std::io::Result<File> {
        #[cfg(test)]
        if self.fail_opens > 0 {
            self.fail_opens -= 1;
            return Err(std::io::Error::from_raw_os_error(libc::EMFILE));
        }
        File::open(path)
    }

    /// The budget was more than the process can spare: close up to `SHED` kept descriptors
    /// (unchanged checks first, then whole entries) and keep no more than what is left, for
    /// good. A process whose descriptors are closed is read by path from now on; the listing
    /// sees it was not kept (`has`), so the next round lists all of `/proc`.
    fn shed(&mut self) {
        let mut freed = 0;
        for k in self.files.values_mut() {
            if freed >= SHED {
                break;
            }
            if let Some(c) = k.check.take() {
                freed += c.fds();
                self.open -= c.fds();
            }
        }
        let mut closing = Vec::new();
        for (pid, k) in &self.files {
            if freed >= SHED {
                break;
            }
            freed += 1 + usize::from(k.pidfd.is_some());
            closing.push(*pid);
        }
        for pid in closing {
            self.remove(pid);
        }
        self.budget = self.open;
        if self.growth == Growth::FromLimit {
            self.growth = Growth::Regrowing;
        }
    }

    /// Another reader of the snapshot (the ceilings) found no descriptor left: close what
    /// `shed` closes, so it can try once more.
    pub(crate) fn shed_for_others(&mut self) {
        if self.open > 0 {
            self.shed();
        }
    }

    /// After a full read of `pid` (in `dir`) gave `record`: keep what the unchanged check
    /// needs, when it qualifies (a kept pidfd whose process is still there).
    pub(crate) fn remember(&mut self, pid: i32, dir: &Path, record: &ProcessRecord) {
        let multi = record.threads != Some(1);
        if self.open + 1 + usize::from(multi) > self.budget {
            return;
        }
        let Some(k) = self.files.get_mut(&pid) else {
            return;
        };
        let Some(fd) = &k.pidfd else {
            return;
        };
        // `task` and `statm` before the ioctl: the process still there at the ioctl was
        // there when they were opened, so all name it.
        let Ok(task) = pidfd_info::open_task_dir(dir) else {
            return;
        };
        let statm = if multi {
            match pidfd_info::open_statm(dir) {
                Ok(f) => Some(f),
                Err(_) => return,
            }
        } else {
            None
        };
        match pidfd_info::info(fd) {
            Ok(info) if info.pid == pid => {
                self.check = Some(true);
                let fresh = UnchangedCheck {
                    task,
                    statm,
                    record: record.clone(),
                    verified_at: k.read_at,
                };
                self.open += fresh.fds();
                if let Some(old) = k.check.replace(fresh) {
                    self.open -= old.fds();
                }
            }
            Ok(_) => {}
            // Reaped since (the next read opens it afresh), or a kernel before 6.13: no
            // unchanged check, ever (pidfds stay, for the identity of the `status` read).
            Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {}
            Err(_) => {
                if self.check.is_none() {
                    self.check = Some(false);
                    self.exits = None;
                }
            }
        }
    }

    fn remove(&mut self, pid: i32) {
        if let Some(k) = self.files.remove(&pid) {
            self.order_stale = true;
            if k.seen == self.generation {
                self.seen_now -= 1;
            }
            self.open -= 1
                + usize::from(k.pidfd.is_some())
                + k.check.as_ref().map_or(0, UnchangedCheck::fds);
        }
    }

    /// End a snapshot: close the descriptors of pids it did not list.
    pub(crate) fn end(&mut self) {
        let generation = self.generation;
        debug_assert_eq!(
            self.seen_now,
            self.files.values().filter(|k| k.seen == generation).count()
        );
        // The pidfds added in this snapshot fire at once when their process had exited
        // already (a table of 6,000 zombies: 6,000 events): taken now, in the round that
        // opened them, not left to make the next one cost twice the rest. A failure leaves
        // them queued for `begin`.
        let _ = self.take_exits();
        if self.seen_now == self.files.len() {
            return;
        }
        let gone: Vec<i32> = self
            .files
            .iter()
            .filter(|(_, k)| k.seen != generation)
            .map(|(p, _)| *p)
            .collect();
        for pid in gone {
            self.remove(pid);
        }
    }

    #[cfg(test)]
    pub(crate) fn kept(&self) -> usize {
        self.files.len()
    }
}

/// `k`'s pidfd added to the exit set (`true` without a set or a pidfd). A caller drops the
/// set for good when one cannot be added: a pidfd outside it would never fire, and the next
/// `begin` then polls them all.
fn watched(exits: &Option<ExitSet>, pid: i32, k: &KeptPid) -> bool {
    match (exits, &k.pidfd) {
        (Some(set), Some(fd)) => set.add(fd.as_fd(), exits::token(pid, k.serial)).is_ok(),
        _ => true,
    }
}

/// Raise this process's soft RLIMIT_NOFILE to its hard limit (at most `MAX_KEPT` +
/// `RESERVE`), for a long-lived reader that keeps descriptors (`watch`). The limit is a
/// per-process ceiling the user already holds; nothing is raised above the hard limit.
pub(crate) fn raise_nofile() {
    use rustix::process::{Resource, Rlimit};
    // `None` is RLIM_INFINITY.
    let rl = rustix::process::getrlimit(Resource::Nofile);
    let want = rl.maximum.unwrap_or(u64::MAX).min(MAX_KEPT + RESERVE);
    if want > rl.current.unwrap_or(u64::MAX) {
        // No higher than the hard limit it was read with. This is platform/, which may
        // change limits (clippy.toml).
        #[allow(clippy::disallowed_methods)]
        let _ = rustix::process::setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(want),
                maximum: rl.maximum,
            },
        );
    }
}

mod exits;
mod unchanged;

#[cfg(test)]
mod tests;

#[cfg(test)]
pub(crate) mod round_tests;

#[cfg(test)]
mod thread_tests;

#[cfg(test)]
mod zombie_tests;
