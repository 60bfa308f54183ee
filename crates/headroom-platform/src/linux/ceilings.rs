//! The process-slot ceilings as Linux states them: RLIMIT_NPROC (and whether it binds this
//! process), the tightest pids cgroup on the path to the root (v2 or v1), `threads-max` and
//! `pid_max` with the task count from `loadavg`.
//!
//! A ceiling's file that is absent (ENOENT: no such knob, no pids controller at that level)
//! does not constrain. One that is there but cannot be read (no descriptor left, or any
//! other error) is tried once more after `free` has closed what the caller can spare, and
//! is then a ceiling with no value and why (`CeilingStatus::Unreadable`): the core takes
//! the limit of the others as an upper bound only (`EffectiveLimit::incomplete`), never as
//! the limit.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use super::Roots;
use super::procfs::{self, PidsMax};
use super::read::{out_of_resources, read_whole};
use crate::core::limits::{Ceiling, LimitSource, Scope};

/// What the caller can close when a read finds no descriptor or memory left (the slot
/// reader's kept `status` files, the kept ceilings); a no-op where nothing is held.
pub(super) type Free<'a> = &'a mut dyn FnMut();

/// A ceiling's file as read.
pub(super) enum Read {
    Text(String),
    /// ENOENT: the file is not there, so it constrains nothing.
    Absent,
    /// There, but not readable: why.
    Failed(String),
}

impl Read {
    fn text(self) -> Option<String> {
        match self {
            Self::Text(s) => Some(s),
            _ => None,
        }
    }
}

/// `path` read whole, once more after `free` when it found no descriptor or memory left.
fn read_ceiling(path: &Path, free: Free<'_>) -> Read {
    let attempt = || read_text(path);
    let result = match attempt() {
        Err(e) if out_of_resources(&e) => {
            free();
            attempt()
        }
        other => other,
    };
    match result {
        Ok(s) => Read::Text(s),
        Err(e) if e.kind() == ErrorKind::NotFound => Read::Absent,
        Err(e) => Read::Failed(format!("cannot read `{}`: {e}", path.display())),
    }
}

/// A small procfs or cgroupfs file in one `pread`: `read_to_string` reads procfs in small
/// chunks (8 reads for `/proc/self/status`), and a table round reads these every time.
fn read_text(path: &std::path::Path) -> Result<String, std::io::Error> {
    let mut text = String::new();
    read_whole(&fs::File::open(path)?, &mut text)?;
    Ok(text)
}

fn total_tasks(roots: &Roots, free: Free<'_>) -> Option<u64> {
    read_ceiling(&roots.proc.join("loadavg"), free)
        .text()
        .and_then(|s| procfs::parse_loadavg_tasks(&s))
}

pub(super) fn ceilings(roots: &Roots, uid: u32, free: Free<'_>) -> Vec<Ceiling> {
    let mut out = vec![rlimit_ceiling(roots, uid, free)];
    out.extend(cgroup_ceilings(roots, free));
    let tasks = total_tasks(roots, free);
    for (source, file) in [
        (LimitSource::ThreadsMax, "sys/kernel/threads-max"),
        (LimitSource::PidMax, "sys/kernel/pid_max"),
    ] {
        let path = roots.proc.join(file);
        let (value, enforced, note) = match read_ceiling(&path, free) {
            Read::Text(s) => match s.trim().parse::<i64>() {
                Ok(v) => (Some(v), true, None),
                Err(e) => (
                    None,
                    true,
                    Some(format!("cannot parse `{}`: {e}", s.trim())),
                ),
            },
            Read::Absent => (None, false, Some("no such file: not a ceiling here".into())),
            Read::Failed(why) => (None, true, Some(why)),
        };
        out.push(Ceiling {
            source,
            value,
            unlimited: false,
            scope: Scope::Shared,
            in_use: tasks,
            origin: path.display().to_string(),
            enforced,
            note,
        });
    }
    out
}

