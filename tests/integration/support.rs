//! Test support: an isolated environment per test (own temp dir, own HEADROOM_HOME and, when
//! the tests run as root, a private unprivileged uid that nothing else on the machine uses),
//! and fixture trees run under a subreaper the test owns, so that nothing the test starts
//! outlives it and a bug in the binary under test cannot reach any other process.

#![allow(dead_code)]

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// Generous: CI machines are slow, and we wait for conditions, never for time.
pub const TIMEOUT: Duration = Duration::from_secs(60);

pub fn headroom_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_headroom"))
}

/// `cargo test` builds examples next to the binaries' directory.
pub fn fixture_bin() -> PathBuf {
    let p = headroom_bin().parent().unwrap().join("examples/hr-fixture");
    assert!(
        p.exists(),
        "fixture not built at {}: run `cargo test` (it builds examples)",
        p.display()
    );
    p
}

/// Every file below `dir`, at any depth.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Whether `tool` is on PATH, for a test that only does more where it is (a test that
/// needs it is gated instead: `require_tool`). Under `.ci/run` (HEADROOM_REQUIRE_TOOLS) a
/// missing one fails: there the more must be done.
pub fn has_tool(tool: &str) -> bool {
    let found = on_path(tool);
    assert!(
        found || std::env::var_os("HEADROOM_REQUIRE_TOOLS").is_none(),
        "{tool} is required here but not installed"
    );
    found
}

fn on_path(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Why a requirement the build found (build.rs's `hr_*` cfgs) or `HEADROOM_REQUIRE_TOOLS`
/// demanded is missing now: a test compiled to run fails, it never passes without running.
const GATE_HINT: &str = "build.rs compiles this test to run where it found the requirement \
    (or under HEADROOM_REQUIRE_TOOLS); if the machine or user changed since, rebuild \
    (`touch build.rs`) and it is ignored instead";

/// The test's first line when it needs `tool` (gated `#[cfg_attr(not(hr_tool_…), ignore)]`).
pub fn require_tool(tool: &str) {
    assert!(
        on_path(tool),
        "{tool} is required here but not installed; {GATE_HINT}"
    );
}

/// The test's first line when it needs root (gated `#[cfg_attr(not(hr_root), ignore)]`).
pub fn require_root() {
    assert!(is_root(), "this test needs root; {GATE_HINT}");
}

pub fn is_root() -> bool {
    // SAFETY: getuid cannot fail.
    unsafe { libc::getuid() == 0 }
}

/// Each process of `uid` (by real uid) with its /proc status text, read by the test itself.
fn statuses_of_uid(uid: u32) -> Vec<(i32, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        // Bytes, read lossily: a process may name itself with invalid UTF-8.
        let Ok(status) = std::fs::read(e.path().join("status")) else {
            continue;
        };
        let status = String::from_utf8_lossy(&status).into_owned();
        let ruid = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<u32>().ok());
        if ruid == Some(uid) {
            out.push((pid, status));
        }
    }
    out
}

/// Live processes of `uid` (present and not zombies waiting for their reaper).
#[cfg(target_os = "linux")]
pub fn live_pids_of_uid(uid: u32) -> Vec<i32> {
    statuses_of_uid(uid)
        .into_iter()
        .map(|(pid, _)| pid)
        .filter(|&pid| proc_state(pid).is_some_and(|s| s != 'Z'))
        .collect()
}

/// Processes and tasks of `uid`, counted from /proc by the test itself.
pub fn count_uid(uid: u32) -> (u64, u64) {
    let mut procs = 0;
    let mut tasks = 0;
    for (_, status) in statuses_of_uid(uid) {
        procs += 1;
        let threads = status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|v| v.trim().parse::<u64>().ok())
            .unwrap_or(1);
        tasks += threads.max(1);
    }
    (procs, tasks)
}

static NEXT_UID: AtomicU32 = AtomicU32::new(0);

/// A uid no process on this machine has, distinct per test.
fn private_uid() -> u32 {
    let base = 3_000_000_000u32 + (std::process::id() % 100_000) * 1000;
    loop {
        let uid = base + NEXT_UID.fetch_add(1, Ordering::SeqCst);
        if count_uid(uid).0 == 0 {
            return uid;
        }
    }
}

pub struct Env {
    pub dir: tempfile::TempDir,
    pub uid: u32,
    /// True when `uid` is ours alone, so counts taken from /proc are exact.
    pub private: bool,
    pub home: PathBuf,
    bin: PathBuf,
    fixture: PathBuf,
}

