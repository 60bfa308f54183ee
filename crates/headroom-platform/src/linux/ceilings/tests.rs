use super::*;
use crate::core::limits::{CeilingStatus, effective_limit};

/// A fake `/proc` and `/sys` in `d`: the cgroup line `cgroup`, and each level's
/// `pids.max` and `pids.current` (`None`: a directory of that name, which exists but
/// cannot be read, EISDIR).
pub(in crate::linux) fn fake(
    d: &Path,
    cgroup: Option<&str>,
    levels: &[(&str, Option<&str>, Option<&str>)],
) -> Roots {
    let roots = Roots {
        proc: d.join("proc"),
        sys: d.join("sys"),
    };
    fs::create_dir_all(roots.proc.join("self")).unwrap();
    match cgroup {
        Some(line) => fs::write(roots.proc.join("self/cgroup"), line).unwrap(),
        None => fs::create_dir_all(roots.proc.join("self/cgroup")).unwrap(),
    }
    for (dir, max, cur) in levels {
        let dir = roots.sys.join("fs/cgroup").join(dir);
        fs::create_dir_all(&dir).unwrap();
        for (name, text) in [("pids.max", max), ("pids.current", cur)] {
            match text {
                Some(t) => fs::write(dir.join(name), t).unwrap(),
                None => fs::create_dir_all(dir.join(name)).unwrap(),
            }
        }
    }
    roots
}

fn judged(c: &[Ceiling]) -> (Option<u64>, bool, Vec<CeilingStatus>) {
    let l = effective_limit(c, 5, 1000);
    let incomplete = l.incomplete();
    (
        l.limit,
        incomplete,
        l.ceilings.iter().map(|e| e.status).collect(),
    )
}

/// A level whose `pids.max` is there but cannot be read may be the tightest: it is an
/// unreadable ceiling beside the tightest read one, and the limit is incomplete. The
/// control: the same tree with it readable and unlimited, or absent (the v2 root has no
/// `pids.max`), is complete.
#[test]
fn an_unreadable_level_is_an_unreadable_ceiling_not_no_limit() {
    let d = tempfile::tempdir().unwrap();
    let roots = fake(
        d.path(),
        Some("0::/a/b\n"),
        &[("a/b", None, Some("3")), ("a", Some("100"), Some("5"))],
    );
    let c = cgroup_ceilings(&roots, &mut || {});
    assert_eq!(c.len(), 2, "{c:?}");
    assert_eq!(c[0].value, Some(100));
    assert!(c[1].value.is_none() && !c[1].unlimited, "{c:?}");
    assert!(c[1].origin.ends_with("a/b/pids.max"), "{}", c[1].origin);
    assert!(
        c[1].note.as_deref().unwrap().contains("cannot read"),
        "{c:?}"
    );
    assert_eq!(
        judged(&c),
        (
            Some(100),
            true,
            vec![CeilingStatus::Constrains, CeilingStatus::Unreadable]
        )
    );
    // Its use unreadable: usage unknown, which may bind too.
    let d = tempfile::tempdir().unwrap();
    let roots = fake(
        d.path(),
        Some("0::/a/b\n"),
        &[("a/b", Some("10"), None), ("a", Some("100"), Some("5"))],
    );
    let c = cgroup_ceilings(&roots, &mut || {});
    assert!(judged(&c).1, "{c:?}");
    assert_eq!(judged(&c).2[1], CeilingStatus::UsageUnknown);
    // Controls.
    let d = tempfile::tempdir().unwrap();
    let roots = fake(
        d.path(),
        Some("0::/a/b\n"),
        &[
            ("a/b", Some("max"), Some("3")),
            ("a", Some("100"), Some("5")),
        ],
    );
    let c = cgroup_ceilings(&roots, &mut || {});
    assert_eq!(
        judged(&c),
        (Some(100), false, vec![CeilingStatus::Constrains])
    );
    let d = tempfile::tempdir().unwrap();
    let roots = fake(d.path(), Some("0::/a\n"), &[("a", Some("100"), Some("5"))]);
    let c = cgroup_ceilings(&roots, &mut || {});
    assert_eq!(
        judged(&c),
        (Some(100), false, vec![CeilingStatus::Constrains]),
        "{c:?}"
    );
}

/// `/proc/self/cgroup` there but unreadable is an unreadable cgroup ceiling (the cgroup
/// is often the real wall in a container); absent, there is no cgroup and no limit.
#[test]
fn an_unreadable_proc_self_cgroup_is_not_no_cgroup() {
    let d = tempfile::tempdir().unwrap();
    let roots = fake(d.path(), None, &[]);
    let c = cgroup_ceilings(&roots, &mut || {});
    assert_eq!(
        judged(&c),
        (None, true, vec![CeilingStatus::Unreadable]),
        "{c:?}"
    );
    assert!(
        c[0].note.as_deref().unwrap().contains("self/cgroup"),
        "{c:?}"
    );
    fs::remove_dir(roots.proc.join("self/cgroup")).unwrap();
    let c = cgroup_ceilings(&roots, &mut || {});
    assert_eq!(
        judged(&c),
        (None, false, vec![CeilingStatus::Unlimited]),
        "{c:?}"
    );
}

/// An absent `pid_max` or `threads-max` (a fake `/proc`) is no ceiling; one that is there
/// but cannot be read is unreadable, and tried once more after `free`.
#[test]
fn an_absent_knob_does_not_constrain_and_an_unreadable_one_is_retried_then_unreadable() {
    let d = tempfile::tempdir().unwrap();
    let roots = fake(d.path(), Some(""), &[]);
    fs::create_dir_all(roots.proc.join("sys/kernel/pid_max")).unwrap();
    fs::write(roots.proc.join("loadavg"), "0 0 0 1/4 9\n").unwrap();
    let c = ceilings(&roots, 1000, &mut || {});
    let find = |s| c.iter().find(|c| c.source == s).unwrap();
    assert!(!find(LimitSource::ThreadsMax).enforced, "{c:?}");
    let pid_max = find(LimitSource::PidMax);
    assert!(pid_max.enforced && pid_max.value.is_none(), "{c:?}");
    assert!(effective_limit(&c, 1, 1000).incomplete());
    // EISDIR is no shortage: `free` is not asked; a shortage is (`read_ceiling`).
    let mut freed = 0;
    let _ = ceilings(&roots, 1000, &mut || freed += 1);
    assert_eq!(freed, 0);
}
