//! Which processes a guard holds, on trees as a terminal, tmux, sshd and a service manager
//! make them: the nested match held, and each protection with its control.

use super::*;
use crate::snapshot::Snapshot;
use crate::snapshot::fixture::{MIB, OTHER_UID, proc, snapshot};

/// A process of the user's: session `sid`, group `pgid`, its terminal's foreground group
/// `tpgid` (-1: no terminal), `mib` MiB.
fn p(pid: i32, ppid: i32, name: &str, sid: i32, pgid: i32, tpgid: i32, mib: u64) -> ProcessRecord {
    let mut r = proc(pid, ppid, name);
    r.sid = Some(sid);
    r.pgid = Some(pgid);
    r.tpgid = Some(tpgid);
    r.footprint_bytes = Some(mib * MIB);
    r
}

fn root_owned(mut r: ProcessRecord) -> ProcessRecord {
    r.uid = OTHER_UID;
    r
}

fn rule(pattern: &str, mib: u64) -> Rule {
    Rule {
        pattern: pattern.into(),
        limit_bytes: mib * MIB,
    }
}

/// `(root, footprint MiB)` of every held tree.
fn held(snap: &Snapshot, rules: &[Rule]) -> Vec<(i32, u64)> {
    guarded(&ProcessTable::new(snap), rules, None)
        .iter()
        .map(|g| (g.root, g.footprint_bytes / MIB))
        .collect()
}

/// sshd 10 (root) → bash 20 (session leader, at its prompt until a job runs) → cargo 30
/// (a foreground job: it leads group 30, the terminal's foreground) → rustc 31, and
/// → cargo 32 (a nested cargo) → build-script 33; headroom 90 elsewhere (init's child).
fn terminal(tpgid: i32) -> Snapshot {
    let mut s = snapshot(
        "linux",
        vec![
            proc(1, 0, "init"),
            root_owned(proc(10, 1, "sshd")),
            p(20, 10, "bash", 20, 20, tpgid, 5),
            p(30, 20, "cargo", 20, 30, tpgid, 100),
            p(31, 30, "rustc", 20, 30, tpgid, 400),
            p(32, 30, "cargo", 20, 30, tpgid, 50),
            p(33, 32, "build-script", 20, 30, tpgid, 200),
            p(90, 1, "headroom", 90, 90, -1, 8),
        ],
    );
    s.self_pid = 90;
    s
}

#[test]
fn a_cargo_started_from_a_shell_is_held_from_the_topmost_match_down() {
    // The user's tree root is bash; the guard holds the outer cargo with everything below
    // it (the nested cargo is inside it, not a tree of its own), and never bash.
    let s = terminal(30);
    assert_eq!(held(&s, &[rule("cargo", 500)]), vec![(30, 750)]);
    let g = guarded(&ProcessTable::new(&s), &[rule("cargo", 500)], None);
    assert_eq!(
        (g[0].name.as_str(), g[0].pattern.as_str()),
        ("cargo", "cargo")
    );
    assert_eq!(breaches(&g).len(), 1, "750 MiB over 500");
    assert!(
        breaches(&guarded(
            &ProcessTable::new(&s),
            &[rule("cargo", 800)],
            None
        ))
        .is_empty()
    );
    // A pattern naming the session's shell holds nothing: it leads its session.
    assert!(held(&s, &[rule("bash", 1)]).is_empty());
    // Control: the same bash, not leading a session (started from another shell, its
    // terminal's foreground taken by the cargo job), is held, with its whole job.
    let mut nested = terminal(30);
    nested.processes[2].sid = Some(10);
    assert_eq!(held(&nested, &[rule("bash", 1)]), vec![(20, 755)]);
}