/// The binary under test and the fixture, copied once per test process into a
/// world-readable directory (the checkout may live under /root, which a private uid cannot
/// enter): about 115 MB, instead of that for each of the ~75 environments.
struct Shared {
    bin: PathBuf,
    fixture: PathBuf,
}

static SHARED: OnceLock<Shared> = OnceLock::new();

const SHARED_PREFIX: &str = "headroom-it-bin-";

fn shared() -> &'static Shared {
    SHARED.get_or_init(|| {
        let tmp = std::env::temp_dir();
        // Copies left by a test process that died before its exit handler ran.
        for e in std::fs::read_dir(&tmp).into_iter().flatten().flatten() {
            let name = e.file_name();
            let pid = name.to_str().and_then(|n| n.strip_prefix(SHARED_PREFIX));
            if pid.is_some_and(|p| !Path::new("/proc").join(p).exists()) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        let dir = tmp.join(format!("{SHARED_PREFIX}{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let _ = SHARED_DIR.set(dir.clone());
        // SAFETY: remove_shared is an extern "C" fn without arguments, as atexit requires.
        unsafe { libc::atexit(remove_shared) };
        let bin = dir.join("headroom");
        copy_exe(&headroom_bin(), &bin);
        let fixture = dir.join("hr-fixture");
        copy_exe(&fixture_bin(), &fixture);
        Shared { bin, fixture }
    })
}

static SHARED_DIR: OnceLock<PathBuf> = OnceLock::new();

extern "C" fn remove_shared() {
    if let Some(d) = SHARED_DIR.get() {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// A copy made by `cp`, not by this process: the file's write descriptor then never exists
/// here, where a sibling test thread's fork could inherit it and make every later exec of
/// the copy fail with ETXTBSY until that child execs (rust-lang/rust#114554).
fn copy_exe(from: &Path, to: &Path) {
    let st = Command::new("cp")
        .arg("--")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success(), "cp {} {}: {st}", from.display(), to.display());
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `to` as another name of the shared copy `from` (a hard link: the process name comes from
/// the name executed, and nothing is written); a copy where the two cannot share a file system.
fn link_exe(from: &Path, to: &Path) {
    if std::fs::hard_link(from, to).is_err() {
        copy_exe(from, to);
    }
}

pub fn chown(path: &Path, uid: u32) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(
        // SAFETY: c is a NUL-terminated path.
        unsafe { libc::chown(c.as_ptr(), uid, uid) },
        0,
        "chown {}",
        path.display()
    );
}

impl Env {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("headroom-it-")
            .tempdir()
            .unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let (uid, private) = if is_root() {
            (private_uid(), true)
        } else {
            // SAFETY: getuid cannot fail.
            (unsafe { libc::getuid() }, false)
        };
        let home = dir.path().join("home");
        let work = dir.path().join("work");
        for d in [&home, &work] {
            std::fs::create_dir(d).unwrap();
            if private {
                chown(d, uid);
            }
        }
        let shared = shared();
        let (bin, fixture) = (shared.bin.clone(), shared.fixture.clone());
        Self {
            dir,
            uid,
            private,
            home,
            bin,
            fixture,
        }
    }

    /// A path in a scratch directory the test user may write to.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join("work").join(name)
    }

    /// The start of a command line that runs the rest as the test user: `setpriv … --`
    /// when the user is private, nothing when the tests already run as it.
    pub fn as_test_user(&self) -> Vec<OsString> {
        if !self.private {
            return Vec::new();
        }
        [
            "setpriv".to_string(),
            format!("--reuid={}", self.uid),
            format!("--regid={}", self.uid),
            "--clear-groups".to_string(),
            "--".to_string(),
        ]
        .into_iter()
        .map(OsString::from)
        .collect()
    }

    /// headroom as the test user, with its own HEADROOM_HOME.
    pub fn cmd(&self) -> assert_cmd::Command {
        self.cmd_in(&[], &[])
    }

    /// `cmd()` started by `launcher` (before the switch to the test user: what it sets up,
    /// a namespace say, is root's to make) and `wrapper` (after it, given the binary's path).
    pub fn cmd_in(&self, launcher: &[&str], wrapper: &[&str]) -> assert_cmd::Command {
        let mut argv: Vec<OsString> = launcher.iter().map(OsString::from).collect();
        argv.extend(self.as_test_user());
        argv.extend(wrapper.iter().map(OsString::from));
        argv.push(self.bin.clone().into());
        let mut c = assert_cmd::Command::new(&argv[0]);
        c.args(&argv[1..])
            .env("HEADROOM_HOME", &self.home)
            .env_remove("NO_COLOR")
            // Tables adapt to $COLUMNS/$LINES: a test that wants a width sets one.
            .env_remove("COLUMNS")
            .env_remove("LINES")
            .timeout(TIMEOUT);
        c
    }

    /// headroom as the test user, started through `wrapper` (which is given the binary's
    /// path and then the arguments added to the returned command), with its own
    /// HEADROOM_HOME, and killed (with everything in between) after TIMEOUT like `cmd()`.
    pub fn cmd_via(&self, wrapper: &[&str]) -> Command {
        let mut argv = self.as_test_user();
        argv.extend(["timeout", "--kill-after=5"].map(OsString::from));
        argv.push(TIMEOUT.as_secs().to_string().into());
        argv.extend(wrapper.iter().map(OsString::from));
        argv.push(self.bin.clone().into());
        let mut c = Command::new(&argv[0]);
        c.args(&argv[1..])
            .env("HEADROOM_HOME", &self.home)
            .env_remove("NO_COLOR");
        c
    }

    /// The binary under test, as a path (for fixtures that run it).
    pub fn headroom_path(&self) -> &Path {
        &self.bin
    }

    /// A copy of the fixture under `name`: its process name and executable file name.
    pub fn named_fixture(&self, name: &str) -> PathBuf {
        assert!(
            name.len() <= 15,
            "process names are cut at 15 characters: {name}"
        );
        let p = self.dir.path().join(name);
        if !p.exists() {
            link_exe(&self.fixture, &p);
        }
        p
    }

    pub fn fixture(&self) -> &Path {
        &self.fixture
    }

    /// Run `prog args` as the test user under a supervisor (subreaper) owned by the test.
    pub fn spawn(&self, prog: &Path, args: &[&str]) -> Tree {
        self.spawn_with(prog, args, None)
    }

    /// As `spawn`, with the program's stdout and stderr sent to files.
    pub fn spawn_with(&self, prog: &Path, args: &[&str], outputs: Option<(&Path, &Path)>) -> Tree {
        self.supervise(prog, args, outputs, false)
    }

    /// As `spawn`, on a new pseudo-terminal: the program is a session leader with it as its
    /// controlling terminal and stdio. Its output comes back as `tty LINE` lines; drive the
    /// terminal with `Tree::send` (`ctrl-c`, `ctrl-z`, `type TEXT`, `fg?`).
    pub fn spawn_pty(&self, prog: &Path, args: &[&str]) -> Tree {
        self.supervise(prog, args, None, true)
    }

    fn supervise(
        &self,
        prog: &Path,
        args: &[&str],
        outputs: Option<(&Path, &Path)>,
        pty: bool,
    ) -> Tree {
        let mut c = Command::new(&self.fixture);
        c.arg("supervise");
        if pty {
            c.arg("--pty");
        }
        if self.private {
            c.args(["--uid", &self.uid.to_string()]);
        }
        if let Some((o, e)) = outputs {
            c.arg("--stdout").arg(o).arg("--stderr").arg(e);
        }
        c.arg("--").arg(prog).args(args);
        c.env("HEADROOM_HOME", &self.home);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut sup = spawn_retrying(&mut c);
        let stdin = sup.stdin.take();
        let stdout = sup.stdout.take().unwrap();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut t = Tree {
            sup,
            stdin,
            lines: rx,
            pid: 0,
            seen: Vec::new(),
            pending: VecDeque::new(),
        };
        let started = t.expect("started ");
        t.pid = started.trim().parse().unwrap();
        t
    }
}

/// `c.spawn()`, retried while the executable is "busy" (ETXTBSY, rust-lang/rust#114554).
/// The binary and fixture copies no longer cause it (`copy_exe`), but tests still write
/// their own stand-in scripts (a lying `ps`, a fake log writer) with `std::fs::write`, and a
/// sibling thread's fork can hold such a file's write descriptor until that child execs.
pub fn spawn_retrying(c: &mut Command) -> Child {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        match c.spawn() {
            Ok(child) => return child,
            Err(e) if e.raw_os_error() == Some(libc::ETXTBSY) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => panic!("cannot start {c:?}: {e}"),
        }
    }
}

/// A fixture tree; dropping it kills everything in it and waits for the supervisor.
pub struct Tree {
    sup: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// The program the supervisor started.
    pub pid: i32,
    seen: Vec<String>,
    /// Lines received but not yet returned by `expect` (the program's own output can come
    /// before the supervisor's `started` line).
    pending: VecDeque<String>,
}

impl Tree {
    /// The rest of the next line starting with `prefix`. Lines that do not match are kept,
    /// in order, for later calls.
    pub fn expect(&mut self, prefix: &str) -> String {
        if let Some(i) = self.pending.iter().position(|l| l.starts_with(prefix)) {
            let line = self.pending.remove(i).unwrap_or_default();
            return line[prefix.len()..].to_string();
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if let Some(rest) = line.strip_prefix(prefix) {
                        return rest.to_string();
                    }
                    self.pending.push_back(line);
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no `{prefix}` line within {TIMEOUT:?}; saw {:?}", self.seen)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("supervisor ended before `{prefix}`; saw {:?}", self.seen)
                }
            }
        }
    }

    /// The fixture's `ready {json}` line, parsed.
    pub fn ready(&mut self) -> serde_json::Value {
        serde_json::from_str(&self.expect("ready ")).unwrap()
    }

    /// The exit code of the supervised program (`exited N`, or 128+N for `killed N`).
    pub fn exit_code(&mut self) -> i32 {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let line = match self.pending.pop_front() {
                Some(l) => l,
                None => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    let line = self
                        .lines
                        .recv_timeout(left)
                        .unwrap_or_else(|_| panic!("no exit; saw {:?}", self.seen));
                    self.seen.push(line.clone());
                    line
                }
            };
            if let Some(c) = line.strip_prefix("exited ") {
                return c.parse().unwrap();
            }
            if let Some(s) = line.strip_prefix("killed ") {
                return 128 + s.parse::<i32>().unwrap();
            }
        }
    }

    /// Send `sig` to the supervised program (a process this test started).
    pub fn signal(&self, sig: i32) {
        assert!(self.pid > 1);
        #[allow(clippy::disallowed_methods)]
        // SAFETY: kill has no memory-safety preconditions; pid is the fixture's own child.
        let rc = unsafe { libc::kill(self.pid, sig) };
        assert_eq!(rc, 0, "kill {} {sig}", self.pid);
    }

    /// Whether a line starting with `prefix` has come so far (without waiting; the lines
    /// stay for `expect`).
    pub fn saw(&mut self, prefix: &str) -> bool {
        while let Ok(line) = self.lines.try_recv() {
            self.seen.push(line.clone());
            self.pending.push_back(line);
        }
        self.pending.iter().any(|l| l.starts_with(prefix))
    }

    /// Send one command line to the supervisor (see `Env::spawn_pty`).
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("the supervisor's stdin is open");
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        // EOF on its stdin: the supervisor SIGKILLs every descendant and exits.
        drop(self.stdin.take());
        if poll_within(TIMEOUT, || matches!(self.sup.try_wait(), Ok(Some(_)))) {
            return;
        }
        let _ = self.sup.kill();
        let _ = self.sup.wait();
    }
}

