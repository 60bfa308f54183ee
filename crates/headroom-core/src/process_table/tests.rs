use super::*;
use crate::snapshot::fixture::*;

#[test]
fn zombie_parents_are_sorted_by_count_then_pid_and_count_only_own_uid() {
    let mut procs = leaker(700, 3, 10_000);
    procs.extend(leaker(800, 5, 20_000));
    procs.extend(leaker(600, 3, 30_000));
    let mut foreign = zombie(40_000, 900);
    foreign.uid = OTHER_UID;
    procs.push(foreign);
    procs.push(zombie(50_000, 4242)); // parent not in the table
    let snap = snapshot("macos", procs);
    let table = ProcessTable::new(&snap);
    let parents: Vec<(i32, u64)> = table
        .zombie_parents(UID)
        .iter()
        .map(|p| (p.pid, p.zombies))
        .collect();
    assert_eq!(parents, vec![(800, 5), (600, 3), (700, 3), (4242, 1)]);
    assert_eq!(table.zombie_parents(UID)[3].name, "unknown");
}

#[test]
fn usage_counts_zombies_toward_the_limit_and_tasks_on_linux() {
    let mut procs = leaker(700, 10, 10_000);
    procs[0].threads = Some(4);
    let mut foreign = proc(900, 1, "other");
    foreign.uid = OTHER_UID;
    procs.push(foreign);
    let mac = snapshot("macos", procs.clone());
    let u = ProcessTable::new(&mac).usage(UID);
    assert_eq!(
        (u.processes, u.zombies, u.used, u.tasks),
        (11, 10, 11, None)
    );
    let linux = snapshot("linux", procs);
    let u = ProcessTable::new(&linux).usage(UID);
    assert_eq!(
        (u.processes, u.zombies, u.used, u.tasks),
        (11, 10, 14, Some(14))
    );
}

#[test]
fn unknown_thread_count_falls_back_to_processes_not_zero() {
    let mut procs = leaker(700, 2, 10_000);
    procs[1].threads = None;
    let snap = snapshot("linux", procs);
    let u = ProcessTable::new(&snap).usage(UID);
    assert_eq!((u.tasks, u.used), (None, 3));
}

#[test]
fn ancestor_walk_includes_init_and_survives_cycles() {
    let snap = snapshot(
        "macos",
        vec![
            proc(10, 20, "a"),
            proc(20, 10, "b"),
            proc(300, 200, "c"),
            proc(200, 100, "d"),
        ],
    );
    let t = ProcessTable::new(&snap);
    assert_eq!(t.self_and_ancestors(10), vec![10, 20, 1]);
    assert_eq!(t.self_and_ancestors(300), vec![300, 200, 100, 1]);
}

#[test]
fn a_subtree_follows_live_parent_links_and_stops_where_keep_says() {
    let snap = snapshot(
        "linux",
        vec![
            proc(1, 0, "init"),
            proc(10, 1, "a"),
            proc(14, 10, "e"),
            proc(11, 10, "b"),
            proc(12, 11, "c"),
            proc(13, 1, "d"),
        ],
    );
    let t = ProcessTable::new(&snap);
    let pids = |v: Option<Vec<&ProcessRecord>>| -> Option<Vec<i32>> {
        v.map(|v| v.iter().map(|p| p.pid).collect())
    };
    assert_eq!(pids(t.subtree(10, |_| true)), Some(vec![10, 11, 14, 12]));
    assert_eq!(pids(t.subtree(10, |p| p.pid != 11)), Some(vec![10, 14]));
    assert_eq!(pids(t.subtree(99, |_| true)), None);
}
