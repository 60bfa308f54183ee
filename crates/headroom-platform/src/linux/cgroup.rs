//! A memory cap the kernel enforces (`run --limit --enforce kernel|auto`): a child cgroup for
//! the command with `memory.max` (v2) or `memory.limit_in_bytes` (v1) set to the limit.
//!
//! Where the child may go is decided from `/proc/self/mountinfo` and `/proc/self/cgroup`
//! (`candidates`, pure) and then tried in order against the real cgroupfs (`create`): a v2
//! directory qualifies only when its `cgroup.controllers` lists `memory` and its
//! `cgroup.subtree_control` already enables it for children (headroom never changes the
//! delegation of a tree it did not make; a cgroup that holds processes cannot enable it
//! anyway), and it is writable by this user — systemd's user manager delegates such a
//! subtree on most desktops. v1 takes the own memory cgroup. Every value written is read
//! back: a cap that silently does nothing (`systemd-run --user -p MemoryMax=` without
//! delegation, systemd #9641) is the failure this guards against.
//!
//! The child is named `headroom-run-PID`; one left by a headroom that was killed (its PID no
//! longer runs) is removed at the next start when it is empty.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The prefix of every cgroup headroom creates.
pub(crate) const PREFIX: &str = "headroom-run-";

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Version {
    #[serde(rename = "v2")]
    V2,
    #[serde(rename = "v1")]
    V1,
}