/// JSON Lines written so far to `path`, a stream that is all JSON (`watch --json`'s
/// stdout): every complete line must be a JSON object, or the test fails showing the line
/// (a garbled record must not pass unnoticed). Only the text after the last newline, a line
/// still being written, is left for the next read.
pub fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let complete = text.rfind('\n').map_or("", |end| &text[..=end]);
    strict_json_lines(&path.display().to_string(), complete)
}

/// Every line of `text` (the whole output of a process that has exited, all JSON) as a JSON
/// object; a line that is not one fails the test, shown with `what` it came from.
pub fn strict_json_lines(what: &str, text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .enumerate()
        .map(
            |(i, l)| match serde_json::from_str::<serde_json::Value>(l) {
                Ok(v) if v.is_object() => v,
                Ok(_) => panic!("{what}, line {}: not a JSON object: {l:?}", i + 1),
                Err(e) => panic!("{what}, line {}: not JSON ({e}): {l:?}", i + 1),
            },
        )
        .collect()
}

/// The JSON records of a stream where human text is legitimately interleaved (`run
/// --json`'s stderr, which the command shares): a line that starts with `{` is a record and
/// must parse (else the test fails, showing it); any other line is the command's own text.
pub fn json_lines_among_text(what: &str, text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with('{'))
        .map(|(i, l)| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{what}, line {}: not JSON ({e}): {l:?}", i + 1))
        })
        .collect()
}

