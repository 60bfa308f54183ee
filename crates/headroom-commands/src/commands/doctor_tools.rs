//! `doctor`'s side of the system: its tools run with a deadline (`ps`, `sysctl`,
//! `launchctl`, a login shell) and the kernel's files read independently of headroom's own
//! readers. Nothing here decides; `core::doctor` does.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::core::doctor::{self as dr, Limit};

/// How long one tool may take.
const TOOL_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a bounded run gave no output.
#[derive(Debug)]
pub(crate) struct NotRun {
    /// The run took longer than its bound (the message names the command and the bound).
    pub timed_out: bool,
    pub message: String,
}

/// Run `program` (no shell unless asked for), stdin closed, for at most `bound`: its output,
/// or why there is none (the message names the command). On the deadline the child this
/// started, and only it, is killed and reaped.
pub(crate) fn bounded(program: &str, args: &[&str], bound: Duration) -> Result<Output, NotRun> {
    let line = format!("`{program} {}`", args.join(" "));
    let fail = |message: String| NotRun {
        timed_out: false,
        message,
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot run {line}: {e}")))?;
    // Both pipes drained on threads, so a chatty tool never blocks on a full pipe; the
    // result is awaited only until the deadline (a grandchild may hold a pipe open).
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            let _ = tx.send(bytes);
        });
        rx
    };
    let reader = drain(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let errors = drain(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let deadline = Instant::now() + bound;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                // Our own child, started just above.
                let _ = child.kill();
                let _ = child.wait();
                return Err(NotRun {
                    timed_out: true,
                    message: format!("{line} took longer than {}", secs(bound)),
                });
            }
            Err(e) => return Err(fail(format!("cannot wait for {line}: {e}"))),
        }
    };
    let left = || deadline.saturating_duration_since(Instant::now());
    let stdout = reader.recv_timeout(left()).map_err(|_| NotRun {
        timed_out: true,
        message: format!("{line} left its output open past the deadline"),
    })?;
    let stderr = errors.recv_timeout(left()).unwrap_or_default();
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

