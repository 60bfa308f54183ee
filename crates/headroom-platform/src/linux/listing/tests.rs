use super::*;

#[test]
fn the_counters_are_loadavg_s_fifth_field_and_stat_s_processes() {
    assert_eq!(parse_cursor("0.00 0.01 0.05 2/345 6789\n"), Some(6789));
    assert_eq!(parse_cursor("0.00 0.01 0.05 2/345"), None);
    assert_eq!(parse_cursor("0.00 0.01 0.05 2/345 x"), None);
    let stat = "cpu  1 2 3\nintr 5 6\nctxt 77\nbtime 1\nprocesses 12345\nprocs_running 1\n";
    assert_eq!(parse_created(stat), Some(12345));
    assert_eq!(parse_created("cpu 1\n"), None);
}

fn listing(pid_max: u64, positions: &[(i32, u64)]) -> Listing {
    Listing {
        pid_max,
        positions: positions.iter().copied().collect(),
        ..Listing::default()
    }
}

fn mark(created: u64, cursor: u64) -> Option<Mark> {
    Some(Mark { created, cursor })
}

/// Only a complete listing spares the next one; nothing created: the kept pids; created,
/// with no lap of pids possible: the tail from the greatest pid at or below the old cursor.
#[test]
fn where_a_round_s_pids_come_from() {
    let mut l = listing(32_768, &[(1, 258), (500, 757), (900, 1157), (2_000, 2257)]);
    assert_eq!(
        l.source(mark(10, 1_000)),
        PidSource::All,
        "nothing listed yet"
    );
    l.finish(mark(10, 1_000), true);
    assert_eq!(l.source(mark(10, 1_000)), PidSource::Kept);
    assert_eq!(
        l.source(None),
        PidSource::All,
        "the counters cannot be read"
    );
    assert_eq!(
        l.source(mark(15, 1_004)),
        PidSource::Tail { below: 900 },
        "new pids are above 1,000: the tail from 900 on"
    );
    assert_eq!(
        l.source(mark(15, 400)),
        PidSource::All,
        "the cursor wrapped"
    );
    assert_eq!(
        l.source(mark(10 + 32_468, 1_004)),
        PidSource::All,
        "a whole lap of pids could have been handed out"
    );
    assert_eq!(
        l.source(mark(10 + 32_467, 1_004)),
        PidSource::Tail { below: 900 }
    );
    assert_eq!(
        l.source(mark(9, 1_000)),
        PidSource::All,
        "the count went down"
    );
    l.finish(mark(10, 1_000), false);
    assert_eq!(l.source(mark(10, 1_000)), PidSource::All, "incomplete");
    let mut none_below = listing(32_768, &[(2_000, 2257)]);
    none_below.finish(mark(10, 1_000), true);
    assert_eq!(none_below.source(mark(11, 1_001)), PidSource::All);
}

/// A `cat` this test started, ended (its stdin closed) and waited for when dropped, also when
/// an assertion failed first.
struct Cat(std::process::Child);

impl Drop for Cat {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

/// For real: a process started after a full listing is in the tail from the greatest pid at
/// or below the cursor read before it, and the tail holds only pids from there on; a new
/// process moves both counters. The pids can wrap between the two marks (a busy machine with
/// a small `pid_max`): then all of `/proc` is the answer, and the test takes new marks, a
/// few times at most, rather than pass without looking at a tail.
#[test]
fn a_tail_from_the_old_cursor_holds_every_new_process() {
    let mut l = Listing::new(Path::new("/proc"), true);
    for _ in 0..5 {
        let before = l
            .mark()
            .expect("this machine's /proc/loadavg and /proc/stat");
        let all = l.list(None).expect("/proc listed");
        assert!(all.contains(&(std::process::id() as i32)));
        let child = Cat(std::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap());
        let pid = child.0.id() as i32;
        let after = l.mark().unwrap();
        assert!(after.created > before.created, "{before:?} {after:?}");
        assert_ne!(after.cursor, before.cursor);
        l.finish(Some(before), true);
        let PidSource::Tail { below } = l.source(Some(after)) else {
            assert!(
                after.cursor < before.cursor,
                "not a wrap: {before:?} {after:?}"
            );
            continue;
        };
        let tail = l.list(Some(below)).expect("the tail listed");
        assert!(tail.contains(&pid), "the new process: {tail:?}");
        assert!(tail.iter().all(|p| *p >= below), "only the tail: {tail:?}");
        assert!(
            Listing::new(Path::new("/nonexistent"), true)
                .mark()
                .is_none()
        );
        return;
    }
    panic!("the pids wrapped between two marks five times in a row");
}
