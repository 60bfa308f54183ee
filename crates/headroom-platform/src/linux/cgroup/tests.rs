//! The delegation logic against fake cgroupfs trees in a temp dir: which directory is
//! chosen, why the others are refused, what is written and read back, leftovers.

use std::fs;
use std::path::Path;

use super::*;

const HYBRID: &str = "\
25 1 0:23 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755
30 25 0:26 / /sys/fs/cgroup/unified rw,relatime shared:10 - cgroup2 cgroup2 rw
36 25 0:31 / /sys/fs/cgroup/memory rw,relatime shared:15 - cgroup cgroup rw,memory
37 25 0:32 / /sys/fs/cgroup/pids rw,relatime shared:16 - cgroup cgroup rw,pids
";

#[test]
fn mountinfo_gives_cgroup_mounts_only_with_escapes_undone() {
    let text = format!(
        "{HYBRID}40 25 0:40 / /mnt/with\\040space rw - cgroup2 cgroup2 rw\n\
         41 25 8:1 / /home rw - ext4 /dev/sda1 rw\n"
    );
    let m = parse_mountinfo(&text);
    assert_eq!(m.len(), 4, "{m:?}");
    assert_eq!(m[0].point, PathBuf::from("/sys/fs/cgroup/unified"));
    assert_eq!(m[0].version, Version::V2);
    assert_eq!(m[1].controllers, vec!["rw", "memory"]);
    assert_eq!(m[3].point, PathBuf::from("/mnt/with space"));
}

#[test]
fn candidates_walk_v2_up_to_the_mount_then_v1_own_memory_cgroup() {
    let mi = "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
    let cg = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope\n";
    let c: Vec<PathBuf> = candidates(mi, cg).into_iter().map(|c| c.dir).collect();
    let base = "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service";
    assert_eq!(
        c,
        vec![
            PathBuf::from(format!("{base}/app.slice/x.scope")),
            PathBuf::from(format!("{base}/app.slice")),
            PathBuf::from(base),
            PathBuf::from("/sys/fs/cgroup/user.slice/user-1000.slice"),
            PathBuf::from("/sys/fs/cgroup/user.slice"),
            PathBuf::from("/sys/fs/cgroup"),
        ]
    );
    let cg = "4:memory:/process_api/b2\n0::/\n";
    let c = candidates(HYBRID, cg);
    assert_eq!(
        c,
        vec![
            Candidate {
                version: Version::V2,
                dir: "/sys/fs/cgroup/unified".into()
            },
            Candidate {
                version: Version::V1,
                dir: "/sys/fs/cgroup/memory/process_api/b2".into()
            },
        ]
    );
    // No cgroup mounted (or a /proc/self/cgroup path outside the mount's root): nothing.
    assert!(candidates("", cg).is_empty());
    let bind = "30 25 0:26 /lxc/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
    assert!(candidates(bind, "0::/other\n").is_empty());
    assert_eq!(
        candidates(bind, "0::/lxc/c1/inner\n")[0].dir,
        PathBuf::from("/sys/fs/cgroup/inner")
    );
}

/// Write a fake v2 cgroup directory.
fn v2_dir(dir: &Path, controllers: &str, subtree: &str) {
    fs::create_dir_all(dir).unwrap();
    fs::write(dir.join("cgroup.controllers"), controllers).unwrap();
    fs::write(dir.join("cgroup.subtree_control"), subtree).unwrap();
    fs::write(dir.join("cgroup.procs"), "").unwrap();
}

/// mkdir as a v2 cgroupfs with the memory controller does it: the interface files appear.
fn fake_v2_mkdir(p: &Path) -> io::Result<()> {
    fs::create_dir(p)?;
    for f in [
        "memory.max",
        "memory.high",
        "memory.swap.max",
        "memory.oom.group",
    ] {
        fs::write(p.join(f), "max\n")?;
    }
    fs::write(
        p.join("memory.events"),
        "low 0\nhigh 3\nmax 1\noom 1\noom_kill 2\n",
    )?;
    fs::write(p.join("memory.peak"), "104857600\n")?;
    fs::write(p.join("cgroup.procs"), "")?;
    fs::write(p.join("cgroup.kill"), "")
}

