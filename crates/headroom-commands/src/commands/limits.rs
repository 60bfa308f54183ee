//! `headroom limits`: every ceiling on its own line, and the traps that make the obvious
//! number the wrong one.

use std::fmt::Write as _;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::cli::LimitsArgs;
use crate::commands::Ctx;
use crate::core::limits::{
    CeilingEval, CeilingStatus, LimitSource, PerUidTrap, per_uid_and_rlimit, per_uid_trap, usable,
};
use crate::core::reading::{self, Reading};
use crate::core::slot_reading::SlotReading;
use crate::core::snapshot::Detail;
use crate::core::snapshot::Snapshot;
use crate::exit::ExitStatus;
use crate::output::{Printer, Style, plural, thousands};

/// The `headroom.limits/2` report: the reading the ceilings are judged against, then each
/// ceiling and the traps.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LimitsReport {
    /// The reading, as `probe`, `watch`, `reap` and the evidence log print it too (no
    /// trend: `limits` keeps no history).
    #[serde(flatten)]
    pub reading: SlotReading,
    pub os: String,
    pub ceilings: Vec<CeilingEval>,
    /// Explanations of the traps that apply to this machine.
    pub notes: Vec<String>,
    /// The memory-pressure signal `watch` and `run --limit` wake on here (`psi (…)`,
    /// `dispatch (…)`, `poll (why)`); armed to check that the OS accepts it. Null in a replay.
    pub memory_pressure: Option<String>,
}

impl crate::schema::Document for LimitsReport {
    const SCHEMA: &'static str = "headroom.limits/2";
    const TYPE: Option<&'static str> = Some("limits");
}

impl LimitsReport {
    pub(crate) fn new(
        snap: &Snapshot,
        r: &Reading,
        notes: Vec<String>,
        memory_pressure: Option<String>,
    ) -> Self {
        Self {
            reading: SlotReading::new(r, None),
            os: snap.os.clone(),
            ceilings: r.limit.ceilings.clone(),
            notes,
            memory_pressure,
        }
    }
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &LimitsArgs) -> Result<ExitStatus> {
    let thresholds = ctx.thresholds(&args.thresholds)?;
    let snap = ctx
        .source()?
        .snapshot(Detail::Slots)
        .context("cannot read the process table")?;
    let r = reading::read(&snap, thresholds);
    let notes = traps(&snap, &r);
    #[cfg(target_os = "linux")]
    let notes = {
        let mut notes = notes;
        if crate::platform::signal_delivery() == crate::platform::SignalPath::Kill {
            notes.push(
                "pidfds are unavailable here (Linux before 5.3, or a seccomp filter): `reap` and the guards signal \
                 with a plain `kill` after the identity check, so a pid reused in the instant between cannot be excluded."
                    .into(),
            );
        }
        notes
    };
    let report = LimitsReport::new(&snap, &r, notes, memory_pressure(ctx));
    if ctx.printer.is_json() {
        ctx.printer.json_value(&report)?;
    } else {
        ctx.printer.text(&human(&report, ctx.printer))?;
    }
    Ok(report.reading.level.into())
}

fn memory_pressure(ctx: &Ctx<'_>) -> Option<String> {
    if ctx.replaying() {
        return None;
    }
    #[cfg(unix)]
    {
        Some(ctx.pressure_source().describe())
    }
    #[cfg(not(unix))]
    {
        Some("poll (no memory-pressure signal on this OS)".into())
    }
}

/// The two real traps, when they apply.
pub(crate) fn traps(snap: &Snapshot, r: &Reading) -> Vec<String> {
    let mut notes = Vec::new();
    if snap.os == "macos" {
        if let Some((per_uid, rl)) = per_uid_and_rlimit(&r.limit) {
            match per_uid_trap(per_uid, rl) {
                Some(PerUidTrap::InheritedRlimit) => {
                    notes.push(format!(
                        "kern.maxprocperuid ({}) is above this session's RLIMIT_NPROC ({}): raising the sysctl does not \
                         raise the limit processes inherited at login. Check `launchctl limit maxproc`; raise it with \
                         `sudo launchctl limit maxproc <soft> <hard>` and log in again.",
                        thousands(per_uid as u64),
                        thousands(rl as u64)
                    ));
                }
                Some(PerUidTrap::SetrlimitCut) => {
                    // Not the trap above (doctor tells them apart by the first word).
                    notes.push(format!(
                        "RLIMIT_NPROC ({}) is above kern.maxprocperuid ({}): fork checks only RLIMIT_NPROC and \
                         kern.maxproc, so the sysctl is not the limit here; but a non-root setrlimit(RLIMIT_NPROC), \
                         such as `ulimit -u` in a shell, is cut to {}, which then binds that process and its children.",
                        thousands(rl as u64),
                        thousands(per_uid as u64),
                        thousands(per_uid as u64)
                    ));
                }
                None => {}
            }
        }
        if r.uid == 0 {
            notes.push("root is exempt from the per-uid process limits on macOS.".into());
        }
    } else if r.uid == 0 {
        notes.push(
            "root is not subject to RLIMIT_NPROC on Linux: its value here constrains nothing; only the system-wide \
             ceilings apply to uid 0. Run as the user whose slots you care about."
                .into(),
        );
    } else if let Some(c) = r
        .limit
        .ceilings
        .iter()
        .find(|c| c.ceiling.source == LimitSource::RlimitNproc && !c.ceiling.enforced)
    {
        notes.push(format!(
            "RLIMIT_NPROC is not enforced for this process ({}); other processes of the user may still be held to it.",
            c.ceiling.note.as_deref().unwrap_or("exempt")
        ));
    }
    if r.limit.incomplete() {
        notes.push(
            "a ceiling could not be read and may bind lower: the effective limit is at most the one shown, and a level below warning is unknown."
                .into(),
        );
    }
    if r.limit.limit.is_none() {
        notes
            .push("no ceiling could be read: the limit is unknown (never treated as full).".into());
    }
    notes
}