fn secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// Run a tool within TOOL_TIMEOUT: its stdout, or why there is none (the message names
/// the command).
pub(crate) fn tool(program: &str, args: &[&str]) -> Result<String, String> {
    let o = bounded(program, args, TOOL_TIMEOUT).map_err(|e| e.message)?;
    if !o.status.success() {
        return Err(format!(
            "`{program} {}` exited {}: {}",
            args.join(" "),
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// The login item's service-manager calls (`systemctl --user`, `launchctl`) for `doctor`,
/// each within TOOL_TIMEOUT: a session bus that accepts and never answers would hold
/// `systemctl` for 90 s. After the first call that timed out none is started (the manager
/// does not answer); `timed_out` says which it was.
#[derive(Debug, Default)]
pub(crate) struct DeadlineExec {
    timed_out: std::cell::RefCell<Option<String>>,
}

impl DeadlineExec {
    /// The first call that took longer than its bound, as `` `program args` took longer
    /// than 10 s ``.
    pub(crate) fn timed_out(&self) -> Option<String> {
        self.timed_out.borrow().clone()
    }
}

impl crate::actions::login_item::Exec for DeadlineExec {
    fn run(&self, program: &str, args: &[&str]) -> std::io::Result<Output> {
        if let Some(first) = self.timed_out.borrow().as_ref() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("not run: {first}"),
            ));
        }
        bounded(program, args, TOOL_TIMEOUT).map_err(|e| {
            if e.timed_out {
                *self.timed_out.borrow_mut() = Some(e.message.clone());
                std::io::Error::new(std::io::ErrorKind::TimedOut, e.message)
            } else {
                std::io::Error::other(e.message)
            }
        })
    }
}

/// `ps -A -o ruid=,stat=`: processes and zombies of `uid`.
pub(crate) fn ps_counts(uid: u32) -> Result<(u64, u64), String> {
    dr::parse_ps_uid_stat(&tool("ps", &["-A", "-o", "ruid=,stat="])?, uid)
}

fn first_line(r: Result<String, String>) -> Result<Limit, String> {
    let text = r?;
    // The last non-empty line: a login shell's profile may print before the answer.
    let line = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Limit::parse(line).ok_or_else(|| format!("printed `{}`, not a limit", line.trim()))
}

/// `ulimit -u` in a login shell: the soft RLIMIT_NPROC a child of this process gets. The
/// user's `$SHELL` first, then bash (dash, Debian's `sh`, has no `-u`), then `sh`.
pub(crate) fn shell_ulimit() -> (Result<Limit, String>, String) {
    let mut shells: Vec<String> = std::env::var("SHELL")
        .ok()
        .filter(|s| !s.is_empty())
        .into_iter()
        .collect();
    for s in ["bash", "sh"] {
        if !shells
            .iter()
            .any(|x| x == s || x.ends_with(&format!("/{s}")))
        {
            shells.push(s.to_string());
        }
    }
    let mut last = (Err("no shell to ask".to_string()), String::new());
    for sh in shells {
        let r = first_line(tool(&sh, &["-l", "-c", "ulimit -u"]));
        let ok = r.is_ok();
        last = (r, format!("{sh} -l -c 'ulimit -u'"));
        if ok {
            break;
        }
    }
    last
}

/// The tightest `pids.max` from this process's cgroup up to the root (v2, or v1's `pids`
/// hierarchy), read independently of headroom's own reader; unlimited when none is set.
pub(crate) fn cgroup_pids_max(self_cgroup: &Path, root: &Path) -> Result<Limit, String> {
    let text = std::fs::read_to_string(self_cgroup)
        .map_err(|e| format!("cannot read {}: {e}", self_cgroup.display()))?;
    let mut tightest: Option<i64> = None;
    for line in text.lines() {
        let mut f = line.splitn(3, ':');
        let (_, controllers, rel) = (f.next(), f.next().unwrap_or(""), f.next().unwrap_or(""));
        let base = if controllers.is_empty() {
            root.to_path_buf()
        } else if controllers.split(',').any(|c| c == "pids") {
            root.join("pids")
        } else {
            continue;
        };
        let mut dir = base.join(rel.trim_start_matches('/'));
        loop {
            if let Ok(v) = std::fs::read_to_string(dir.join("pids.max")) {
                if let Some(Limit::Value(n)) = Limit::parse(&v) {
                    tightest = Some(tightest.map_or(n, |t| t.min(n)));
                }
            }
            if dir == base || !dir.pop() {
                break;
            }
        }
    }
    Ok(tightest.map_or(Limit::Unlimited, Limit::Value))
}

/// The helper `actions::notify` would start, if it is there.
fn notify_helper() -> Result<String, String> {
    let argv = crate::actions::notify::command("headroom", "doctor")?;
    let bin = argv.first().cloned().unwrap_or_default();
    if Path::new(&bin).is_file() {
        Ok(bin)
    } else {
        Err(format!("`{bin}` is missing"))
    }
}

/// The facts of the `notifications` check, gathered without posting anything.
pub(crate) fn notification_check() -> crate::core::doctor::Check {
    use crate::core::doctor_notify as dn;
    if cfg!(target_os = "macos") {
        let manager = tool("launchctl", &["managername"]);
        return dn::macos(&dn::MacFacts {
            helper: notify_helper(),
            manager,
        });
    }
    if !cfg!(target_os = "linux") {
        return crate::core::doctor::Check::skipped(
            "notifications",
            format!("not checked on {}", std::env::consts::OS),
        );
    }
    let helper = notify_helper();
    let bus = session_bus();
    let service = if bus.is_ok() {
        notification_service()
    } else {
        dn::Service::Unknown("no bus".into())
    };
    dn::linux(&dn::LinuxFacts {
        helper,
        bus,
        service,
    })
}

/// The session bus address that accepts a connection (connected to, then closed: nothing
/// is sent), or why none does. Without `DBUS_SESSION_BUS_ADDRESS`, libdbus, sd-bus and
/// GDBus (which `notify-send` uses) all try `$XDG_RUNTIME_DIR/bus`; so does this.
fn session_bus() -> Result<String, String> {
    use crate::core::doctor_notify::{BusAddr, parse_bus_address};
    use std::os::unix::net::UnixStream;
    let addr = match std::env::var("DBUS_SESSION_BUS_ADDRESS") {
        Ok(a) if !a.trim().is_empty() => a,
        _ => match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
            Some(d) => format!("unix:path={}", Path::new(&d).join("bus").display()),
            None => return Err("DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR are unset".into()),
        },
    };
    let mut why = Vec::new();
    for a in parse_bus_address(&addr) {
        let (shown, tried) = match a {
            BusAddr::Path(p) => (
                format!("unix:path={}", p.display()),
                connect_within(TOOL_TIMEOUT, move || UnixStream::connect(&p).map(drop)),
            ),
            BusAddr::Abstract(name) => (
                format!("unix:abstract={}", String::from_utf8_lossy(&name)),
                connect_within(TOOL_TIMEOUT, move || connect_abstract(&name)),
            ),
            BusAddr::Other(t) => {
                why.push(format!("`{t}`: not checked (only unix sockets are)"));
                continue;
            }
        };
        match tried {
            Connect::Accepted => return Ok(shown),
            Connect::Refused(e) => why.push(format!("{shown}: {e}")),
            // The bus does not answer: the next address of the same session would not either.
            Connect::TimedOut => {
                why.push(format!(
                    "connecting to `{shown}` took longer than {}",
                    secs(TOOL_TIMEOUT)
                ));
                break;
            }
        }
    }
    if why.is_empty() {
        why.push(format!("`{addr}` names no address"));
    }
    Err(why.join("; "))
}

