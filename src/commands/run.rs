//! `headroom run --limit SIZE [--interval 200ms] [--grace 5s] -- CMD [ARGS...]`: run a
//! command with a memory limit on its whole process tree (`actions::watchdog` does the
//! work). stdout belongs to the command: everything headroom says goes to stderr, as a few
//! human lines or, with `--json`, as JSON Lines (`headroom.run/1`).

use std::time::Duration;

use anyhow::Result;

use crate::cli::RunArgs;
use crate::commands::Ctx;
use crate::exit::{self, UsageError, WithCode};
use crate::output::{Printer, human_bytes};

/// Polling faster than this buys nothing and costs CPU.
const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// `run`'s arguments, checked.
#[derive(Debug)]
struct RunPlan {
    limit: u64,
    interval: Duration,
    grace: Duration,
    command: Vec<std::ffi::OsString>,
}

fn plan(ctx: &Ctx<'_>, args: &RunArgs) -> Result<RunPlan> {
    if let Some(flag) = ctx.redirected() {
        return Err(UsageError(format!(
            "`run` starts a real command; it cannot run against `{flag}`"
        ))
        .into());
    }
    if args.interval < MIN_INTERVAL {
        return Err(UsageError(format!(
            "--interval `{}` is too short; use at least 10ms",
            humantime::format_duration(args.interval)
        ))
        .into());
    }
    if args.command.first().is_none_or(|c| c.is_empty()) {
        return Err(UsageError("no command given after `--`".into()).into());
    }
    Ok(RunPlan {
        limit: args.limit,
        interval: args.interval,
        grace: args.grace,
        command: args.command.clone(),
    })
}

#[cfg(not(unix))]
pub fn run(ctx: &Ctx<'_>, args: &RunArgs) -> Result<u8> {
    plan(ctx, args)?;
    Err(WithCode {
        code: exit::RUN_FAILED,
        message: format!("run: unsupported on {}", std::env::consts::OS),
    }
    .into())
}

#[cfg(unix)]
pub fn run(ctx: &Ctx<'_>, args: &RunArgs) -> Result<u8> {
    use crate::actions::watchdog::{self, Config};
    use crate::platform::supervise::{SpawnError, Supervisor};

    let plan = plan(ctx, args)?;
    let name = plan.command[0].to_string_lossy().into_owned();
    let failed = |message: String, code: u8| -> anyhow::Error { WithCode { code, message }.into() };
    let source = crate::platform::native();
    let control = crate::platform::native_control(source.as_ref());
    let mut sup = Supervisor::install()
        .map_err(|e| failed(format!("cannot set up supervision: {e}"), exit::RUN_FAILED))?;
    let cfg = Config {
        command: plan.command.clone(),
        limit: plan.limit,
        interval: plan.interval,
        grace: plan.grace,
    };
    let mut view = EventView::new(ctx.printer, plan.grace);
    let result = watchdog::run(
        source.as_ref(),
        control.as_ref(),
        &mut sup,
        &cfg,
        &mut |ev| view.show(ev),
    );
    drop(sup);
    match result {
        Ok(summary) => Ok(summary.exit_code),
        Err(SpawnError::NotFound(e)) => Err(failed(
            format!("`{name}`: command not found ({e})"),
            exit::RUN_NOT_FOUND,
        )),
        Err(SpawnError::NotExecutable(e)) => Err(failed(
            format!("`{name}` cannot be executed: {e}"),
            exit::RUN_NOT_EXECUTABLE,
        )),
        Err(SpawnError::Other(e)) => Err(failed(
            format!("cannot start `{name}`: {e}"),
            exit::RUN_FAILED,
        )),
    }
}

/// Renders the watchdog's events: every one as JSON Lines with `--json`; otherwise only
/// what a person must know (something parked or signalled, a warning, the last line).
#[cfg(unix)]
struct EventView<'p> {
    printer: &'p Printer,
    grace: Duration,
}

