//! The short human line each tool result carries beside its JSON, read from the command's
//! typed report (the capturing Printer hands it over as `Any`; `summarize` downcasts it):
//! no report is printed and parsed back, no field is looked up by name.

use serde::Serialize;

use crate::actions::hang_round::report::RoundReport;
use crate::actions::reap_report::ReapReport;
use crate::commands::doctor::DoctorReport;
use crate::commands::evidence::EvidenceReport;
use crate::commands::hangs::report::EventsReport;
use crate::commands::limits::LimitsReport;
use crate::commands::log_probe::LogProbeReport;
use crate::commands::park::ParkReport;
use crate::commands::probe::ProbeReport;
use crate::commands::top::TopReport;
use crate::output::{human_bytes, plural};

/// A report's one line for a person (or a model that reads only text).
pub(crate) trait SummaryLine: 'static {
    fn summary(&self) -> String;
}

/// The summary of `report` if it is an `R` (the report the tool's command prints).
pub(crate) fn summarize<R: SummaryLine>(report: &dyn std::any::Any) -> Option<String> {
    report.downcast_ref::<R>().map(R::summary)
}

fn opt<T: std::fmt::Display>(v: Option<T>) -> String {
    v.map_or_else(|| "?".to_string(), |x| x.to_string())
}

/// A unit enum's serialized name (`park_idle`, `working`, …).
fn name<T: Serialize>(t: &T) -> String {
    match serde_json::to_value(t) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "?".to_string(),
    }
}

impl SummaryLine for ProbeReport {
    fn summary(&self) -> String {
        let r = &self.reading;
        format!(
            "level {}: {} of {} slots used ({} %), {} free; binding limit {}; {}",
            r.level.as_str(),
            r.used,
            opt(r.limit),
            opt(r.usage_pct),
            opt(r.free_slots),
            r.limit_source.map_or("?", |s| s.as_str()),
            plural(r.zombies, "zombie"),
        )
    }
}

impl SummaryLine for LimitsReport {
    fn summary(&self) -> String {
        let r = &self.reading;
        format!(
            "effective limit {} ({}), {} used; level {}",
            opt(r.limit),
            r.limit_source.map_or("?", |s| s.as_str()),
            r.used,
            r.level.as_str(),
        )
    }
}

impl SummaryLine for TopReport {
    fn summary(&self) -> String {
        let largest = self.processes.first().map_or(String::new(), |f| {
            format!(
                "; largest: pid {} ({}, {})",
                f.pid,
                human_bytes(f.footprint_kb.saturating_mul(1024)),
                name(&f.reason_code)
            )
        });
        format!(
            "{}; {} % of memory free{largest}",
            plural(self.processes.len() as u64, "process tree"),
            opt(self.free_pct),
        )
    }
}

impl SummaryLine for EvidenceReport {
    fn summary(&self) -> String {
        format!(
            "{} from {} to {}; peak usage {} %",
            plural(self.rows as u64, "evidence row"),
            self.first.as_deref().unwrap_or("?"),
            self.last.as_deref().unwrap_or("?"),
            opt(self.peak_usage.as_ref().and_then(|r| r.reading.usage_pct)),
        )
    }
}

impl SummaryLine for LogProbeReport {
    fn summary(&self) -> String {
        let d = &self.directory;
        format!(
            "directory verdict {} (last activity {}, {} s ago)",
            name(&d.verdict),
            d.last_activity.as_deref().unwrap_or("?"),
            opt(d.age_seconds),
        )
    }
}

impl SummaryLine for EventsReport {
    fn summary(&self) -> String {
        plural(self.events.len() as u64, "hang event")
    }
}

impl SummaryLine for RoundReport {
    fn summary(&self) -> String {
        if let Some(why) = &self.unavailable_reason {
            return format!("the WindowServer could not be asked: {why}");
        }
        let mut s = format!(
            "{} checked, {} not responding",
            plural(self.checked as u64, "app"),
            self.apps.len()
        );
        for a in &self.apps {
            s += &format!("; {} (pid {}) {}", a.name, a.pid, a.state.as_str());
        }
        s
    }
}

impl SummaryLine for DoctorReport {
    fn summary(&self) -> String {
        format!(
            "{} ok, {} mismatch, {} skipped",
            self.ok, self.mismatches, self.skipped
        )
    }
}

impl SummaryLine for ReapReport {
    fn summary(&self) -> String {
        self.summary.clone()
    }
}

impl SummaryLine for ParkReport {
    fn summary(&self) -> String {
        format!(
            "{} pid {}: {} of {} changed",
            self.action,
            self.pid,
            self.changed,
            plural(self.processes.len() as u64, "process"),
        )
    }
}
