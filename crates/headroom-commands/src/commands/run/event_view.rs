//! What `run` says while the tree runs: the watchdog's events as JSON Lines or the few
//! lines a person must see, and the notification after the tree was ended.

use std::time::Duration;

use super::{RunPlan, summary_line};
use crate::output::{Printer, human_bytes, plural};

/// Renders the watchdog's events: every one as JSON Lines with `--json`; otherwise only
/// what a person must know (something parked or signalled, a warning, the last line).
#[cfg(unix)]
pub(super) struct EventView<'p> {
    printer: &'p Printer,
    grace: Duration,
    enforcement: &'p crate::commands::run_enforce::Enforcement,
    /// The kernel's cap, ended and reported just before the summary.
    cap: Option<&'p mut crate::commands::run_enforce::KernelCap>,
    /// Processes the kernel's OOM killer ended in the cap's cgroup.
    pub(super) kernel_kills: u64,
}

#[cfg(unix)]
impl<'p> EventView<'p> {
    pub(super) fn new(
        printer: &'p Printer,
        plan: &RunPlan,
        enforcement: &'p crate::commands::run_enforce::Enforcement,
        cap: Option<&'p mut crate::commands::run_enforce::KernelCap>,
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
    pub(super) fn show(&mut self, ev: &crate::actions::watchdog::RunEvent) {
        use crate::actions::watchdog::RunEvent;
        let json = self.printer.is_json();
        if let RunEvent::Summary(_) = ev {
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
        if let RunEvent::Start { .. } = ev {
            if json {
                self.printer.stderr_json(self.enforcement);
            }
        }
    }

    fn show_watchdog(&mut self, ev: &crate::actions::watchdog::RunEvent) {
        use crate::actions::watchdog::RunEvent;
        if self.printer.is_json() {
            self.printer.stderr_json(ev);
            return;
        }
        let line = |s: String| self.printer.stderr_line(&format!("headroom: {s}"));
        match ev {
            RunEvent::Breach {
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
            RunEvent::Park {
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
            RunEvent::ParkResult {
                relieved: true,
                footprint_bytes,
                effective_limit_bytes,
                ..
            } => line(format!(
                "parking relieved the tree: {} < {}; still watching",
                human_bytes(*footprint_bytes),
                human_bytes(*effective_limit_bytes)
            )),
            RunEvent::Signal {
                signal,
                reason,
                pids,
                failed,
                ..
            } => {
                if !pids.is_empty() {
                    line(signal_line(*signal, reason, pids.len(), self.grace));
                }
                for f in failed {
                    self.printer.warn(f);
                }
            }
            RunEvent::Spared { pids, .. } => line(format!(
                "{} process{} still running after the grace, but under the limit now: \
                 not sent SIGKILL",
                pids.len(),
                if pids.len() == 1 { "" } else { "es" },
            )),
            RunEvent::Warning { message, .. } => self.printer.warn(message),
            RunEvent::ApproachingLimit {
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
            RunEvent::Summary(_) if self.printer.is_quiet() => {}
            RunEvent::Summary(s) => line(summary_line(s, self.enforcement.held().as_deref())),
            RunEvent::Start { .. }
            | RunEvent::ParkResult { .. }
            | RunEvent::Forward { .. }
            | RunEvent::JobControl { .. } => {}
        }
    }
}

/// What a signal to `n` processes of the tree says: the signal, why, and what follows.
#[cfg(unix)]
fn signal_line(
    signal: crate::platform::Signal,
    reason: &crate::actions::watchdog::EndReason,
    n: usize,
    grace: Duration,
) -> String {
    use crate::actions::watchdog::EndReason;
    use crate::platform::Signal;
    let why = match (reason, signal) {
        (_, Signal::Kill) => "still there after the grace".to_string(),
        (EndReason::Limit, _) => "over the limit".to_string(),
        (EndReason::Signal, _) => "still running after the forwarded signal".to_string(),
        (EndReason::Leftovers, _) => "left running by the command, which has exited".to_string(),
        (EndReason::Timeout, _) => "past the --timeout".to_string(),
        (EndReason::ParentExited, _) => "the process that started headroom has exited".to_string(),
    };
    let then = if signal == Signal::Term && *reason == EndReason::Limit {
        format!(
            "; SIGKILL in {} to those left, if still over the limit",
            humantime::format_duration(grace)
        )
    } else if signal == Signal::Term {
        format!("; SIGKILL in {}", humantime::format_duration(grace))
    } else {
        String::new()
    };
    format!(
        "{} to {} process{} of the tree ({why}){then}",
        signal.name(),
        n,
        if n == 1 { "" } else { "es" },
    )
}

/// The notification after the tree was ended (by headroom or by the kernel): what and why.
#[cfg(unix)]
pub(super) fn ended_notice(
    name: &str,
    s: &crate::actions::watchdog::RunSummary,
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::signal_line;
    use crate::actions::watchdog::EndReason;
    use crate::platform::Signal;

    /// No integration test reaches these lines (they need a tree ended for each reason).
    #[test]
    fn a_signal_to_the_tree_says_why_and_what_follows() {
        let grace = Duration::from_secs(5);
        assert_eq!(
            signal_line(Signal::Term, &EndReason::Limit, 3, grace),
            "SIGTERM to 3 processes of the tree (over the limit); SIGKILL in 5s to those left, \
             if still over the limit"
        );
        assert_eq!(
            signal_line(Signal::Term, &EndReason::Timeout, 1, grace),
            "SIGTERM to 1 process of the tree (past the --timeout); SIGKILL in 5s"
        );
        assert_eq!(
            signal_line(Signal::Kill, &EndReason::Limit, 2, grace),
            "SIGKILL to 2 processes of the tree (still there after the grace)"
        );
        assert_eq!(
            signal_line(Signal::Term, &EndReason::ParentExited, 1, grace),
            "SIGTERM to 1 process of the tree (the process that started headroom has exited); \
             SIGKILL in 5s"
        );
    }
}