/// How a bounded connect ended.
enum Connect {
    Accepted,
    Refused(std::io::Error),
    TimedOut,
}

/// `connect` (to a session bus socket; the stream is closed at once) within `bound`, as
/// doctor's service-manager calls are bounded (`bounded`): connect(2) on a Unix socket
/// whose listener never accepts and whose backlog is full waits for ever (as would a path
/// on a file system that hangs). It runs on a thread of its own; one still blocked at the
/// bound is left to end with doctor, its socket never used (`within`).
fn connect_within(
    bound: Duration,
    connect: impl FnOnce() -> std::io::Result<()> + Send + 'static,
) -> Connect {
    match within(bound, connect) {
        Ok(Ok(())) => Connect::Accepted,
        Ok(Err(e)) => Connect::Refused(e),
        Err(_) => Connect::TimedOut,
    }
}

/// `f`'s result if it returns within `bound`. It runs on a thread of its own, so a call that
/// blocks for ever cannot hold doctor; one still running at the bound is left to end with
/// doctor (`Timeout`), and one that panicked is `Disconnected`.
pub(crate) fn within<T: Send + 'static>(
    bound: Duration,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, std::sync::mpsc::RecvTimeoutError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(bound)
}

#[cfg(target_os = "linux")]
fn connect_abstract(name: &[u8]) -> std::io::Result<()> {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixStream};
    UnixStream::connect_addr(&SocketAddr::from_abstract_name(name)?).map(drop)
}

#[cfg(not(target_os = "linux"))]
fn connect_abstract(_: &[u8]) -> std::io::Result<()> {
    Err(std::io::Error::other("abstract sockets are Linux's"))
}

/// Whether `org.freedesktop.Notifications` is on the session bus: owned, or activatable
/// (`dbus-send`, which asks the bus daemon only; the service itself is not contacted).
fn notification_service() -> crate::core::doctor_notify::Service {
    use crate::core::doctor_notify::{SERVICE, Service, lists_name, parse_has_owner};
    let ask = |method: &str, arg: Option<&str>| {
        let member = format!("org.freedesktop.DBus.{method}");
        let mut args = vec![
            "--session",
            "--print-reply",
            "--reply-timeout=2000",
            "--dest=org.freedesktop.DBus",
            "/org/freedesktop/DBus",
            &member,
        ];
        let s;
        if let Some(a) = arg {
            s = format!("string:{a}");
            args.push(&s);
        }
        tool("dbus-send", &args)
    };
    match ask("NameHasOwner", Some(SERVICE)).map(|r| parse_has_owner(&r)) {
        Ok(Some(true)) => return Service::Owned,
        Ok(Some(false)) => {}
        Ok(None) => {
            return Service::Unknown("dbus-send's NameHasOwner reply had no boolean".into());
        }
        Err(e) => return Service::Unknown(e),
    }
    match ask("ListActivatableNames", None) {
        Ok(r) if lists_name(&r, SERVICE) => Service::Activatable,
        Ok(_) => Service::Absent,
        Err(e) => Service::Unknown(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connect_that_does_not_return_is_cut_off_at_the_bound() {
        // Blocked until `held` is dropped, after the call: only the bound can end the wait.
        let (held, blocked) = std::sync::mpsc::channel::<()>();
        let hangs = connect_within(Duration::from_millis(20), move || {
            let _ = blocked.recv();
            Ok(())
        });
        drop(held);
        assert!(matches!(hangs, Connect::TimedOut));
        // The controls: a connect that returns is its own answer, either way.
        let bound = Duration::from_secs(600);
        assert!(matches!(
            connect_within(bound, || Ok(())),
            Connect::Accepted
        ));
        let refused = connect_within(bound, || Err(std::io::ErrorKind::ConnectionRefused.into()));
        assert!(
            matches!(refused, Connect::Refused(e) if e.kind() == std::io::ErrorKind::ConnectionRefused)
        );
    }

    #[test]
    fn the_tightest_pids_max_up_the_path() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = d.path().join("fs");
        let leaf = root.join("user.slice/u.service");
        std::fs::create_dir_all(&leaf).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("user.slice/pids.max"), "300\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(leaf.join("pids.max"), "max\n").unwrap_or_else(|e| panic!("{e}"));
        let cg = d.path().join("cgroup");
        std::fs::write(&cg, "0::/user.slice/u.service\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cgroup_pids_max(&cg, &root), Ok(Limit::Value(300)));
        std::fs::write(leaf.join("pids.max"), "120\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cgroup_pids_max(&cg, &root), Ok(Limit::Value(120)));
        std::fs::write(&cg, "0::/elsewhere\n").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(cgroup_pids_max(&cg, &root), Ok(Limit::Unlimited));
        assert!(cgroup_pids_max(&d.path().join("none"), &root).is_err());
    }
}
