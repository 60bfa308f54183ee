//! `run --enforce`: the kernel holds the limit in a cgroup of the command's own (Linux).
//!
//! As root the test delegates a cgroup to its private uid the way systemd delegates one to a
//! user's manager (v2: a subtree with `memory` in its `cgroup.subtree_control`, owned by the
//! uid; v1: a memory cgroup owned by the uid), moves a shell into it and has that shell exec
//! headroom as the uid. Without root it is ignored ("needs root"); run anyway
//! (`--include-ignored`) it uses whatever this user was delegated, and fails with the
//! reason when that is nothing.

use std::path::{Path, PathBuf};

use crate::schema::{self, RunEvent};
use crate::support::{Env, chown, is_root, wait_until};

const MIB: u64 = 1 << 20;

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// A cgroup the test made and gave to its uid; removed (after its tree) on drop.
struct Delegated {
    top: PathBuf,
    /// Where the shell that execs headroom is moved.
    leaf: PathBuf,
}

impl Drop for Delegated {
    fn drop(&mut self) {
        for d in [&self.leaf, &self.top] {
            // Emptied by the tree's end (the Tree is dropped first); rmdir is EBUSY until
            // the kernel has taken the last task out.
            let gone = || !d.exists() || std::fs::remove_dir(d).is_ok();
            if !crate::support::poll_within(std::time::Duration::from_secs(10), gone) {
                eprintln!("warning: could not remove {}", d.display());
            }
        }
    }
}

/// The mount point of the cgroup2 hierarchy, and of the v1 memory hierarchy.
fn mounts() -> (Option<PathBuf>, Option<PathBuf>) {
    let mut v2 = None;
    let mut v1 = None;
    for line in read(Path::new("/proc/self/mountinfo")).lines() {
        let Some((l, r)) = line.split_once(" - ") else {
            continue;
        };
        let point = l.split(' ').nth(4).map(PathBuf::from);
        let r: Vec<&str> = r.split(' ').collect();
        match r.first() {
            Some(&"cgroup2") => v2 = point,
            Some(&"cgroup")
                if r.get(2)
                    .is_some_and(|o| o.split(',').any(|c| c == "memory")) =>
            {
                v1 = point
            }
            _ => {}
        }
    }
    (v2, v1)
}

/// As root: a cgroup delegated to `env.uid`, or why this machine has none to give.
fn delegate(env: &Env, tag: &str) -> Result<Delegated, String> {
    let name = format!("headroom-test-{}-{tag}", std::process::id());
    let (v2, v1) = mounts();
    let own = read(Path::new("/proc/self/cgroup"));
    if let Some(m) = v2.filter(|m| {
        read(&m.join("cgroup.controllers"))
            .split_whitespace()
            .any(|c| c == "memory")
            && read(&m.join("cgroup.subtree_control"))
                .split_whitespace()
                .any(|c| c == "memory")
    }) {
        // At the root (exempt from the no-internal-process rule), as systemd makes
        // user@UID.service: memory enabled for children, the subtree owned by the user.
        let top = m.join(&name);
        std::fs::create_dir(&top).map_err(|e| format!("mkdir {}: {e}", top.display()))?;
        let leaf = top.join("leaf");
        let d = Delegated {
            top: top.clone(),
            leaf: leaf.clone(),
        };
        std::fs::write(top.join("cgroup.subtree_control"), "+memory")
            .map_err(|e| format!("enable memory in {}: {e}", top.display()))?;
        std::fs::create_dir(&leaf).map_err(|e| format!("mkdir {}: {e}", leaf.display()))?;
        for p in [
            top.clone(),
            top.join("cgroup.procs"),
            top.join("cgroup.subtree_control"),
            top.join("cgroup.threads"),
            leaf.clone(),
            leaf.join("cgroup.procs"),
        ] {
            chown(&p, env.uid);
        }
        return Ok(d);
    }
    let path = own
        .lines()
        .find_map(|l| {
            let mut it = l.splitn(3, ':');
            let (_, ctl, p) = (it.next()?, it.next()?, it.next()?);
            ctl.split(',').any(|c| c == "memory").then(|| p.to_string())
        })
        .ok_or("no cgroup v2 with the memory controller at its root, and no v1 memory cgroup")?;
    let m = v1.ok_or("a v1 memory cgroup is named but not mounted")?;
    let top = m.join(path.trim_start_matches('/')).join(&name);
    std::fs::create_dir(&top).map_err(|e| format!("mkdir {}: {e}", top.display()))?;
    for p in [top.clone(), top.join("cgroup.procs"), top.join("tasks")] {
        chown(&p, env.uid);
    }
    Ok(Delegated {
        leaf: top.clone(),
        top,
    })
}

