//! `headroom doctor`: is headroom reading this machine right? Each check reads a value the
//! way headroom does and asks the system's own tool (`ps`, `sysctl`, `launchctl`, a shell's
//! `ulimit -u`, the kernel's files) for the same value; `core::doctor` decides. A
//! diagnostic: it execs those tools and starts a child that burns CPU for a moment, so it
//! is never run on a polling path and is no use at the wall.

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::cli::DoctorArgs;
use crate::commands::Ctx;
use crate::commands::probe::rfc3339_ms;
use crate::core::doctor::{self as dr, Check, Limit, Outcome};
use crate::core::limits::{Ceiling, LimitSource};
use crate::core::reading;
use crate::core::snapshot::{Detail, ProcessTable, Snapshot};
use crate::exit;
use crate::output::{Printer, Style, schema};
use crate::platform::{self, ProcessSource};

#[derive(Debug, Serialize)]
pub struct DoctorReport {
    pub schema: String,
    pub at: String,
    pub os: String,
    pub uid: u32,
    pub ok: usize,
    pub mismatches: usize,
    pub skipped: usize,
    pub checks: Vec<Check>,
}

/// How long one tool may take.
const TOOL_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the process count is re-read when churn puts it outside the two `ps` readings.
const COUNT_ATTEMPTS: usize = 3;
/// What the burn child allocates and touches, and how much CPU it burns.
const CHILD_MIB: usize = 64;
const CHILD_CPU: Duration = Duration::from_millis(1_200);

pub fn run(ctx: &Ctx<'_>, args: &DoctorArgs) -> Result<u8> {
    if args.burn_child {
        return burn_child();
    }
    if ctx.global.snapshot.is_some() {
        return Err(exit::usage(
            "doctor checks the live machine against its own tools; --snapshot does not apply",
        ));
    }
    let source = platform::native();
    let uid = platform::current_uid();
    let mut checks = counts(source.as_ref(), uid);
    let snap = source
        .snapshot(Detail::Slots)
        .context("cannot read the process table")?;
    checks.extend(ceilings(&snap));
    checks.extend(child(source.as_ref()));
    checks.push(state_dir(uid));
    checks.extend(services());
    checks.push(notifications());
    checks.push(window_server());
    let count = |o: Outcome| checks.iter().filter(|c| c.outcome == o).count();
    let report = DoctorReport {
        schema: schema("doctor"),
        at: rfc3339_ms(snap.taken_at_ms),
        os: snap.os.clone(),
        uid,
        ok: count(Outcome::Ok),
        mismatches: count(Outcome::Mismatch),
        skipped: count(Outcome::Skipped),
        checks,
    };
    if ctx.printer.is_json() {
        ctx.printer.json_value(&report)?;
    } else {
        ctx.printer.text(&human(&report, ctx.printer))?;
    }
    Ok(dr::exit_code(&report.checks))
}

pub fn human(r: &DoctorReport, p: &Printer) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{} for uid {} ({}): headroom's readings against the system's own tools",
        p.paint("headroom doctor", Style::Bold),
        r.uid,
        r.os
    );
    for c in &r.checks {
        let verdict = match c.outcome {
            Outcome::Ok => p.paint("ok", Style::Green),
            Outcome::Mismatch => p.paint("mismatch", Style::Bold),
            Outcome::Skipped => format!(
                "skipped ({})",
                c.note.as_deref().unwrap_or("no reason given")
            ),
        };
        let _ = write!(s, "  {:<26} {verdict}", c.name);
        if let (Some(h), Some(sys)) = (&c.headroom, &c.system) {
            let _ = write!(s, ": headroom {h}, system {sys}");
            if let Some(n) = &c.note {
                let _ = write!(s, " ({n})");
            }
        }
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "{} ok, {} mismatch, {} skipped",
        r.ok, r.mismatches, r.skipped
    );
    s
}

