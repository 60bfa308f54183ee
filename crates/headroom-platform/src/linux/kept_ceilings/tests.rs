use std::fs;
use std::path::Path;

use super::*;
use crate::linux::ceilings::{self, tests::fake};

/// The ceilings a full reading gives for the same files: what a quiet round must agree
/// with, but for RLIMIT_NPROC (kept from `last`, this process's own soft limit).
fn full(roots: &Roots) -> Vec<Ceiling> {
    ceilings::ceilings(roots, 1000, &mut || {})
}

fn without_rlimit(c: &[Ceiling]) -> Vec<Ceiling> {
    c.iter()
        .filter(|c| c.source != LimitSource::RlimitNproc)
        .cloned()
        .collect()
}

fn set(roots: &Roots, level: &str, file: &str, text: &str) {
    fs::write(roots.sys.join("fs/cgroup").join(level).join(file), text).unwrap();
}

fn tasks(roots: &Roots, n: u64) {
    fs::write(
        roots.proc.join("loadavg"),
        format!("0.10 0.20 0.30 1/{n} 4242\n"),
    )
    .unwrap();
}

/// A leaf `a/b` (50, 3 used) under `a` (100, 5 used), 120 tasks on the machine.
fn tree(d: &Path) -> Roots {
    let roots = fake(
        d,
        Some("0::/a/b\n"),
        &[
            ("a/b", Some("50\n"), Some("3\n")),
            ("a", Some("100\n"), Some("5\n")),
        ],
    );
    fs::create_dir_all(roots.proc.join("sys/kernel")).unwrap();
    fs::write(roots.proc.join("sys/kernel/threads-max"), "9000\n").unwrap();
    fs::write(roots.proc.join("sys/kernel/pid_max"), "4194304\n").unwrap();
    tasks(&roots, 120);
    roots
}

