//! `headroom doctor`: is headroom reading this machine right? Each check reads a value the
//! way headroom does and asks the system's own tool (`ps`, `sysctl`, `launchctl`, a shell's
//! `ulimit -u`, the kernel's files) for the same value; `core::doctor` decides. A
//! diagnostic: it execs those tools and starts a child that burns CPU for a moment, so it
//! is never run on a polling path and is no use at the wall.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::cli::DoctorArgs;
use crate::commands::Ctx;
use crate::commands::doctor_child::{burn_child, child};
use crate::commands::doctor_tools::{
    cgroup_pids_max, notification_check, ps_counts, shell_ulimit, tool,
};
use crate::core::doctor::{self as dr, Check, CheckOutcome, Limit};
use crate::core::limits::{Ceiling, LimitSource, PerUidTrap, per_uid_and_rlimit, per_uid_trap};
use crate::core::process_table::ProcessTable;
use crate::core::reading;
use crate::core::snapshot::{Detail, Snapshot};
use crate::core::time::format_ms;
use crate::exit::{self, ExitStatus};
use crate::output::{Printer, Style};
use crate::platform::{self, ProcessSource};

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DoctorReport {
    pub at: String,
    pub os: String,
    pub uid: u32,
    pub ok: usize,
    pub mismatches: usize,
    pub skipped: usize,
    pub checks: Vec<Check>,
    /// What the guard (`watch`, as `brew services` and the login item run it) does on its
    /// own with the effective config, and which guard runs.
    pub guard: crate::commands::doctor_guard::GuardStatus,
}

impl crate::schema::Document for DoctorReport {
    const SCHEMA: &'static str = "headroom.doctor/1";
    const TYPE: Option<&'static str> = Some("doctor");
}

/// Why a check that starts a process was not made (`--no-exec`).
const NOT_RUN: &str = "not run: --no-exec starts no process";

/// How often the process count is re-read when churn puts it outside the two `ps` readings.
const COUNT_ATTEMPTS: usize = 3;

pub(crate) fn run(ctx: &Ctx<'_>, args: &DoctorArgs) -> Result<ExitStatus> {
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
    let exec = !args.no_exec;
    let not_run = |names: &[&str]| -> Vec<Check> {
        names.iter().map(|n| Check::skipped(n, NOT_RUN)).collect()
    };
    // About 2.5 s of tools and the burn child: a spinner on a terminal says what runs.
    let spin = crate::output::progress::spinner(ctx.printer, "doctor: counting processes with ps");
    let mut checks = if exec {
        counts(source.as_ref(), uid)
    } else {
        not_run(&["processes", "zombies"])
    };
    let snap = source
        .snapshot(Detail::Slots)
        .context("cannot read the process table")?;
    spin.set_message("doctor: reading the ceilings");
    checks.extend(ceilings(&snap, exec));
    spin.set_message("doctor: measuring a burn child");
    if exec {
        checks.extend(child(source.as_ref()));
    } else {
        checks.extend(not_run(&["child.cpu", "child.footprint"]));
    }
    checks.push(state_dir(uid));
    if exec {
        spin.set_message("doctor: asking the service manager about the login item");
        checks.extend(services());
        spin.set_message("doctor: checking notifications");
        checks.push(notification_check());
    } else {
        checks.extend(not_run(&["login-item", "notifications"]));
    }
    checks.push(window_server());
    let count = |o: CheckOutcome| checks.iter().filter(|c| c.outcome == o).count();
    let report = DoctorReport {
        at: format_ms(snap.taken_at_ms),
        os: snap.os.clone(),
        uid,
        ok: count(CheckOutcome::Ok),
        mismatches: count(CheckOutcome::Mismatch),
        skipped: count(CheckOutcome::Skipped),
        checks,
        guard: guard_report(ctx, source.as_ref()),
    };
    spin.finish_and_clear();
    if ctx.printer.is_json() {
        ctx.printer.json_value(&report)?;
    } else {
        let text = human(&report, ctx.printer);
        // Each check's verdict wraps under its own column, not back to the left margin.
        let text = match crate::platform::screen_width() {
            Some(w) => crate::output::screen::wrap_all(&text, w),
            None => text,
        };
        ctx.printer.text(&text)?;
    }
    Ok(dr::verdict(&report.checks).into())
}