/// Wait until the JSON-lines file `out` (a `watch --json`'s stdout) holds `n` more
/// `reading` records than it does now: `n` more rounds. `what` names the wait.
pub fn wait_more_readings(what: &str, out: &Path, n: usize) {
    let readings = || {
        json_lines(out)
            .iter()
            .filter(|e| e["type"] == "reading")
            .count()
    };
    let now = readings();
    wait_until(what, || readings() >= now + n);
}

/// Wait for `cond` to hold, polling; panics with `what` after the timeout.
pub fn wait_until(what: &str, cond: impl FnMut() -> bool) {
    assert!(poll_within(TIMEOUT, cond), "timed out waiting for {what}");
}

/// The first and the longest pause between two looks at a condition. A look reads /proc or
/// a whole output file, and most waits are for a watch round or a grace that takes seconds:
/// at a fixed 10 ms one integration run made 11,257 looks for 2.7 s of CPU (BENCHMARKS.md,
/// "Time to a green test run"). Doubling from 10 ms, a condition that holds at once is
/// still seen within 10 ms, and one that takes seconds costs ten looks a second, not a
/// hundred; no wait is for a state that lasts less than 100 ms (a wait for one would be a
/// race at 10 ms on a loaded machine).
const FIRST_PAUSE: Duration = Duration::from_millis(10);
const LONGEST_PAUSE: Duration = Duration::from_millis(100);

