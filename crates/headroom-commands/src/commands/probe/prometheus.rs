//! `probe --format prometheus`: the reading as the text exposition format's gauges, an
//! unknown value left out rather than written as a number.

use std::fmt::Write as _;

use super::ProbeReport;
use crate::core::limits::LimitSource;
use crate::exit::ExitStatus;

/// node_exporter textfile format (no timestamps; unknown values are left out).
pub(crate) fn prometheus(rep: &ProbeReport) -> String {
    let r = &rep.reading;
    let mut s = String::new();
    let uid = format!("uid=\"{}\"", r.uid);
    let src = r.limit_source.map_or("unknown", LimitSource::as_str);
    let with_src = format!("{uid},limit_source=\"{src}\"");
    let mut gauge = |name: &str, help: &str, labels: &str, value: Option<f64>| {
        let _ = writeln!(s, "# HELP headroom_{name} {help}");
        let _ = writeln!(s, "# TYPE headroom_{name} gauge");
        if let Some(v) = value {
            let _ = writeln!(s, "headroom_{name}{{{labels}}} {v}");
        }
    };
    gauge(
        "processes",
        "Processes owned by the user's real uid, zombies included.",
        &uid,
        Some(r.processes as f64),
    );
    gauge(
        "tasks",
        "Tasks (threads) of those processes; what RLIMIT_NPROC counts on Linux.",
        &uid,
        r.tasks.map(|t| t as f64),
    );
    gauge(
        "zombies",
        "Zombie processes of the user.",
        &uid,
        Some(r.zombies as f64),
    );
    gauge(
        "limit",
        "Effective slot limit: the lowest readable ceiling.",
        &with_src,
        r.limit.map(|l| l as f64),
    );
    gauge(
        "free_slots",
        "Slots left before fork() fails.",
        &with_src,
        r.free_slots.map(|f| f as f64),
    );
    gauge(
        "usage_ratio",
        "Used slots divided by the effective limit.",
        &with_src,
        r.usage_pct.map(|p| p / 100.0),
    );
    gauge(
        "level",
        "0 normal, 1 warning, 2 critical, 3 unknown.",
        &uid,
        Some(f64::from(ExitStatus::from(r.level).code())),
    );
    gauge(
        "growth_per_minute",
        "Slot growth over the last 10 minutes (least squares).",
        &uid,
        r.growth_per_min,
    );
    gauge(
        "eta_seconds",
        "Seconds until the limit at the current growth.",
        &uid,
        r.eta_seconds.map(|e| e as f64),
    );
    s
}
