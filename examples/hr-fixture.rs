//! Test fixture for headroom's integration tests and benchmarks (Linux; on macOS without a
//! subreaper, see `mod linux`). Not installed: it is an example, built by `cargo test`.
//!
//! Roles:
//!   supervise [--uid U] [--stdout F] [--stderr F] [--pty] -- PROG ARGS...
//!       Become a child subreaper (PR_SET_CHILD_SUBREAPER), start PROG (as uid U when given,
//!       in its own process group), reap everything that is reparented here, report
//!       `started PID` and `exited CODE` / `killed SIG` for PROG on stdout, and when stdin
//!       reaches EOF (the test ended, or died) SIGKILL every descendant and exit. Nothing the
//!       fixture starts can outlive the test.
//!       With --pty, PROG runs as a session leader with a new pseudo-terminal as its
//!       controlling terminal and stdio; what it writes there is reported as `tty LINE`, and
//!       lines on stdin drive the terminal: `ctrl-c`, `ctrl-z`, `type TEXT` (TEXT and a
//!       newline), `fg?` (answered `fg-pgid N`: the terminal's foreground process group).
//!   leak --zombies N [--ignore-term] [--count-term FILE] [--reap-on-term] [--reap-on-usr1]
//!       [--comm-hex HEX] [--session PROG ARGS... --] [--exec-child PROG ARGS... --]
//!       [--pace-ms MS]
//!       Fork N children that exit at once and are never waited for (N zombies), optionally
//!       append a line to FILE for every SIGTERM received (and otherwise ignore it), reap
//!       every zombie child on SIGTERM (surviving it) or on SIGUSR1 (a parent that stops
//!       leaking on cue), name
//!       itself (comm) with the bytes HEX encodes (any bytes: `)`, newlines, invalid UTF-8),
//!       start a live session child running another executable, optionally run one command
//!       as a child and report `child-exited CODE`; print `ready {json}` and sleep forever.
//!       With --pace-ms the N children are forked after `ready`, one every MS ms (a leak at
//!       a rate, toward a wall); a fork that fails prints `fork-failed after K ERROR` and the
//!       leaker sleeps on, holding its zombies.
//!   hog --mib N [--children K] [--depth D] [--grow-mib-per-s R] [--grow-step-ms S]
//!       [--grow-delay-ms W] [--report-growth]
//!       Allocate and touch N MiB (optionally in a tree of processes), print `ready PID`,
//!       sleep forever (or, W ms later, keep growing at R MiB/s in steps every S ms, default
//!       100; with --report-growth print `grew TOTAL_MIB UNIX_NS` after each step).
//!   tree --depth D --fanout F
//!       A tree of sleeping processes; prints `ready {json}` from the root.
//!   holder [--reap-after-ms MS] PROG ARGS...
//!       Become a child subreaper that never waits, start PROG, sleep forever: zombies
//!       orphaned below it stay zombies (verification failures). With --reap-after-ms, a
//!       slow one: MS after it first sees a zombie child it reaps every one it has.
//!   evidence-writer DIR N
//!       Append N rows to the evidence log in DIR through headroom's own writer.
//!   idle
//!       Sleep forever (a session child with arbitrary arguments).
//!   threads [--spawn N] [--control FIFO]
//!       A multi-threaded process: its main thread, a control thread and N idle ones (0 by
//!       default); with FIFO, driven by the lines written to it: `spawn` starts one more (idle) thread, `end` ends the last
//!       one started, `leader-exit` ends the main thread alone (the raw `exit` syscall, not
//!       `exit_group`: the process lives on with a zombie leader); EOF on FIFO ends it.
//!   churn
//!       Fork children that exit at once and reap them, forever: pids that vanish between a
//!       scanner's getdents and its read.
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

#[cfg(not(unix))]
fn main() {
    eprintln!("hr-fixture: the test fixture needs Linux or macOS");
    std::process::exit(2);
}

#[cfg(unix)]
fn main() {
    linux::main();
}