fn describe(c: &CeilingEval) -> String {
    let value = c
        .ceiling
        .value
        .map_or_else(|| "unreadable".to_string(), |v| thousands(v.max(0) as u64));
    match c.status {
        CeilingStatus::Constrains => value,
        CeilingStatus::Unreadable => "unreadable (not counted; may be lower)".into(),
        CeilingStatus::NonPositive => {
            format!("{} (≤ 0: does not constrain)", c.ceiling.value.unwrap_or(0))
        }
        CeilingStatus::Unlimited => "unlimited".into(),
        CeilingStatus::NotEnforced => {
            if c.ceiling.unlimited {
                "unlimited (not enforced)".into()
            } else {
                format!("{value} (not enforced)")
            }
        }
        CeilingStatus::UsageUnknown => {
            format!("{value} (current use unreadable: not counted; may be lower)")
        }
    }
}

pub(crate) fn human(report: &LimitsReport, p: &Printer) -> String {
    let r = &report.reading;
    let mut s = String::new();
    let unit = if r.tasks.is_some() { "task" } else { "process" };
    let _ = writeln!(
        s,
        "{} for uid {} ({}): {} in use",
        p.paint("process-slot ceilings", Style::Bold),
        r.uid,
        report.os,
        plural(r.used, unit)
    );
    let width = crate::platform::screen_width();
    // Narrow (procs and btm do the same): the value column as wide as its values, and where
    // each was read on the lines under it instead of to the right.
    let narrow = width.is_some_and(|w| w < 100);
    let value_width = if narrow {
        report
            .ceilings
            .iter()
            .map(|c| describe(c).chars().count())
            .max()
            .unwrap_or(0)
    } else {
        34
    };
    for c in &report.ceilings {
        let head = format!(
            "  {:<13} {:<value_width$}",
            c.ceiling.source.as_str(),
            describe(c)
        );
        let mut tail = c.ceiling.origin.clone();
        if let (Some(eff), Some(in_use)) = (c.effective, c.ceiling.in_use) {
            if c.ceiling.value.is_some_and(|v| v as u64 != eff) {
                // The last slot of kern.maxproc is root's (xnu fork1).
                let last = match c.ceiling.value {
                    Some(v) if usable(c.ceiling.source, v as u64, r.uid) < v as u64 => {
                        ", the last slot kept for root"
                    }
                    _ => "",
                };
                let _ = write!(
                    tail,
                    " ({} in use by everyone{last}: {} left for this user)",
                    thousands(in_use),
                    thousands(eff)
                );
            }
        }
        if let Some(note) = &c.ceiling.note {
            if c.status != CeilingStatus::Unlimited || !note.starts_with("no ") {
                let _ = write!(tail, " — {note}");
            }
        }
        let binds = if c.binds {
            format!("  {}", p.paint("BINDS", Style::Bold))
        } else {
            String::new()
        };
        if narrow {
            let _ = writeln!(s, "{}{binds}", head.trim_end());
            let _ = writeln!(s, "      {tail}");
        } else {
            let _ = writeln!(s, "{head} {tail}{binds}");
        }
    }
    match (r.limit, r.limit_source) {
        (Some(l), Some(src)) => {
            let _ = writeln!(
                s,
                "effective limit: {} ({src}), level {}",
                thousands(l),
                r.level.as_str()
            );
        }
        _ => {
            let _ = writeln!(s, "effective limit: unknown, level unknown");
        }
    }
    if let Some(m) = &report.memory_pressure {
        let _ = writeln!(s, "memory pressure source: {m}");
    }
    for n in &report.notes {
        let _ = writeln!(s, "note: {n}");
    }
    match width {
        Some(w) => crate::output::screen::wrap_all(&s, w),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::limits::{Ceiling, LimitSource, Scope};

    fn eval(value: Option<i64>, status: CeilingStatus) -> CeilingEval {
        CeilingEval {
            ceiling: Ceiling {
                source: LimitSource::RlimitNproc,
                value,
                unlimited: false,
                scope: Scope::User,
                in_use: None,
                origin: "getrlimit".into(),
                enforced: false,
                note: None,
            },
            status,
            effective: None,
            binds: false,
        }
    }

    #[test]
    fn a_value_not_read_says_so_instead_of_leaving_the_column_blank() {
        let d = describe(&eval(None, CeilingStatus::NotEnforced));
        assert_eq!(d, "unreadable (not enforced)");
        // Control: a value read is shown.
        let d = describe(&eval(Some(96_363), CeilingStatus::NotEnforced));
        assert_eq!(d, "96,363 (not enforced)");
    }
}
