//! The process table the actions' tests drive: it obeys the signals it is sent (SIGSTOP
//! stops, SIGCONT resumes, any other ends the process unless it survives SIGTERM and
//! SIGINT), records every one delivered, and can change at chosen reads.

use std::cell::{Cell, RefCell};

use crate::core::snapshot::{Detail, Identity, MemoryTotals, ProcState, ProcessRecord, Snapshot};
use crate::platform::{Delivery, PlatformError, Presence, ProcessControl, ProcessSource, Signal};

pub type TableEdit = Box<dyn Fn(&mut Snapshot)>;

pub struct Table {
    pub snap: RefCell<Snapshot>,
    pub sent: RefCell<Vec<(i32, Signal)>>,
    /// Pids that outlive SIGTERM and SIGINT.
    pub survives: Vec<i32>,
    /// What `memory()` reads; `None` is an error, as where the totals cannot be read.
    pub memory: Option<MemoryTotals>,
    /// Applied just before the n-th read of the table (1 = the first `snapshot` call).
    changes: RefCell<Vec<(usize, TableEdit)>>,
    reads: Cell<usize>,
    /// Identity reads: one per `signal` (its own check, as the live path's), one per
    /// `presence`.
    identity_reads: Cell<usize>,
}

// The scripted changes are closures, without `Debug`: the table and what it sent say it.
impl std::fmt::Debug for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("snap", &self.snap)
            .field("sent", &self.sent)
            .finish_non_exhaustive()
    }
}

impl Table {
    pub fn new(snap: Snapshot) -> Self {
        Self {
            snap: RefCell::new(snap),
            sent: RefCell::new(Vec::new()),
            survives: Vec::new(),
            memory: None,
            changes: RefCell::new(Vec::new()),
            reads: Cell::new(0),
            identity_reads: Cell::new(0),
        }
    }
    pub fn at_read(self, n: usize, f: impl Fn(&mut Snapshot) + 'static) -> Self {
        self.changes.borrow_mut().push((n, Box::new(f)));
        self
    }
    pub fn sent(&self) -> Vec<(i32, Signal)> {
        self.sent.borrow().clone()
    }
    /// Full reads of the table so far (`snapshot` calls).
    pub fn reads(&self) -> usize {
        self.reads.get()
    }
    /// Identity reads so far (see the field).
    pub fn identity_reads(&self) -> usize {
        self.identity_reads.get()
    }
    pub fn has(&self, pid: i32) -> bool {
        self.snap.borrow().processes.iter().any(|p| p.pid == pid)
    }
}

impl ProcessSource for Table {
    fn os(&self) -> &str {
        "linux"
    }
    fn snapshot(&self, _d: Detail) -> Result<Snapshot, PlatformError> {
        let n = self.reads.get() + 1;
        self.reads.set(n);
        let mut snap = self.snap.borrow_mut();
        for (at, f) in self.changes.borrow().iter() {
            if *at == n {
                f(&mut snap);
            }
        }
        Ok(snap.clone())
    }
    fn process(&self, pid: i32) -> Result<Option<ProcessRecord>, PlatformError> {
        Ok(self
            .snap
            .borrow()
            .processes
            .iter()
            .find(|p| p.pid == pid)
            .cloned())
    }
    fn argv(&self, pid: i32) -> Result<Vec<String>, PlatformError> {
        Err(PlatformError::NoSuchProcess { pid })
    }
    fn memory(&self) -> Result<MemoryTotals, PlatformError> {
        self.memory
            .ok_or_else(|| PlatformError::Invalid("none".into()))
    }
}

impl ProcessControl for Table {
    fn signal(&self, t: &Identity, sig: Signal) -> Result<Delivery, PlatformError> {
        self.identity_reads.set(self.identity_reads.get() + 1);
        let mut snap = self.snap.borrow_mut();
        let Some(i) = snap.processes.iter().position(|p| p.pid == t.pid) else {
            return Ok(Delivery::Gone);
        };
        if snap.processes[i].identity() != Some(*t) {
            return Ok(Delivery::IdentityChanged);
        }
        // As the live check: a zombie of that identity is gone, never signalled.
        if snap.processes[i].is_zombie() {
            return Ok(Delivery::Gone);
        }
        self.sent.borrow_mut().push((t.pid, sig));
        match sig {
            Signal::Stop => snap.processes[i].state = ProcState::Stopped,
            Signal::Cont => snap.processes[i].state = ProcState::Sleeping,
            Signal::Term | Signal::Int if self.survives.contains(&t.pid) => {}
            _ => {
                snap.processes.remove(i);
            }
        }
        Ok(Delivery::Sent)
    }
    fn alive(&self, t: &Identity) -> Result<bool, PlatformError> {
        Ok(self.presence(t)? == Presence::Alive)
    }
    fn presence(&self, t: &Identity) -> Result<Presence, PlatformError> {
        self.identity_reads.set(self.identity_reads.get() + 1);
        let snap = self.snap.borrow();
        Ok(match snap.processes.iter().find(|p| p.pid == t.pid) {
            None => Presence::Gone,
            Some(p) if p.identity() != Some(*t) => Presence::Changed,
            Some(p) if p.is_zombie() => Presence::Gone,
            Some(_) => Presence::Alive,
        })
    }
}
