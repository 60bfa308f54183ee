//! The moving parts of the ceilings, kept open between `watch`'s full readings so that a
//! round the wall is far from reads only them (`core::round_plan`, `slot_bound`).
//!
//! A quiet round at 1 s is most of what an idle guard costs, so it is a `pread` of
//! `/proc/loadavg` (every task on the machine: the bound, and what `threads-max` and
//! `pid_max` are shared with) and two `pread`s per cgroup level that had a limit at the last
//! full reading (`pids.max`, `pids.current`), into a buffer on the stack, and it updates the
//! numbers of the bound it handed out last in place: no allocation while the bound holds
//! one read cgroup ceiling (or none was kept) and only its numbers move. Otherwise (another
//! level becomes the tightest, a file fails, every kept level is unlimited now) the
//! ceilings are rebuilt, each round while that lasts.
//!
//! What does not move between full readings is kept from the last one, and the next full
//! reading, at most `--table-every` later (`core::round_plan`), reads it again: the values
//! of `threads-max` and `pid_max`, the levels (which have a limit, which cgroup), whose
//! slots they are (a real uid changes only by `setuid`, which headroom never calls) and the
//! soft RLIMIT_NPROC. That limit is this process's own: it moves only by its own
//! `setrlimit` (headroom sets RLIMIT_NOFILE, never RLIMIT_NPROC) or another process's
//! `prlimit(2)` on it, and it is not the limit of the user's other processes either way
//! (each has its own, inherited at login), so a quiet round does not ask for it again. The
//! one case this misses: someone lowers the guard's own limit with `prlimit` so far that
//! the machine's tasks would be near it; quiet rounds go on until the next full reading. It was a `getrlimit` every round, a sixth of a quiet round's CPU on
//! a VM whose BPF program runs on every `prlimit64` (BENCHMARKS.md, 2026-12-05).

use std::cell::{Cell, RefCell};
use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;

use super::Roots;
use super::ceilings::{Free, Read, cgroup_levels, tighter, tightest};
use super::procfs::{self, PidsMax};
use super::read::read_whole;
use crate::core::limits::{Ceiling, LimitSource};
use crate::core::round_plan::Bound;

/// Room for every file a quiet round reads: `loadavg` is five numbers (about 30 bytes),
/// `pids.max` and `pids.current` one each. A file that fills it is read again whole.
const SMALL: usize = 128;

/// One cgroup level with a limit at the last full reading.
#[derive(Debug)]
struct Level {
    dir: PathBuf,
    max: fs::File,
    cur: fs::File,
    /// What its ceiling's `origin` says (`tightest`'s), to tell which level a bound holds.
    origin: String,
}

#[derive(Debug)]
pub(super) struct KeptCeilings {
    /// The ceilings of the last full reading.
    last: Vec<Ceiling>,
    loadavg: fs::File,
    levels: Vec<Level>,
    /// The bound handed out last; updated in place once its holders have dropped it.
    bound: RefCell<Arc<Bound>>,
    /// The index in `levels` of the one read cgroup ceiling `bound` holds; `None` when it
    /// holds another shape (none read yet, an unreadable level, no limit at any level).
    holds: Cell<Option<usize>>,
}

impl KeptCeilings {
    /// After a full reading that gave `last`; `None` when `loadavg`, `/proc/self/cgroup` or
    /// a level's files cannot be opened or read (a level left out could be the tightest, so
    /// no bound: the rounds read the table).
    pub(super) fn open(roots: &Roots, last: &[Ceiling], free: Free<'_>) -> Option<Self> {
        let loadavg = fs::File::open(roots.proc.join("loadavg")).ok()?;
        let mut levels = Vec::new();
        for dir in cgroup_levels(roots, free).ok()? {
            let max = match fs::File::open(dir.join("pids.max")) {
                Ok(f) => f,
                Err(e) if e.kind() == ErrorKind::NotFound => continue,
                Err(_) => return None,
            };
            let mut text = String::new();
            read_whole(&max, &mut text).ok()?;
            match procfs::parse_pids_max(&text)? {
                PidsMax::Unlimited => continue,
                PidsMax::Limit(_) => {}
            }
            let cur = fs::File::open(dir.join("pids.current")).ok()?;
            let origin = dir.join("pids.max").display().to_string();
            levels.push(Level {
                dir,
                max,
                cur,
                origin,
            });
        }
        Some(Self {
            last: last.to_vec(),
            loadavg,
            levels,
            bound: RefCell::new(Arc::new(Bound {
                slots: None,
                ceilings: last.to_vec(),
                uid: crate::current_uid(),
            })),
            holds: Cell::new(None),
        })
    }

