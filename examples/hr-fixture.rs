//! Test fixture for headroom's integration tests and benchmarks (Linux). Not installed: it
//! is an example, built by `cargo test`.
//!
//! Roles:
//!   supervise [--uid U] [--stdout F] [--stderr F] -- PROG ARGS...
//!       Become a child subreaper (PR_SET_CHILD_SUBREAPER), start PROG (as uid U when given,
//!       in its own process group), reap everything that is reparented here, report
//!       `started PID` and `exited CODE` / `killed SIG` for PROG on stdout, and when stdin
//!       reaches EOF (the test ended, or died) SIGKILL every descendant and exit. Nothing the
//!       fixture starts can outlive the test.
//!   leak --zombies N [--ignore-term] [--session PROG ARGS... --] [--exec-child PROG ARGS... --]
//!       Fork N children that exit at once and are never waited for (N zombies), optionally
//!       start a live session child running another executable, optionally run one command
//!       as a child and report `child-exited CODE`; print `ready {json}` and sleep forever.
//!   hog --mib N [--children K] [--depth D] [--grow-mib-per-s R]
//!       Allocate and touch N MiB (optionally in a tree of processes), print `ready PID`,
//!       sleep forever (or keep growing at R MiB/s).
//!   tree --depth D --fanout F
//!       A tree of sleeping processes; prints `ready {json}` from the root.
//!   holder PROG ARGS...
//!       Become a child subreaper that never waits, start PROG, sleep forever: zombies
//!       orphaned below it stay zombies (verification failures).
//!   evidence-writer DIR N
//!       Append N rows to the evidence log in DIR through headroom's own writer.
//!   idle
//!       Sleep forever (a session child with arbitrary arguments).
//!   spin
//!       Burn CPU forever.
//!   exit CODE
//!       Exit with CODE.

// A test tool, not part of headroom: it may exit directly, and it may SIGKILL, but only the
// descendants of its own supervisor, i.e. processes the test started.
#![allow(
    unsafe_code,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::exit,
    clippy::disallowed_methods,
    clippy::undocumented_unsafe_blocks,
    // Deliberate: the leaker never waits, and the supervisor reaps whatever is left.
    clippy::zombie_processes
)]

#[cfg(not(target_os = "linux"))]
fn main() {
    eprintln!("hr-fixture: the test fixture needs Linux (/proc, PR_SET_CHILD_SUBREAPER)");
    std::process::exit(2);
}

#[cfg(target_os = "linux")]
fn main() {
    linux::main();
}