/// Look at `cond` until it holds or `bound` has passed (one last look at the end): whether
/// it held.
pub fn poll_within(bound: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + bound;
    let mut pause = FIRST_PAUSE;
    loop {
        if cond() {
            return true;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(pause.min(left));
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

/// `ps -A -o FIELDS`, one row of whitespace-separated words per process (macOS: no /proc).
#[cfg(not(target_os = "linux"))]
fn ps_rows(fields: &str) -> Vec<Vec<String>> {
    let out = Command::new("ps")
        .args(["-A", "-o", fields])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().map(String::from).collect())
        .collect()
}

/// State letter of a pid from `ps`, None when gone.
#[cfg(not(target_os = "linux"))]
pub fn proc_state(pid: i32) -> Option<char> {
    ps_rows("pid=,stat=")
        .into_iter()
        .find(|r| r.first().and_then(|p| p.parse().ok()) == Some(pid))?
        .get(1)?
        .chars()
        .next()
}

/// Zombie children of `pid`, from `ps`.
#[cfg(not(target_os = "linux"))]
pub fn zombie_children(pid: i32) -> usize {
    ps_rows("ppid=,stat=")
        .iter()
        .filter(|r| {
            r.first().and_then(|p| p.parse::<i32>().ok()) == Some(pid)
                && r.get(1).is_some_and(|s| s.starts_with('Z'))
        })
        .count()
}

/// Live processes of `uid` (by real uid), from `ps`.
#[cfg(not(target_os = "linux"))]
pub fn live_pids_of_uid(uid: u32) -> Vec<i32> {
    ps_rows("ruid=,pid=,stat=")
        .iter()
        .filter(|r| r.first().and_then(|u| u.parse::<u32>().ok()) == Some(uid))
        .filter(|r| r.get(2).is_some_and(|s| !s.starts_with('Z')))
        .filter_map(|r| r.get(1)?.parse().ok())
        .collect()
}

/// State letter of a pid from /proc, None when gone.
#[cfg(target_os = "linux")]
pub fn proc_state(pid: i32) -> Option<char> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    s[s.rfind(')')? + 2..].chars().next()
}

/// Count zombie children of `pid` from /proc.
#[cfg(target_os = "linux")]
pub fn zombie_children(pid: i32) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let mut f = stat[close + 2..].split(' ');
        let state = f.next();
        let ppid = f.next().and_then(|v| v.parse::<i32>().ok());
        if state == Some("Z") && ppid == Some(pid) {
            n += 1;
        }
    }
    n
}

/// `env`'s `cleanup.lock`, held (flock) by the test until the file is dropped, and its inode
/// (for [`lock_waiters`]): every cleanup that selects a target waits for it.
pub fn hold_cleanup_lock(env: &Env) -> (std::fs::File, u64) {
    let lock_path = env.home.join("cleanup.lock");
    let held = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .unwrap();
    if env.private {
        chown(&lock_path, env.uid);
    }
    let fd = std::os::fd::AsRawFd::as_raw_fd(&held);
    // SAFETY: a valid descriptor the test owns, open until `held` is dropped.
    let rc = unsafe { libc::flock(fd, libc::LOCK_EX) };
    assert_eq!(rc, 0, "flock {}", lock_path.display());
    let ino = std::os::unix::fs::MetadataExt::ino(&held.metadata().unwrap());
    (held, ino)
}

