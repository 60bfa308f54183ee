//! The JSON Lines events of `watch` (`{"type": "reading" | "cleanup" | "hang" | "notice" |
//! "summary", ...}`) and their one-line human forms.

use serde::Serialize;

use crate::actions::hang_round::report::RoundReport;
use crate::actions::memory_guard::MemoryGuardReport;
use crate::actions::reap_report::ReapReport;
use crate::core::reading::{Level, Reading, Trend};
use crate::core::slot_reading::SlotReading;
use crate::output::{human_duration, plural, thousands};

/// How much a `watch` notice matters. The lowercase names are stable (JSON); an `error`
/// counts in the summary's `errors`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Info => "info",
            Self::Warning => "warning",
            Self::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub(crate) struct ReadingEvent {
    /// The reading, as `probe`, `reap` and the evidence log print it too.
    #[serde(flatten)]
    pub reading: SlotReading,
    /// The level confirmed by two consecutive readings (what auto-reap acts on).
    pub confirmed_level: Level,
}

impl ReadingEvent {
    pub(crate) fn new(r: &Reading, t: &Trend, confirmed: Level) -> Self {
        Self {
            reading: SlotReading::new(r, Some(t)),
            confirmed_level: confirmed,
        }
    }
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub(crate) enum WatchEvent {
    Reading(ReadingEvent),
    Cleanup(Box<ReapReport>),
    /// A memory guard enforced on a tree over its limit.
    Memory(Box<MemoryGuardReport>),
    /// A guarded tree crossed the warning line (`[memory] warn_pct`), once per crossing.
    ApproachingLimit {
        at: String,
        root: i32,
        name: String,
        pattern: String,
        footprint_bytes: u64,
        limit_bytes: u64,
        pct: f64,
        warn_pct: f64,
    },
    /// A `hangs` round that saw an unresponsive app or could not ask (macOS).
    Hang(Box<RoundReport>),
    Notice {
        at: String,
        severity: Severity,
        message: String,
    },
    Summary {
        /// When the watch ended (RFC 3339, UTC).
        at: String,
        /// Rounds that read the process table (each with its `reading`, or a notice).
        rounds: u64,
        /// Rounds that read only an upper bound of the user's slots (every task on the
        /// machine) and the ceilings, because the bound was far below the warning threshold.
        quiet_rounds: u64,
        cleanups: u64,
        errors: u64,
        /// Evidence rows still waiting for a writable state directory.
        pending_rows: usize,
        /// Diagnostic lines dropped because stderr was not being read.
        stderr_dropped: u64,
        /// CPU-history writes lost to a full or read-only state directory; cleanups acted
        /// without them.
        history_writes_lost: u64,
    },
}

/// The `notice` line that says `watch`'s stdout lost lines (`output::queue`'s JSON notice).
pub(crate) fn lost_lines(message: String) -> String {
    let notice = WatchEvent::Notice {
        at: crate::core::time::format_ms(crate::platform::now_ms()),
        severity: Severity::Warning,
        message,
    };
    crate::schema::to_line(&notice).unwrap_or_default() + "\n"
}

impl crate::schema::Document for WatchEvent {
    const SCHEMA: &'static str = "headroom.watch/3";
    const TYPE: Option<&'static str> = None;
}

/// The status line of a reading.
pub(crate) fn status_line(r: &ReadingEvent) -> String {
    let r = &r.reading;
    let usage = match (r.limit, r.usage_pct, r.limit_source) {
        (Some(l), Some(p), Some(src)) => {
            format!("{}/{} ({p:.1} %, {src})", thousands(r.used), thousands(l))
        }
        _ => format!("{} (limit unknown)", thousands(r.used)),
    };
    let trend = match (r.growth_per_min, r.eta_seconds) {
        (Some(g), Some(eta)) if g > 0.0 => {
            format!(", {g:+.1}/min, wall in {}", human_duration(eta as f64))
        }
        (Some(g), _) => format!(", {g:+.1}/min"),
        _ => String::new(),
    };
    let partial = if r.partial { "  (partial table)" } else { "" };
    format!(
        "{}  {usage}  {}  {}{trend}{partial}",
        r.at,
        plural(r.zombies, "zombie"),
        r.level.as_str()
    )
}

impl WatchEvent {
    pub(crate) fn human(&self) -> String {
        match self {
            Self::Reading(r) => status_line(r),
            Self::Cleanup(rep) => format!("{}  cleanup: {}", rep.at, rep.summary),
            Self::Memory(g) => format!(
                "memory guard `{}`: tree {} ({}) at {} of {} -> {:?}",
                g.breach.pattern,
                g.breach.root,
                g.breach.name,
                crate::output::human_bytes(g.breach.footprint_bytes),
                crate::output::human_bytes(g.breach.effective_bytes),
                g.outcome
            ),
            Self::ApproachingLimit {
                root,
                name,
                pattern,
                footprint_bytes,
                limit_bytes,
                pct,
                ..
            } => format!(
                "memory guard `{pattern}`: tree {root} ({name}) at {} of {} ({pct:.0} %): approaching its limit",
                crate::output::human_bytes(*footprint_bytes),
                crate::output::human_bytes(*limit_bytes),
            ),
            Self::Hang(r) => {
                let apps: Vec<String> = r
                    .apps
                    .iter()
                    .map(|a| format!("{} ({:?})", a.name, a.state))
                    .collect();
                format!("{}  hangs: {} {}", r.at, r.status, apps.join(", "))
            }
            Self::Notice {
                at,
                severity,
                message,
            } => format!("{at}  {}: {message}", severity.as_str()),
            Self::Summary {
                at: _,
                rounds,
                quiet_rounds,
                cleanups,
                errors,
                pending_rows,
                stderr_dropped,
                history_writes_lost,
            } => {
                let quiet = if *quiet_rounds > 0 {
                    format!(", {quiet_rounds} quiet (the wall was far)")
                } else {
                    String::new()
                };
                let mut pending = if *pending_rows > 0 {
                    format!(
                        ", {} not written",
                        plural(*pending_rows as u64, "evidence row")
                    )
                } else {
                    String::new()
                };
                if *stderr_dropped > 0 {
                    pending.push_str(&format!(
                        ", {} dropped",
                        plural(*stderr_dropped, "stderr line")
                    ));
                }
                if *history_writes_lost > 0 {
                    pending.push_str(&format!(
                        ", {} lost",
                        plural(*history_writes_lost, "CPU-history write")
                    ));
                }
                format!(
                    "watch: {}{quiet}, {}, {}{pending}",
                    plural(*rounds, "round"),
                    plural(*cleanups, "cleanup"),
                    plural(*errors, "error")
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notice_serializes_its_severity_under_the_stable_name() {
        for (severity, name) in [
            (Severity::Info, "info"),
            (Severity::Warning, "warning"),
            (Severity::Error, "error"),
        ] {
            let e = WatchEvent::Notice {
                at: "2026-12-01T00:00:00.000Z".into(),
                severity,
                message: "m".into(),
            };
            assert_eq!(
                serde_json::to_string(&e).unwrap(),
                format!(
                    r#"{{"type":"notice","at":"2026-12-01T00:00:00.000Z","severity":"{name}","message":"m"}}"#
                )
            );
            assert_eq!(e.human(), format!("2026-12-01T00:00:00.000Z  {name}: m"));
        }
    }
}
