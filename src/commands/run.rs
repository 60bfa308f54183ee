//! `headroom run --limit SIZE [--interval 200ms] [--grace 5s] -- CMD [ARGS...]`: run a
//! command with a memory limit on its whole process tree (`actions::watchdog` does the
//! work). stdout belongs to the command: everything headroom says goes to stderr, as a few
//! human lines or, with `--json`, as JSON Lines (`headroom.run/1`).

use std::time::Duration;

use anyhow::Result;

use crate::cli::RunArgs;
use crate::commands::Ctx;
use crate::exit::{ExitStatus, Failure, UsageError};
use crate::output::{Printer, human_bytes, plural};

/// Polling faster than this buys nothing and costs CPU ...
const MIN_INTERVAL: Duration = Duration::from_millis(10);
/// ... and slower than this is no supervision.
const MAX_INTERVAL: Duration = Duration::from_secs(60);
/// The longest grace between SIGTERM and SIGKILL (a tree over its limit keeps growing).
const MAX_GRACE: Duration = Duration::from_secs(600);
/// The longest --timeout: a year (past it a deadline is no deadline).
const MAX_TIMEOUT: Duration = Duration::from_secs(365 * 86_400);

/// `run`'s arguments, checked.
#[derive(Debug)]
struct RunPlan {
    limit: u64,
    interval: Duration,
    grace: Duration,
    timeout: Option<Duration>,
    command: Vec<std::ffi::OsString>,
}

fn plan(ctx: &Ctx<'_>, args: &RunArgs) -> Result<RunPlan> {
    if let Some(flag) = ctx.redirected() {
        return Err(UsageError(format!(
            "`run` starts a real command; it cannot run against `{flag}`"
        ))
        .into());
    }
    // Bounded before anything starts: an unbounded value used to overflow an `Instant`
    // deadline and abort headroom with the command left running unsupervised.
    crate::cli::check_within(args.interval, MIN_INTERVAL, MAX_INTERVAL)
        .map_err(|m| UsageError(format!("--interval {m}")))?;
    crate::cli::check_within(args.grace, Duration::from_millis(1), MAX_GRACE)
        .map_err(|m| UsageError(format!("--grace {m}")))?;
    if let Some(t) = args.timeout {
        crate::cli::check_within(t, Duration::from_millis(1), MAX_TIMEOUT)
            .map_err(|m| UsageError(format!("--timeout {m}")))?;
    }
    if args.command.first().is_none_or(|c| c.is_empty()) {
        return Err(UsageError("no command given after `--`".into()).into());
    }
    Ok(RunPlan {
        limit: args.limit,
        interval: args.interval,
        grace: args.grace,
        timeout: args.timeout,
        command: args.command.clone(),
    })
}

#[cfg(not(unix))]
pub fn run(ctx: &Ctx<'_>, args: &RunArgs) -> Result<ExitStatus> {
    plan(ctx, args)?;
    Err(Failure::RunFailed(format!("run: unsupported on {}", std::env::consts::OS)).into())
}

