//! The process table as plain data (all OSes): what every platform backend returns, what
//! `headroom snapshot` records, and what every core rule is tested against.
//!
//! A snapshot is self-describing: it carries the uid it is about, the pid of the process that
//! took it (for ancestor protection on replay) and the raw ceilings, so a capture from a Mac
//! replays on Linux with identical results.

use serde::{Deserialize, Serialize};

use crate::limits::Ceiling;

/// Schema tag written into every snapshot file.
pub const SNAPSHOT_SCHEMA: &str = "headroom.snapshot/1";

/// Scheduling state, normalised across Linux (`/proc/PID/stat` field 3) and macOS (`p_stat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ProcState {
    Running,
    Sleeping,
    DiskSleep,
    Stopped,
    Traced,
    Zombie,
    Dead,
    Idle,
    Unknown,
}

impl ProcState {
    /// Linux state letter, as in `/proc/PID/stat`.
    pub fn from_linux(c: char) -> Self {
        match c {
            'R' => Self::Running,
            'S' => Self::Sleeping,
            'D' => Self::DiskSleep,
            'T' => Self::Stopped,
            't' => Self::Traced,
            'Z' => Self::Zombie,
            'X' | 'x' => Self::Dead,
            'I' => Self::Idle,
            _ => Self::Unknown,
        }
    }

    /// The letter `ps` would show.
    pub fn letter(self) -> char {
        match self {
            Self::Running => 'R',
            Self::Sleeping => 'S',
            Self::DiskSleep => 'D',
            Self::Stopped => 'T',
            Self::Traced => 't',
            Self::Zombie => 'Z',
            Self::Dead => 'X',
            Self::Idle => 'I',
            Self::Unknown => '?',
        }
    }
}

/// One process as the kernel reported it. Fields that could not be read are null
/// ("unknown"), never zero: absence of evidence must not look like evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProcessRecord {
    pub pid: i32,
    pub ppid: i32,
    /// Real uid: what RLIMIT_NPROC charges (xnu fork1 and Linux alike).
    pub uid: u32,
    pub state: ProcState,
    /// Opaque, platform-specific start token (Linux: clock ticks since boot; macOS:
    /// microseconds since the epoch). Together with pid and uid it is the identity that
    /// survives PID reuse; only ever compared for equality. Null when not read (a
    /// slot-detail snapshot): such a process has no identity and cannot be signalled.
    #[serde(default)]
    pub start_time: Option<u64>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exe: Option<String>,
    #[serde(default)]
    pub pgid: Option<i32>,
    #[serde(default)]
    pub sid: Option<i32>,
    /// The foreground process group of the process's controlling terminal (Linux
    /// `/proc/PID/stat` field 8, macOS `kp_eproc.e_tpgid`): 0 or less when it has no
    /// controlling terminal; null when not read. With `pgid` it tells a shell at its prompt
    /// (it leads that group) from a job the shell runs, which memory guards may hold.
    #[serde(default)]
    pub tpgid: Option<i32>,
    #[serde(default)]
    pub threads: Option<u32>,
    /// User + system CPU time in nanoseconds.
    #[serde(default)]
    pub cpu_ns: Option<u64>,
    /// Private memory: `ri_phys_footprint` on macOS, RssAnon + VmSwap on Linux.
    #[serde(default)]
    pub footprint_bytes: Option<u64>,
    /// Command line, recorded only where a rule needs it (session children's `--log-dir`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
    /// Working directory, recorded only where a rule needs it (a relative `--log-dir` is
    /// resolved against it). Null: not read, and a relative log dir is then unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

impl ProcessRecord {
    pub fn is_zombie(&self) -> bool {
        self.state == ProcState::Zombie
    }

    /// The identity a signal must be addressed to; `None` when the start time is unknown.
    pub fn identity(&self) -> Option<Identity> {
        Some(Identity {
            pid: self.pid,
            start_time: self.start_time?,
            uid: self.uid,
        })
    }
}

/// What a signal must be addressed to: a pid alone is not an identity, because PIDs are
/// reused within seconds (the incident machine handed out 160 PIDs every 20 s while idle).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Identity {
    pub pid: i32,
    pub start_time: u64,
    pub uid: u32,
}

/// Physical memory totals, for `top`, `run --limit` and `calibrate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MemoryTotals {
    pub total_bytes: u64,
    /// Memory available without swapping. Linux: `MemAvailable`. macOS: `hw.memsize` ×
    /// `kern.memorystatus_level` / 100, the percentage of memory the kernel's memory-status
    /// code counts as available (what `memory_pressure` prints as "System-wide memory free
    /// percentage"), so it moves in steps of 1 % of the total.
    pub available_bytes: u64,
}

impl MemoryTotals {
    pub fn free_pct(&self) -> f64 {
        if self.total_bytes == 0 {
            return 0.0;
        }
        self.available_bytes as f64 * 100.0 / self.total_bytes as f64
    }
}

