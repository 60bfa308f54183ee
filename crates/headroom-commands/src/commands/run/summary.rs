//! `run`'s last line: peak, limit and who held it, what was done, the exit code.

use crate::output::{human_bytes, plural};

/// The last line: peak, limit (and who held it, `held`), what was done, the exit code.
#[cfg(unix)]
pub(crate) fn summary_line(s: &crate::actions::watchdog::RunSummary, held: Option<&str>) -> String {
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
    use crate::actions::watchdog::{CommandStatus, EndReason, RunSummary};
    use crate::exit::ExitStatus;

    fn summary() -> RunSummary {
        RunSummary {
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