#[cfg(unix)]
pub fn run(ctx: &Ctx<'_>, args: &RunArgs) -> Result<ExitStatus> {
    use crate::actions::watchdog::{self, Config};
    use crate::platform::supervise::{SpawnError, Supervisor};

    use super::run_enforce;

    let plan = plan(ctx, args)?;
    let name = plan.command[0].to_string_lossy().into_owned();
    let failed =
        |message: String, kind: fn(String) -> Failure| -> anyhow::Error { kind(message).into() };
    let proc_root = ctx
        .global
        .proc_root
        .clone()
        .unwrap_or_else(|| "/proc".into());
    let (mut enforcement, mut cap) = run_enforce::prepare(args.enforce, plan.limit, &proc_root)
        .map_err(|why| {
            failed(
                format!("--enforce kernel: the kernel cannot hold the limit here: {why}"),
                Failure::RunFailed,
            )
        })?;
    let source = crate::platform::native();
    let control = crate::platform::native_control(source.as_ref());
    let mut sup = Supervisor::install().map_err(|e| {
        failed(
            format!("cannot set up supervision: {e}"),
            Failure::RunFailed,
        )
    })?;
    let cfg = Config {
        command: plan.command.clone(),
        limit: plan.limit,
        interval: plan.interval,
        grace: plan.grace,
        warn_pct: args.warn.unwrap_or(ctx.settings.memory.warn_pct.value),
        notify: ctx.settings.notifications.enabled.value,
        timeout: plan.timeout,
    };
    if args.die_with_parent {
        sup.watch_parent().map_err(|e| {
            failed(
                format!("--die-with-parent: cannot watch the parent process: {e}"),
                Failure::RunFailed,
            )
        })?;
    }
    let mut kernel_kills;
    let result = loop {
        if let Some(c) = &cap {
            let fd = c.procs_fd().map_err(|e| {
                failed(
                    format!("cannot open the cgroup's cgroup.procs: {e}"),
                    Failure::RunFailed,
                )
            })?;
            sup.join_cgroup_at_exec(Some(fd));
        }
        let pressure = if ctx.settings.memory.pressure.value == crate::config::PressureMode::Off {
            crate::platform::pressure::Pressure::turned_off()
        } else {
            run_enforce::pressure_source(cap.as_ref(), &proc_root)
        };
        enforcement.pressure = Some(pressure.describe());
        sup.wake_on_pressure(pressure);
        let mut view = EventView::new(ctx.printer, &plan, &enforcement, cap.as_mut());
        let result = watchdog::run(
            source.as_ref(),
            control.as_ref(),
            &mut sup,
            &cfg,
            &mut |ev| view.show(ev),
        );
        kernel_kills = view.kernel_kills;
        match result {
            // The command never ran (it could not join the cgroup before exec): in `auto`
            // it is started again, polled only.
            Err(SpawnError::Cgroup(e)) if args.enforce == crate::cli::Enforce::Auto => {
                let dir = enforcement.cgroup.clone().unwrap_or_default();
                cap = None;
                sup.join_cgroup_at_exec(None);
                enforcement = run_enforce::Enforcement::poll(
                    args.enforce,
                    Some(format!("the command could not join {dir}: {e}")),
                );
            }
            other => break other,
        }
    };
    // The cgroup goes before supervision is undone (on every way out; Drop does it too).
    if let Some(c) = cap.as_mut() {
        c.finish();
    }
    drop(sup);
    match result {
        Ok(summary) => {
            if ctx.settings.notifications.enabled.value {
                if let Some((title, body)) = ended_notice(&name, &summary, kernel_kills) {
                    // After the tree is gone and supervision undone: the helper is no part
                    // of the tree. Best effort, as every notification.
                    let _ = crate::actions::notify::send(&title, &body);
                }
            }
            Ok(summary.exit_code)
        }
        Err(SpawnError::NotFound(e)) => Err(failed(
            format!("`{name}`: command not found ({e})"),
            Failure::NotFound,
        )),
        Err(SpawnError::NotExecutable(e)) => Err(failed(
            // exec of a directory fails with EACCES, which would read as a permission problem.
            if name.contains('/') && std::path::Path::new(&name).is_dir() {
                format!("`{name}` is a directory, not a command")
            } else {
                format!("`{name}` cannot be executed: {e}")
            },
            Failure::NotExecutable,
        )),
        Err(SpawnError::Other(e)) => Err(failed(
            format!("cannot start `{name}`: {e}"),
            Failure::RunFailed,
        )),
        Err(SpawnError::Cgroup(e)) => Err(failed(
            format!(
                "--enforce kernel: `{name}` could not join {}: {e}",
                enforcement.cgroup.as_deref().unwrap_or("its cgroup")
            ),
            Failure::RunFailed,
        )),
    }
}

/// Renders the watchdog's events: every one as JSON Lines with `--json`; otherwise only
/// what a person must know (something parked or signalled, a warning, the last line).
#[cfg(unix)]
struct EventView<'p> {
    printer: &'p Printer,
    grace: Duration,
    enforcement: &'p super::run_enforce::Enforcement,
    /// The kernel's cap, ended and reported just before the summary.
    cap: Option<&'p mut super::run_enforce::KernelCap>,
    /// Processes the kernel's OOM killer ended in the cap's cgroup.
    kernel_kills: u64,
}

