//! `watch`'s memory guards (all OSes, pure): trees of the user's whose root matches a
//! configured pattern, and which of them are over their (pressure-aware) limit — the
//! `run --limit` rule applied to processes headroom did not start.
//!
//! Matching is `reap`'s: a plain case-insensitive substring of the root's name or the file
//! name of its executable (a pattern with `/` matches the full path); never regex.

use serde::Serialize;

use crate::memory::effective_limit;
use crate::patterns::{AllowDeny, Patterns};
use crate::proc_tree::own_trees;
use crate::snapshot::{Identity, ProcessRecord, ProcessTable};

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

/// Whether `p` matches `pattern`, the way `rule_for` matches a rule.
pub fn matches(pattern: &str, p: &ProcessRecord) -> bool {
    AllowDeny {
        allow: Patterns::new([pattern]),
        deny: Patterns::default(),
    }
    .permits(&p.name, p.exe.as_deref())
}

/// The rule (first match wins) for a tree rooted at `name`/`exe`.
pub fn rule_for<'r>(rules: &'r [Rule], name: &str, exe: Option<&str>) -> Option<&'r Rule> {
    rules.iter().find(|r| {
        AllowDeny {
            allow: Patterns::new([r.pattern.as_str()]),
            deny: Patterns::default(),
        }
        .permits(name, exe)
    })
}

/// Every tree of the snapshot's user whose root matches a rule and whose footprint is at or
/// above its effective limit, largest first. headroom's own tree is never among them.
pub fn breaches(table: &ProcessTable<'_>, rules: &[Rule], free_pct: Option<f64>) -> Vec<Breach> {
    if rules.is_empty() {
        return Vec::new();
    }
    let snap = table.snapshot;
    let protected = table.self_and_ancestors(snap.self_pid);
    own_trees(table, snap.uid, snap.self_pid)
        .into_iter()
        .filter(|t| !protected.contains(&t.root.pid))
        .filter_map(|t| {
            let rule = rule_for(rules, &t.root.name, t.root.exe.as_deref())?;
            let effective = effective_limit(rule.limit_bytes, free_pct);
            (t.footprint_bytes >= effective).then(|| Breach {
                root: t.root.pid,
                identity: t.root.identity(),
                name: t.root.name.clone(),
                pattern: rule.pattern.clone(),
                footprint_bytes: t.footprint_bytes,
                limit_bytes: rule.limit_bytes,
                effective_bytes: effective,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::fixture::{OTHER_UID, proc, snapshot};

    const MIB: u64 = 1 << 20;

    fn rules() -> Vec<Rule> {
        vec![
            Rule {
                pattern: "cargo".into(),
                limit_bytes: 100 * MIB,
            },
            Rule {
                pattern: "node".into(),
                limit_bytes: 1000 * MIB,
            },
        ]
    }

    #[test]
    fn a_matching_tree_over_its_limit_breaches_others_do_not() {
        let mut cargo = proc(100, 1, "cargo");
        cargo.footprint_bytes = Some(60 * MIB);
        let mut rustc = proc(101, 100, "rustc");
        rustc.footprint_bytes = Some(50 * MIB);
        let mut node = proc(200, 1, "node");
        node.footprint_bytes = Some(900 * MIB);
        let mut other = proc(300, 1, "cargo");
        other.uid = OTHER_UID;
        other.footprint_bytes = Some(9000 * MIB);
        let me = proc(400, 1, "headroom");
        let snap = snapshot("linux", vec![cargo, rustc, node, other, me]);
        let b = breaches(&ProcessTable::new(&snap), &rules(), Some(50.0));
        assert_eq!(b.len(), 1);
        assert_eq!(
            (b[0].root, b[0].footprint_bytes, b[0].effective_bytes),
            (100, 110 * MIB, 100 * MIB)
        );
        assert!(breaches(&ProcessTable::new(&snap), &[], Some(50.0)).is_empty());
    }

    #[test]
    fn pressure_lowers_the_limit_and_headrooms_own_tree_is_exempt() {
        let mut node = proc(200, 1, "node");
        node.footprint_bytes = Some(900 * MIB);
        let mut cargo = proc(10, 1, "cargo");
        cargo.footprint_bytes = Some(500 * MIB);
        let me = proc(11, 10, "headroom");
        let snap = snapshot("linux", vec![node, cargo, me]);
        let b = breaches(&ProcessTable::new(&snap), &rules(), Some(0.0));
        assert_eq!(
            b.iter().map(|x| x.root).collect::<Vec<_>>(),
            vec![200],
            "80 % of 1000 MiB is 800; cargo is an ancestor"
        );
        assert_eq!(b[0].effective_bytes, 800 * MIB);
    }

    #[test]
    fn first_rule_wins_and_directories_do_not_match() {
        assert_eq!(
            rule_for(&rules(), "cargo-build", None).map(|r| r.limit_bytes),
            Some(100 * MIB)
        );
        assert!(rule_for(&rules(), "x", Some("/home/u/cargo/bin/x")).is_none());
    }
}