fn v2(dir: &Path) -> Candidate {
    Candidate {
        version: Version::V2,
        dir: dir.to_path_buf(),
    }
}

const LIMIT: u64 = 100 << 20;

#[test]
fn v2_needs_memory_in_controllers_and_subtree_control_and_skips_to_a_delegated_ancestor() {
    let t = tempfile::tempdir().unwrap();
    let slice = t.path().join("app.slice");
    let scope = slice.join("term.scope");
    v2_dir(&slice, "cpu memory pids\n", "memory pids\n");
    v2_dir(&scope, "cpu memory pids\n", "\n");
    let none = t.path().join("bare");
    v2_dir(&none, "cpu pids\n", "cpu\n");
    let cands = [v2(&none), v2(&scope), v2(&slice)];
    let cg = create(&cands, LIMIT, &fake_v2_mkdir, &|_| true).unwrap();
    let name = format!("{PREFIX}{}", std::process::id());
    assert_eq!(cg.dir, slice.join(&name));
    assert_eq!(cg.version, Version::V2);
    assert_eq!(cg.max_bytes, LIMIT);
    let read = |f: &str| fs::read_to_string(cg.dir.join(f)).unwrap();
    assert_eq!(read("memory.max"), LIMIT.to_string());
    assert_eq!(
        read("memory.high"),
        high_for(LIMIT, page_size()).to_string()
    );
    assert_eq!(cg.high_bytes, Some(LIMIT - LIMIT / 16));
    assert_eq!(read("memory.swap.max"), "0");
    assert!(cg.swap_capped);
    assert_eq!(read("memory.oom.group"), "1");
    assert_eq!(
        cg.outcome(),
        CgroupOutcome {
            oom_kills: 2,
            peak_bytes: Some(100 << 20)
        }
    );
    // The control: the refused directories were really looked at and left untouched.
    assert!(!none.join(&name).exists() && !scope.join(&name).exists());
    // A real cgroupfs removes a cgroup with its interface files; a fake needs them gone.
    for e in fs::read_dir(&cg.dir).unwrap().flatten() {
        fs::remove_file(e.path()).unwrap();
    }
    assert_eq!(cg.remove(), Ok(Vec::new()));
    assert!(!cg.dir.exists());
}

#[test]
fn every_refusal_says_where_and_why() {
    let t = tempfile::tempdir().unwrap();
    let no_mem = t.path().join("a");
    v2_dir(&no_mem, "cpu pids\n", "cpu\n");
    let not_delegated = t.path().join("b");
    v2_dir(&not_delegated, "cpu memory\n", "cpu\n");
    let gone = t.path().join("missing");
    let why = create(
        &[v2(&no_mem), v2(&not_delegated), v2(&gone)],
        LIMIT,
        &fake_v2_mkdir,
        &|_| true,
    )
    .unwrap_err();
    assert_eq!(why.len(), 3, "{why:?}");
    assert!(
        why[0].contains("/a: the memory controller is not available there"),
        "{why:?}"
    );
    assert!(
        why[1].contains(
            "/b: memory is not delegated to its children (cgroup.subtree_control: `cpu`)"
        ),
        "{why:?}"
    );
    assert!(why[2].contains("missing/cgroup.controllers"), "{why:?}");
    assert_eq!(
        create(&[], LIMIT, &fake_v2_mkdir, &|_| true).unwrap_err(),
        vec!["no cgroup hierarchy with a memory controller is mounted".to_string()]
    );
}

#[test]
fn a_directory_without_the_controller_files_is_refused_and_cleaned() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("d");
    // cgroup.controllers claims memory, but mkdir yields no memory.max (a lying or half
    // set-up tree): the write must fail instead of creating a plain file.
    v2_dir(&d, "memory\n", "memory\n");
    let plain = |p: &Path| fs::create_dir(p);
    let why = create(&[v2(&d)], LIMIT, &plain, &|_| true).unwrap_err();
    assert!(why[0].contains("memory.max"), "{why:?}");
    let name = format!("{PREFIX}{}", std::process::id());
    assert!(!d.join(&name).exists(), "the half-made cgroup was left");
}

