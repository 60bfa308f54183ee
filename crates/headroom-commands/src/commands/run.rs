//! `headroom run --limit SIZE [--interval 200ms] [--grace 5s] -- CMD [ARGS...]`: run a
//! command with a memory limit on its whole process tree (`actions::watchdog` does the
//! work). stdout belongs to the command: everything headroom says goes to stderr, as a few
//! human lines or, with `--json`, as JSON Lines (`headroom.run/1`).

#[cfg(unix)]
mod event_view;
#[cfg(unix)]
mod summary;

use std::time::Duration;

use anyhow::Result;

use crate::cli::RunArgs;
use crate::commands::Ctx;
use crate::exit::{ExitStatus, Failure, UsageError};
#[cfg(unix)]
use event_view::{EventView, ended_notice};
#[cfg(unix)]
pub(crate) use summary::summary_line;

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
pub(crate) fn run(ctx: &Ctx<'_>, args: &RunArgs) -> Result<ExitStatus> {
    plan(ctx, args)?;
    Err(Failure::RunFailed(format!("run: unsupported on {}", std::env::consts::OS)).into())
}

#[cfg(unix)]
pub(crate) fn run(ctx: &Ctx<'_>, args: &RunArgs) -> Result<ExitStatus> {
    use crate::actions::watchdog;
    use crate::platform::supervise::SpawnError;

    use super::run_enforce;

    let plan = plan(ctx, args)?;
    let name = plan.command[0].to_string_lossy().into_owned();
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
    let mut sup = supervisor(args.die_with_parent)?;
    let cfg = watchdog_config(ctx, args, &plan);
    let mut kernel_kills;
    let result = loop {
        arm(ctx, &mut sup, cap.as_ref(), &proc_root, &mut enforcement)?;
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
        Err(e) => Err(not_started(&name, e, enforcement.cgroup.as_deref())),
    }
}

#[cfg(unix)]
fn failed(message: String, kind: fn(String) -> Failure) -> anyhow::Error {
    kind(message).into()
}

/// Supervision set up (and, with `--die-with-parent`, watching the parent) before the
/// command starts.
#[cfg(unix)]
fn supervisor(die_with_parent: bool) -> Result<crate::platform::supervise::Supervisor> {
    use crate::platform::supervise::Supervisor;

    let mut sup = Supervisor::install().map_err(|e| {
        failed(
            format!("cannot set up supervision: {e}"),
            Failure::RunFailed,
        )
    })?;
    if die_with_parent {
        sup.watch_parent().map_err(|e| {
            failed(
                format!("--die-with-parent: cannot watch the parent process: {e}"),
                Failure::RunFailed,
            )
        })?;
    }
    Ok(sup)
}

/// What the watchdog is told: the plan, and the warning and notification settings.
#[cfg(unix)]
fn watchdog_config(
    ctx: &Ctx<'_>,
    args: &RunArgs,
    plan: &RunPlan,
) -> crate::actions::watchdog::WatchdogConfig {
    crate::actions::watchdog::WatchdogConfig {
        command: plan.command.clone(),
        limit: plan.limit,
        interval: plan.interval,
        grace: plan.grace,
        warn_pct: args.warn.unwrap_or(ctx.settings.memory.warn_pct.value),
        notify: ctx.settings.notifications.enabled.value,
        timeout: plan.timeout,
    }
}

/// Before each start of the command: the cgroup it joins at exec (with a kernel cap), and
/// the memory pressure that wakes the watchdog, described in `enforcement`.
#[cfg(unix)]
fn arm(
    ctx: &Ctx<'_>,
    sup: &mut crate::platform::supervise::Supervisor,
    cap: Option<&super::run_enforce::KernelCap>,
    proc_root: &std::path::Path,
    enforcement: &mut super::run_enforce::Enforcement,
) -> Result<()> {
    if let Some(c) = cap {
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
        super::run_enforce::pressure_source(cap, proc_root)
    };
    enforcement.pressure = Some(pressure.describe());
    sup.wake_on_pressure(pressure);
    Ok(())
}

/// The error of a command that never ran, naming it (and the cgroup it could not join).
#[cfg(unix)]
fn not_started(
    name: &str,
    e: crate::platform::supervise::SpawnError,
    cgroup: Option<&str>,
) -> anyhow::Error {
    use crate::platform::supervise::SpawnError;

    match e {
        SpawnError::NotFound(e) => failed(
            format!("`{name}`: command not found ({e})"),
            Failure::NotFound,
        ),
        SpawnError::NotExecutable(e) => failed(
            // exec of a directory fails with EACCES, which would read as a permission problem.
            if name.contains('/') && std::path::Path::new(name).is_dir() {
                format!("`{name}` is a directory, not a command")
            } else {
                format!("`{name}` cannot be executed: {e}")
            },
            Failure::NotExecutable,
        ),
        SpawnError::Other(e) => failed(format!("cannot start `{name}`: {e}"), Failure::RunFailed),
        SpawnError::Cgroup(e) => failed(
            format!(
                "--enforce kernel: `{name}` could not join {}: {e}",
                cgroup.unwrap_or("its cgroup")
            ),
            Failure::RunFailed,
        ),
    }
}
