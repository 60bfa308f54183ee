//! The table of tools that are commands: each entry names the command line its arguments
//! make (`run_limited` and `hangs_check` keep their entries in files of their own).

use super::{Effect, Spec, report_of};
use crate::actions::reap_report::ReapReport;
use crate::commands::doctor::DoctorReport;
use crate::commands::evidence::EvidenceReport;
use crate::commands::hangs::report::EventsReport;
use crate::commands::limits::LimitsReport;
use crate::commands::log_probe::LogProbeReport;
use crate::commands::park::ParkReport;
use crate::commands::probe::ProbeReport;
use crate::commands::top::TopReport;
use crate::config::{Settings, ToolGroup};
use crate::mcp::args::{
    LogProbeToolArgs, NoArgs, PidToolArgs, ProbeToolArgs, ReapToolArgs, SinceArgs, TopToolArgs,
    input_schema,
};

pub(super) const ALL: &[Spec] = &[
    Spec {
        name: "probe",
        title: "Process slots left",
        description: "One reading of the current user's process slots: used, effective \
limit and which ceiling binds, level (normal/warning/critical/unknown), zombie parents, \
growth and the time left before fork() fails. Records the reading in headroom's own history \
(for the trend) unless no_history.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: true,
        needs_gui: false,
        input: input_schema::<ProbeToolArgs>,
        output: report_of::<ProbeReport>,
        call: |t, s, c, a| {
            t.command::<ProbeToolArgs, ProbeReport>(s, c, a, |a, _, _| {
                let mut v = vec!["probe".to_string()];
                if a.no_history {
                    v.push("--no-history".into());
                }
                v
            })
        },
    },
    Spec {
        name: "limits",
        title: "Process-slot ceilings",
        description: "Every process-slot ceiling of this machine: its value, where it was \
read, whether it binds, and the traps that apply here.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: true,
        needs_gui: false,
        input: input_schema::<NoArgs>,
        output: report_of::<LimitsReport>,
        call: |t, s, c, a| {
            t.command::<NoArgs, LimitsReport>(s, c, a, |_, _, _| vec!["limits".into()])
        },
    },
    Spec {
        name: "top",
        title: "Process trees by memory",
        description: "One row per process tree the user owns, largest footprint first, with \
growth and CPU over two samples 500 ms apart, park candidates and a reason code \
(PARK_IDLE, GROWTH_RATE, PRESSURE, NONE); optionally only the tree of one pid.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: false,
        needs_gui: false,
        input: input_schema::<TopToolArgs>,
        output: report_of::<TopReport>,
        call: |t, s, c, a| {
            t.command::<TopToolArgs, TopReport>(s, c, a, |a, _, _| {
                let mut v = vec!["top".to_string()];
                v.extend(a.pid.map(|p| format!("--pid={}", p.0)));
                v.extend(a.park_min_mb.map(|m| format!("--park-min-mb={}", m.0)));
                v
            })
        },
    },
    Spec {
        name: "evidence",
        title: "Evidence log summary",
        description: "Summarise the evidence log: peak usage, lowest free slots, shortest \
ETA, every cleanup, and rows that could not be read; optionally only the last `since`.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: false,
        needs_gui: false,
        input: input_schema::<SinceArgs>,
        output: report_of::<EvidenceReport>,
        call: |t, s, c, a| {
            t.command::<SinceArgs, EvidenceReport>(s, c, a, |a, _, _| {
                let mut v = vec!["evidence".to_string()];
                v.extend(a.since.map(|s| format!("--since={s}")));
                v
            })
        },
    },
    Spec {
        name: "log_probe",
        title: "Is this session still working?",
        description: "What the session-log reader makes of one log directory, file by file: \
work N ago, heartbeat only, unknown or skipped, and the directory's verdict; optionally as \
of an archived instant `at`.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: false,
        needs_gui: false,
        input: input_schema::<LogProbeToolArgs>,
        output: report_of::<LogProbeReport>,
        call: |t, s, c, a| {
            t.command::<LogProbeToolArgs, LogProbeReport>(s, c, a, |a, _, _| {
                let mut v = vec!["log-probe".to_string()];
                v.extend(a.at.map(|s| format!("--at={s}")));
                v.extend(["--".to_string(), a.dir]);
                v
            })
        },
    },
    Spec {
        name: "hangs_events",
        title: "GUI hang history",
        description: "The history of apps macOS marked not responding (detected, restarted, \
restart-failed, blocked); optionally only the last `since`. Empty where nothing was \
recorded (any OS).",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: false,
        needs_gui: false,
        input: input_schema::<SinceArgs>,
        output: report_of::<EventsReport>,
        call: |t, s, c, a| {
            t.command::<SinceArgs, EventsReport>(s, c, a, |a, _, _| {
                let mut v = vec!["hangs".to_string(), "--events".into()];
                v.extend(a.since.map(|s| format!("--since={s}")));
                v
            })
        },
    },
    Spec {
        name: "doctor",
        title: "Is headroom reading this machine right?",
        description: "headroom doctor: each reading checked against the system's own tool \
(processes and zombies against ps, every ceiling against sysctl/ulimit/the kernel's files, a \
child's CPU time and footprint against ps, the state directory, the login item, whether \
notifications can be posted, the WindowServer interface), each ok, mismatch or skipped (why) \
with both values. The checks that start a process (ps, a login shell, sysctl, launchctl, a \
child burning CPU for a moment) run only when this server offers the run tools; otherwise \
they are skipped and say so. Not for use when the machine is at the wall.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: true,
        needs_gui: false,
        input: input_schema::<NoArgs>,
        output: report_of::<DoctorReport>,
        call: |t, s, c, a| {
            t.command::<NoArgs, DoctorReport>(s, c, a, |_, _, sel| {
                let mut v = vec!["doctor".to_string()];
                if !sel.may_start_processes() {
                    v.push("--no-exec".into());
                }
                v
            })
        },
    },
    Spec {
        name: "explain_reap",
        title: "What reap would do",
        description: "reap --dry-run: the decision table for every parent holding the user's \
zombies under the configured policy (narrowed by the arguments), each with its verdict and \
the stable name of the rule that decided it. Signals nothing; writes only headroom's own CPU \
history of session children (cpu-history.json in its state directory), which the idle \
judgement of the next reap needs.",
        group: ToolGroup::Read,
        effect: Effect::Reads,
        level_exit: false,
        needs_gui: false,
        input: input_schema::<ReapToolArgs>,
        output: report_of::<ReapReport>,
        call: |t, s, c, a| {
            t.command::<ReapToolArgs, ReapReport>(s, c, a, |a, st, _| reap_argv(a, st, true))
        },
    },
    Spec {
        name: "reap",
        title: "Reap zombie-leaking parents",
        description: "Terminate the parents the configured policy approves (SIGTERM, grace, \
SIGKILL only for the same process), then verify their zombies are gone. Arguments can only \
narrow the policy: more deny patterns, fewer targets, more zombies required. Call \
explain_reap first.",
        group: ToolGroup::Act,
        effect: Effect::Acts {
            destructive: true,
            idempotent: false,
        },
        level_exit: false,
        needs_gui: false,
        input: input_schema::<ReapToolArgs>,
        output: report_of::<ReapReport>,
        call: |t, s, c, a| {
            t.command::<ReapToolArgs, ReapReport>(s, c, a, |a, st, _| reap_argv(a, st, false))
        },
    },
    Spec {
        name: "park",
        title: "Park a process",
        description: "Stop one process with SIGSTOP so its memory can be reclaimed; wake \
continues it. Refused for pid <= 1, another user's process, headroom and its ancestors \
(which include the agent running this server).",
        group: ToolGroup::Act,
        effect: Effect::Acts {
            destructive: true,
            idempotent: true,
        },
        level_exit: false,
        needs_gui: false,
        input: input_schema::<PidToolArgs>,
        output: report_of::<ParkReport>,
        call: |t, s, c, a| {
            t.command::<PidToolArgs, ParkReport>(s, c, a, |a, _, _| pid_argv("park", &a))
        },
    },
    Spec {
        name: "wake",
        title: "Wake a process",
        description: "Continue one stopped process with SIGCONT. Same refusals as park.",
        group: ToolGroup::Act,
        effect: Effect::Acts {
            destructive: false,
            idempotent: true,
        },
        level_exit: false,
        needs_gui: false,
        input: input_schema::<PidToolArgs>,
        output: report_of::<ParkReport>,
        call: |t, s, c, a| {
            t.command::<PidToolArgs, ParkReport>(s, c, a, |a, _, _| pid_argv("wake", &a))
        },
    },
    Spec {
        name: "park_tree",
        title: "Park a process tree",
        description: "Stop a whole process tree, root first, children that appear meanwhile \
too; each member is checked as park checks one process. wake_tree undoes it.",
        group: ToolGroup::Act,
        effect: Effect::Acts {
            destructive: true,
            idempotent: true,
        },
        level_exit: false,
        needs_gui: false,
        input: input_schema::<PidToolArgs>,
        output: report_of::<ParkReport>,
        call: |t, s, c, a| {
            t.command::<PidToolArgs, ParkReport>(s, c, a, |a, _, _| pid_argv("park-tree", &a))
        },
    },
    Spec {
        name: "wake_tree",
        title: "Wake a process tree",
        description: "Continue a whole stopped process tree, leaves first. Same refusals as \
park.",
        group: ToolGroup::Act,
        effect: Effect::Acts {
            destructive: false,
            idempotent: true,
        },
        level_exit: false,
        needs_gui: false,
        input: input_schema::<PidToolArgs>,
        output: report_of::<ParkReport>,
        call: |t, s, c, a| {
            t.command::<PidToolArgs, ParkReport>(s, c, a, |a, _, _| pid_argv("wake-tree", &a))
        },
    },
    super::hangs_check::SPEC,
    super::run_limited::SPEC,
    super::run_tasks::START,
    super::run_tasks::STATUS,
    super::run_tasks::TERMINATE,
    super::run_tasks::LIST,
];

fn pid_argv(cmd: &str, a: &PidToolArgs) -> Vec<String> {
    vec![cmd.to_string(), "--".into(), a.pid.0.to_string()]
}

/// `reap`'s command line: the configured policy, narrowed. `--deny` replaces the configured
/// list on the command line, so the configured patterns are repeated before the added ones;
/// `--allow`, `--grace` and `--idle-threshold` are never passed.
pub(crate) fn reap_argv(a: ReapToolArgs, s: &Settings, dry_run: bool) -> Vec<String> {
    let mut v = vec!["reap".to_string()];
    if dry_run {
        v.push("--dry-run".into());
    }
    let added = a.deny.into_iter().filter(|p| !p.trim().is_empty());
    for p in s.reap.deny.value.iter().cloned().chain(added) {
        v.push(format!("--deny={p}"));
    }
    if let Some(m) = a.max_targets {
        v.push(format!(
            "--max-targets={}",
            m.0.min(s.reap.max_targets.value)
        ));
    }
    if let Some(m) = a.min_zombies {
        v.push(format!(
            "--min-zombies={}",
            m.0.max(s.reap.min_zombies.value)
        ));
    }
    if a.no_emergency {
        v.push("--no-emergency".into());
    }
    v
}