#[cfg(unix)]
impl<'p> EventView<'p> {
    fn new(printer: &'p Printer, grace: Duration) -> Self {
        Self { printer, grace }
    }

    fn show(&mut self, ev: &crate::actions::watchdog::Event) {
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
            } => line(format!(
                "the tree ({processes} processes) holds {}, at or over its limit of {}{}",
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
                if !pids.is_empty() {
                    let why = match (reason, *signal) {
                        (_, "SIGKILL") => "still there after the grace".to_string(),
                        (EndReason::Limit, _) => "over the limit".to_string(),
                        (EndReason::Signal, _) => {
                            "still running after the forwarded signal".to_string()
                        }
                        (EndReason::Leftovers, _) => {
                            "left running by the command, which has exited".to_string()
                        }
                    };
                    let then = if *signal == "SIGTERM" {
                        format!("; SIGKILL in {}", humantime::format_duration(self.grace))
                    } else {
                        String::new()
                    };
                    line(format!(
                        "{signal} to {} process{} of the tree ({why}){then}",
                        pids.len(),
                        if pids.len() == 1 { "" } else { "es" },
                    ));
                }
                for f in failed {
                    self.printer.warn(f);
                }
            }
            Event::Warning { message } => self.printer.warn(message),
            Event::Summary(s) => line(summary_line(s)),
            Event::Start { .. }
            | Event::ParkResult { .. }
            | Event::Forward { .. }
            | Event::JobControl { .. } => {}
        }
    }
}

/// The last line: peak, limit, what was done, the exit code.
#[cfg(unix)]
pub fn summary_line(s: &crate::actions::watchdog::Summary) -> String {
    use crate::actions::watchdog::EndReason;
    let mut limit = human_bytes(s.limit_bytes);
    if s.lowest_effective_limit_bytes < s.limit_bytes {
        limit += &format!(
            " (lowered to {} under memory pressure)",
            human_bytes(s.lowest_effective_limit_bytes)
        );
    }
    let mut done: Vec<String> = Vec::new();
    if !s.forwarded.is_empty() {
        done.push(format!("forwarded {}", s.forwarded.join(", ")));
    }
    if s.parked > 0 {
        done.push(format!("parked {} idle process(es)", s.parked));
    }
    let ended = match s.ended_by {
        Some(EndReason::Limit) => Some("over the limit"),
        Some(EndReason::Signal) => Some("still running after the forwarded signal"),
        Some(EndReason::Leftovers) => Some("left running after the command exited"),
        None => None,
    };
    if let Some(why) = ended {
        let mut what = format!("{why}: SIGTERM to {}", s.terminated);
        if s.killed > 0 {
            what += &format!(", SIGKILL to {}", s.killed);
        }
        done.push(what);
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
    format!(
        "peak {} ({} process{}), limit {limit}; {}; {status}; exit {}",
        human_bytes(s.peak_footprint_bytes),
        s.peak_processes,
        if s.peak_processes == 1 { "" } else { "es" },
        done.join("; "),
        s.exit_code
    )
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::actions::watchdog::{CommandStatus, EndReason, Summary};

    fn summary() -> Summary {
        Summary {
            schema: "headroom.run/1",
            exit_code: 7,
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
            forwarded: Vec::new(),
            survivors: Vec::new(),
            duration_ms: 10,
            samples: 1,
        }
    }

    #[test]
    fn summary_line_names_peak_limit_action_and_code() {
        assert_eq!(
            summary_line(&summary()),
            "peak 12 MiB (1 process), limit 100 MiB; nothing done; the command exited 7; exit 7"
        );
        let mut s = summary();
        s.exit_code = 137;
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
        let l = summary_line(&s);
        assert!(l.starts_with("peak 301 MiB (3 processes), limit 100 MiB (lowered to 90 MiB under memory pressure)"), "{l}");
        assert!(
            l.contains("over the limit: SIGTERM to 3, SIGKILL to 1"),
            "{l}"
        );
        assert!(l.ends_with("killed by signal 9; exit 137"), "{l}");
    }
}