/// Run a tool (no shell unless asked for), stdin closed, within TOOL_TIMEOUT: its stdout,
/// or why there is none (the message names the command).
fn tool(program: &str, args: &[&str]) -> Result<String, String> {
    let line = format!("`{program} {}`", args.join(" "));
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {line}: {e}"))?;
    // Both pipes drained on threads, so a chatty tool never blocks on a full pipe; the
    // result is awaited only until the deadline (a grandchild may hold a pipe open).
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut text);
            }
            let _ = tx.send(text);
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
    let deadline = Instant::now() + TOOL_TIMEOUT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                // Our own child, started just above.
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{line} took longer than {} s",
                    TOOL_TIMEOUT.as_secs()
                ));
            }
            Err(e) => return Err(format!("cannot wait for {line}: {e}")),
        }
    };
    let left = || deadline.saturating_duration_since(Instant::now());
    let text = reader
        .recv_timeout(left())
        .map_err(|_| format!("{line} left its output open past the deadline"))?;
    let err = errors.recv_timeout(left()).unwrap_or_default();
    if !status.success() {
        return Err(format!(
            "{line} exited {}: {}",
            status.code().unwrap_or(-1),
            err.lines().next().unwrap_or("").trim()
        ));
    }
    Ok(text)
}

/// `ps -A -o ruid=,stat=`: processes and zombies of `uid`.
fn ps_counts(uid: u32) -> Result<(u64, u64), String> {
    dr::parse_ps_uid_stat(&tool("ps", &["-A", "-o", "ruid=,stat="])?, uid)
}

/// Processes and zombies: `ps`, headroom, `ps` again; headroom must lie between the two.
fn counts(source: &dyn ProcessSource, uid: u32) -> Vec<Check> {
    let mut last = Vec::new();
    for _ in 0..COUNT_ATTEMPTS {
        let before = match ps_counts(uid) {
            Ok(c) => c,
            Err(e) => {
                return vec![
                    Check::skipped("processes", e.clone()),
                    Check::skipped("zombies", e),
                ];
            }
        };
        let snap = match source.snapshot(Detail::Slots) {
            Ok(s) => s,
            Err(e) => {
                let why = format!("headroom cannot read the process table: {e}");
                return vec![
                    Check::new("processes", Outcome::Mismatch, why.clone(), "-".into()),
                    Check::skipped("zombies", why),
                ];
            }
        };
        let usage = ProcessTable::new(&snap).usage(uid);
        let after = match ps_counts(uid) {
            Ok(c) => c,
            Err(e) => {
                return vec![
                    Check::skipped("processes", e.clone()),
                    Check::skipped("zombies", e),
                ];
            }
        };
        last = vec![
            dr::bracketed("processes", before.0, usage.processes, after.0),
            dr::bracketed("zombies", before.1, usage.zombies, after.1),
        ];
        if last.iter().all(|c| c.outcome == Outcome::Ok) {
            break;
        }
    }
    last
}

