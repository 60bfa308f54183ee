//! The process-slot ceilings as Linux states them: RLIMIT_NPROC (and whether it binds this
//! process), the tightest pids cgroup on the path to the root (v2 or v1), `threads-max` and
//! `pid_max` with the task count from `loadavg`.

use std::fs;
use std::path::PathBuf;

use super::Roots;
use super::procfs::{self, PidsMax};
use super::read::read_whole;
use crate::core::limits::{Ceiling, LimitSource, Scope};
use crate::core::round_plan::Bound;

fn read_small(roots: &Roots, rel: &str) -> Result<String, std::io::Error> {
    read_text(&roots.proc.join(rel))
}

/// A small procfs or cgroupfs file in one `pread`: `read_to_string` reads procfs in small
/// chunks (8 reads for `/proc/self/status`), and a table round reads these every time.
fn read_text(path: &std::path::Path) -> Result<String, std::io::Error> {
    let mut text = String::new();
    read_whole(&fs::File::open(path)?, &mut text)?;
    Ok(text)
}

fn total_tasks(roots: &Roots) -> Option<u64> {
    read_small(roots, "loadavg")
        .ok()
        .and_then(|s| procfs::parse_loadavg_tasks(&s))
}

pub(super) fn ceilings(roots: &Roots, uid: u32) -> Vec<Ceiling> {
    let mut out = vec![rlimit_ceiling(roots, uid)];
    out.push(cgroup_ceiling(roots));
    let tasks = total_tasks(roots);
    for (source, file) in [
        (LimitSource::ThreadsMax, "sys/kernel/threads-max"),
        (LimitSource::PidMax, "sys/kernel/pid_max"),
    ] {
        let path = roots.proc.join(file);
        let (value, note) = match read_text(&path) {
            Ok(s) => match s.trim().parse::<i64>() {
                Ok(v) => (Some(v), None),
                Err(e) => (None, Some(format!("cannot parse `{}`: {e}", s.trim()))),
            },
            Err(e) => (None, Some(e.to_string())),
        };
        out.push(Ceiling {
            source,
            value,
            unlimited: false,
            scope: Scope::Shared,
            in_use: tasks,
            origin: path.display().to_string(),
            enforced: true,
            note,
        });
    }
    out
}

fn rlimit_ceiling(roots: &Roots, uid: u32) -> Ceiling {
    let (value, unlimited, mut note) = crate::rlimit_nproc();
    let cap = read_small(roots, "self/status")
        .ok()
        .and_then(|s| procfs::parse_status(&s).cap_eff)
        .and_then(procfs::exempt_capability);
    let enforced = uid != 0 && cap.is_none();
    if uid == 0 {
        note = Some("not enforced for root".into());
    } else if let Some(cap) = cap {
        note = Some(format!("not enforced: this process has {cap}"));
    }
    Ceiling {
        source: LimitSource::RlimitNproc,
        value,
        unlimited,
        scope: Scope::User,
        in_use: None,
        origin: "getrlimit(RLIMIT_NPROC) soft limit (ulimit -u)".into(),
        enforced,
        note,
    }
}

/// The tightest `pids.max` on the path from this process's pids cgroup to the root
/// (limits are hierarchical), v2 or v1.
pub(super) fn cgroup_ceiling(roots: &Roots) -> Ceiling {
    tightest(cgroup_levels(roots).into_iter().map(|dir| {
        let max = read_text(&dir.join("pids.max")).ok();
        let cur = read_text(&dir.join("pids.current")).ok();
        (dir, max, cur)
    }))
}

/// Every directory on the path from this process's pids cgroups (v2, and v1's `pids`) to
/// their roots, leaf first.
fn cgroup_levels(roots: &Roots) -> Vec<PathBuf> {
    let Ok(text) = read_small(roots, "self/cgroup") else {
        return Vec::new();
    };
    let cgroup = roots.sys.join("fs/cgroup");
    let mut candidates: Vec<PathBuf> = Vec::new();
    for line in procfs::parse_cgroup(&text) {
        let rel = line.path.trim_start_matches('/');
        if line.hierarchy == "0" && line.controllers.is_empty() {
            candidates.push(cgroup.join(rel));
        } else if line.controllers.iter().any(|c| c == "pids") {
            candidates.push(cgroup.join("pids").join(rel));
        }
    }
    let mut levels = Vec::new();
    for leaf in candidates {
        let mut dir = leaf.as_path();
        loop {
            levels.push(dir.to_path_buf());
            if dir == cgroup.as_path() || dir == cgroup.join("pids").as_path() {
                break;
            }
            match dir.parent() {
                Some(p) if p.starts_with(&cgroup) => dir = p,
                _ => break,
            }
        }
    }
    levels
}