/// `headroom ARGS` as the test user from inside `leaf`: the shell that execs it is moved
/// there by the test (root) first. Returns the tree and the stderr path.
fn headroom_in(env: &Env, leaf: &Path, args: &[&str]) -> (crate::support::Tree, PathBuf) {
    let out = env.path("stdout");
    let err = env.path("stderr");
    let pidfile = env.path("cgpid");
    let _ = std::fs::remove_file(&pidfile);
    let marker = leaf.file_name().unwrap().to_str().unwrap().to_string();
    let script = format!(
        "echo $$ > {}.tmp && mv {0}.tmp {0}; \
         while ! grep -q '/{marker}$' /proc/self/cgroup; do sleep 0.01; done; exec \"$@\"",
        pidfile.display()
    );
    let mut argv = vec!["-c", &script, "sh", env.headroom_path().to_str().unwrap()];
    argv.extend(args);
    let t = env.spawn_with(Path::new("/bin/sh"), &argv, Some((&out, &err)));
    wait_until("the shell's pid", || pidfile.exists());
    let pid = read(&pidfile);
    std::fs::write(leaf.join("cgroup.procs"), pid.trim()).unwrap();
    (t, err)
}

fn hog_args(fx: &str, enforce: &str) -> Vec<String> {
    [
        "--json",
        "run",
        "--limit",
        "100M",
        "--enforce",
        enforce,
        "--",
        fx,
        "hog",
        "--mib",
        "300",
    ]
    .map(String::from)
    .to_vec()
}

/// headroom's cgroups left in `dir`.
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|r| {
            r.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("headroom-run-"))
                .collect()
        })
        .unwrap_or_default()
}