/// Written for Linux; on macOS the same roles run without a subreaper (see `subreaper`):
/// what a test's tree leaves orphaned goes to launchd and is not the supervisor's to end,
/// so the tests that make orphans (escaped daemons, `holder`) stay Linux-only, and
/// `--comm-hex` (PR_SET_NAME) is Linux's.
#[cfg(unix)]
mod linux {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    pub(crate) fn main() {
        // A test runner started with SIGINT or SIGQUIT ignored (under `nohup`, or with `&`
        // by a non-interactive shell) passes that on, and an ignored disposition survives
        // exec: the trees the tests signal would shrug off Ctrl-C, and headroom, which
        // rightly keeps an inherited SIG_IGN, would never see the SIGINT a test sends it.
        // The fixture is the tests' world, so it starts from the defaults, and so does
        // everything it starts.
        for sig in [libc::SIGINT, libc::SIGQUIT] {
            // SAFETY: setting a default disposition has no preconditions.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
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
            "threads" => threads(rest),
            "churn" => loop {
                // SAFETY: single-threaded; the child only calls _exit.
                let pid = unsafe { libc::fork() };
                if pid == 0 {
                    unsafe { libc::_exit(0) };
                }
                if pid > 0 {
                    // SAFETY: pid is our child; a null status is allowed.
                    unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
                }
            },
            "spin" => loop {
                std::hint::black_box(0u64.wrapping_add(1));
            },
            "exit" => std::process::exit(rest.first().and_then(|c| c.parse().ok()).unwrap_or(0)),
            _ => usage(),
        }
    }

    fn usage() -> ! {
        eprintln!("usage: hr-fixture supervise|leak|hog|tree|idle|threads|spin|exit ...");
        std::process::exit(2)
    }

    fn sleep_forever() -> ! {
        loop {
            // SAFETY: pause has no preconditions.
            unsafe { libc::pause() };
        }
    }