/// How many requests wait for the flock on inode `ino` (`/proc/locks` lists each blocked
/// one as `N: -> FLOCK ADVISORY WRITE PID MAJ:MIN:INODE …`).
pub fn lock_waiters(ino: u64) -> usize {
    let locks = std::fs::read_to_string("/proc/locks").unwrap_or_default();
    let suffix = format!(":{ino}");
    locks
        .lines()
        .filter(|l| l.contains("->"))
        .filter(|l| l.split_whitespace().any(|f| f.ends_with(&suffix)))
        .count()
}

/// The source directories of the workspace's crates: the main crate's `src/` and each
/// `crates/*/src` (the core's, the platform's, the store's, the output's and the crates of
/// the layers above them). Source scans read them all.
pub fn source_roots() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut crates: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    std::iter::once(root.join("src")).chain(crates).collect()
}

/// Files of `src/` compiled only for tests: declared as `mod x;` right after
/// `#[cfg(test)]` (and perhaps a `#[path]`) in their parent.
pub fn test_only_files(src: &Path) -> std::collections::BTreeSet<PathBuf> {
    let mut out = std::collections::BTreeSet::new();
    for f in files_under(src) {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        for (i, l) in lines.iter().enumerate() {
            // The core's shared builders are compiled for its tests and for the main
            // crate's (its `fixtures` feature): test code too.
            if *l != "#[cfg(test)]" && *l != "#[cfg(any(test, feature = \"fixtures\"))]" {
                continue;
            }
            let mut path_attr = None;
            let mut j = i + 1;
            while let Some(next) = lines.get(j).filter(|n| n.starts_with("#[")) {
                if let Some(p) = next.strip_prefix("#[path = \"") {
                    path_attr = p.split('"').next().map(str::to_string);
                }
                j += 1;
            }
            // Any visibility: a fixture module shared by tests is `pub(crate) mod fixture;`.
            let Some(name) = lines.get(j).and_then(|n| {
                ["mod ", "pub mod ", "pub(crate) mod ", "pub(super) mod "]
                    .iter()
                    .find_map(|v| n.strip_prefix(v))
            }) else {
                continue;
            };
            let Some(name) = name.strip_suffix(';') else {
                continue; // an inline module: cut off by `impure_tokens`
            };
            let dir = f.parent().unwrap().to_path_buf();
            let own = if f.file_name().is_some_and(|n| n == "mod.rs") {
                dir.clone()
            } else {
                dir.join(f.file_stem().unwrap())
            };
            out.insert(match path_attr {
                Some(p) => dir.join(p),
                None => own.join(format!("{name}.rs")),
            });
        }
    }
    out
}

/// A stream that is all JSON is read strictly: a garbled line fails, shown; only a line
/// still being written (no newline yet) waits. The lenient reader skips human text only.
#[test]
fn a_garbled_json_line_fails_the_read_and_says_which() {
    let env = Env::new();
    let f = env.path("stream.jsonl");
    std::fs::write(&f, "{\"type\":\"reading\"}\n{\"type\":\"summ").unwrap();
    assert_eq!(json_lines(&f).len(), 1, "the partial last line waits");
    std::fs::write(&f, "{\"type\":\"reading\"}\n{\"type\":\"summary\"}\n").unwrap();
    assert_eq!(json_lines(&f).len(), 2);
    for garbled in [
        "{\"type\":\"rea\n{\"type\":\"summary\"}\n",
        "plain text\n",
        "[1]\n",
    ] {
        std::fs::write(&f, garbled).unwrap();
        let panic = std::panic::catch_unwind(|| json_lines(&f)).unwrap_err();
        let said = panic.downcast_ref::<String>().cloned().unwrap_or_default();
        let first = garbled.lines().next().unwrap();
        assert!(
            said.contains("line 1") && said.contains(&format!("{first:?}")),
            "{said}"
        );
    }
    let text = "headroom: a human line\n{\"type\":\"breach\"}\nthe command's own output\n";
    assert_eq!(json_lines_among_text("stderr", text).len(), 1);
    let broken = "a human line\n{\"type\":\"bre\n";
    assert!(std::panic::catch_unwind(|| json_lines_among_text("stderr", broken)).is_err());
}
