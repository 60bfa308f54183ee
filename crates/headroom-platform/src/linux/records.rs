//! One process's record from its `/proc/PID` files (`status`, and for full detail `stat`
//! and the executable), the part every Linux read shares: the whole-table snapshot, one
//! process, the tree walk.

use std::cell::RefCell;
use std::fs;
use std::path::{Path, PathBuf};

use super::Roots;
use super::procfs;
use super::read::read_into;
use crate::PlatformError;
use crate::core::snapshot::{Detail, ProcState, ProcessRecord};

/// Reads processes below `roots.proc`.
#[derive(Debug)]
pub(super) struct ProcReader {
    pub(super) roots: Roots,
    ns_per_tick: u64,
    /// `status` of every process, kept open between slot snapshots (see `slots.rs`) once
    /// the caller said it repeats them (`keep_between_rounds`); until then nothing is kept.
    pub(super) kept_status: RefCell<super::slots::KeptStatus>,
    /// `roots.proc` is this machine's `/proc`: the pids it lists are the ones pidfds open.
    pub(super) real_proc: bool,
    /// Set by `keep_between_rounds`: slot snapshots are repeated, and worth a cache.
    pub(super) repeated: std::cell::Cell<bool>,
    /// Tests: this many tree members read next find no descriptor left (`tree.rs`).
    #[cfg(test)]
    pub(super) short: std::cell::Cell<usize>,
}

impl ProcReader {
    pub(super) fn new(roots: Roots) -> Self {
        // `sysconf(_SC_CLK_TCK)`: the kernel's `AT_CLKTCK`.
        let hz = rustix::param::clock_ticks_per_second();
        let hz = if hz > 0 { hz } else { 100 };
        // Only this machine's `/proc` names the pids a pidfd opens.
        let real_proc = roots.proc == Path::new("/proc");
        Self {
            roots,
            ns_per_tick: 1_000_000_000 / hz,
            kept_status: RefCell::new(
                super::slots::KeptStatus::with_budget(0).on_real_proc(real_proc),
            ),
            real_proc,
            repeated: std::cell::Cell::new(false),
            #[cfg(test)]
            short: std::cell::Cell::new(0),
        }
    }

    /// From now on slot snapshots keep descriptors between rounds (`watch`).
    pub(super) fn keep_between_rounds(&self) {
        if !self.repeated.replace(true) {
            *self.kept_status.borrow_mut() = super::slots::KeptStatus::new(self.real_proc);
        }
    }

    pub(super) fn proc_path(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.roots.proc.join(rel)
    }

    /// Read one process from its `/proc` directory; `Ok(None)` when it is gone.
    ///
    /// `status` alone carries everything slot counting needs, so `Detail::Slots` costs one
    /// read per process (ps needs at least two); `Full` adds `stat` (start time, group,
    /// session, CPU) and, for the user's own live processes, the executable.
    pub(super) fn read_process(
        &self,
        pid: i32,
        uid: u32,
        detail: Detail,
        with_exe: bool,
        buf: &mut String,
    ) -> Result<Option<ProcessRecord>, PlatformError> {
        if detail == Detail::Slots {
            let mut kept = self.kept_status.borrow_mut();
            // Before any path is built: most processes of a repeated round end here.
            if let Some(record) = kept.unchanged(pid) {
                return Ok(Some(record));
            }
            let dir = self.proc_path(pid.to_string());
            let status = dir.join("status");
            let Some(()) = kept.read(pid, &status, buf)? else {
                return Ok(None);
            };
            let status = procfs::parse_status(buf);
            let record = self.record(pid, uid, &dir, &status, None, false)?;
            kept.remember(pid, &dir, &record);
            return Ok(Some(record));
        }
        let dir = self.proc_path(pid.to_string());
        let Some(()) = read_into(&dir.join("status"), buf)? else {
            return Ok(None);
        };
        let status = procfs::parse_status(buf);
        let Some(()) = read_into(&dir.join("stat"), buf)? else {
            return Ok(None);
        };
        self.record(pid, uid, &dir, &status, Some(buf), with_exe)
            .map(Some)
    }

    /// One process from the text of its `status` and (for full detail) `stat`.
    pub(super) fn record(
        &self,
        pid: i32,
        uid: u32,
        dir: &Path,
        status: &procfs::ProcStatus,
        stat: Option<&str>,
        with_exe: bool,
    ) -> Result<ProcessRecord, PlatformError> {
        let invalid = |what: &str| {
            PlatformError::Invalid(format!(
                "`{}` has no {what} line",
                dir.join("status").display()
            ))
        };
        let ruid = status.ruid.ok_or_else(|| invalid("Uid"))?;
        let state = ProcState::from_linux(status.state.ok_or_else(|| invalid("State"))?);
        let Some(stat) = stat else {
            return Ok(ProcessRecord {
                pid,
                ppid: status.ppid.ok_or_else(|| invalid("PPid"))?,
                uid: ruid,
                state,
                start_time: None,
                name: status.name.clone().ok_or_else(|| invalid("Name"))?,
                exe: None,
                pgid: None,
                sid: None,
                tpgid: None,
                threads: status.threads,
                cpu_ns: None,
                // Not slot counting's (as on macOS): a repeated slot round serves a
                // process it read before unchanged (`slots.rs`), and a footprint moves.
                footprint_bytes: None,
                argv: None,
                cwd: None,
            });
        };
        let stat = procfs::parse_stat(stat).map_err(|e| {
            PlatformError::Invalid(format!(
                "cannot parse `{}`: {e}",
                dir.join("stat").display()
            ))
        })?;
        // The executable only matters for the user's own live processes (policy, session
        // children); skipping it elsewhere halves the cost on shared machines.
        let exe = if with_exe && ruid == uid && state != ProcState::Zombie {
            fs::read_link(dir.join("exe")).ok().map(|p| {
                let s = p.to_string_lossy().into_owned();
                s.strip_suffix(" (deleted)")
                    .map(str::to_string)
                    .unwrap_or(s)
            })
        } else {
            None
        };
        Ok(ProcessRecord {
            pid,
            ppid: stat.ppid,
            uid: ruid,
            state,
            start_time: Some(stat.starttime),
            name: stat.comm,
            exe,
            pgid: Some(stat.pgrp),
            sid: Some(stat.session),
            tpgid: Some(stat.tpgid),
            threads: Some(stat.num_threads.max(status.threads.unwrap_or(0))),
            cpu_ns: Some((stat.utime + stat.stime).saturating_mul(self.ns_per_tick)),
            footprint_bytes: status.footprint_bytes(),
            argv: None,
            cwd: None,
        })
    }
}
