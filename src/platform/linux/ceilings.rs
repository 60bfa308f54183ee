//! The process-slot ceilings as Linux states them: RLIMIT_NPROC (and whether it binds this
//! process), the tightest pids cgroup on the path to the root (v2 or v1), `threads-max` and
//! `pid_max` with the task count from `loadavg`.

use std::fs;
use std::path::PathBuf;

use super::Roots;
use super::procfs::{self, PidsMax};
use crate::core::limits::{Ceiling, LimitSource, Scope};

fn read_small(roots: &Roots, rel: &str) -> Result<String, std::io::Error> {
    fs::read_to_string(roots.proc.join(rel))
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
        let (value, note) = match fs::read_to_string(&path) {
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
    let (value, unlimited, mut note) = crate::platform::rlimit_nproc();
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
    let Ok(text) = read_small(roots, "self/cgroup") else {
        return base;
    };
    let cgroup = roots.sys.join("fs/cgroup");
    let mut best: Option<(u64, u64, PathBuf)> = None;
    let mut candidates: Vec<PathBuf> = Vec::new();
    for line in procfs::parse_cgroup(&text) {
        let rel = line.path.trim_start_matches('/');
        if line.hierarchy == "0" && line.controllers.is_empty() {
            candidates.push(cgroup.join(rel));
        } else if line.controllers.iter().any(|c| c == "pids") {
            candidates.push(cgroup.join("pids").join(rel));
        }
    }
    for leaf in candidates {
        let mut dir = leaf.as_path();
        loop {
            let max = fs::read_to_string(dir.join("pids.max")).ok();
            let cur = fs::read_to_string(dir.join("pids.current")).ok();
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
            if dir == cgroup.as_path() || dir == cgroup.join("pids").as_path() {
                break;
            }
            match dir.parent() {
                Some(p) if p.starts_with(&cgroup) => dir = p,
                _ => break,
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
