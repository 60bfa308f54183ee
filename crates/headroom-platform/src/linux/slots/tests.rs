use super::*;
use std::fs;

/// A kept descriptor is re-read (the file's new content, no reopen); a pid that left the
/// listing is closed; the budget caps what is kept, and reads past it still work.
#[test]
fn kept_descriptors_are_reread_pruned_and_capped() {
    let d = tempfile::tempdir().unwrap();
    let path = |pid: i32| d.path().join(format!("{pid}-status"));
    for pid in [1, 2, 3] {
        fs::write(path(pid), format!("Name:\tp{pid}\n")).unwrap();
    }
    let mut k = KeptStatus::with_budget(2);
    let mut buf = String::new();
    k.next_generation();
    for pid in [1, 2, 3] {
        assert_eq!(k.read(pid, &path(pid), &mut buf).unwrap(), Some(()));
        assert_eq!(buf, format!("Name:\tp{pid}\n"));
    }
    assert_eq!(k.kept(), 2, "the budget caps what is kept");
    k.end();
    // Rewritten in place (same inode): the kept descriptor reads the new content.
    fs::write(path(1), "Name:\tnew\n").unwrap();
    k.next_generation();
    assert_eq!(k.read(1, &path(1), &mut buf).unwrap(), Some(()));
    assert_eq!(buf, "Name:\tnew\n");
    k.end();
    assert_eq!(k.kept(), 1, "pid 2 was not listed this time: closed");
    // Gone: a missing file is Ok(None), not an error.
    assert_eq!(k.read(9, &path(9), &mut buf).unwrap(), None);
}

/// An `open` that finds no descriptor left (EMFILE, injected) is not the process gone:
/// kept descriptors are closed and the read tried again, which reads it; the budget is
/// lowered to what stays kept (the next read is by path, not kept). A second EMFILE in a
/// row is an error naming the file and the OS error (the snapshot counts it unreadable),
/// never `Ok(None)`. Later snapshots double the budget back to the limit's, not past it,
/// and a shortage while regrowing lowers it again.
#[test]
fn no_descriptor_left_is_a_retry_then_an_error_never_gone() {
    let d = tempfile::tempdir().unwrap();
    let path = |pid: i32| d.path().join(format!("{pid}-status"));
    for pid in 1..=9 {
        fs::write(path(pid), format!("Name:\tp{pid}\n")).unwrap();
    }
    let limit = 1000;
    let mut k = KeptStatus::with_budget(8);
    let mut buf = String::new();
    k.begin_under(limit);
    assert_eq!(k.budget, limit);
    for pid in [1, 2, 3] {
        assert_eq!(k.read(pid, &path(pid), &mut buf).unwrap(), Some(()));
    }
    assert_eq!(k.kept(), 3);
    k.fail_opens = 1;
    assert_eq!(k.read(4, &path(4), &mut buf).unwrap(), Some(()));
    assert_eq!(buf, "Name:\tp4\n");
    assert_eq!(
        (k.kept(), k.open, k.budget),
        (0, 0, 0),
        "shed, and kept no more"
    );
    k.fail_opens = 2;
    let e = k.read(5, &path(5), &mut buf).unwrap_err().to_string();
    assert!(e.contains("5-status") && e.contains("os error 24"), "{e}");
    k.end();
    // Regrowing: 2 × SHED, then doubling, never past the limit's.
    let mut budgets = Vec::new();
    for _ in 0..4 {
        k.begin_under(limit);
        budgets.push(k.budget);
        k.end();
    }
    assert_eq!(budgets, [2 * SHED, 4 * SHED, 8 * SHED, limit]);
    assert_eq!(k.growth, Growth::FromLimit, "back at the limit's");
    // A shortage while regrowing lowers it again, to what stays kept.
    k.begin_under(limit);
    assert_eq!(k.read(6, &path(6), &mut buf).unwrap(), Some(()));
    k.fail_opens = 1;
    assert_eq!(k.read(7, &path(7), &mut buf).unwrap(), Some(()));
    assert_eq!((k.budget, k.growth), (0, Growth::Regrowing));
    k.end();
    k.begin_under(limit);
    assert_eq!(k.budget, 2 * SHED);
    assert_eq!(k.read(8, &path(8), &mut buf).unwrap(), Some(()));
    assert_eq!(k.kept(), 1, "kept again once regrown");
}

/// For real: a reaped child's kept descriptor does not read as a live process; the pid
/// is opened afresh (and is gone).
#[test]
fn a_reaped_process_is_not_read_through_its_old_descriptor() {
    // `cat` on a pipe ends when its stdin closes: no signal needed.
    let mut child = std::process::Command::new("cat")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let path = std::path::PathBuf::from(format!("/proc/{pid}/status"));
    let mut k = KeptStatus::with_budget(8);
    let mut buf = String::new();
    k.next_generation();
    assert_eq!(k.read(pid, &path, &mut buf).unwrap(), Some(()));
    // (Not its name: `spawn` can return before exec has set it.)
    assert!(buf.contains(&format!("\nPid:\t{pid}\n")), "{buf}");
    assert_eq!(k.kept(), 1);
    drop(child.stdin.take());
    child.wait().unwrap();
    k.next_generation();
    assert_eq!(k.read(pid, &path, &mut buf).unwrap(), None);
    assert_eq!(k.kept(), 0);
}