#[cfg(unix)]
impl<'p> EventView<'p> {
    fn new(
        printer: &'p Printer,
        plan: &RunPlan,
        enforcement: &'p super::run_enforce::Enforcement,
        cap: Option<&'p mut super::run_enforce::KernelCap>,
    ) -> Self {
        Self {
            printer,
            grace: plan.grace,
            enforcement,
            cap,
            kernel_kills: 0,
        }
    }

    /// The run's own records around the watchdog's: who holds the limit after `start`,
    /// what the kernel did before the summary (the tree has ended by then).
    fn show(&mut self, ev: &crate::actions::watchdog::Event) {
        use crate::actions::watchdog::Event;
        let json = self.printer.is_json();
        if let Event::Summary(_) = ev {
            if let Some(o) = self.cap.as_mut().and_then(|c| c.finish()) {
                self.kernel_kills = o.oom_kills;
                if json {
                    self.printer.stderr_json(&o);
                } else {
                    for l in o.human() {
                        self.printer.stderr_line(&format!("headroom: {l}"));
                    }
                }
            }
        }
        self.show_watchdog(ev);
        if let Event::Start { .. } = ev {
            if json {
                self.printer.stderr_json(self.enforcement);
            }
        }
    }

    fn show_watchdog(&mut self, ev: &crate::actions::watchdog::Event) {
        use crate::actions::watchdog::Event;
        if self.printer.is_json() {
            self.printer.stderr_json(ev);
            return;
        }
        let line = |s: String| self.printer.stderr_line(&format!("headroom: {s}"));
        match ev {
            Event::Breach {
                footprint_bytes,
                effective_limit_bytes,
                free_pct,
                processes,
                ..
            } => line(format!(
                "the tree ({}) holds {}, at or over its limit of {}{}",
                plural(*processes as u64, "process"),
                human_bytes(*footprint_bytes),
                human_bytes(*effective_limit_bytes),
                free_pct.map_or(String::new(), |f| format!(" ({f:.0} % of memory free)")),
            )),
            Event::Park {
                root,
                name,
                pids,
                footprint_bytes,
                cpu_pct,
                ..
            } => line(format!(
                "parked {} idle process{} under pid {root} (`{}`, {}, {cpu_pct:.1} % CPU); \
                 `headroom wake-tree {root}` continues {}",
                pids.len(),
                if pids.len() == 1 { "" } else { "es" },
                crate::sanitize::sanitize(name),
                human_bytes(*footprint_bytes),
                if pids.len() == 1 { "it" } else { "them" },
            )),
            Event::ParkResult {
                relieved: true,
                footprint_bytes,
                effective_limit_bytes,
                ..
            } => line(format!(
                "parking relieved the tree: {} < {}; still watching",
                human_bytes(*footprint_bytes),
                human_bytes(*effective_limit_bytes)
            )),
            Event::Signal {
                signal,
                reason,
                pids,
                failed,
                ..
            } => {
                use crate::actions::watchdog::EndReason;
                use crate::platform::Signal;
                if !pids.is_empty() {
                    let why = match (reason, *signal) {
                        (_, Signal::Kill) => "still there after the grace".to_string(),
                        (EndReason::Limit, _) => "over the limit".to_string(),
                        (EndReason::Signal, _) => {
                            "still running after the forwarded signal".to_string()
                        }
                        (EndReason::Leftovers, _) => {
                            "left running by the command, which has exited".to_string()
                        }
                        (EndReason::Timeout, _) => "past the --timeout".to_string(),
                        (EndReason::ParentExited, _) => {
                            "the process that started headroom has exited".to_string()
                        }
                    };
                    let then = if *signal == Signal::Term && *reason == EndReason::Limit {
                        format!(
                            "; SIGKILL in {} to those left, if still over the limit",
                            humantime::format_duration(self.grace)
                        )
                    } else if *signal == Signal::Term {
                        format!("; SIGKILL in {}", humantime::format_duration(self.grace))
                    } else {
                        String::new()
                    };
                    line(format!(
                        "{} to {} process{} of the tree ({why}){then}",
                        signal.name(),
                        pids.len(),
                        if pids.len() == 1 { "" } else { "es" },
                    ));
                }
                for f in failed {
                    self.printer.warn(f);
                }
            }
            Event::Spared { pids, .. } => line(format!(
                "{} process{} still running after the grace, but under the limit now: \
                 not sent SIGKILL",
                pids.len(),
                if pids.len() == 1 { "" } else { "es" },
            )),
            Event::Warning { message, .. } => self.printer.warn(message),
            Event::ApproachingLimit {
                footprint_bytes,
                limit_bytes,
                pct,
                warn_pct,
                ..
            } => self.printer.warn(&format!(
                "the tree holds {}, {pct:.0} % of its limit of {} (warning at {warn_pct:.0} %); \
                 at the limit idle subtrees are parked, then the tree is ended",
                human_bytes(*footprint_bytes),
                human_bytes(*limit_bytes)
            )),
            // `-q`: the closing summary is the one line a quiet run leaves out (what was
            // signalled is still said, above).
            Event::Summary(_) if self.printer.is_quiet() => {}
            Event::Summary(s) => line(summary_line(s, self.enforcement.held().as_deref())),
            Event::Start { .. }
            | Event::ParkResult { .. }
            | Event::Forward { .. }
            | Event::JobControl { .. } => {}
        }
    }
}