#[cfg(target_os = "linux")]
mod linux {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    pub(crate) fn main() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let Some(role) = args.first() else { usage() };
        let rest = &args[1..];
        match role.as_str() {
            "supervise" => supervise(rest),
            "leak" => leak(rest),
            "hog" => hog(rest),
            "tree" => tree(rest),
            "holder" => holder(rest),
            "evidence-writer" => evidence_writer(rest),
            "idle" => sleep_forever(),
            "spin" => loop {
                std::hint::black_box(0u64.wrapping_add(1));
            },
            "exit" => std::process::exit(rest.first().and_then(|c| c.parse().ok()).unwrap_or(0)),
            _ => usage(),
        }
    }

    fn usage() -> ! {
        eprintln!("usage: hr-fixture supervise|leak|hog|tree|idle|spin|exit ...");
        std::process::exit(2)
    }

    fn sleep_forever() -> ! {
        loop {
            // SAFETY: pause has no preconditions.
            unsafe { libc::pause() };
        }
    }

    /// `--flag VALUE` from args.
    fn opt(args: &[String], flag: &str) -> Option<String> {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .cloned()
    }

    /// The words after `flag` up to a lone `--` (or the end).
    fn group(args: &[String], flag: &str) -> Option<Vec<String>> {
        let i = args.iter().position(|a| a == flag)?;
        Some(
            args[i + 1..]
                .iter()
                .take_while(|a| *a != "--")
                .cloned()
                .collect(),
        )
    }

    fn say(line: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    // ----- supervise -----------------------------------------------------------------------

    fn supervise(args: &[String]) {
        let sep = args
            .iter()
            .position(|a| a == "--")
            .unwrap_or_else(|| usage());
        let (opts, prog) = (&args[..sep], &args[sep + 1..]);
        let Some((exe, pargs)) = prog.split_first() else {
            usage()
        };
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer argument.
        if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
            eprintln!(
                "hr-fixture: PR_SET_CHILD_SUBREAPER: {}",
                std::io::Error::last_os_error()
            );
            std::process::exit(2);
        }
        let mut cmd = Command::new(exe);
        cmd.args(pargs).process_group(0).stdin(Stdio::null());
        if let Some(uid) = opt(opts, "--uid") {
            let uid: u32 = uid.parse().expect("--uid");
            // std drops supplementary groups when root sets a uid.
            cmd.uid(uid).gid(uid);
        }
        if let Some(f) = opt(opts, "--stdout") {
            cmd.stdout(std::fs::File::create(f).expect("--stdout"));
        }
        if let Some(f) = opt(opts, "--stderr") {
            cmd.stderr(std::fs::File::create(f).expect("--stderr"));
        }
        let child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                say(&format!("spawn-failed {e}"));
                std::process::exit(2);
            }
        };
        let main_pid = child.id() as i32;
        say(&format!("started {main_pid}"));
        let me = std::process::id() as i32;
        let mut stdin_open = true;
        loop {
            reap_all(main_pid);
            if !stdin_open {
                break;
            }
            let mut pfd = libc::pollfd {
                fd: 0,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut pfd, 1, 20) };
            if n > 0 {
                let mut buf = [0u8; 256];
                // SAFETY: buf is writable for its length.
                let r = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
                if r <= 0 {
                    stdin_open = false;
                }
            }
        }
        // The test is over: everything below us goes, then we go.
        for _ in 0..500 {
            let pids = descendants(me);
            if pids.is_empty() && no_children() {
                break;
            }
            for p in pids {
                // SAFETY: p is a descendant of this supervisor, i.e. a process the test started.
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
            reap_all(main_pid);
        }
    }

    fn no_children() -> bool {
        let mut status = 0;
        // SAFETY: WNOHANG poll of any child.
        let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        r < 0
    }

    /// Reap every child that has ended; report the main one.
    fn reap_all(main_pid: i32) {
        loop {
            let mut status = 0;
            // SAFETY: status is a valid out-pointer.
            let r = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if r <= 0 {
                return;
            }
            if r == main_pid {
                if libc::WIFEXITED(status) {
                    say(&format!("exited {}", libc::WEXITSTATUS(status)));
                } else if libc::WIFSIGNALED(status) {
                    say(&format!("killed {}", libc::WTERMSIG(status)));
                }
            }
        }
    }

    /// Every process whose ancestry reaches `root`, read from /proc.
    fn descendants(root: i32) -> Vec<i32> {
        let mut parent = std::collections::HashMap::new();
        if let Ok(rd) = std::fs::read_dir("/proc") {
            for e in rd.flatten() {
                let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                    continue;
                };
                let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                    continue;
                };
                let Some(close) = stat.rfind(')') else {
                    continue;
                };
                let ppid = stat[close + 2..]
                    .split(' ')
                    .nth(1)
                    .and_then(|v| v.parse::<i32>().ok())
                    .unwrap_or(0);
                parent.insert(pid, ppid);
            }
        }
        let mut out = Vec::new();
        for &pid in parent.keys() {
            let mut cur = pid;
            for _ in 0..4096 {
                match parent.get(&cur) {
                    Some(&pp) if pp == root => {
                        out.push(pid);
                        break;
                    }
                    Some(&pp) if pp > 1 => cur = pp,
                    _ => break,
                }
            }
        }
        out
    }

    // ----- leak ----------------------------------------------------------------------------

    fn is_zombie(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rfind(')').map(|i| s[i + 2..].starts_with('Z')))
            .unwrap_or(false)
    }

    fn leak(args: &[String]) {
        let n: usize = opt(args, "--zombies")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if args.iter().any(|a| a == "--ignore-term") {
            // SAFETY: installing SIG_IGN for SIGTERM.
            unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
        }
        let mut zombies = Vec::with_capacity(n);
        for _ in 0..n {
            // SAFETY: single-threaded process; the child only calls _exit.
            let pid = unsafe { libc::fork() };
            match pid {
                0 => unsafe { libc::_exit(0) },
                p if p > 0 => zombies.push(p),
                _ => {
                    say(&format!(
                        "fork-failed after {} {}",
                        zombies.len(),
                        std::io::Error::last_os_error()
                    ));
                    std::process::exit(3);
                }
            }
        }
        // Exactly N zombies before saying ready, so a reading taken now is deterministic.
        for &z in &zombies {
            while !is_zombie(z) {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        let session = group(args, "--session").filter(|g| !g.is_empty()).map(|g| {
            let c = Command::new(&g[0])
                .args(&g[1..])
                .stdin(Stdio::null())
                .spawn()
                .expect("--session");
            c.id() as i32
        });
        let ready = format!(
            "ready {{\"pid\":{},\"zombies\":{},\"session\":{}}}",
            std::process::id(),
            zombies.len(),
            session.map_or("null".to_string(), |s| s.to_string())
        );
        say(&ready);
        if let Some(g) = group(args, "--exec-child").filter(|g| !g.is_empty()) {
            let child = Command::new(&g[0])
                .args(&g[1..])
                .stdin(Stdio::null())
                .spawn()
                .expect("--exec-child");
            let mut status = 0;
            // Wait for that one child only: the zombies must stay.
            // SAFETY: status is a valid out-pointer.
            unsafe { libc::waitpid(child.id() as i32, &mut status, 0) };
            say(&format!("child-exited {}", libc::WEXITSTATUS(status)));
        }
        sleep_forever();
    }

    // ----- hog / tree ----------------------------------------------------------------------

    fn touch(mib: usize) -> Vec<u8> {
        let mut v = vec![0u8; mib << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        std::hint::black_box(&v);
        v
    }

    fn hog(args: &[String]) {
        let mib: usize = opt(args, "--mib")
            .and_then(|v| v.parse().ok())
            .unwrap_or(100);
        let children: usize = opt(args, "--children")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let depth: usize = opt(args, "--depth")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        let grow: usize = opt(args, "--grow-mib-per-s")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if depth > 1 {
            let me = std::env::current_exe().expect("exe");
            for _ in 0..children.max(1) {
                Command::new(&me)
                    .args([
                        "hog",
                        "--mib",
                        &mib.to_string(),
                        "--children",
                        "1",
                        "--depth",
                        &(depth - 1).to_string(),
                    ])
                    .stdin(Stdio::null())
                    .spawn()
                    .expect("spawn hog child");
            }
        }
        let mut keep = vec![touch(mib)];
        say(&format!("ready {}", std::process::id()));
        if grow > 0 {
            // Grow in 10 steps a second.
            let step = (grow << 20) / 10;
            loop {
                let mut v = vec![0u8; step];
                for i in (0..v.len()).step_by(4096) {
                    v[i] = 1;
                }
                keep.push(v);
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
        std::hint::black_box(&keep);
        sleep_forever();
    }

    fn tree(args: &[String]) {
        let depth: usize = opt(args, "--depth")
            .and_then(|v| v.parse().ok())
            .unwrap_or(2);
        let fanout: usize = opt(args, "--fanout")
            .and_then(|v| v.parse().ok())
            .unwrap_or(2);
        let mut pids = vec![std::process::id() as i32];
        build(depth, fanout, &mut pids);
        // Wait until every member exists, so the caller sees the whole tree.
        say(&format!("ready {{\"pids\":{pids:?}}}"));
        sleep_forever();
    }

    fn build(depth: usize, fanout: usize, pids: &mut Vec<i32>) {
        if depth <= 1 {
            return;
        }
        for _ in 0..fanout {
            // SAFETY: single-threaded; the child continues as a plain process.
            let pid = unsafe { libc::fork() };
            if pid == 0 {
                let mut own = Vec::new();
                build(depth - 1, fanout, &mut own);
                sleep_forever();
            }
            pids.push(pid);
            // Grandchildren are created by the child; read them back from /proc.
        }
        // Collect the whole subtree once it exists.
        let expected: usize = (1..depth).map(|d| fanout.pow(d as u32)).sum();
        let root = std::process::id() as i32;
        for _ in 0..5000 {
            let d = descendants_of(root);
            if d.len() >= expected {
                pids.clear();
                pids.push(root);
                pids.extend(d);
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    fn descendants_of(root: i32) -> Vec<i32> {
        let mut out = descendants(root);
        out.sort_unstable();
        out
    }

    // ----- holder / evidence-writer --------------------------------------------------

    fn holder(args: &[String]) {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer argument.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
        let Some((prog, rest)) = args.split_first() else {
            usage()
        };
        let child = Command::new(prog)
            .args(rest)
            .stdin(Stdio::null())
            .spawn()
            .expect("holder child");
        say(&format!("holding {}", child.id()));
        sleep_forever();
    }

    fn evidence_writer(args: &[String]) {
        let dir = std::path::PathBuf::from(args.first().expect("DIR"));
        let n: u64 = args.get(1).and_then(|v| v.parse().ok()).unwrap_or(1000);
        let log = headroom::core::evidence::EvidenceLog::new(&dir);
        for i in 0..n {
            let row = headroom::core::evidence::Row {
                timestamp: "2026-11-30T10:00:00Z".into(),
                total_procs: std::process::id() as u64,
                zombies: i,
                action: "poll".into(),
                top_parent: Some((std::process::id() as i32, format!("writer,{i}\nx"), i)),
                ..Default::default()
            };
            log.append(&[row]).expect("append");
        }
        say("done");
    }
}