    fn threads(args: &[String]) {
        use std::io::BufRead;
        use std::sync::mpsc;
        let spawn: usize = opt(args, "--spawn").map_or(0, |n| n.parse().expect("--spawn"));
        let control = opt(args, "--control");
        let (leader_tx, leader_rx) = mpsc::channel::<()>();
        std::thread::spawn(move || {
            let idle_thread = || {
                let (tx, rx) = mpsc::channel::<()>();
                let h = std::thread::spawn(move || {
                    let _ = rx.recv();
                });
                (tx, h)
            };
            let mut idle: Vec<(mpsc::Sender<()>, std::thread::JoinHandle<()>)> =
                (0..spawn).map(|_| idle_thread()).collect();
            let Some(path) = control else { sleep_forever() };
            let f = std::fs::File::open(&path).expect("--control");
            for line in std::io::BufReader::new(f).lines() {
                match line.as_deref().map(str::trim) {
                    Ok("spawn") => idle.push(idle_thread()),
                    Ok("end") => {
                        if let Some((tx, h)) = idle.pop() {
                            drop(tx);
                            let _ = h.join();
                        }
                    }
                    Ok("leader-exit") => {
                        let _ = leader_tx.send(());
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            std::process::exit(0);
        });
        let _ = leader_rx.recv();
        // The calling thread only (no unwinding, no atexit): what `pthread_exit` in the main
        // thread leaves, a zombie leader while the other threads run.
        #[cfg(target_os = "linux")]
        unsafe {
            libc::syscall(libc::SYS_exit, 0)
        };
        // Elsewhere (macOS has no raw `exit` syscall number in libc; the thread tests are
        // Linux's) the POSIX call, which may unwind the calling thread first.
        #[cfg(not(target_os = "linux"))]
        unsafe {
            libc::pthread_exit(std::ptr::null_mut())
        };
        #[allow(unreachable_code)]
        {
            unreachable!("the main thread's exit returned")
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
        if let Err(e) = subreaper() {
            eprintln!("hr-fixture: PR_SET_CHILD_SUBREAPER: {e}");
            std::process::exit(2);
        }
        let mut cmd = Command::new(exe);
        cmd.args(pargs).stdin(Stdio::null());
        let uid: Option<u32> = opt(opts, "--uid").map(|u| u.parse().expect("--uid"));
        let pty = opts.iter().any(|o| o == "--pty").then(|| open_pty(uid));
        match &pty {
            Some((_, slave)) => {
                let slave = slave.clone();
                // SAFETY: between fork and exec: setsid, open, ioctl, dup2, close only.
                unsafe {
                    cmd.pre_exec(move || {
                        if libc::setsid() < 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                        let fd = libc::open(slave.as_ptr(), libc::O_RDWR);
                        if fd < 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                        libc::ioctl(fd, libc::TIOCSCTTY as _, 0);
                        for target in 0..3 {
                            libc::dup2(fd, target);
                        }
                        if fd > 2 {
                            libc::close(fd);
                        }
                        Ok(())
                    })
                };
            }
            None => {
                cmd.process_group(0);
            }
        }
        if let Some(uid) = uid {
            // std drops supplementary groups when root sets a uid.
            cmd.uid(uid).gid(uid);
        }
        if let Some(f) = opt(opts, "--stdout") {
            cmd.stdout(std::fs::File::create(f).expect("--stdout"));
        }
        if let Some(f) = opt(opts, "--stderr") {
            cmd.stderr(std::fs::File::create(f).expect("--stderr"));
        }
        // ETXTBSY: a sibling test thread's forked child may briefly hold PROG open for
        // writing (it was just copied); try again for a while.
        let mut tries = 0;
        let child = loop {
            match cmd.spawn() {
                Ok(c) => break c,
                Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && tries < 2000 => {
                    tries += 1;
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
                Err(e) => {
                    say(&format!("spawn-failed {e}"));
                    std::process::exit(2);
                }
            }
        };
        let main_pid = child.id() as i32;
        say(&format!("started {main_pid}"));
        let me = std::process::id() as i32;
        let master = pty.as_ref().map(|(m, _)| *m);
        let mut stdin_open = true;
        let mut input = Vec::new();
        let mut tty_text = Vec::new();
        loop {
            reap_all(main_pid);
            if !stdin_open {
                break;
            }
            let mut pfds = [
                libc::pollfd {
                    fd: 0,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: master.unwrap_or(-1),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: two valid pollfds (a negative fd is ignored by poll).
            let n = unsafe { libc::poll(pfds.as_mut_ptr(), 2, 20) };
            if n <= 0 {
                continue;
            }
            let mut buf = [0u8; 4096];
            if pfds[0].revents != 0 {
                // SAFETY: buf is writable for its length.
                let r = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
                if r <= 0 {
                    stdin_open = false;
                } else {
                    input.extend_from_slice(&buf[..r as usize]);
                    while let Some(i) = input.iter().position(|&b| b == b'\n') {
                        let line: Vec<u8> = input.drain(..=i).collect();
                        if let Some(m) = master {
                            drive_pty(m, String::from_utf8_lossy(&line).trim_end());
                        }
                    }
                }
            }
            if let Some(m) = master.filter(|_| pfds[1].revents & libc::POLLIN != 0) {
                // SAFETY: buf is writable for its length.
                let r = unsafe { libc::read(m, buf.as_mut_ptr().cast(), buf.len()) };
                if r > 0 {
                    tty_text.extend_from_slice(&buf[..r as usize]);
                    while let Some(i) = tty_text.iter().position(|&b| b == b'\n') {
                        let line: Vec<u8> = tty_text.drain(..=i).collect();
                        let text = String::from_utf8_lossy(&line);
                        say(&format!("tty {}", text.trim_end_matches(['\r', '\n'])));
                    }
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

    /// A new pseudo-terminal: the master (kept here) and the slave's path, owned by `uid`.
    fn open_pty(uid: Option<u32>) -> (i32, std::ffi::CString) {
        // SAFETY: plain libc calls on the descriptor they return; ptsname's buffer is copied
        // at once (single-threaded here).
        unsafe {
            let m = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY | libc::O_CLOEXEC);
            assert!(m >= 0, "posix_openpt: {}", std::io::Error::last_os_error());
            assert_eq!(libc::grantpt(m), 0);
            assert_eq!(libc::unlockpt(m), 0);
            let name = std::ffi::CStr::from_ptr(libc::ptsname(m)).to_owned();
            if let Some(uid) = uid {
                assert_eq!(libc::chown(name.as_ptr(), uid, uid), 0, "chown pty");
            }
            (m, name)
        }
    }

    /// One stdin command for the pseudo-terminal.
    fn drive_pty(master: i32, line: &str) {
        let write = |bytes: &[u8]| {
            // SAFETY: bytes is valid for its length.
            unsafe { libc::write(master, bytes.as_ptr().cast(), bytes.len()) };
        };
        match line {
            "ctrl-c" => write(&[0x03]),
            "ctrl-z" => write(&[0x1a]),
            "fg?" => {
                // SAFETY: TIOCGPGRP on the master reports the slave's foreground group.
                let pgid = unsafe { libc::tcgetpgrp(master) };
                say(&format!("fg-pgid {pgid}"));
            }
            l => {
                if let Some(text) = l.strip_prefix("type ") {
                    write(format!("{text}\n").as_bytes());
                }
            }
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

    /// Become a child subreaper (Linux). macOS has none: the supervisor still ends every
    /// descendant it can see by ancestry at the end, but not what was orphaned before.
    #[cfg(target_os = "linux")]
    fn subreaper() -> std::io::Result<()> {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER takes an integer argument.
        if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    #[cfg(not(target_os = "linux"))]
    fn subreaper() -> std::io::Result<()> {
        Ok(())
    }

    /// Every process whose ancestry reaches `root`, from `ps` (macOS: no /proc).
    #[cfg(not(target_os = "linux"))]
    fn descendants(root: i32) -> Vec<i32> {
        let out = Command::new("ps")
            .args(["-A", "-o", "pid=,ppid="])
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default();
        let parent: std::collections::HashMap<i32, i32> = out
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace().map(|v| v.parse::<i32>().ok());
                Some((w.next()??, w.next()??))
            })
            .collect();
        descendants_in(&parent, root)
    }

    /// Every process whose ancestry reaches `root`, read from /proc.
    #[cfg(target_os = "linux")]
    fn descendants(root: i32) -> Vec<i32> {
        let mut parent = std::collections::HashMap::new();
        if let Ok(rd) = std::fs::read_dir("/proc") {
            for e in rd.flatten() {
                let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                    continue;
                };
                // Bytes, read lossily: a process may name itself with invalid UTF-8, and one
                // missed here would outlive the test.
                let Ok(stat) = std::fs::read(format!("/proc/{pid}/stat")) else {
                    continue;
                };
                let stat = String::from_utf8_lossy(&stat);
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
        descendants_in(&parent, root)
    }

    fn descendants_in(parent: &std::collections::HashMap<i32, i32>, root: i32) -> Vec<i32> {
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

    /// `pid`, a child of ours, has exited (and stays a zombie: WNOWAIT); blocks until then.
    #[cfg(not(target_os = "linux"))]
    fn is_zombie(pid: i32) -> bool {
        // SAFETY: info is a valid out-pointer; pid is our own child.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOWAIT;
        unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) == 0 }
    }

    #[cfg(target_os = "linux")]
    fn is_zombie(pid: i32) -> bool {
        // Bytes: a comm may be any bytes (`leak --comm-hex`), not UTF-8.
        std::fs::read(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                let i = s.iter().rposition(|&b| b == b')')?;
                Some(s.get(i + 2) == Some(&b'Z'))
            })
            .unwrap_or(false)
    }

    #[cfg(target_os = "linux")]
    fn set_comm(name: &[u8]) {
        // SAFETY: PR_SET_NAME reads a NUL-terminated string of at most 16 bytes.
        unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr() as libc::c_ulong, 0, 0, 0) };
    }

    #[cfg(not(target_os = "linux"))]
    fn set_comm(_: &[u8]) {
        eprintln!("hr-fixture: --comm-hex needs Linux (PR_SET_NAME)");
        std::process::exit(2);
    }

    static TERM_FD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(-1);
    static REAP_ON_TERM: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

    extern "C" fn on_term(_: libc::c_int) {
        let fd = TERM_FD.load(std::sync::atomic::Ordering::SeqCst);
        if fd >= 0 {
            // SAFETY: write(2) is async-signal-safe; the buffer is static.
            unsafe { libc::write(fd, b"term\n".as_ptr().cast(), 5) };
        }
        if REAP_ON_TERM.load(std::sync::atomic::Ordering::SeqCst) {
            reap_children();
        }
    }

    extern "C" fn on_usr1(_: libc::c_int) {
        reap_children();
    }

    /// Reap every child that has exited (async-signal-safe: waitpid only).
    fn reap_children() {
        // SAFETY: WNOHANG waits for any exited child; a null status is allowed.
        while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
    }

    /// Catch SIGTERM (and survive it): count it in `file` (one line each; O_APPEND) if
    /// given, reap every zombie child if `reap`.
    fn catch_term(file: Option<&str>, reap: bool) {
        use std::os::fd::IntoRawFd;
        if let Some(file) = file {
            let f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)
                .expect("--count-term");
            TERM_FD.store(f.into_raw_fd(), std::sync::atomic::Ordering::SeqCst);
        }
        REAP_ON_TERM.store(reap, std::sync::atomic::Ordering::SeqCst);
        // SAFETY: the handler only calls write(2) on an fd that stays open, and waitpid.
        unsafe {
            libc::signal(
                libc::SIGTERM,
                on_term as extern "C" fn(libc::c_int) as libc::sighandler_t,
            )
        };
    }

    fn leak(args: &[String]) {
        let n: usize = opt(args, "--zombies")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if args.iter().any(|a| a == "--ignore-term") {
            // SAFETY: installing SIG_IGN for SIGTERM.
            unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
        }
        let count = opt(args, "--count-term");
        let reap_on_term = args.iter().any(|a| a == "--reap-on-term");
        if count.is_some() || reap_on_term {
            catch_term(count.as_deref(), reap_on_term);
        }
        if args.iter().any(|a| a == "--reap-on-usr1") {
            // SAFETY: the handler only calls waitpid.
            unsafe {
                libc::signal(
                    libc::SIGUSR1,
                    on_usr1 as extern "C" fn(libc::c_int) as libc::sighandler_t,
                )
            };
        }
        if let Some(hex) = opt(args, "--comm-hex") {
            let mut name: Vec<u8> = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("--comm-hex"))
                .collect();
            name.truncate(15);
            name.push(0);
            set_comm(&name);
        }
        let pace: Option<u64> = opt(args, "--pace-ms").and_then(|v| v.parse().ok());
        let mut zombies = Vec::with_capacity(n);
        for _ in 0..if pace.is_some() { 0 } else { n } {
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
        if let Some(ms) = pace {
            for k in 0..n {
                std::thread::sleep(std::time::Duration::from_millis(ms));
                // SAFETY: single-threaded process; the child only calls _exit.
                match unsafe { libc::fork() } {
                    0 => unsafe { libc::_exit(0) },
                    p if p > 0 => {}
                    _ => {
                        let e = std::io::Error::last_os_error();
                        say(&format!("fork-failed after {k} {e}"));
                        break;
                    }
                }
            }
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
        let step_ms: u64 = opt(args, "--grow-step-ms")
            .and_then(|v| v.parse().ok())
            .filter(|&v| v > 0)
            .unwrap_or(100);
        let report = args.iter().any(|a| a == "--report-growth");
        let mut keep = vec![touch(mib)];
        say(&format!("ready {}", std::process::id()));
        if grow > 0 {
            let delay: u64 = opt(args, "--grow-delay-ms")
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            std::thread::sleep(std::time::Duration::from_millis(delay));
            // R MiB/s in steps of S ms, paced against the clock (touching takes time too).
            let step = ((grow << 20) as u64 * step_ms / 1000) as usize;
            let mut total = mib << 20;
            let start = std::time::Instant::now();
            for n in 1u64.. {
                let mut v = vec![0u8; step];
                for i in (0..v.len()).step_by(4096) {
                    v[i] = 1;
                }
                keep.push(v);
                total += step;
                if report {
                    let ns = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_nanos())
                        .unwrap_or(0);
                    say(&format!("grew {} {ns}", total >> 20));
                }
                let next = start + std::time::Duration::from_millis(n * step_ms);
                std::thread::sleep(next.saturating_duration_since(std::time::Instant::now()));
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
            // Grandchildren are created by the child; read them back (`descendants`).
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
        if cfg!(not(target_os = "linux")) {
            eprintln!("hr-fixture: holder needs a subreaper (Linux)");
            std::process::exit(2);
        }
        if let Err(e) = subreaper() {
            eprintln!("hr-fixture: PR_SET_CHILD_SUBREAPER: {e}");
            std::process::exit(2);
        }
        let (delay, args) = match args.split_first() {
            Some((flag, rest)) if flag == "--reap-after-ms" => {
                let Some((ms, rest)) = rest.split_first() else {
                    usage()
                };
                (Some(ms.parse::<u64>().expect("--reap-after-ms")), rest)
            }
            _ => (None, args),
        };
        let Some((prog, rest)) = args.split_first() else {
            usage()
        };
        let child = Command::new(prog)
            .args(rest)
            .stdin(Stdio::null())
            .spawn()
            .expect("holder child");
        say(&format!("holding {}", child.id()));
        let Some(delay) = delay else { sleep_forever() };
        let delay = std::time::Duration::from_millis(delay);
        let mut first_seen: Option<std::time::Instant> = None;
        loop {
            std::thread::sleep(std::time::Duration::from_millis(20));
            match first_seen {
                None if has_zombie_child() => first_seen = Some(std::time::Instant::now()),
                Some(t) if t.elapsed() >= delay => {
                    reap_children();
                    first_seen = None;
                }
                _ => {}
            }
        }
    }

    /// Whether a child of ours has exited and waits to be reaped (left as it is: WNOWAIT).
    /// Linux only, as `holder` is.
    #[cfg(not(target_os = "linux"))]
    fn has_zombie_child() -> bool {
        false
    }

    #[cfg(target_os = "linux")]
    fn has_zombie_child() -> bool {
        // SAFETY: info is a valid out-pointer; P_ALL with WNOHANG|WNOWAIT only looks.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        let r = unsafe { libc::waitid(libc::P_ALL, 0, &mut info, flags) };
        // SAFETY: si_pid is set by waitid (0 when no child has exited).
        r == 0 && unsafe { info.si_pid() } != 0
    }

    fn evidence_writer(args: &[String]) {
        let dir = std::path::PathBuf::from(args.first().expect("DIR"));
        let n: u64 = args.get(1).and_then(|v| v.parse().ok()).unwrap_or(1000);
        let log = headroom::testing::EvidenceLog::new(&dir);
        for i in 0..n {
            let reading = headroom_core::slot_reading::SlotReading {
                at: "2026-11-30T10:00:00Z".into(),
                uid: 0,
                processes: std::process::id() as u64,
                tasks: None,
                zombies: i,
                used: std::process::id() as u64,
                limit: None,
                limit_source: None,
                usage_pct: None,
                free_slots: None,
                level: headroom_core::reading::Level::Unknown,
                growth_per_min: None,
                eta_seconds: None,
                trend_samples: 0,
                partial: false,
            };
            let row = headroom_core::evidence_csv::Row {
                top_parent: Some((std::process::id() as i32, format!("writer,{i}\nx"), i)),
                ..headroom_core::evidence_csv::Row::new(reading, "poll")
            };
            log.append(&[row]).expect("append");
        }
        say("done");
    }
}