/// How much was read per process.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Detail {
    /// What slot counting needs: pid, ppid, real uid, state, name, threads (one read per
    /// process on Linux; `probe`, `limits` and every `watch` round use it).
    Slots,
    /// Everything: start time (identity), process group, session, CPU, footprint,
    /// executable path. Needed before anything is signalled.
    #[default]
    Full,
}

/// The whole recorded state of one machine at one instant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Snapshot {
    pub schema: String,
    #[serde(default)]
    pub detail: Detail,
    /// `linux` or `macos`: which kernel produced it (decides what "slots" count).
    pub os: String,
    /// Unix time in milliseconds.
    pub taken_at_ms: i64,
    /// The process that took the snapshot; its ancestors are protected on replay too.
    pub self_pid: i32,
    /// The real uid the snapshot is about.
    pub uid: u32,
    pub processes: Vec<ProcessRecord>,
    /// Table entries that were listed but could not be read (EACCES under `hidepid`, a torn
    /// read): any of them may be a child or an ancestor nobody can see.
    #[serde(default)]
    pub unreadable: u64,
    /// `/proc` hides other users' processes (`hidepid=2`): none of them is listed, so any
    /// of them may be a child or an ancestor nobody can see.
    #[serde(default)]
    pub others_hidden: bool,
    pub ceilings: Vec<Ceiling>,
    #[serde(default)]
    pub memory: Option<MemoryTotals>,
}

impl Snapshot {
    /// Whether the table may be missing processes (entries unreadable, others hidden):
    /// no session or ancestor judged on it is known to be whole.
    pub fn partial(&self) -> bool {
        self.unreadable > 0 || self.others_hidden
    }

    /// Whether the slots RLIMIT_NPROC charges are tasks (Linux) or processes (macOS).
    pub fn counts_tasks(&self) -> bool {
        self.os == "linux"
    }
}

/// Per-uid slot usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SlotUsage {
    pub processes: u64,
    /// Threads of those processes (Linux only; RLIMIT_NPROC counts tasks there).
    pub tasks: Option<u64>,
    pub zombies: u64,
    /// The number every ceiling is compared against: tasks on Linux, processes on macOS.
    pub used: u64,
}

/// A parent holding at least one zombie of the user.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ZombieParent {
    pub pid: i32,
    pub name: String,
    pub zombies: u64,
    #[serde(skip)]
    pub record: Option<ProcessRecord>,
}

#[cfg(any(test, feature = "fixtures"))]
pub mod fixture {
    //! Builders shared by unit tests, here and in the main crate (the `fixtures` feature). Conventions from the reference replays: uid 501,
    //! another uid 502, parent name `agency`.
    use super::*;

    pub const UID: u32 = 501;
    pub const OTHER_UID: u32 = 502;

    pub fn proc(pid: i32, ppid: i32, name: &str) -> ProcessRecord {
        ProcessRecord {
            pid,
            ppid,
            uid: UID,
            state: ProcState::Sleeping,
            start_time: Some(1_000 + pid as u64),
            name: name.to_string(),
            exe: Some(format!("/usr/bin/{name}")),
            pgid: Some(pid),
            sid: Some(pid),
            tpgid: Some(-1),
            threads: Some(1),
            cpu_ns: Some(0),
            footprint_bytes: Some(1 << 20),
            argv: None,
            cwd: None,
        }
    }

    pub const MIB: u64 = 1 << 20;

    /// A member of a `run --limit` tree: named `p<pid>`, `mib` MiB, all in group 100 and
    /// session 50.
    pub fn member(pid: i32, ppid: i32, mib: u64) -> ProcessRecord {
        let mut p = proc(pid, ppid, &format!("p{pid}"));
        p.footprint_bytes = Some(mib * MIB);
        p.pgid = Some(100);
        p.sid = Some(50);
        p
    }

    pub fn zombie(pid: i32, ppid: i32) -> ProcessRecord {
        ProcessRecord {
            state: ProcState::Zombie,
            exe: None,
            footprint_bytes: None,
            ..proc(pid, ppid, "send-telemetry")
        }
    }

    pub fn snapshot(os: &str, processes: Vec<ProcessRecord>) -> Snapshot {
        Snapshot {
            schema: SNAPSHOT_SCHEMA.to_string(),
            detail: Detail::Full,
            os: os.to_string(),
            taken_at_ms: 1_700_000_000_000,
            self_pid: processes.last().map_or(1, |p| p.pid),
            uid: UID,
            processes,
            unreadable: 0,
            others_hidden: false,
            ceilings: Vec::new(),
            memory: None,
        }
    }

    /// A parent with `n` zombie children, pids starting at `first_child`.
    pub fn leaker(pid: i32, n: usize, first_child: i32) -> Vec<ProcessRecord> {
        let mut v = vec![proc(pid, 1, "agency")];
        v.extend((0..n).map(|i| zombie(first_child + i as i32, pid)));
        v
    }
}