    /// The bound and the ceilings now.
    pub(super) fn read(&self) -> Arc<Bound> {
        let mut small = [0u8; SMALL];
        let tasks = pread(&self.loadavg, &mut small)
            .ok()
            .and_then(|t| procfs::parse_loadavg_tasks(&t));
        let mut kept = self.bound.borrow_mut();
        // The caller dropped the last one (`watch` keeps none between rounds): no copy.
        let bound = Arc::make_mut(&mut kept);
        bound.slots = tasks;
        for c in &mut bound.ceilings {
            if matches!(c.source, LimitSource::ThreadsMax | LimitSource::PidMax) {
                c.in_use = tasks;
            }
        }
        if !self.levels.is_empty() && !self.numbers_only(bound, &mut small) {
            self.rebuild(bound, tasks);
        }
        Arc::clone(&kept)
    }

    /// Updates the one cgroup ceiling `bound` holds when every level reads and parses and
    /// the tightest is still the level it holds; false when the ceilings must be rebuilt.
    fn numbers_only(&self, bound: &mut Bound, small: &mut [u8; SMALL]) -> bool {
        let Some(held) = self.holds.get() else {
            return false;
        };
        let mut best: Option<(u64, u64, usize)> = None;
        for (i, level) in self.levels.iter().enumerate() {
            let max = match pread(&level.max, small)
                .ok()
                .map(|t| procfs::parse_pids_max(&t))
            {
                Some(Some(PidsMax::Limit(max))) => max,
                Some(Some(PidsMax::Unlimited)) => continue,
                _ => return false,
            };
            let Some(cur) = pread(&level.cur, small)
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
            else {
                return false;
            };
            if tighter(best.map(|(m, c, _)| (m, c)), max, cur) {
                best = Some((max, cur, i));
            }
        }
        let Some((max, cur, _)) = best.filter(|&(_, _, i)| i == held) else {
            return false;
        };
        let Some(c) = bound
            .ceilings
            .iter_mut()
            .find(|c| c.source == LimitSource::CgroupPids)
        else {
            return false;
        };
        c.value = Some(max as i64);
        c.in_use = Some(cur);
        true
    }

    /// The ceilings of the last full reading with the cgroup levels read now, their text
    /// kept for the messages (allocates; `numbers_only` is the round that does not).
    fn rebuild(&self, bound: &mut Bound, tasks: Option<u64>) {
        let now = tightest(self.levels.iter().map(|level| {
            let pread = |f: &fs::File, name: &str| {
                let mut t = String::new();
                match read_whole(f, &mut t) {
                    Ok(_) => Read::Text(t),
                    Err(e) => Read::Failed(format!(
                        "cannot read `{}`: {e}",
                        level.dir.join(name).display()
                    )),
                }
            };
            (
                level.dir.clone(),
                pread(&level.max, "pids.max"),
                pread(&level.cur, "pids.current"),
            )
        }));
        let holds = match now.as_slice() {
            [one] if one.note.is_none() && one.value.is_some() => {
                self.levels.iter().position(|l| l.origin == one.origin)
            }
            _ => None,
        };
        self.holds.set(holds);
        let mut ceilings = Vec::with_capacity(self.last.len() + 1);
        let mut now = Some(now);
        for c in &self.last {
            match c.source {
                // The levels read now stand for every cgroup ceiling of the last reading
                // (the tightest, and an unreadable one if any).
                LimitSource::CgroupPids => ceilings.extend(now.take().into_iter().flatten()),
                LimitSource::ThreadsMax | LimitSource::PidMax => ceilings.push(Ceiling {
                    in_use: tasks,
                    ..c.clone()
                }),
                _ => ceilings.push(c.clone()),
            }
        }
        bound.ceilings = ceilings;
    }
}

/// `f` from offset 0 in one `pread` into `small`; a file that fills it (not one of the small
/// files this reads) or is not UTF-8 is read again whole into a new string.
fn pread<'a>(
    f: &fs::File,
    small: &'a mut [u8; SMALL],
) -> std::io::Result<std::borrow::Cow<'a, str>> {
    let n = f.read_at(small, 0)?;
    match std::str::from_utf8(&small[..n]) {
        Ok(t) if n < SMALL => Ok(std::borrow::Cow::Borrowed(t)),
        _ => {
            let mut t = String::new();
            read_whole(f, &mut t)?;
            Ok(std::borrow::Cow::Owned(t))
        }
    }
}

#[cfg(test)]
mod tests;