fn headroom_limit(c: Option<&Ceiling>) -> Option<Limit> {
    let c = c?;
    if c.unlimited {
        Some(Limit::Unlimited)
    } else {
        c.value.map(Limit::Value)
    }
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
fn shell_ulimit() -> (Result<Limit, String>, String) {
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

fn ceilings(snap: &Snapshot) -> Vec<Check> {
    let find = |s: LimitSource| snap.ceilings.iter().find(|c| c.source == s);
    let ours = |s: LimitSource| headroom_limit(find(s));
    let mut out = Vec::new();
    let (ulimit, shell) = shell_ulimit();
    out.push(dr::ceiling(
        "ceiling.rlimit-nproc",
        ours(LimitSource::RlimitNproc),
        ulimit.clone(),
        &shell,
    ));
    if snap.os == "macos" {
        let sysctl = tool("sysctl", &["-n", "kern.maxprocperuid", "kern.maxproc"]);
        let line = |i: usize| -> Result<Limit, String> {
            let text = sysctl.clone()?;
            let l = text.lines().nth(i).unwrap_or("");
            Limit::parse(l).ok_or_else(|| format!("printed `{}`, not a number", l.trim()))
        };
        out.push(dr::ceiling(
            "ceiling.per-uid",
            ours(LimitSource::PerUid),
            line(0),
            "sysctl -n kern.maxprocperuid",
        ));
        out.push(dr::ceiling(
            "ceiling.system-wide",
            ours(LimitSource::SystemWide),
            line(1),
            "sysctl -n kern.maxproc",
        ));
        // launchd's limit is what sessions started at login get; headroom reads the one
        // this process inherited. They differ only when something changed either since.
        let launchd =
            tool("launchctl", &["limit", "maxproc"]).and_then(|t| dr::parse_launchctl_maxproc(&t));
        let c = dr::ceiling(
            "ceiling.launchd-maxproc",
            ours(LimitSource::RlimitNproc),
            launchd,
            "launchctl limit maxproc (soft)",
        );
        out.push(if c.outcome == Outcome::Mismatch {
            Check {
                outcome: Outcome::Skipped,
                note: Some(
                    "launchd gives new login sessions another limit than this process inherited \
                     (the inherited-RLIMIT trap: log in again after `launchctl limit maxproc`)"
                        .into(),
                ),
                ..c
            }
        } else {
            c
        });
        let says = crate::commands::limits::traps(snap, &reading::read(snap, Default::default()))
            .iter()
            .any(|n| n.starts_with("kern.maxprocperuid"));
        out.push(dr::rlimit_trap(says, line(0).ok(), ulimit.ok()));
    } else {
        for (name, source, file) in [
            (
                "ceiling.threads-max",
                LimitSource::ThreadsMax,
                "/proc/sys/kernel/threads-max",
            ),
            (
                "ceiling.pid-max",
                LimitSource::PidMax,
                "/proc/sys/kernel/pid_max",
            ),
        ] {
            let system = std::fs::read_to_string(file)
                .map_err(|e| format!("cannot read: {e}"))
                .and_then(|t| Limit::parse(&t).ok_or_else(|| format!("holds `{}`", t.trim())));
            out.push(dr::ceiling(name, ours(source), system, file));
        }
        out.push(dr::ceiling(
            "ceiling.cgroup-pids",
            ours(LimitSource::CgroupPids).or(Some(Limit::Unlimited)),
            cgroup_pids_max(Path::new("/proc/self/cgroup"), Path::new("/sys/fs/cgroup")),
            "pids.max up the cgroup path",
        ));
        out.push(Check::skipped(
            "trap.inherited-rlimit",
            "the kern.maxprocperuid trap is macOS's",
        ));
    }
    out
}

/// The tightest `pids.max` from this process's cgroup up to the root (v2, or v1's `pids`
/// hierarchy), read independently of headroom's own reader; unlimited when none is set.
fn cgroup_pids_max(self_cgroup: &Path, root: &Path) -> Result<Limit, String> {
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

/// Start a copy of headroom that touches CHILD_MIB and burns CHILD_CPU, then compare
/// headroom's reading of it with `ps -o time=,rss=`. The child waits on its stdin and ends
/// when that closes, so nothing is signalled.
fn child(source: &dyn ProcessSource) -> Vec<Check> {
    let skip = |why: String| {
        vec![
            Check::skipped("child.cpu", why.clone()),
            Check::skipped("child.footprint", why),
        ]
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return skip(format!("cannot find headroom's own executable: {e}")),
    };
    let mut c = match Command::new(exe)
        .args(["doctor", "--burn-child"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => return skip(format!("cannot start the burn child: {e}")),
    };
    let pid = c.id() as i32;
    let ready = c.stdout.take().map(BufReader::new).and_then(|mut r| {
        let mut line = String::new();
        r.read_line(&mut line).ok()?;
        (line.trim() == "ready").then_some(())
    });
    let checks = if ready.is_none() {
        skip("the burn child did not report ready".into())
    } else {
        let rec = source.process(pid).ok().flatten();
        let pid_s = pid.to_string();
        match tool("ps", &["-o", "time=,rss=", "-p", &pid_s]) {
            Ok(text) => {
                let mut w = text.split_whitespace();
                let (time, rss) = (w.next().unwrap_or(""), w.next().unwrap_or(""));
                vec![
                    dr::cpu(rec.as_ref().and_then(|r| r.cpu_ns), time),
                    dr::footprint(rec.as_ref().and_then(|r| r.footprint_bytes), rss),
                ]
            }
            Err(e) => skip(e),
        }
    };
    // Closing its stdin ends it; then it is reaped.
    drop(c.stdin.take());
    let _ = c.wait();
    checks
}

/// The burn child's side: touch CHILD_MIB, burn CHILD_CPU of CPU time, say `ready`, wait
/// for stdin to close.
fn burn_child() -> Result<u8> {
    let mut mem = vec![0u8; CHILD_MIB << 20];
    for (i, b) in mem.iter_mut().enumerate().step_by(4096) {
        *b = (i / 4096) as u8 | 1;
    }
    let start = platform::own_cpu_ns().unwrap_or(0);
    let mut x = 0u64;
    while platform::own_cpu_ns()
        .unwrap_or(u64::MAX)
        .saturating_sub(start)
        < CHILD_CPU.as_nanos() as u64
    {
        for _ in 0..10_000 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")?;
    out.flush()?;
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    std::hint::black_box(&mem);
    Ok(exit::OK)
}

fn state_dir(uid: u32) -> Check {
    let dir = match crate::paths::state_dir() {
        Ok(d) => d,
        Err(e) => return Check::skipped("state-dir", format!("{e:#}")),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = match std::fs::metadata(&dir) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Check::skipped(
                    "state-dir",
                    format!(
                        "`{}` does not exist yet (the first probe creates it)",
                        dir.display()
                    ),
                );
            }
            Err(e) => return Check::skipped("state-dir", format!("`{}`: {e}", dir.display())),
        };
        let probe = dir.join(format!(".doctor-{}", std::process::id()));
        let writable = std::fs::write(&probe, b"")
            .and_then(|()| std::fs::remove_file(&probe))
            .map_err(|e| e.to_string());
        dr::state_dir(uid, meta.uid(), meta.mode(), writable).with_note(dir.display().to_string())
    }
    #[cfg(not(unix))]
    {
        let _ = uid;
        Check::skipped(
            "state-dir",
            format!("`{}`: not checked on this OS", dir.display()),
        )
    }
}

/// The login item as its file says and as the service manager says; and no second watcher
/// from `brew services`.
fn services() -> Vec<Check> {
    use crate::actions::login_item::{Launchd, RealExec, Systemd};
    let exec = RealExec;
    let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
        return vec![Check::skipped("login-item", "HOME is not set")];
    };
    let home = Path::new(&home);
    let (status, brew) = if cfg!(target_os = "macos") {
        let l = Launchd {
            exec: &exec,
            uid: platform::current_uid(),
            agents_dir: home.join("Library/LaunchAgents"),
        };
        (l.status(), Some(l.brew_service()))
    } else {
        let s = Systemd {
            exec: &exec,
            units_dir: home.join(".config/systemd/user"),
        };
        if !s.available() && !s.unit_path().exists() {
            return vec![Check::skipped(
                "login-item",
                "no systemd user manager answers (cron is the alternative)",
            )];
        }
        (s.status(), None)
    };
    let file = if !status.registered {
        "not registered".to_string()
    } else if let Some(p) = &status.problem {
        format!("registered, but {p}")
    } else {
        "registered".to_string()
    };
    // Registered means it should be effective; unregistered means it should not be loaded.
    let consistent = if status.registered {
        status.effective
    } else {
        !status.loaded
    };
    let mut out = vec![Check::new(
        "login-item",
        if consistent {
            Outcome::Ok
        } else {
            Outcome::Mismatch
        },
        file,
        status.raw.clone(),
    )];
    if let Some(brew) = brew {
        let both = brew && status.registered;
        out.push(Check::new(
            "brew-service",
            if both { Outcome::Mismatch } else { Outcome::Ok },
            if status.registered {
                "login item registered".into()
            } else {
                "no login item".into()
            },
            if brew {
                "brew services runs headroom".into()
            } else {
                "no brew service".into()
            },
        ));
        if both {
            let last = out.len() - 1;
            out[last].note = Some("two watchers would double every action".into());
        }
    }
    out
}

/// Whether a notification could be posted: the helper it needs is there.
fn notifications() -> Check {
    match crate::actions::notify::command("headroom", "doctor") {
        Ok(argv) => {
            let bin = argv.first().cloned().unwrap_or_default();
            if Path::new(&bin).is_file() {
                Check::new(
                    "notifications",
                    Outcome::Ok,
                    "would post through it".into(),
                    format!("{bin} present"),
                )
            } else {
                Check::skipped("notifications", format!("`{bin}` is missing"))
            }
        }
        Err(why) => Check::skipped("notifications", why),
    }
}

/// On macOS, whether the WindowServer interface `hangs` needs answers here.
fn window_server() -> Check {
    const NAME: &str = "window-server";
    match platform::native_apps() {
        Ok(apps) => {
            let scan = apps.scan();
            if scan.available {
                Check::new(
                    NAME,
                    Outcome::Ok,
                    format!("{} GUI apps", scan.apps.len()),
                    "interface answers".into(),
                )
            } else {
                Check::skipped(
                    NAME,
                    format!(
                        "interface unavailable: {}",
                        scan.unavailable_reason.unwrap_or_default()
                    ),
                )
            }
        }
        Err(e) => Check::skipped(NAME, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
