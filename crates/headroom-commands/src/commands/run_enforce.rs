//! `run --enforce`: whether the kernel holds the limit too (a cgroup of the command's own,
//! `platform::linux::cgroup`), and what `run` says about it — one `enforcement` record when
//! the command starts, one `kernel_outcome` before the summary.

use serde::Serialize;

use crate::cli::Enforce;

/// The `type` of each record `run` writes besides the watchdog's events. Every record of
/// its own carries one of these, so `mcp::run_limited`, which tells `run`'s records from
/// the command's stderr, learns a new one from this enum (its schema) with nothing else to
/// keep in step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(description = "The `type` of a record `run` writes about its enforcement.")]
#[serde(rename_all = "snake_case")]
#[cfg_attr(
    not(target_os = "linux"),
    allow(
        dead_code,
        reason = "the kernel values are Linux's; the JSON schema names them all"
    )
)]
pub(crate) enum RecordType {
    Enforcement,
    KernelOutcome,
}

/// Who holds the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(
    not(target_os = "linux"),
    allow(
        dead_code,
        reason = "the kernel values are Linux's; the JSON schema names them all"
    )
)]
#[schemars(rename = "Holder")]
pub(crate) enum LimitHolder {
    /// The kernel, in a cgroup of the command's own (headroom's watchdog runs too).
    Kernel,
    /// headroom's polling watchdog only.
    Poll,
}

/// The cgroup hierarchy the kernel's cap is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(
    not(target_os = "linux"),
    allow(
        dead_code,
        reason = "the kernel values are Linux's; the JSON schema names them all"
    )
)]
pub(crate) enum CgroupVersion {
    V2,
    V1,
}

/// Who holds the limit for this run, and why not the kernel when it does not.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct Enforcement {
    #[serde(rename = "type")]
    #[schemars(extend("const" = "enforcement"))]
    pub kind: RecordType,
    /// When the enforcement was set up, before the command started (RFC 3339, UTC).
    pub at: String,
    pub requested: Enforce,
    pub by: LimitHolder,
    pub cgroup: Option<String>,
    pub cgroup_version: Option<CgroupVersion>,
    pub memory_max_bytes: Option<u64>,
    pub memory_high_bytes: Option<u64>,
    pub swap_capped: bool,
    /// Why the kernel does not hold it (each place tried, `; `-separated).
    pub reason: Option<String>,
    /// Cgroups of killed headroom runs removed before this one was made.
    pub removed_leftovers: Vec<String>,
    /// The memory-pressure source that wakes the watchdog (`psi (…)`, `poll (why)`).
    pub pressure: Option<String>,
}

impl crate::schema::Document for Enforcement {
    const SCHEMA: &'static str = "headroom.run/1";
    const TYPE: Option<&'static str> = None;
}

/// What the kernel did, reported just before the summary.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct KernelOutcome {
    #[serde(rename = "type")]
    #[schemars(extend("const" = "kernel_outcome"))]
    pub kind: RecordType,
    /// When the cgroup was read and removed, after the tree was gone (RFC 3339, UTC).
    pub at: String,
    pub cgroup: String,
    /// Processes the kernel's OOM killer ended at the limit.
    pub oom_kills: u64,
    pub cgroup_peak_bytes: Option<u64>,
    /// Pids still in the cgroup at the end, ended with it (`cgroup.kill`).
    pub ended_with_cgroup: Vec<i32>,
    /// Why the cgroup could not be removed, if it could not.
    pub remove_error: Option<String>,
}

impl crate::schema::Document for KernelOutcome {
    const SCHEMA: &'static str = "headroom.run/1";
    const TYPE: Option<&'static str> = None;
}

impl Enforcement {
    pub(crate) fn poll(mode: Enforce, reason: Option<String>) -> Self {
        Self {
            kind: RecordType::Enforcement,
            at: crate::actions::watchdog::now_at(),
            requested: mode,
            by: LimitHolder::Poll,
            cgroup: None,
            cgroup_version: None,
            memory_max_bytes: None,
            memory_high_bytes: None,
            swap_capped: false,
            reason,
            removed_leftovers: Vec::new(),
            pressure: None,
        }
    }

    /// Who held the limit, for the human summary line: the kernel, or polling where the
    /// kernel could have but cannot here (Linux `auto`). Nothing for `poll`, or where no
    /// kernel cap exists at all (macOS).
    pub(crate) fn held(&self) -> Option<String> {
        match (self.by, self.cgroup_version) {
            (LimitHolder::Kernel, Some(CgroupVersion::V1)) => {
                Some("held by the kernel, cgroup memory.limit_in_bytes".into())
            }
            (LimitHolder::Kernel, _) => Some("held by the kernel, cgroup memory.max".into()),
            _ if self.requested == Enforce::Auto && cfg!(target_os = "linux") => {
                Some("polled: the kernel cannot hold it here, `--enforce kernel` says why".into())
            }
            _ => None,
        }
    }
}

/// The kernel's hold on the command: its cgroup, until the tree has ended.
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub(crate) struct KernelCap {
    cg: crate::platform::linux::cgroup::Cgroup,
    removed: bool,
}

#[cfg(not(target_os = "linux"))]
#[derive(Debug)]
pub(crate) struct KernelCap {
    _never: std::convert::Infallible,
}