#[test]
fn a_limit_the_kernel_does_not_keep_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("d");
    v2_dir(&d, "memory\n", "memory\n");
    // A kernel (or fake) that reports something else than what was written.
    let liar = |p: &Path| -> io::Result<()> {
        fake_v2_mkdir(p)?;
        fs::remove_file(p.join("memory.max"))?;
        fs::create_dir(p.join("memory.max"))
    };
    let why = create(&[v2(&d)], LIMIT, &liar, &|_| true).unwrap_err();
    assert!(why[0].contains("memory.max"), "{why:?}");
    // A read-back that is not the value written (here: nothing at all).
    let e = t.path().join("e");
    v2_dir(&e, "memory\n", "memory\n");
    let reverts = |p: &Path| -> io::Result<()> {
        fake_v2_mkdir(p)?;
        fs::remove_file(p.join("memory.max"))?;
        std::os::unix::fs::symlink("/dev/null", p.join("memory.max"))
    };
    let why = create(&[v2(&e)], LIMIT, &reverts, &|_| true).unwrap_err();
    assert!(
        why[0].contains("the kernel reports") || why[0].contains("not a byte count"),
        "{why:?}"
    );
}

#[test]
fn v1_uses_limit_in_bytes_and_memsw() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("memory/job");
    fs::create_dir_all(&d).unwrap();
    let v1_mkdir = |p: &Path| -> io::Result<()> {
        fs::create_dir(p)?;
        for f in ["memory.limit_in_bytes", "memory.memsw.limit_in_bytes"] {
            fs::write(p.join(f), "9223372036854771712\n")?;
        }
        fs::write(
            p.join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 1\n",
        )?;
        fs::write(p.join("memory.max_usage_in_bytes"), "99999744\n")?;
        fs::write(p.join("cgroup.procs"), "")
    };
    let c = Candidate {
        version: Version::V1,
        dir: d.clone(),
    };
    let cg = create(&[c], LIMIT + 100, &v1_mkdir, &|_| true).unwrap();
    // Rounded down to a page, as the kernel would.
    assert_eq!(cg.max_bytes, LIMIT);
    assert_eq!(
        fs::read_to_string(cg.dir.join("memory.limit_in_bytes")).unwrap(),
        LIMIT.to_string()
    );
    assert_eq!(
        fs::read_to_string(cg.dir.join("memory.memsw.limit_in_bytes")).unwrap(),
        LIMIT.to_string()
    );
    assert!(cg.swap_capped && cg.high_bytes.is_none());
    assert_eq!(cg.outcome().oom_kills, 1);
    assert_eq!(cg.outcome().peak_bytes, Some(99999744));
}

#[test]
fn leftovers_of_dead_runs_are_removed_live_ones_kept() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("slice");
    v2_dir(&d, "memory\n", "memory\n");
    let dead = d.join(format!("{PREFIX}4000001"));
    let live = d.join(format!("{PREFIX}4000002"));
    let other = d.join("someone-else");
    for p in [&dead, &live, &other] {
        fs::create_dir(p).unwrap();
    }
    let cg = create(&[v2(&d)], LIMIT, &fake_v2_mkdir, &|pid| pid == 4000002).unwrap();
    assert_eq!(cg.removed_leftovers, vec![dead.clone()]);
    assert!(!dead.exists());
    assert!(live.exists() && other.exists());
}

#[test]
fn keyed_fields_and_high() {
    assert_eq!(keyed("low 0\noom_kill 7\n", "oom_kill"), Some(7));
    assert_eq!(keyed("oom 3\n", "oom_kill"), None);
    assert_eq!(high_for(100 << 20, 4096), (100 << 20) - (100 << 20) / 16);
    assert_eq!(high_for(4096 * 17, 4096) % 4096, 0);
}
