//! `watch`'s memory guards (all OSes, pure): which processes a `[[memory.guard]]` holds,
//! and which of those trees are over their (pressure-aware) limit — the `run --limit` rule
//! applied to processes headroom did not start.
//!
//! Matching is `reap`'s: a plain case-insensitive substring of the process name or the file
//! name of its executable (a pattern with `/` matches the full path); never regex.
//!
//! **A guard holds the topmost match of each chain, not the tree's root.** A `cargo` typed
//! into a shell runs under bash, sshd, tmux or `systemd --user`; the user's tree root is one
//! of those. The held root is a process that matches a rule, is not protected, and has no
//! matching, unprotected ancestor the chain reaches it from without passing a protected
//! process; the guard holds it and its descendants, stopping at another user's process and
//! at a protected one (which, with all below it, is neither counted nor signalled):
//!
//! ```text
//! sshd (root)
//! └─ bash          session leader: protected, never held
//!    └─ cargo      pattern "cargo": the held root (its parent does not match)
//!       ├─ rustc   held
//!       └─ cargo   held, inside the tree above (not a root of its own)
//!          └─ build-script  held
//! ```
//!
//! **Never held** (neither parked nor ended, and not a root), whatever a pattern says:
//! - a session leader (`sid == pid`): a login or terminal shell, a tmux pane's shell, a
//!   service's main process;
//! - a shell at its prompt: a shell (by name: `bash`, `zsh`, `fish`, …) that leads its
//!   terminal's foreground process group (`pid == pgid == tpgid`). A job the shell runs in
//!   the foreground, `cargo build` say, leads that group too but is no shell, so it is
//!   held; a shell that started a job is no longer in the foreground (the job's group is),
//!   and a shell running a script inside a job does not lead the group;
//! - headroom and its ancestors, pid 0 and 1, another user's processes (`ParkPermission`).
//!
//! What was not read counts as protecting: an unknown session is a session leader, an
//! unknown process group or terminal makes a shell the foreground one.

use std::collections::HashSet;

use serde::Serialize;

use crate::memory::effective_limit;
use crate::parking::ParkPermission;
use crate::patterns::{AllowDeny, Patterns};
use crate::process_table::ProcessTable;
use crate::snapshot::{Identity, ProcessRecord};

/// One `[[memory.guard]]` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rule {
    pub pattern: String,
    pub limit_bytes: u64,
}

/// A tree over its limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Breach {
    pub root: i32,
    /// The root's identity (pid, start time, uid) when the breach was seen; `None` when its
    /// start time was not read, and then nothing is signalled. Every later step re-checks it
    /// (and the pattern): a pid handed to another process is not the guarded tree.
    #[serde(skip)]
    pub identity: Option<Identity>,
    pub name: String,
    pub pattern: String,
    pub footprint_bytes: u64,
    pub limit_bytes: u64,
    /// The limit after the memory-pressure adjustment.
    pub effective_bytes: u64,
}

/// A tree a guard holds, at any footprint: what the round's warnings and its breaches are
/// both read from (one pass over the table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guarded {
    pub root: i32,
    pub identity: Option<Identity>,
    pub name: String,
    pub pattern: String,
    pub limit_bytes: u64,
    pub footprint_bytes: u64,
    pub effective_bytes: u64,
}

impl Guarded {
    /// The breach, when the tree is at or over its effective limit.
    pub fn breach(&self) -> Option<Breach> {
        (self.footprint_bytes >= self.effective_bytes).then(|| Breach {
            root: self.root,
            identity: self.identity,
            name: self.name.clone(),
            pattern: self.pattern.clone(),
            footprint_bytes: self.footprint_bytes,
            limit_bytes: self.limit_bytes,
            effective_bytes: self.effective_bytes,
        })
    }
}

/// Why a process is never held by a guard, beyond `ParkPermission`'s refusals (pid 0/1,
/// another user's process, headroom and its ancestors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protected {
    SessionLeader,
    ForegroundShell,
}

impl Protected {
    pub fn describe(self) -> &'static str {
        match self {
            Self::SessionLeader => "leads its session (or its session was not read)",
            Self::ForegroundShell => "is a shell at its terminal's prompt",
        }
    }
}

/// The shells recognised by name (the process name or the executable's file name, a login
/// shell's leading `-` and a version suffix like `-5.2` or `93` ignored).
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "fish", "dash", "ash", "ksh", "mksh", "pdksh", "oksh", "loksh", "yash",
    "tcsh", "csh", "rc", "es", "nu", "elvish", "xonsh", "pwsh", "osh", "ysh", "ion", "murex",
];

fn is_shell_name(name: &str) -> bool {
    let n = name.trim_start_matches('-').to_lowercase();
    let base = n.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    SHELLS.contains(&base)
}

/// Whether `p` is a shell by its name or its executable's file name.
pub fn is_shell(p: &ProcessRecord) -> bool {
    let file = p.exe.as_deref().map(|e| e.rsplit('/').next().unwrap_or(e));
    is_shell_name(&p.name) || file.is_some_and(is_shell_name)
}