/// The notification after the tree was ended (by headroom or by the kernel): what and why.
#[cfg(unix)]
fn ended_notice(
    name: &str,
    s: &crate::actions::watchdog::Summary,
    kernel_kills: u64,
) -> Option<(String, String)> {
    use crate::actions::watchdog::EndReason;
    let limit = human_bytes(s.limit_bytes);
    let peak = human_bytes(s.peak_footprint_bytes);
    let body = match s.ended_by {
        Some(EndReason::Limit) => format!(
            "over its memory limit of {limit} (peak {peak}): SIGTERM to {}, SIGKILL to {}",
            s.terminated, s.killed
        ),
        _ if kernel_kills > 0 => format!(
            "the kernel ended {} at its cgroup memory limit of {limit}",
            plural(kernel_kills, "process")
        ),
        _ => return None,
    };
    let name = crate::sanitize::sanitize(name);
    Some((format!("headroom ended `{name}`"), body))
}

/// The last line: peak, limit (and who held it, `held`), what was done, the exit code.
#[cfg(unix)]
pub fn summary_line(s: &crate::actions::watchdog::Summary, held: Option<&str>) -> String {
    use crate::actions::watchdog::EndReason;
    let mut limit = human_bytes(s.limit_bytes);
    if let Some(h) = held {
        limit += &format!(" ({h})");
    }
    if s.lowest_effective_limit_bytes < s.limit_bytes {
        limit += &format!(
            " (lowered to {} under memory pressure)",
            human_bytes(s.lowest_effective_limit_bytes)
        );
    }
    let mut done: Vec<String> = Vec::new();
    if !s.forwarded.is_empty() {
        let names: Vec<&str> = s.forwarded.iter().map(|s| s.name()).collect();
        done.push(format!("forwarded {}", names.join(", ")));
    }
    if s.parked > 0 {
        done.push(format!(
            "parked {}",
            plural(s.parked as u64, "idle process")
        ));
    }
    let ended = match s.ended_by {
        Some(EndReason::Limit) => Some("over the limit"),
        Some(EndReason::Signal) => Some("still running after the forwarded signal"),
        Some(EndReason::Leftovers) => Some("left running after the command exited"),
        Some(EndReason::Timeout) => Some("past the --timeout"),
        Some(EndReason::ParentExited) => Some("the process that started headroom exited"),
        None => None,
    };
    if let Some(why) = ended {
        let mut what = format!("{why}: SIGTERM to {}", s.terminated);
        if s.killed > 0 {
            what += &format!(", SIGKILL to {}", s.killed);
        }
        done.push(what);
    } else if s.terminated > 0 {
        done.push(format!("over the limit: SIGTERM to {}", s.terminated));
    }
    if !s.spared.is_empty() {
        done.push(format!(
            "{} under the limit by then, not sent SIGKILL",
            plural(s.spared.len() as u64, "grace survivor")
        ));
    }
    if !s.survivors.is_empty() {
        let pids: Vec<String> = s.survivors.iter().map(|p| format!("`{p}`")).collect();
        done.push(format!("could not end pid {}", pids.join(", ")));
    }
    if done.is_empty() {
        done.push("nothing done".into());
    }
    let status = match s.command_status {
        Some(c) => match (c.exit_code, c.signal) {
            (Some(code), _) => format!("the command exited {code}"),
            (_, Some(sig)) => format!("the command was killed by signal {sig}"),
            _ => "the command ended".into(),
        },
        None => "the command's status is unknown".into(),
    };
    // A command that ended before the first sample saw it has no peak to report: say so
    // rather than "peak 0 B (0 processes)".
    let peak = if s.peak_processes == 0 {
        "too short to sample (the command ended before the first sample)".to_string()
    } else {
        format!(
            "peak {} ({})",
            human_bytes(s.peak_footprint_bytes),
            plural(s.peak_processes as u64, "process")
        )
    };
    format!(
        "{peak}, limit {limit}; {}; {status}; exit {}",
        done.join("; "),
        s.exit_code.code()
    )
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::actions::watchdog::{CommandStatus, EndReason, Summary};

    fn summary() -> Summary {
        Summary {
            at: "2026-12-01T00:00:00Z".into(),
            exit_code: ExitStatus::Child(7),
            command_status: Some(CommandStatus {
                exit_code: Some(7),
                signal: None,
            }),
            peak_footprint_bytes: 12 << 20,
            peak_processes: 1,
            limit_bytes: 100 << 20,
            lowest_effective_limit_bytes: 100 << 20,
            breaches: 0,
            parked: 0,
            ended_by: None,
            terminated: 0,
            killed: 0,
            spared: Vec::new(),
            forwarded: Vec::new(),
            survivors: Vec::new(),
            duration_ms: 10,
            samples: 1,
        }
    }

    #[test]
    fn a_command_too_short_to_sample_says_so() {
        let mut s = summary();
        s.peak_processes = 0;
        s.peak_footprint_bytes = 0;
        let l = summary_line(&s, None);
        assert!(l.starts_with("too short to sample"), "{l}");
        assert!(!l.contains("0 B"), "{l}");
        // Control: one sample of one process gives its peak.
        assert!(summary_line(&summary(), None).starts_with("peak 12 MiB (1 process)"));
        s.peak_processes = 2;
        s.peak_footprint_bytes = 3 << 29;
        s.parked = 1;
        let l = summary_line(&s, None);
        assert!(l.starts_with("peak 1.5 GiB (2 processes)"), "{l}");
        assert!(l.contains("parked 1 idle process;"), "{l}");
    }

    #[test]
    fn summary_line_names_peak_limit_action_and_code() {
        assert_eq!(
            summary_line(&summary(), None),
            "peak 12 MiB (1 process), limit 100 MiB; nothing done; the command exited 7; exit 7"
        );
        let mut s = summary();
        s.exit_code = ExitStatus::Signalled(9);
        s.command_status = Some(CommandStatus {
            exit_code: None,
            signal: Some(9),
        });
        s.peak_footprint_bytes = 301 << 20;
        s.peak_processes = 3;
        s.ended_by = Some(EndReason::Limit);
        s.terminated = 3;
        s.killed = 1;
        s.lowest_effective_limit_bytes = 90 << 20;
        let l = summary_line(&s, Some("held by the kernel, cgroup memory.max"));
        assert!(l.starts_with("peak 301 MiB (3 processes), limit 100 MiB (held by the kernel, cgroup memory.max) (lowered to 90 MiB under memory pressure)"), "{l}");
        assert!(
            l.contains("over the limit: SIGTERM to 3, SIGKILL to 1"),
            "{l}"
        );
        assert!(l.ends_with("killed by signal 9; exit 137"), "{l}");
    }
}
