//! The warning step's notification for `run --limit`: its text, and keeping its helper
//! (`notify-send`, `osascript`, a child of headroom like the tree's orphans) out of the
//! tree, so it is never counted, parked or signalled with it.

use std::collections::HashSet;
use std::ffi::OsString;

use crate::core::snapshot::ProcessRecord;

/// The warning's notification text: which command, how close, what comes next.
pub(super) fn warn_body(command: &[OsString], a: &crate::core::memory_warn::Approaching) -> String {
    use crate::output::human_bytes;
    let name = command
        .first()
        .map(|c| crate::sanitize::sanitize(&c.to_string_lossy()).into_owned())
        .unwrap_or_default();
    format!(
        "`{name}` holds {}, {:.0} % of its limit of {} (warning at {:.0} %); at the limit \
         idle subtrees are parked, then the tree is ended",
        human_bytes(a.footprint_bytes),
        a.pct,
        human_bytes(a.limit_bytes),
        a.warn_pct
    )
}

/// `records` without headroom's own notification helpers (`helpers`) and anything below
/// them: they are children of headroom like the tree's orphans, but never the tree's (not
/// its footprint, never parked or signalled with it).
pub(super) fn without_helpers(
    mut records: Vec<ProcessRecord>,
    helpers: &[i32],
) -> Vec<ProcessRecord> {
    if helpers.is_empty() {
        return records;
    }
    let mut out: HashSet<i32> = helpers.iter().copied().collect();
    loop {
        let before = out.len();
        for r in &records {
            if out.contains(&r.ppid) {
                out.insert(r.pid);
            }
        }
        if out.len() == before {
            break;
        }
    }
    records.retain(|r| !out.contains(&r.pid));
    records
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notification_helpers_and_their_children_are_not_the_tree() {
        let rec = |pid, ppid| ProcessRecord {
            pid,
            ppid,
            uid: 501,
            state: crate::core::snapshot::ProcState::Sleeping,
            start_time: Some(1),
            name: format!("p{pid}"),
            exe: None,
            pgid: None,
            sid: None,
            tpgid: None,
            threads: Some(1),
            cpu_ns: None,
            footprint_bytes: Some(1),
            argv: None,
            cwd: None,
        };
        // headroom 10: the command 11 (child 12), an orphan 13, the helper 20 (child 21).
        let all = || {
            vec![
                rec(11, 10),
                rec(12, 11),
                rec(13, 10),
                rec(21, 20),
                rec(20, 10),
            ]
        };
        let pids = |v: Vec<ProcessRecord>| v.iter().map(|r| r.pid).collect::<Vec<_>>();
        assert_eq!(pids(without_helpers(all(), &[20])), vec![11, 12, 13]);
        // The control: without helpers, everything stays.
        assert_eq!(pids(without_helpers(all(), &[])), vec![11, 12, 13, 21, 20]);
    }
}