/// Decide who holds the limit. `Err` is the refusal of `--enforce kernel`: every reason.
#[cfg(target_os = "linux")]
pub(crate) fn prepare(
    mode: Enforce,
    limit: u64,
    proc_root: &std::path::Path,
) -> Result<(Enforcement, Option<KernelCap>), String> {
    use crate::platform::linux::cgroup::{self, Version};
    if mode == Enforce::Poll {
        return Ok((Enforcement::poll(mode, None), None));
    }
    let read = |rel: &str| std::fs::read_to_string(proc_root.join(rel)).unwrap_or_default();
    let candidates = cgroup::candidates(&read("self/mountinfo"), &read("self/cgroup"));
    let alive = |pid: i32| proc_root.join(pid.to_string()).exists();
    let mkdir = |p: &std::path::Path| std::fs::create_dir(p);
    match cgroup::create(&candidates, limit, &mkdir, &alive) {
        Ok(cg) => {
            let e = Enforcement {
                kind: RecordType::Enforcement,
                at: crate::actions::watchdog::now_at(),
                requested: mode,
                by: LimitHolder::Kernel,
                cgroup: Some(cg.dir.display().to_string()),
                cgroup_version: Some(match cg.version {
                    Version::V2 => CgroupVersion::V2,
                    Version::V1 => CgroupVersion::V1,
                }),
                memory_max_bytes: Some(cg.max_bytes),
                memory_high_bytes: cg.high_bytes,
                swap_capped: cg.swap_capped,
                reason: None,
                removed_leftovers: cg
                    .removed_leftovers
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect(),
                pressure: None,
            };
            Ok((e, Some(KernelCap { cg, removed: false })))
        }
        Err(why) if mode == Enforce::Kernel => Err(why.join("; ")),
        Err(why) => Ok((Enforcement::poll(mode, Some(why.join("; "))), None)),
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn prepare(
    mode: Enforce,
    _limit: u64,
    _proc_root: &std::path::Path,
) -> Result<(Enforcement, Option<KernelCap>), String> {
    let why = format!(
        "{} has no interface through which a user can have the kernel cap a process tree's \
         memory (no cgroups); the watchdog polls",
        std::env::consts::OS
    );
    match mode {
        Enforce::Kernel => Err(why),
        Enforce::Poll => Ok((Enforcement::poll(mode, None), None)),
        Enforce::Auto => Ok((Enforcement::poll(mode, Some(why)), None)),
    }
}

/// The pressure source for `run`: the command's own cgroup's `memory.pressure` when the
/// kernel holds the limit in v2 (pressure of this tree, not of the machine), else the
/// system's.
pub(crate) fn pressure_source(
    cap: Option<&KernelCap>,
    proc_root: &std::path::Path,
) -> crate::platform::pressure::Pressure {
    #[cfg(target_os = "linux")]
    if let Some(c) = cap.filter(|c| c.cg.version == crate::platform::linux::cgroup::Version::V2) {
        return crate::platform::pressure::Pressure::psi(&c.cg.dir.join("memory.pressure"));
    }
    let _ = cap;
    crate::platform::pressure::Pressure::system(proc_root)
}

#[cfg(target_os = "linux")]
impl KernelCap {
    /// `cgroup.procs`, for `Supervisor::join_cgroup_at_exec`.
    pub(crate) fn procs_fd(&self) -> std::io::Result<std::os::fd::OwnedFd> {
        self.cg.procs_fd()
    }

    /// Read what the kernel did, end what is left in the cgroup and remove it (once).
    pub(crate) fn finish(&mut self) -> Option<KernelOutcome> {
        if self.removed {
            return None;
        }
        self.removed = true;
        let at = crate::actions::watchdog::now_at();
        let o = self.cg.outcome();
        let (ended, err) = match self.cg.remove() {
            Ok(left) => (left, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        Some(KernelOutcome {
            kind: RecordType::KernelOutcome,
            at,
            cgroup: self.cg.dir.display().to_string(),
            oom_kills: o.oom_kills,
            cgroup_peak_bytes: o.peak_bytes,
            ended_with_cgroup: ended,
            remove_error: err,
        })
    }
}

#[cfg(not(target_os = "linux"))]
impl KernelCap {
    pub(crate) fn procs_fd(&self) -> std::io::Result<std::os::fd::OwnedFd> {
        match self._never {}
    }

    pub(crate) fn finish(&mut self) -> Option<KernelOutcome> {
        match self._never {}
    }
}

#[cfg(target_os = "linux")]
impl Drop for KernelCap {
    fn drop(&mut self) {
        // Every way out of `run` removes the cgroup, also an error before the summary.
        let _ = self.finish();
    }
}

impl KernelOutcome {
    /// The human line, when the kernel did something worth a line.
    pub(crate) fn human(&self) -> Vec<String> {
        use crate::output::human_bytes;
        let mut out = Vec::new();
        if self.oom_kills > 0 {
            out.push(format!(
                "the kernel ended {} process{} of the tree at the cgroup limit{}",
                self.oom_kills,
                if self.oom_kills == 1 { "" } else { "es" },
                self.cgroup_peak_bytes.map_or(String::new(), |p| format!(
                    " (cgroup peak {})",
                    human_bytes(p)
                ))
            ));
        }
        if !self.ended_with_cgroup.is_empty() {
            out.push(format!(
                "ended {} process{} still in the cgroup with it",
                self.ended_with_cgroup.len(),
                if self.ended_with_cgroup.len() == 1 {
                    ""
                } else {
                    "es"
                }
            ));
        }
        if let Some(e) = &self.remove_error {
            out.push(format!("warning: {e}"));
        }
        out
    }
}