pub(crate) fn human(r: &DoctorReport, p: &Printer) -> String {
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
            CheckOutcome::Ok => p.paint("ok", Style::Green),
            CheckOutcome::Mismatch => p.paint("mismatch", Style::Bold),
            CheckOutcome::Skipped => format!(
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
    s.push('\n');
    crate::commands::doctor_guard::human(&r.guard, &mut s);
    s
}

/// What the guard does unasked, and the guard the lock's record names when its pid still
/// runs headroom (a record under a lock nobody holds is an old one).
fn guard_report(
    ctx: &Ctx<'_>,
    source: &dyn ProcessSource,
) -> crate::commands::doctor_guard::GuardStatus {
    let running = crate::store::paths::existing_state_dir()
        .ok()
        .flatten()
        .and_then(|d| crate::store::guard::read_holder(&d))
        .filter(|h| {
            i32::try_from(h.pid).is_ok_and(|pid| {
                source
                    .process(pid)
                    .is_ok_and(|p| p.is_some_and(|p| p.name.starts_with("headroom")))
            })
        });
    crate::commands::doctor_guard::GuardStatus {
        running,
        config: ctx.settings.file.as_ref().map(|p| p.display().to_string()),
        acts: crate::commands::doctor_guard::acts(&ctx.settings, cfg!(target_os = "macos")),
    }
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
                    Check::new("processes", CheckOutcome::Mismatch, why.clone(), "-".into()),
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
        if last.iter().all(|c| c.outcome == CheckOutcome::Ok) {
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

fn ceilings(snap: &Snapshot, exec: bool) -> Vec<Check> {
    let find = |s: LimitSource| snap.ceilings.iter().find(|c| c.source == s);
    let ours = |s: LimitSource| headroom_limit(find(s));
    let tool = |p: &str, a: &[&str]| {
        if exec {
            tool(p, a)
        } else {
            Err(NOT_RUN.to_string())
        }
    };
    let mut out = Vec::new();
    let (ulimit, shell) = if exec {
        shell_ulimit()
    } else {
        (
            Err(NOT_RUN.to_string()),
            "ulimit -u in a login shell".into(),
        )
    };
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
        out.push(if c.outcome == CheckOutcome::Mismatch {
            Check {
                outcome: CheckOutcome::Skipped,
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
        // The trap `limits` words as "kern.maxprocperuid (…) is above this session's
        // RLIMIT_NPROC".
        let says = snap.os == "macos"
            && per_uid_and_rlimit(&reading::read(snap, Default::default()).limit).is_some_and(
                |(per_uid, rl)| per_uid_trap(per_uid, rl) == Some(PerUidTrap::InheritedRlimit),
            );
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

fn state_dir(uid: u32) -> Check {
    let dir = match crate::store::paths::state_dir() {
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
    use crate::actions::login_item::{Launchd, Systemd};
    let exec = crate::commands::doctor_tools::DeadlineExec::default();
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
        if !s.available() && !s.unit_path().exists() && exec.timed_out().is_none() {
            return vec![Check::skipped(
                "login-item",
                "no systemd user manager answers (cron is the alternative)",
            )];
        }
        (s.status(), None)
    };
    // A manager that does not answer is not a verdict on the login item: say which call
    // hung, as a skip.
    if let Some(call) = exec.timed_out() {
        return vec![Check::skipped(
            "login-item",
            format!("{call}: the service manager does not answer"),
        )];
    }
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
            CheckOutcome::Ok
        } else {
            CheckOutcome::Mismatch
        },
        file,
        status.raw.clone(),
    )];
    if let Some(brew) = brew {
        let both = brew && status.registered;
        out.push(Check::new(
            "brew-service",
            if both {
                CheckOutcome::Mismatch
            } else {
                CheckOutcome::Ok
            },
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

/// On macOS, whether the WindowServer interface `hangs` needs answers here.
fn window_server() -> Check {
    const NAME: &str = "window-server";
    match platform::native_apps() {
        Ok(apps) => {
            let scan = apps.scan();
            if scan.available {
                Check::new(
                    NAME,
                    CheckOutcome::Ok,
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