/// One line of `/proc/self/mountinfo` that mounts a cgroup hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mount {
    /// The mount's root inside the hierarchy (`/` unless a subtree was bind-mounted).
    pub root: String,
    pub point: PathBuf,
    pub version: Version,
    /// v1: the controllers of the hierarchy (super options); v2: empty.
    pub controllers: Vec<String>,
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo`.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|o| o.iter().all(|c| (b'0'..=b'7').contains(c)));
        match oct {
            Some(o) if b[i] == b'\\' => {
                let v = o.iter().fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
                out.push(v as u8);
                i += 4;
            }
            _ => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The cgroup mounts in `/proc/self/mountinfo` text.
pub(crate) fn parse_mountinfo(text: &str) -> Vec<Mount> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let l: Vec<&str> = left.split(' ').collect();
        let r: Vec<&str> = right.split(' ').collect();
        if l.len() < 5 || r.is_empty() {
            continue;
        }
        let version = match r[0] {
            "cgroup2" => Version::V2,
            "cgroup" => Version::V1,
            _ => continue,
        };
        let controllers = match version {
            Version::V2 => Vec::new(),
            Version::V1 => r
                .get(2)
                .map(|o| o.split(',').map(str::to_string).collect())
                .unwrap_or_default(),
        };
        out.push(Mount {
            root: unescape(l[3]),
            point: PathBuf::from(unescape(l[4])),
            version,
            controllers,
        });
    }
    out
}

/// A directory under which the command's cgroup may be made, nearest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub version: Version,
    pub dir: PathBuf,
}

/// `path` (a cgroup path from `/proc/self/cgroup`) under `mount`, when the mount shows it.
fn under_mount(mount: &Mount, path: &str) -> Option<PathBuf> {
    let root = mount.root.trim_end_matches('/');
    let rest = path.strip_prefix(root)?;
    if !(rest.is_empty() || rest.starts_with('/')) {
        return None;
    }
    let rest = rest.trim_start_matches('/');
    Some(if rest.is_empty() {
        mount.point.clone()
    } else {
        mount.point.join(rest)
    })
}

/// Where to try, in order: v2 (this process's cgroup, then each ancestor up to the mount),
/// then v1's own memory cgroup. `cgroup` is `/proc/self/cgroup`, `mountinfo` its mount table.
pub fn candidates(mountinfo: &str, cgroup: &str) -> Vec<Candidate> {
    let mounts = parse_mountinfo(mountinfo);
    let lines = super::procfs::parse_cgroup(cgroup);
    let mut out = Vec::new();
    let v2_path = lines
        .iter()
        .find(|l| l.hierarchy == "0" && l.controllers.is_empty())
        .map(|l| l.path.as_str());
    if let (Some(path), Some(m)) = (v2_path, mounts.iter().find(|m| m.version == Version::V2)) {
        if let Some(mut dir) = under_mount(m, path) {
            loop {
                out.push(Candidate {
                    version: Version::V2,
                    dir: dir.clone(),
                });
                if dir == m.point {
                    break;
                }
                match dir.parent() {
                    Some(p) if p.starts_with(&m.point) => dir = p.to_path_buf(),
                    _ => break,
                }
            }
        }
    }
    let v1_path = lines
        .iter()
        .find(|l| l.controllers.iter().any(|c| c == "memory"))
        .map(|l| l.path.as_str());
    let v1_mount = mounts
        .iter()
        .find(|m| m.version == Version::V1 && m.controllers.iter().any(|c| c == "memory"));
    if let (Some(path), Some(m)) = (v1_path, v1_mount) {
        if let Some(dir) = under_mount(m, path) {
            out.push(Candidate {
                version: Version::V1,
                dir,
            });
        }
    }
    out
}

/// Whether a whitespace-separated controller list names `memory`.
fn lists_memory(text: &str) -> bool {
    text.split_whitespace().any(|c| c == "memory")
}

/// The page size, to which the kernel rounds limits down.
fn page_size() -> u64 {
    let p = rustix::param::page_size() as u64;
    if p > 0 { p } else { 4096 }
}

/// `memory.high` for a cap of `max`: a sixteenth below, so the kernel throttles and
/// reclaims before it has to kill.
pub(crate) fn high_for(max: u64, page: u64) -> u64 {
    let high = max - max / 16;
    high - high % page
}

/// The command's cgroup, made and verified.
#[derive(Debug)]
pub struct Cgroup {
    pub version: Version,
    pub dir: PathBuf,
    /// The limit as the kernel reports it back.
    pub max_bytes: u64,
    pub high_bytes: Option<u64>,
    /// Whether swap is capped too (`memory.swap.max = 0`, v1 `memory.memsw.limit_in_bytes`),
    /// so that what the kernel allows matches the footprint headroom measures (anon + swap).
    pub swap_capped: bool,
    /// Leftovers of killed headroom runs removed before this one was made.
    pub removed_leftovers: Vec<PathBuf>,
}

/// What the kernel did, read when the tree has ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct CgroupOutcome {
    /// Processes the kernel's OOM killer ended in the cgroup.
    pub oom_kills: u64,
    /// The cgroup's own peak charge, when the kernel keeps one (v2 `memory.peak`, 5.19+).
    pub peak_bytes: Option<u64>,
}

fn write_value(path: &Path, value: &str) -> io::Result<()> {
    // No O_CREAT: a missing file means the controller is not there, and creating a plain
    // file in its place would be exactly the silent no-op this module exists to avoid.
    let mut f = OpenOptions::new().write(true).truncate(true).open(path)?;
    f.write_all(value.as_bytes())
}

fn read_u64(path: &Path) -> io::Result<Option<u64>> {
    let t = fs::read_to_string(path)?;
    let t = t.trim();
    if t == "max" {
        return Ok(None);
    }
    t.parse::<u64>().map(Some).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("`{t}` is not a byte count"),
        )
    })
}

/// A `KEY VALUE` field of `memory.events` / `memory.oom_control`.
pub(crate) fn keyed(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(' ')?;
        (k == key).then(|| v.trim().parse().ok()).flatten()
    })
}

fn say(path: &Path, e: &io::Error) -> String {
    format!("{}: {e}", path.display())
}

/// Remove `headroom-run-PID` directories in `dir` whose PID no longer runs (`alive`) and
/// that are empty (rmdir fails on a populated cgroup, which is then left alone).
fn remove_leftovers(dir: &Path, alive: &dyn Fn(i32) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = fs::read_dir(dir) else {
        return out;
    };
    let me = std::process::id() as i32;
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|p| p.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == me || alive(pid) {
            continue;
        }
        let p = e.path();
        if fs::remove_dir(&p).is_ok() {
            out.push(p);
        }
    }
    out
}

/// How a directory is made: `fs::create_dir` on a real cgroupfs (which fills it with the
/// controller files); tests pass one that fills a fake.
pub(crate) type MakeDir<'a> = &'a dyn Fn(&Path) -> io::Result<()>;

/// Make and verify the command's cgroup for a cap of `limit` bytes in the first candidate
/// that allows it. The error lists, for each candidate, why not.
pub fn create(
    candidates: &[Candidate],
    limit: u64,
    mkdir: MakeDir<'_>,
    alive: &dyn Fn(i32) -> bool,
) -> Result<Cgroup, Vec<String>> {
    let page = page_size();
    let max = limit - limit % page;
    let mut why = Vec::new();
    if candidates.is_empty() {
        why.push("no cgroup hierarchy with a memory controller is mounted".to_string());
    }
    if max == 0 {
        why.push(format!("a limit of {limit} bytes is below one page"));
        return Err(why);
    }
    let name = format!("{PREFIX}{}", std::process::id());
    for c in candidates {
        match try_one(c, &name, max, page, mkdir, alive) {
            Ok(cg) => return Ok(cg),
            Err(e) => why.push(e),
        }
    }
    Err(why)
}

fn try_one(
    c: &Candidate,
    name: &str,
    max: u64,
    page: u64,
    mkdir: MakeDir<'_>,
    alive: &dyn Fn(i32) -> bool,
) -> Result<Cgroup, String> {
    let d = &c.dir;
    if c.version == Version::V2 {
        let controllers = fs::read_to_string(d.join("cgroup.controllers"))
            .map_err(|e| say(&d.join("cgroup.controllers"), &e))?;
        if !lists_memory(&controllers) {
            return Err(format!(
                "{}: the memory controller is not available there (cgroup.controllers: `{}`)",
                d.display(),
                controllers.trim()
            ));
        }
        let sub = fs::read_to_string(d.join("cgroup.subtree_control"))
            .map_err(|e| say(&d.join("cgroup.subtree_control"), &e))?;
        if !lists_memory(&sub) {
            return Err(format!(
                "{}: memory is not delegated to its children (cgroup.subtree_control: `{}`)",
                d.display(),
                sub.trim()
            ));
        }
    }
    let removed_leftovers = remove_leftovers(d, alive);
    let dir = d.join(name);
    mkdir(&dir).map_err(|e| match e.kind() {
        io::ErrorKind::PermissionDenied => format!(
            "{}: not writable by uid {} (no delegated cgroup here)",
            d.display(),
            crate::current_uid()
        ),
        _ => format!("cannot create {}: {e}", dir.display()),
    })?;
    let made = Cgroup {
        version: c.version,
        dir,
        max_bytes: max,
        high_bytes: None,
        swap_capped: false,
        removed_leftovers,
    };
    match configure(made, max, page) {
        Ok(cg) => Ok(cg),
        Err((cg, e)) => {
            let _ = fs::remove_dir(&cg.dir);
            Err(e)
        }
    }
}

fn configure(mut cg: Cgroup, max: u64, page: u64) -> Result<Cgroup, (Cgroup, String)> {
    let (max_file, swap_file, swap_value) = match cg.version {
        Version::V2 => ("memory.max", "memory.swap.max", "0".to_string()),
        Version::V1 => (
            "memory.limit_in_bytes",
            "memory.memsw.limit_in_bytes",
            max.to_string(),
        ),
    };
    let p = cg.dir.join(max_file);
    if let Err(e) = write_value(&p, &max.to_string()) {
        let e = say(&p, &e);
        return Err((cg, e));
    }
    match read_u64(&p) {
        Ok(Some(v)) if v == max => {}
        Ok(v) => {
            let e = format!(
                "{}: wrote {max}, the kernel reports {} — the cap would not hold",
                p.display(),
                v.map_or("max".to_string(), |v| v.to_string())
            );
            return Err((cg, e));
        }
        Err(e) => {
            let e = say(&p, &e);
            return Err((cg, e));
        }
    }
    if cg.version == Version::V2 {
        let high = high_for(max, page);
        if high > 0 && write_value(&cg.dir.join("memory.high"), &high.to_string()).is_ok() {
            cg.high_bytes = Some(high);
        }
        // The whole tree goes when the kernel has to kill: a half-killed build is no use.
        let _ = write_value(&cg.dir.join("memory.oom.group"), "1");
    }
    cg.swap_capped = write_value(&cg.dir.join(swap_file), &swap_value).is_ok();
    Ok(cg)
}

impl Cgroup {
    /// `cgroup.procs` opened for writing: the command writes `0` to it between fork and exec
    /// (`Supervisor::join_cgroup_at_exec`), so nothing it runs is ever outside the cap.
    pub fn procs_fd(&self) -> io::Result<OwnedFd> {
        let f = OpenOptions::new()
            .write(true)
            .open(self.dir.join("cgroup.procs"))?;
        Ok(f.into())
    }

    /// What the kernel did to the tree (read before `remove`).
    pub fn outcome(&self) -> CgroupOutcome {
        let (events, peak) = match self.version {
            Version::V2 => ("memory.events", "memory.peak"),
            Version::V1 => ("memory.oom_control", "memory.max_usage_in_bytes"),
        };
        let oom_kills = fs::read_to_string(self.dir.join(events))
            .ok()
            .and_then(|t| keyed(&t, "oom_kill"))
            .unwrap_or(0);
        CgroupOutcome {
            oom_kills,
            peak_bytes: read_u64(&self.dir.join(peak)).ok().flatten(),
        }
    }

    /// Pids still in the cgroup.
    fn members(&self) -> Vec<i32> {
        fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// End whatever is still in the cgroup and remove it. Only the command and what it
    /// started can be in it (it was made for the command and is writable by this user
    /// alone); `cgroup.kill` (v2, 5.14+) ends them all at once in the kernel, with no pid
    /// that could be reused in between. v1 has no such file: members left there (the
    /// watchdog ends the tree first, so only one it could not signal) keep the cgroup, and
    /// the error says so. Returns the pids that were still there.
    pub fn remove(&self) -> Result<Vec<i32>, String> {
        let left = self.members();
        if !left.is_empty() {
            let kill = self.dir.join("cgroup.kill");
            if self.version == Version::V1 || write_value(&kill, "1").is_err() {
                return Err(format!(
                    "{} still holds pid {left:?} and cannot be ended as a whole here \
                     (no cgroup.kill); left in place",
                    self.dir.display()
                ));
            }
        }
        // The kernel takes the killed tasks out asynchronously; rmdir is EBUSY until then.
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match fs::remove_dir(&self.dir) {
                Ok(()) => return Ok(left),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(left),
                Err(e) if Instant::now() >= deadline => {
                    return Err(format!(
                        "cannot remove {}: {e} (still holds {:?})",
                        self.dir.display(),
                        self.members()
                    ));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    }
}

#[cfg(test)]
mod tests;