fn enforcement(events: &[RunEvent]) -> (&str, Option<&str>, Option<&str>) {
    events
        .iter()
        .find_map(|e| match e {
            RunEvent::Enforcement {
                by, cgroup, reason, ..
            } => Some((by.as_str(), cgroup.as_deref(), reason.as_deref())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no enforcement record: {events:?}"))
}

#[test]
#[cfg_attr(
    not(hr_root),
    ignore = "needs root (a cgroup delegated to a private uid)"
)]
fn the_kernel_ends_a_tree_over_its_cgroup_limit_with_no_overshoot_and_no_cgroup_left() {
    let env = Env::new();
    let fx = env.fixture().to_str().unwrap().to_string();
    let args = hog_args(&fx, "kernel");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (delegated, (mut t, err)) = if is_root() {
        let d = match delegate(&env, "cap") {
            Ok(d) => d,
            Err(why) => panic!("the kernel cap cannot be tested here: {why}"),
        };
        let r = headroom_in(&env, &d.leaf, &args);
        (Some(d), r)
    } else {
        // Whatever this user was delegated; `auto` says what and why.
        let probe = env
            .cmd()
            .args(["--json", "run", "--limit", "100M", "--", "true"])
            .output()
            .unwrap();
        let events = schema::run_events(&String::from_utf8_lossy(&probe.stderr));
        // Reached with `--include-ignored`, where this user was delegated a cgroup.
        if let ("poll", _, reason) = enforcement(&events) {
            panic!("no delegated cgroup for this user: {reason:?}");
        }
        let err = env.path("stderr");
        let out = env.path("stdout");
        (
            None,
            (
                env.spawn_with(env.headroom_path(), &args, Some((&out, &err))),
                err,
            ),
        )
    };
    let code = t.exit_code();
    let events = schema::run_events(&read(&err));
    assert_eq!(code, 137, "{events:?}");
    let (by, cgroup, _) = enforcement(&events);
    assert_eq!(by, "kernel");
    let cgroup = PathBuf::from(cgroup.unwrap());
    let outcome = events.iter().find_map(|e| match e {
        RunEvent::KernelOutcome {
            oom_kills,
            cgroup_peak_bytes,
            remove_error,
            ..
        } => Some((*oom_kills, *cgroup_peak_bytes, remove_error.clone())),
        _ => None,
    });
    let (kills, peak, remove_error) = outcome.unwrap_or_else(|| panic!("{events:?}"));
    // The control: the hog really reached the cap, and the kernel (not headroom) ended it.
    assert!(kills >= 1, "the kernel killed nothing: {events:?}");
    assert_eq!(remove_error, None);
    assert!(peak.is_none_or(|p| p <= 100 * MIB), "cgroup peak {peak:?}");
    let RunEvent::Summary(s) = events.last().unwrap() else {
        panic!("the last event is not the summary: {events:?}")
    };
    // The kernel, not headroom, ended it: no breach, no signal from headroom.
    assert_eq!(s.ended_by, None, "{s:?}");
    assert_eq!((s.terminated, s.killed), (0, 0), "{s:?}");
    assert!(
        s.peak_footprint_bytes <= 100 * MIB,
        "overshoot: peak {} > 100 MiB",
        s.peak_footprint_bytes
    );
    assert!(!cgroup.exists(), "{} left behind", cgroup.display());
    if let Some(d) = &delegated {
        assert_eq!(leftovers(&d.top), Vec::<String>::new());
        assert_eq!(leftovers(&d.leaf), Vec::<String>::new());
    }
    drop(t);
    drop(delegated);
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn kernel_is_refused_with_the_reason_where_impossible_and_auto_falls_back_saying_why() {
    // Impossible here: the real cgroupfs, as a private uid that was delegated nothing. (A
    // made-up `/proc` cannot stand in: `run` refuses `--proc-root`, since it starts a real
    // command; checked last.)
    let env = Env::new();
    crate::support::require_root();
    let ran = env.path("ran");
    let touch = format!("touch {}", ran.display());
    let base = ["run", "--limit", "100M"];
    let out = env
        .cmd()
        .args(base)
        .args(["--enforce", "kernel", "--", "sh", "-c", &touch])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(
        stderr.contains("--enforce kernel: the kernel cannot hold the limit here"),
        "{stderr}"
    );
    assert!(!ran.exists(), "the command ran although it was refused");

    // auto: the same machine, the command runs, polled, and headroom says why.
    let out = env
        .cmd()
        .args(base)
        .args(["--", "sh", "-c", &format!("{touch}; exit 3")])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(ran.exists());
    assert!(
        stderr.contains(
            "limit 100 MiB (polled: the kernel cannot hold it here, `--enforce kernel` says why)"
        ),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    let out = env
        .cmd()
        .args(["--json"])
        .args(base)
        .args(["--", "true"])
        .output()
        .unwrap();
    let events = schema::run_events(&String::from_utf8_lossy(&out.stderr));
    let (by, cgroup, reason) = enforcement(&events);
    assert_eq!((by, cgroup), ("poll", None));
    assert!(reason.is_some_and(|r| !r.is_empty()), "{reason:?}");
    // --enforce poll: no cgroup attempted, nothing said.
    let out = env
        .cmd()
        .args(base)
        .args(["--enforce", "poll", "--", "true"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("limit 100 MiB; nothing done"), "{stderr}");
    // A made-up /proc is refused before anything starts.
    let fake = env.path("fake-proc");
    std::fs::create_dir_all(&fake).unwrap();
    let out = env
        .cmd()
        .args(["--proc-root", fake.to_str().unwrap()])
        .args(base)
        .args([
            "--",
            "sh",
            "-c",
            &format!("rm -f {0}; touch {0}.again", ran.display()),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    assert!(!env.path("ran.again").exists());
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn without_delegation_the_real_cgroupfs_refuses_a_private_uid() {
    let env = Env::new();
    crate::support::require_root();
    let out = env
        .cmd()
        .args([
            "run",
            "--limit",
            "100M",
            "--enforce",
            "kernel",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(125), "{stderr}");
    assert!(
        stderr.contains("the kernel cannot hold the limit here"),
        "{stderr}"
    );
    // The control: the same uid with a delegated cgroup gets the kernel cap.
    let d = match delegate(&env, "ctl") {
        Ok(d) => d,
        Err(why) => panic!("the control (a delegated cgroup) cannot run here: {why}"),
    };
    let (mut t, err) = headroom_in(
        &env,
        &d.leaf,
        &[
            "--json",
            "run",
            "--limit",
            "100M",
            "--enforce",
            "kernel",
            "--",
            "true",
        ],
    );
    assert_eq!(t.exit_code(), 0, "{}", read(&err));
    let events = schema::run_events(&read(&err));
    assert_eq!(enforcement(&events).0, "kernel");
    wait_until("the run's cgroup removed", || leftovers(&d.leaf).is_empty());
    drop(t);
}