#[test]
fn a_shell_at_its_prompt_is_never_held_a_foreground_job_is() {
    // zsh 20 (session leader) → bash 21, an interactive shell at its prompt: it leads the
    // terminal's foreground group.
    let prompt = |tpgid: i32| {
        let mut s = snapshot(
            "linux",
            vec![
                proc(1, 0, "init"),
                p(20, 1, "zsh", 20, 20, tpgid, 5),
                p(21, 20, "bash", 20, 21, tpgid, 5),
                p(22, 21, "node", 20, 22, tpgid, 300),
                p(90, 1, "headroom", 90, 90, -1, 8),
            ],
        );
        s.self_pid = 90;
        s
    };
    assert!(
        held(&prompt(21), &[rule("bash", 1)]).is_empty(),
        "at its prompt"
    );
    // Control: once the shell runs a job in the foreground, the job's group is the
    // terminal's foreground: the shell is held (with the job).
    assert_eq!(held(&prompt(22), &[rule("bash", 1)]), vec![(21, 305)]);
    // The job itself leads the foreground group and is held: it is no shell.
    assert_eq!(held(&prompt(22), &[rule("node", 1)]), vec![(22, 300)]);
    // A login shell's name, a version suffix, a shell known by its executable only.
    let mut s = prompt(21);
    s.processes[2].name = "-bash".into();
    assert!(held(&s, &[rule("bash", 1)]).is_empty());
    s.processes[2].name = "bash-5.2".into();
    assert!(held(&s, &[rule("bash", 1)]).is_empty());
    s.processes[2].name = "login-helper".into();
    s.processes[2].exe = Some("/bin/zsh".into());
    assert!(held(&s, &[rule("helper", 1)]).is_empty());
    // Control: a name that only contains a shell's name is no shell.
    s.processes[2].exe = Some("/usr/bin/login-helper".into());
    assert_eq!(held(&s, &[rule("helper", 1)]), vec![(21, 305)]);
}

#[test]
fn a_shell_in_a_job_is_held_only_its_group_leader_at_the_prompt_is_protected() {
    // make 30 leads the foreground job; its `sh -c` 31 is in make's group, not leading it.
    let mut s = snapshot(
        "linux",
        vec![
            proc(1, 0, "init"),
            p(20, 1, "bash", 20, 20, 30, 5),
            p(30, 20, "make", 20, 30, 30, 10),
            p(31, 30, "sh", 20, 30, 30, 1),
            p(32, 31, "cc", 20, 30, 30, 600),
            p(90, 1, "headroom", 90, 90, -1, 8),
        ],
    );
    s.self_pid = 90;
    assert_eq!(
        held(&s, &[rule("make", 1)]),
        vec![(30, 611)],
        "sh and cc in it"
    );
}

#[test]
fn what_was_not_read_protects() {
    let mut s = terminal(30);
    // No session read: it may lead one.
    s.processes[3].sid = None;
    assert_eq!(
        held(&s, &[rule("cargo", 1)]),
        vec![(32, 250)],
        "the nested cargo"
    );
    // A shell whose group or terminal was not read may be at its prompt; a non-shell is
    // held.
    let mut s = terminal(30);
    s.processes[2].sid = Some(10);
    s.processes[2].tpgid = None;
    assert!(held(&s, &[rule("bash", 1)]).is_empty());
    s.processes[3].tpgid = None;
    assert_eq!(held(&s, &[rule("cargo", 1)]), vec![(30, 750)]);
}

#[test]
fn a_protected_process_cuts_the_chain_below_it_starts_a_tree_of_its_own() {
    // tmux server 20 (leads its session) → node 30 (in the server's own group) → bash 40
    // (a pane's shell: it leads its session) → node 50, the pane's foreground job.
    let mut s = snapshot(
        "linux",
        vec![
            proc(1, 0, "init"),
            p(20, 1, "tmux: server", 20, 20, -1, 5),
            p(30, 20, "node", 20, 20, -1, 200),
            p(40, 30, "bash", 40, 40, 50, 5),
            p(50, 40, "node", 40, 50, 50, 300),
            p(90, 1, "headroom", 90, 90, -1, 8),
        ],
    );
    s.self_pid = 90;
    // The outer node holds itself only (the pane shell and what runs in it are another
    // session); the inner node, below the protected shell, is a held tree of its own.
    assert_eq!(held(&s, &[rule("node", 1)]), vec![(50, 300), (30, 200)]);
    assert!(held(&s, &[rule("tmux", 1)]).is_empty(), "a session leader");
    // Another user's process cuts the chain too: cargo → sudo (root) → cargo.
    let mut s = snapshot(
        "linux",
        vec![
            proc(1, 0, "init"),
            p(20, 1, "bash", 20, 20, -1, 5),
            p(30, 20, "cargo", 20, 30, -1, 100),
            root_owned(p(31, 30, "sudo", 20, 30, -1, 1)),
            p(32, 31, "cargo", 20, 30, -1, 100),
            p(90, 1, "headroom", 90, 90, -1, 8),
        ],
    );
    s.self_pid = 90;
    assert_eq!(held(&s, &[rule("cargo", 1)]), vec![(30, 100), (32, 100)]);
}