/// The cgroup ceiling of the level with the least room left among `levels` (a directory,
/// its `pids.max` and its `pids.current` as read; unreadable or unlimited ones do not
/// constrain).
fn tightest(levels: impl Iterator<Item = (PathBuf, Option<String>, Option<String>)>) -> Ceiling {
    let base = Ceiling {
        source: LimitSource::CgroupPids,
        value: None,
        unlimited: true,
        scope: Scope::Shared,
        in_use: None,
        origin: "pids cgroup".into(),
        enforced: true,
        note: Some("no pids cgroup limit applies".into()),
    };
    let mut best: Option<(u64, u64, PathBuf)> = None;
    for (dir, max, cur) in levels {
        if let (Some(PidsMax::Limit(max)), Some(cur)) = (
            max.as_deref().and_then(procfs::parse_pids_max),
            cur.and_then(|c| c.trim().parse::<u64>().ok()),
        ) {
            let tighter = best
                .as_ref()
                .is_none_or(|(m, c, _)| max.saturating_sub(cur) < m.saturating_sub(*c));
            if tighter {
                best = Some((max, cur, dir.join("pids.max")));
            }
        }
    }
    match best {
        Some((max, cur, path)) => Ceiling {
            value: Some(max as i64),
            unlimited: false,
            in_use: Some(cur),
            origin: path.display().to_string(),
            note: None,
            ..base
        },
        None => base,
    }
}

/// The moving parts of the ceilings, kept open between `watch`'s full readings so that a
/// round the wall is far from reads only them (`core::round_plan`, `slot_bound`): the task
/// count of `/proc/loadavg` (every task on the machine: the bound, and what `threads-max`
/// and `pid_max` are shared with), the soft RLIMIT_NPROC (`getrlimit`), and `pids.max` and
/// `pids.current` of every cgroup level that had a limit at the last full reading. What
/// does not move between readings is kept from the last one: the values of `threads-max`
/// and `pid_max`, the levels without a limit, whether RLIMIT_NPROC is enforced (root,
/// this process's capabilities); the next full reading, at most `core::round_plan`'s
/// period later, reads them again, and so is whose slots they are: a process's real uid
/// does not change unless it calls `setuid`, which headroom never does, so a quiet round
/// makes no `getuid` call.
#[derive(Debug)]
pub(super) struct KeptCeilings {
    last: Vec<Ceiling>,
    loadavg: fs::File,
    levels: Vec<(PathBuf, fs::File, fs::File)>,
    uid: u32,
    /// `loadavg`'s text, one buffer for every round: a quiet round allocates no room for it.
    text: std::cell::RefCell<String>,
}

impl KeptCeilings {
    /// After a full reading that gave `last`; `None` when `loadavg` cannot be opened.
    pub(super) fn open(roots: &Roots, last: &[Ceiling]) -> Option<Self> {
        let loadavg = fs::File::open(roots.proc.join("loadavg")).ok()?;
        let levels = cgroup_levels(roots)
            .into_iter()
            .filter_map(|dir| {
                let max = fs::File::open(dir.join("pids.max")).ok()?;
                let mut text = String::new();
                read_whole(&max, &mut text).ok()?;
                matches!(procfs::parse_pids_max(&text), Some(PidsMax::Limit(_))).then_some(())?;
                let cur = fs::File::open(dir.join("pids.current")).ok()?;
                Some((dir, max, cur))
            })
            .collect();
        Some(Self {
            last: last.to_vec(),
            loadavg,
            levels,
            uid: crate::current_uid(),
            text: std::cell::RefCell::new(String::with_capacity(128)),
        })
    }

    /// The bound and the ceilings now (`pread`s of the kept files and one `getrlimit`).
    pub(super) fn read(&self) -> Bound {
        let tasks = {
            let mut text = self.text.borrow_mut();
            read_whole(&self.loadavg, &mut text)
                .ok()
                .and_then(|_| procfs::parse_loadavg_tasks(&text))
        };
        let cgroup = (!self.levels.is_empty()).then(|| {
            tightest(self.levels.iter().map(|(dir, max, cur)| {
                let mut m = String::new();
                let mut c = String::new();
                let m = read_whole(max, &mut m).ok().map(|_| m);
                let c = read_whole(cur, &mut c).ok().map(|_| c);
                (dir.clone(), m, c)
            }))
        });
        let ceilings = self
            .last
            .iter()
            .map(|c| match c.source {
                LimitSource::RlimitNproc => {
                    let (value, unlimited, note) = crate::rlimit_nproc();
                    Ceiling {
                        value,
                        unlimited,
                        // Not enforced (root, a capability): that note stands; otherwise
                        // the note is why the limit could not be read now, if it could not.
                        note: if c.enforced { note } else { c.note.clone() },
                        ..c.clone()
                    }
                }
                LimitSource::CgroupPids => cgroup.clone().unwrap_or_else(|| c.clone()),
                LimitSource::ThreadsMax | LimitSource::PidMax => Ceiling {
                    in_use: tasks,
                    ..c.clone()
                },
                _ => c.clone(),
            })
            .collect();
        Bound {
            slots: tasks,
            ceilings,
            uid: self.uid,
        }
    }
}
