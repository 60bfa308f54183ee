//! `headroom idle-watch`: audit the liveness guard before trusting it. Polls, and shows for
//! every parent with a session child how the guard judges it right now. It never sends a
//! signal: this module holds no `ProcessControl` (a source-scan test keeps it that way).
//!
//! Read it as: a session you recognise as live must say `ACTIVE (protected)`. If one of your
//! live sessions is ever released, do not let `reap` run unattended.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::actions::session_assessment::{self, History};
use crate::cli::IdleWatchArgs;
use crate::commands::Ctx;
use crate::core::liveness::SessionVerdict;
use crate::core::process_table::ProcessTable;
use crate::core::snapshot::Detail;
use crate::core::time::format_ms;
use crate::exit::{ExitStatus, UsageError};
use crate::output::{Printer, human_duration, plural};
use crate::platform::stop_flag;
use crate::sanitize::sanitize;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct WatchedParent {
    pub pid: i32,
    pub name: String,
    pub zombies: u64,
    pub session_children: Vec<i32>,
    #[serde(serialize_with = "crate::schema::whole_seconds")]
    #[schemars(with = "Option<i64>")]
    pub cpu_idle_seconds: Option<f64>,
    #[serde(serialize_with = "crate::schema::whole_seconds")]
    #[schemars(with = "Option<i64>")]
    pub log_age_seconds: Option<f64>,
    /// `active`, `idle` or `unreadable`, judged against the watch threshold.
    pub verdict: SessionVerdict,
    /// Why the session could not be judged at all, when that is why it is `unreadable`.
    #[serde(skip)]
    pub blind: Option<crate::core::liveness::Blind>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct Poll {
    pub at: String,
    #[serde(serialize_with = "crate::schema::seconds")]
    #[schemars(with = "i64")]
    pub threshold_seconds: f64,
    pub zombies: u64,
    pub parents: Vec<WatchedParent>,
}

impl crate::schema::Document for Poll {
    const SCHEMA: &'static str = "headroom.idle-watch/2";
    const TYPE: Option<&'static str> = Some("poll");
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Summary")]
pub(crate) struct IdleWatchSummary {
    /// When the watch ended (RFC 3339, UTC).
    pub at: String,
    pub polls: u32,
    /// Parents the guard released at least once: check each is really finished.
    pub released: Vec<i32>,
    pub signals_sent: u32,
}

impl crate::schema::Document for IdleWatchSummary {
    const SCHEMA: &'static str = "headroom.idle-watch/2";
    const TYPE: Option<&'static str> = Some("summary");
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &IdleWatchArgs) -> Result<ExitStatus> {
    if args.duration < args.every {
        return Err(UsageError(format!(
            "--duration `{}` is shorter than --interval `{}`: the guard needs two readings to say anything",
            humantime::format_duration(args.duration),
            humantime::format_duration(args.every)
        ))
        .into());
    }
    let threshold_s = args.threshold.as_secs_f64();
    let active_fraction = ctx.settings.liveness.active_fraction();
    let source = ctx.source()?;
    stop_flag::install().context("idle-watch cannot handle SIGINT/SIGTERM")?;
    let history = if ctx.replaying() {
        History::None
    } else {
        History::live(crate::platform::current_uid())
    };
    if !ctx.printer.is_json() {
        ctx.printer.text(&format!(
            "idle-watch: {}, threshold {}, polling every {}; never sends a signal\n",
            humantime::format_duration(args.duration),
            humantime::format_duration(args.threshold),
            humantime::format_duration(args.every)
        ))?;
    }
    let start = Instant::now();
    let mut polls = 0u32;
    let mut released: Vec<i32> = Vec::new();
    loop {
        let snap = source
            .snapshot(Detail::Full)
            .context("cannot read the process table")?;
        let table = ProcessTable::new(&snap);
        let assessment =
            session_assessment::assess(source.as_ref(), &snap, &table, active_fraction, &history)?;
        for w in &assessment.warnings {
            ctx.printer.warn(w);
        }
        let zp = table.zombie_parents(snap.uid);
        let parents: Vec<WatchedParent> = zp
            .iter()
            .filter_map(|p| {
                let s = assessment.sessions.get(&p.pid)?;
                (!s.children.is_empty()).then(|| WatchedParent {
                    pid: p.pid,
                    name: p.name.clone(),
                    zombies: p.zombies,
                    session_children: s.children.clone(),
                    cpu_idle_seconds: s.cpu_idle_s.map(f64::round),
                    log_age_seconds: s.log_age_s.map(f64::round),
                    verdict: s.verdict(threshold_s),
                    blind: s.blind,
                })
            })
            .collect();
        for p in parents.iter().filter(|p| p.verdict == SessionVerdict::Idle) {
            if !released.contains(&p.pid) {
                released.push(p.pid);
            }
        }
        let poll = Poll {
            at: format_ms(snap.taken_at_ms),
            threshold_seconds: threshold_s,
            zombies: zp.iter().map(|p| p.zombies).sum(),
            parents,
        };
        if ctx.printer.is_json() {
            ctx.printer.json_value(&poll)?;
        } else {
            ctx.printer.text(&human(&poll))?;
        }
        polls += 1;
        if ctx.replaying() || start.elapsed() >= args.duration || stop_flag::requested().is_some() {
            break;
        }
        let next = args
            .every
            .min(args.duration.saturating_sub(start.elapsed()));
        wait(ctx.printer, next);
        if stop_flag::requested().is_some() {
            break;
        }
    }
    let summary = IdleWatchSummary {
        at: crate::core::time::format_ms(crate::platform::now_ms()),
        polls,
        released,
        signals_sent: 0,
    };
    if ctx.printer.is_json() {
        ctx.printer.json_value(&summary)?;
    } else {
        let released = if summary.released.is_empty() {
            "none".to_string()
        } else {
            summary
                .released
                .iter()
                .map(i32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        ctx.printer.text(&format!(
            "{}; released at least once: {released}; signals sent: 0\n",
            plural(polls, "poll")
        ))?;
    }
    Ok(crate::exit::after_stop(
        stop_flag::requested(),
        ExitStatus::Ok,
    ))
}

/// Sleep until the next poll, with a countdown on a terminal and nothing extra when piped.
fn wait(printer: &Printer, d: Duration) {
    if !printer.stderr_is_terminal() || printer.is_quiet() {
        stop_flag::sleep(d);
        return;
    }
    let bar = indicatif::ProgressBar::new(d.as_millis() as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} next poll in {msg} [{bar:30}]")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let start = Instant::now();
    while start.elapsed() < d && stop_flag::requested().is_none() {
        let left = d.saturating_sub(start.elapsed());
        bar.set_message(human_duration(left.as_secs_f64()));
        bar.set_position(start.elapsed().as_millis() as u64);
        stop_flag::sleep(left.min(Duration::from_millis(200)));
    }
    bar.finish_and_clear();
}

pub(crate) fn human(p: &Poll) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "--- {} — {}", p.at, plural(p.zombies, "zombie"));
    if p.parents.is_empty() {
        let _ = writeln!(s, "  no zombie parent has a session child");
    }
    let d = |v: Option<f64>| v.map_or("unknown".to_string(), human_duration);
    for x in &p.parents {
        let children = x
            .session_children
            .iter()
            .map(i32::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let verdict = match x.verdict {
            SessionVerdict::Active => "ACTIVE (protected)".to_string(),
            SessionVerdict::Idle => "IDLE (released)".to_string(),
            // Say which signal is missing: "unreadable" alone leaves the user guessing.
            SessionVerdict::Unreadable => {
                let why = match x.blind {
                    Some(b) => b.describe().to_string(),
                    None => {
                        [
                            x.cpu_idle_seconds.is_none().then_some("CPU idle"),
                            x.log_age_seconds.is_none().then_some("log age"),
                        ]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(" and ")
                            + " unknown"
                    }
                };
                format!("UNREADABLE: {why}, so no decision (protected)")
            }
            SessionVerdict::NoSession => "no session".to_string(),
        };
        let kids = if x.session_children.len() == 1 {
            "session child pid"
        } else {
            "session child pids"
        };
        let _ = writeln!(
            s,
            "  pid {} {} — {}, {kids} {children}, CPU idle {}, log age {} → {verdict}",
            x.pid,
            sanitize(&x.name),
            plural(x.zombies, "zombie"),
            d(x.cpu_idle_seconds),
            d(x.log_age_seconds)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent(children: Vec<i32>, cpu: Option<f64>, log: Option<f64>) -> WatchedParent {
        WatchedParent {
            pid: 42,
            name: "agency".into(),
            zombies: 3,
            session_children: children,
            cpu_idle_seconds: cpu,
            log_age_seconds: log,
            verdict: SessionVerdict::Unreadable,
            blind: None,
        }
    }

    fn line(x: WatchedParent) -> String {
        human(&Poll {
            at: "t".into(),
            threshold_seconds: 60.0,
            zombies: 3,
            parents: vec![x],
        })
    }

    #[test]
    fn session_children_are_named_as_pids_and_unreadable_says_which_signal() {
        let s = line(parent(vec![125], None, Some(30.0)));
        assert!(s.contains("session child pid 125,"), "{s}");
        assert!(
            s.contains("→ UNREADABLE: CPU idle unknown, so no decision (protected)"),
            "{s}"
        );
        let s = line(parent(vec![125, 126], Some(30.0), None));
        assert!(s.contains("session child pids 125, 126,"), "{s}");
        assert!(s.contains("UNREADABLE: log age unknown,"), "{s}");
        let mut b = parent(vec![125], Some(1.0), Some(1.0));
        b.blind = Some(crate::core::liveness::Blind::ChildStopped);
        assert!(line(b).contains("UNREADABLE: session child stopped,"));
        // Control: a judged session names no missing signal.
        let mut a = parent(vec![125], Some(1.0), Some(1.0));
        a.verdict = SessionVerdict::Active;
        let s = line(a);
        assert!(
            s.contains("→ ACTIVE (protected)") && !s.contains("unknown"),
            "{s}"
        );
    }

    /// The audit mode must stay unable to signal: no control handle, no termination.
    #[test]
    fn idle_watch_holds_no_means_to_signal() {
        let src = include_str!("idle_watch.rs");
        let code: String = src[..src.find("#[cfg(test)]").unwrap_or(src.len())]
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect();
        for forbidden in [
            "native_control",
            "ProcessControl",
            "terminate",
            "Signal::",
            "libc::kill",
        ] {
            assert!(
                !code.contains(forbidden),
                "idle_watch.rs mentions `{forbidden}`"
            );
        }
    }
}