/// The protection of `p` by its own record, if any (see the module docs).
pub fn protection(p: &ProcessRecord) -> Option<Protected> {
    if p.sid.is_none_or(|s| s == p.pid) {
        return Some(Protected::SessionLeader);
    }
    let foreground_leader = match (p.pgid, p.tpgid) {
        (Some(g), Some(t)) => g == p.pid && t > 0 && t == g,
        _ => true,
    };
    (foreground_leader && is_shell(p)).then_some(Protected::ForegroundShell)
}

/// Whether `p` matches `pattern`, the way `rule_for` matches a rule.
pub fn matches(pattern: &str, p: &ProcessRecord) -> bool {
    AllowDeny {
        allow: Patterns::new([pattern]),
        deny: Patterns::default(),
    }
    .permits(&p.name, p.exe.as_deref())
}

/// The rule (first match wins) for a process named `name`/`exe`.
pub fn rule_for<'r>(rules: &'r [Rule], name: &str, exe: Option<&str>) -> Option<&'r Rule> {
    rules.iter().find(|r| {
        AllowDeny {
            allow: Patterns::new([r.pattern.as_str()]),
            deny: Patterns::default(),
        }
        .permits(name, exe)
    })
}

/// Who a guard may hold in one table: what `ParkPermission` allows (the user's own, never
/// pid 0/1, headroom or its ancestors) and not `protection`'s. Read once per table; both
/// the round's pass and every re-read of an enforcement ask it.
#[derive(Debug)]
pub struct Holding<'t, 'a> {
    table: &'t ProcessTable<'a>,
    permission: ParkPermission,
}

impl<'t, 'a> Holding<'t, 'a> {
    pub fn new(table: &'t ProcessTable<'a>) -> Self {
        Self {
            table,
            permission: ParkPermission::new(table),
        }
    }

    /// Why a guard may not hold `p`; `None` when it may.
    pub fn refusal(&self, p: &ProcessRecord) -> Option<String> {
        if let Err(r) = self.permission.check(p) {
            return Some(r.to_string());
        }
        protection(p).map(|why| format!("pid `{}` (`{}`) {}", p.pid, p.name, why.describe()))
    }

    fn may_hold(&self, p: &ProcessRecord) -> bool {
        self.permission.check(p).is_ok() && protection(p).is_none()
    }

    /// A process that may be a held root: one a guard may hold, alive, not a kernel
    /// thread (ppid 0).
    fn holdable(&self, p: &ProcessRecord) -> bool {
        p.ppid != 0 && !p.is_zombie() && self.may_hold(p)
    }

    /// The members held under `root`: it and its descendants by live parent links, not
    /// descending into a process a guard may not hold (another user's, a protected one:
    /// it and all below it are neither counted nor signalled); root first, then breadth
    /// first. `None` when `root` is not in the table.
    pub fn members(&self, root: i32) -> Option<Vec<&'a ProcessRecord>> {
        self.table.subtree(root, |k| self.may_hold(k))
    }

    /// Whether a holdable `p` is the top of its chain for `rules`: walking up, a process a
    /// guard may not hold (or the top of the table) comes before any ancestor a rule
    /// matches, so no held tree above already takes `p` in.
    fn topmost(&self, p: &ProcessRecord, rules: &[Rule]) -> bool {
        let mut seen = HashSet::from([p.pid]);
        let mut at = p.ppid;
        while let Some(q) = self.table.get(at) {
            if !seen.insert(q.pid) || !self.holdable(q) {
                return true;
            }
            if rule_for(rules, &q.name, q.exe.as_deref()).is_some() {
                return false;
            }
            at = q.ppid;
        }
        true
    }
}

/// Every tree a `[[memory.guard]]` holds (see the module docs), with its footprint and its
/// pressure-aware limit, largest first (pid breaks ties). One pass: the warnings and the
/// breaches of a round are both read from it.
pub fn guarded(table: &ProcessTable<'_>, rules: &[Rule], free_pct: Option<f64>) -> Vec<Guarded> {
    if rules.is_empty() {
        return Vec::new();
    }
    let h = Holding::new(table);
    let mut out: Vec<Guarded> = table
        .snapshot
        .processes
        .iter()
        .filter(|p| h.holdable(p))
        .filter_map(|p| {
            let rule = rule_for(rules, &p.name, p.exe.as_deref())?;
            if !h.topmost(p, rules) {
                return None;
            }
            let footprint_bytes = h
                .members(p.pid)?
                .iter()
                .filter_map(|m| m.footprint_bytes)
                .sum();
            Some(Guarded {
                root: p.pid,
                identity: p.identity(),
                name: p.name.clone(),
                pattern: rule.pattern.clone(),
                limit_bytes: rule.limit_bytes,
                footprint_bytes,
                effective_bytes: effective_limit(rule.limit_bytes, free_pct),
            })
        })
        .collect();
    out.sort_by(|a, b| {
        b.footprint_bytes
            .cmp(&a.footprint_bytes)
            .then(a.root.cmp(&b.root))
    });
    out
}

/// The held trees at or above their effective limit, in `guarded`'s order.
pub fn breaches(guarded: &[Guarded]) -> Vec<Breach> {
    guarded.iter().filter_map(Guarded::breach).collect()
}

#[cfg(test)]
mod tests;
