//! The oracle: plain re-statements of the rules, from the generated records alone, without
//! the helpers `select` uses.

use super::*;

/// headroom and everything above it in the real tree (missing records included).
pub(super) fn oracle_ancestors(all: &[ProcessRecord]) -> HashSet<i32> {
    let mut out = HashSet::from([SELF_PID, 1]);
    let mut cur = SELF_PID;
    while let Some(r) = all.iter().find(|r| r.pid == cur) {
        if r.ppid <= 1 || !out.insert(r.ppid) {
            break;
        }
        cur = r.ppid;
    }
    out
}

pub(super) fn oracle_verdict(b: &Built, parent: &ProcessRecord) -> SessionVerdict {
    let kids: Vec<&ProcessRecord> = b
        .visible
        .iter()
        .filter(|c| c.ppid == parent.pid && c.state != ProcState::Zombie)
        .filter(|c| {
            let other_exe = match (&c.exe, &parent.exe) {
                (Some(a), Some(b)) => a != b,
                _ => false,
            };
            c.name != parent.name || other_exe
        })
        .collect();
    let stopped = kids
        .iter()
        .any(|c| matches!(c.state, ProcState::Stopped | ProcState::Traced));
    if stopped || b.unreadable > 0 {
        return SessionVerdict::Unreadable;
    }
    if kids.is_empty() {
        return SessionVerdict::NoSession;
    }
    let mut all_idle = true;
    for c in kids {
        match b.known.get(&c.pid).copied().unwrap_or((None, None)) {
            (Some(cpu), Some(log)) => all_idle &= cpu >= THRESHOLD_S && log >= THRESHOLD_S,
            _ => return SessionVerdict::Unreadable,
        }
    }
    if all_idle {
        SessionVerdict::Idle
    } else {
        SessionVerdict::Active
    }
}

pub(super) fn oracle_pressure(p: &Policy, used: u64, limit: Option<u64>) -> bool {
    let free_max = p.emergency.free_fraction.clamp(0.0, 0.5);
    match limit {
        Some(l) if l > 0 && p.emergency.enabled => {
            (l.saturating_sub(used) as f64 / l as f64) <= free_max
        }
        _ => false,
    }
}

pub(super) fn oracle_recovery(p: &Policy) -> f64 {
    let free_max = p.emergency.free_fraction.clamp(0.0, 0.5);
    p.emergency.recovery_fraction.clamp(0.1, 1.0 - free_max)
}