#[test]
fn headroom_and_its_ancestors_are_never_held_their_other_children_are() {
    // bash 20 → cargo 30 → headroom 31 (say `cargo run -- watch`); bash → cargo 40.
    let mut s = snapshot(
        "linux",
        vec![
            proc(1, 0, "init"),
            p(20, 1, "bash", 20, 20, -1, 5),
            p(30, 20, "cargo", 20, 30, -1, 100),
            p(31, 30, "headroom", 20, 30, -1, 8),
            p(32, 30, "cargo-helper", 20, 30, -1, 50),
            p(40, 20, "cargo", 20, 40, -1, 300),
        ],
    );
    s.self_pid = 31;
    // 30 is headroom's parent: not held, nor is its helper through it (the helper is
    // its own match, the top of its chain below the protected ancestor).
    assert_eq!(held(&s, &[rule("cargo", 1)]), vec![(40, 300), (32, 50)]);
    assert!(held(&s, &[rule("headroom", 1)]).is_empty());
}

#[test]
fn first_rule_wins_pressure_lowers_the_limit_and_other_users_are_never_held() {
    let mut s = terminal(30);
    let mut other = p(50, 1, "cargo", 50, 50, -1, 9000);
    other.uid = OTHER_UID;
    s.processes.push(other);
    let rules = [rule("cargo", 100), rule("car", 1000)];
    let g = guarded(&ProcessTable::new(&s), &rules, Some(0.0));
    assert_eq!(g.len(), 1, "{g:?}");
    assert_eq!(
        (g[0].root, g[0].limit_bytes, g[0].effective_bytes),
        (30, 100 * MIB, 80 * MIB),
        "80 % of 100 MiB at no free memory"
    );
    assert!(guarded(&ProcessTable::new(&s), &[], None).is_empty());
    assert_eq!(
        rule_for(&rules, "cargo-build", None).map(|r| r.limit_bytes),
        Some(100 * MIB)
    );
    assert!(rule_for(&rules, "x", Some("/home/u/cargo/bin/x")).is_none());
}

#[test]
fn a_shell_with_a_version_suffix_is_a_shell_a_name_that_only_ends_in_digits_is_not() {
    // Login shells and versioned binaries: a leading `-` and a trailing version of digits,
    // dots and dashes are ignored.
    for name in ["ksh93", "bash-5.2", "-zsh", "bash5.2.21"] {
        assert!(is_shell_name(name), "{name}");
    }
    // Control: stripping the suffix leaves a name that is no shell.
    for name in ["python3", "cargo-1.80", "bashful2"] {
        assert!(!is_shell_name(name), "{name}");
    }
}

#[test]
fn a_pattern_matches_the_name_or_the_executables_file_name_and_nothing_else() {
    let mut by_exe = proc(40, 1, "node");
    by_exe.exe = Some("/opt/tools/bin/cargo".into());
    for (pattern, r) in [("cargo", proc(30, 1, "cargo")), ("cargo", by_exe.clone())] {
        assert!(matches(pattern, &r), "{pattern} on {r:?}");
    }
    // Control: another name, and an executable of another name, do not match.
    for (pattern, r) in [("cargo", proc(31, 1, "rustc")), ("rustc", by_exe)] {
        assert!(!matches(pattern, &r), "{pattern} on {r:?}");
    }
}

#[test]
fn a_refusal_names_the_process_and_why_it_is_protected() {
    // bash 20 leads its session; cargo 30 is not protected (the control).
    let snap = terminal(30);
    let table = ProcessTable::new(&snap);
    let holding = Holding::new(&table);
    let leader = p(20, 10, "bash", 20, 20, 30, 5);
    assert_eq!(
        holding.refusal(&leader).as_deref(),
        Some("pid `20` (`bash`) leads its session (or its session was not read)")
    );
    // A shell that leads the terminal's foreground group, not its session: at its prompt.
    let prompt = p(25, 20, "zsh", 20, 25, 25, 5);
    assert_eq!(
        holding.refusal(&prompt).as_deref(),
        Some("pid `25` (`zsh`) is a shell at its terminal's prompt")
    );
    assert_eq!(holding.refusal(&p(30, 20, "cargo", 20, 30, 30, 100)), None);
}