fn rlimit_ceiling(roots: &Roots, uid: u32, free: Free<'_>) -> Ceiling {
    let (value, unlimited, mut note) = crate::rlimit_nproc();
    let cap = read_ceiling(&roots.proc.join("self/status"), free)
        .text()
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
/// (limits are hierarchical), v2 or v1; and, when a level or `/proc/self/cgroup` itself
/// could not be read, an unreadable cgroup ceiling saying which (it may be the tightest).
pub(super) fn cgroup_ceilings(roots: &Roots, free: Free<'_>) -> Vec<Ceiling> {
    let levels = match cgroup_levels(roots, free) {
        Ok(levels) => levels,
        Err(why) => return vec![unreadable_cgroup("pids cgroup".into(), why)],
    };
    tightest(levels.into_iter().map(|dir| {
        let max = read_ceiling(&dir.join("pids.max"), free);
        let cur = read_ceiling(&dir.join("pids.current"), free);
        (dir, max, cur)
    }))
}

#[cfg(test)]
pub(super) fn cgroup_ceiling(roots: &Roots) -> Ceiling {
    cgroup_ceilings(roots, &mut || {}).remove(0)
}

/// Every directory on the path from this process's pids cgroups (v2, and v1's `pids`) to
/// their roots, leaf first; none when `/proc/self/cgroup` is absent (no cgroups), why when
/// it is there but could not be read.
pub(super) fn cgroup_levels(roots: &Roots, free: Free<'_>) -> Result<Vec<PathBuf>, String> {
    let text = match read_ceiling(&roots.proc.join("self/cgroup"), free) {
        Read::Text(t) => t,
        Read::Absent => return Ok(Vec::new()),
        Read::Failed(why) => return Err(why),
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
    Ok(levels)
}

fn unreadable_cgroup(origin: String, why: String) -> Ceiling {
    Ceiling {
        source: LimitSource::CgroupPids,
        value: None,
        unlimited: false,
        scope: Scope::Shared,
        in_use: None,
        origin,
        enforced: true,
        note: Some(why),
    }
}

/// Whether a level at `max` with `cur` in use has less room left than `best` (the first of
/// equals stays): `tightest`'s rule, and the quiet round's (`kept_ceilings`).
pub(super) fn tighter(best: Option<(u64, u64)>, max: u64, cur: u64) -> bool {
    best.is_none_or(|(m, c)| max.saturating_sub(cur) < m.saturating_sub(c))
}

/// The cgroup ceiling of the level with the least room left among `levels` (a directory,
/// its `pids.max` and its `pids.current` as read; absent or unlimited ones do not
/// constrain), then an unreadable one for the first level that is there but could not be
/// read: it may have less room than any read.
pub(super) fn tightest(levels: impl Iterator<Item = (PathBuf, Read, Read)>) -> Vec<Ceiling> {
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
    let mut failed: Option<Ceiling> = None;
    for (dir, max, cur) in levels {
        let path = dir.join("pids.max");
        let max = match max {
            Read::Absent => continue,
            Read::Failed(why) => {
                failed.get_or_insert_with(|| unreadable_cgroup(path.display().to_string(), why));
                continue;
            }
            Read::Text(t) => match procfs::parse_pids_max(&t) {
                Some(PidsMax::Unlimited) => continue,
                Some(PidsMax::Limit(max)) => max,
                None => {
                    let why = format!("cannot parse `{}` in `{}`", t.trim(), path.display());
                    failed
                        .get_or_insert_with(|| unreadable_cgroup(path.display().to_string(), why));
                    continue;
                }
            },
        };
        let cur = match cur {
            Read::Text(t) => t.trim().parse::<u64>().map_err(|e| {
                format!(
                    "cannot parse `{}` in `{}`: {e}",
                    t.trim(),
                    dir.join("pids.current").display()
                )
            }),
            Read::Absent => Err(format!(
                "`{}` is missing",
                dir.join("pids.current").display()
            )),
            Read::Failed(why) => Err(why),
        };
        let cur = match cur {
            Ok(c) => c,
            Err(why) => {
                // The limit is known, its use is not: `usage-unknown`, which may bind.
                failed.get_or_insert_with(|| Ceiling {
                    value: Some(max as i64),
                    ..unreadable_cgroup(path.display().to_string(), why)
                });
                continue;
            }
        };
        if tighter(best.as_ref().map(|(m, c, _)| (*m, *c)), max, cur) {
            best = Some((max, cur, path));
        }
    }
    let read = best.map(|(max, cur, path)| Ceiling {
        value: Some(max as i64),
        unlimited: false,
        in_use: Some(cur),
        origin: path.display().to_string(),
        note: None,
        ..base.clone()
    });
    match (read, failed) {
        (Some(r), Some(f)) => vec![r, f],
        (None, Some(f)) => vec![f],
        (Some(r), None) => vec![r],
        (None, None) => vec![base],
    }
}

#[cfg(test)]
pub(super) mod tests;