/// Every quiet round agrees with a full reading of the same files as a cgroup ceiling
/// moves: its use and its limit (updated in place: the same allocation, the same origin
/// string), a tie, another level becoming the tightest, a level's limit lifted, a file of
/// either level that no longer parses (an unreadable ceiling, which may bind) and its
/// recovery. The
/// RLIMIT_NPROC ceiling is the last full reading's throughout.
#[test]
fn a_quiet_round_agrees_with_a_full_reading_and_moves_only_numbers_in_place() {
    let d = tempfile::tempdir().unwrap();
    let roots = tree(d.path());
    let last = full(&roots);
    let kept = KeptCeilings::open(&roots, &last, &mut || {}).unwrap();
    let agrees = |kept: &KeptCeilings, what: &str| -> Arc<Bound> {
        let b = kept.read();
        assert_eq!(
            without_rlimit(&b.ceilings),
            without_rlimit(&full(&roots)),
            "{what}"
        );
        let rlimit = |c: &[Ceiling]| {
            c.iter()
                .find(|c| c.source == LimitSource::RlimitNproc)
                .cloned()
        };
        assert_eq!(rlimit(&b.ceilings), rlimit(&last), "{what}");
        b
    };
    let cgroup = |b: &Bound| {
        b.ceilings
            .iter()
            .find(|c| c.source == LimitSource::CgroupPids)
            .map(|c| {
                (
                    c.origin.clone(),
                    c.origin.as_ptr() as usize,
                    c.value,
                    c.in_use,
                )
            })
            .unwrap()
    };
    let first = agrees(&kept, "first round");
    assert_eq!(first.slots, Some(120));
    let (origin, at, ..) = cgroup(&first);
    assert!(origin.ends_with("a/b/pids.max"), "{origin}");
    let ptr = Arc::as_ptr(&first);
    drop(first);

    set(&roots, "a/b", "pids.current", "10\n");
    tasks(&roots, 130);
    let b = agrees(&kept, "numbers moved");
    assert_eq!(b.slots, Some(130));
    assert_eq!(Arc::as_ptr(&b), ptr, "updated in place, not copied");
    assert_eq!(cgroup(&b), (origin.clone(), at, Some(50), Some(10)));
    drop(b);
    // The held level's limit lowered (a `TasksMax` cut): the new limit, in place.
    set(&roots, "a/b", "pids.max", "30\n");
    let b = agrees(&kept, "the held level's limit lowered");
    assert_eq!(cgroup(&b), (origin.clone(), at, Some(30), Some(10)));
    drop(b);
    set(&roots, "a/b", "pids.max", "50\n");
    // A level not held stops parsing, its limit and then its use: an unreadable ceiling
    // beside the held one, which may bind (the bound proves nothing), then back.
    for (file, good) in [("pids.max", "100\n"), ("pids.current", "5\n")] {
        set(&roots, "a", file, "lots\n");
        let b = agrees(&kept, &format!("the other level's {file} does not parse"));
        assert!(
            b.ceilings
                .iter()
                .any(|c| c.source == LimitSource::CgroupPids
                    && c.note
                        .as_deref()
                        .is_some_and(|n| n.contains("cannot parse"))),
            "{file}: {:?}",
            b.ceilings
        );
        drop(b);
        set(&roots, "a", file, good);
        agrees(&kept, &format!("the other level's {file} back"));
    }
    // Rebuilt since: the origin string is a new one, kept from here on.
    let b = agrees(&kept, "settled");
    let at = cgroup(&b).1;
    drop(b);

    // Tied (40 left each): the first, the leaf, stays; one more used above and `a` binds.
    set(&roots, "a", "pids.current", "60\n");
    let b = agrees(&kept, "tied");
    assert_eq!(cgroup(&b).1, at, "a tie keeps the leaf, in place");
    drop(b);
    set(&roots, "a", "pids.current", "61\n");
    let b = agrees(&kept, "another level binds");
    assert!(cgroup(&b).0.ends_with("/a/pids.max"), "{:?}", cgroup(&b));
    drop(b);

    set(&roots, "a/b", "pids.max", "max\n");
    agrees(&kept, "the leaf's limit lifted");
    set(&roots, "a", "pids.max", "lots\n");
    let b = agrees(&kept, "a file that does not parse");
    assert!(
        b.ceilings
            .iter()
            .any(|c| c.source == LimitSource::CgroupPids
                && c.value.is_none()
                && c.note
                    .as_deref()
                    .is_some_and(|n| n.contains("cannot parse"))),
        "{:?}",
        b.ceilings
    );
    drop(b);
    set(&roots, "a", "pids.max", "100\n");
    agrees(&kept, "recovered");
    set(&roots, "a", "pids.max", "max\n");
    agrees(&kept, "no level limits");
    set(&roots, "a", "pids.max", "70\n");
    set(&roots, "a/b", "pids.max", "20\n");
    agrees(&kept, "limits again");
}

/// A bound still held when the next round reads is not changed under its holder: the new
/// round's numbers go into a copy.
#[test]
fn a_bound_still_held_is_not_changed_by_the_next_round() {
    let d = tempfile::tempdir().unwrap();
    let roots = tree(d.path());
    let kept = KeptCeilings::open(&roots, &full(&roots), &mut || {}).unwrap();
    let held = kept.read();
    tasks(&roots, 500);
    set(&roots, "a/b", "pids.current", "7\n");
    let now = kept.read();
    assert_eq!((held.slots, now.slots), (Some(120), Some(500)));
    let used = |b: &Bound| {
        b.ceilings
            .iter()
            .find(|c| c.source == LimitSource::CgroupPids)
            .and_then(|c| c.in_use)
    };
    assert_eq!((used(&held), used(&now)), (Some(3), Some(7)));
    assert_ne!(Arc::as_ptr(&held), Arc::as_ptr(&now));
}

/// A file too long for the stack buffer (not one of the files this reads, but a read must
/// not cut it) is read again whole.
#[test]
fn a_file_longer_than_the_buffer_is_read_whole() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("long");
    let text = format!("{} 1/77 9\n", "0.01 ".repeat(60));
    fs::write(&path, &text).unwrap();
    let f = fs::File::open(&path).unwrap();
    let mut small = [0u8; SMALL];
    assert_eq!(pread(&f, &mut small).unwrap(), text.as_str());
    fs::write(&path, "short\n").unwrap();
    assert_eq!(pread(&f, &mut small).unwrap(), "short\n");
}
