//! `headroom schema [NAME]`: the JSON Schema (draft 2020-12) of each output, generated from
//! the types headroom prints with (`crate::schema`), and the list of them (`ALL`). `schemas/` in the repository holds the
//! same files (`headroom generate schemas DIR`), and a test fails when they are stale.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;

use crate::cli::SchemaArgs;
use crate::commands as c;
use crate::commands::Ctx;
use crate::exit::{ExitStatus, UsageError};
use crate::schema::{Document, Entry, file_name, part};

/// `headroom schema --json` without a name: every schema, in one object.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct Catalog {
    pub schemas: Vec<CatalogEntry>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct CatalogEntry {
    /// `headroom.<thing>/<version>`, the value of that output's `schema` key.
    pub name: &'static str,
    pub title: &'static str,
    /// Its file in the repository's `schemas/`.
    pub file: String,
    /// The JSON Schema itself.
    pub json_schema: Value,
}

impl crate::schema::Document for Catalog {
    const SCHEMA: &'static str = "headroom.schemas/1";
    const TYPE: Option<&'static str> = Some("schemas");
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &SchemaArgs) -> Result<ExitStatus> {
    if let Some(name) = &args.name {
        let entry = find(name).ok_or_else(|| {
            UsageError(format!(
                "no output has the schema `{name}`; one of: {}",
                ALL.iter().map(Entry::thing).collect::<Vec<_>>().join(", ")
            ))
        })?;
        ctx.printer.raw(&pretty(entry)?)?;
        return Ok(ExitStatus::Ok);
    }
    if ctx.printer.is_json() {
        let catalog = Catalog {
            schemas: ALL
                .iter()
                .map(|e| CatalogEntry {
                    name: e.name,
                    title: e.title,
                    file: file_name(e.name),
                    json_schema: e.schema(),
                })
                .collect(),
        };
        ctx.printer.json_value(&catalog)?;
    } else {
        let width = ALL.iter().map(|e| e.name.len()).max().unwrap_or(0);
        let mut out = String::new();
        for e in ALL {
            let _ = writeln!(out, "{:width$}  {}", e.name, e.title.replace('`', ""));
        }
        out.push_str("\n`headroom schema NAME` prints one (NAME like `probe`).\n");
        ctx.printer.text(&out)?;
    }
    Ok(ExitStatus::Ok)
}

/// One schema as its committed file holds it: pretty JSON and a newline.
fn pretty(e: &Entry) -> Result<String> {
    let text = serde_json::to_string_pretty(&e.schema())
        .with_context(|| format!("cannot serialise the schema `{}`", e.name))?;
    Ok(text + "\n")
}

/// Every schema into `dir`, one file each (`headroom.probe.1.json`).
pub(crate) fn write_all(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create `{}`", dir.display()))?;
    for e in ALL {
        let path = dir.join(file_name(e.name));
        std::fs::write(&path, pretty(e)?)
            .with_context(|| format!("cannot write `{}`", path.display()))?;
    }
    Ok(())
}

/// The schema named `name` (`headroom.probe/1`, `headroom.probe` or `probe`).
pub fn find(name: &str) -> Option<&'static Entry> {
    ALL.iter()
        .find(|e| e.name == name || e.thing() == name || e.name.split('/').next() == Some(name))
}

/// Every output headroom prints with `--json`, and the error object.
pub const ALL: &[Entry] = &[
    Entry {
        name: c::probe::ProbeReport::SCHEMA,
        title: "`probe --json`: one reading of the user's process slots",
        parts: &[part::<c::probe::ProbeReport>],
    },
    Entry {
        name: c::limits::LimitsReport::SCHEMA,
        title: "`limits --json`: every process-slot ceiling",
        parts: &[part::<c::limits::LimitsReport>],
    },
    Entry {
        name: crate::core::snapshot::SNAPSHOT_SCHEMA,
        title: "`snapshot`: the process table, ceilings and memory totals (also `--snapshot` input)",
        parts: &[part::<crate::output::snapshot_file::SnapshotFile<'static>>],
    },
    Entry {
        name: crate::actions::reap_report::ReapReport::SCHEMA,
        title: "`reap --json`: the decision table, what was signalled and what came back",
        parts: &[part::<crate::actions::reap_report::ReapReport>],
    },
    Entry {
        name: c::evidence::EvidenceReport::SCHEMA,
        title: "`evidence --json`: the evidence log summarised",
        parts: &[part::<c::evidence::EvidenceReport>],
    },
    Entry {
        name: c::idle_watch::Poll::SCHEMA,
        title: "`idle-watch --json`: JSON Lines, a `poll` per reading and a closing `summary`",
        parts: &[
            part::<c::idle_watch::Poll>,
            part::<c::idle_watch::IdleWatchSummary>,
        ],
    },
    Entry {
        name: c::log_probe::LogProbeReport::SCHEMA,
        title: "`log-probe --json`: each file of a session log judged",
        parts: &[part::<c::log_probe::LogProbeReport>],
    },
    Entry {
        name: crate::actions::watchdog::RunEvent::SCHEMA,
        title: "`run --json`: JSON Lines on stderr (enforcement, approaching_limit, breach, \
                signal, kernel_outcome, summary)",
        parts: &[
            part::<crate::actions::watchdog::RunEvent>,
            part::<c::run_enforce::Enforcement>,
            part::<c::run_enforce::KernelOutcome>,
        ],
    },
    Entry {
        name: c::top::TopReport::SCHEMA,
        title: "`top --json`: one row per process tree",
        parts: &[part::<c::top::TopReport>],
    },
    Entry {
        name: c::park::ParkReport::SCHEMA,
        title: "`park`, `wake`, `park-tree`, `wake-tree --json`: what changed",
        parts: &[part::<c::park::ParkReport>],
    },
    Entry {
        name: c::calibrate::CalibrateReport::SCHEMA,
        title: "`calibrate --json`: the samples and the suggested `run --limit`",
        parts: &[part::<c::calibrate::CalibrateReport>],
    },
    Entry {
        name: crate::actions::hang_round::report::RoundReport::SCHEMA,
        title: "`hangs --json`: one round; with `--watch` or `--observations`, JSON Lines of \
                `round`s and a closing `summary`",
        parts: &[
            part::<crate::actions::hang_round::report::RoundReport>,
            part::<c::hangs::report::HangsSummary>,
        ],
    },
    Entry {
        name: c::hangs::report::EventsReport::SCHEMA,
        title: "`hangs --events --json`: the recorded hang history",
        parts: &[part::<c::hangs::report::EventsReport>],
    },
    Entry {
        name: c::login_item::LoginItemReport::SCHEMA,
        title: "`login-item --json`: the login item's state",
        parts: &[part::<c::login_item::LoginItemReport>],
    },
    Entry {
        name: c::watch::events::WatchEvent::SCHEMA,
        title: "`watch --json`: JSON Lines (reading, cleanup, memory, approaching-limit, hang, \
                notice, summary)",
        parts: &[part::<c::watch::events::WatchEvent>],
    },
    Entry {
        name: c::config::ConfigReport::SCHEMA,
        title: "`config --json`: the effective settings and their origins",
        parts: &[part::<c::config::ConfigReport>],
    },
    Entry {
        name: c::doctor::DoctorReport::SCHEMA,
        title: "`doctor --json`: each reading checked against the system's own tool",
        parts: &[part::<c::doctor::DoctorReport>],
    },
    Entry {
        name: c::run_limited_report::RunLimitedReport::SCHEMA,
        title: "the MCP tool `run_limited`'s result",
        parts: &[part::<c::run_limited_report::RunLimitedReport>],
    },
    Entry {
        name: c::schema::Catalog::SCHEMA,
        title: "`schema --json`: every schema",
        parts: &[part::<c::schema::Catalog>],
    },
    Entry {
        name: crate::exit::ErrorDocument::SCHEMA,
        title: "with `--json`, an error: on stdout, or as the last line of a JSON Lines stream",
        parts: &[part::<crate::exit::ErrorDocument>],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_well_formed() {
        let mut seen = std::collections::BTreeSet::new();
        for e in ALL {
            assert!(seen.insert(e.name), "{} twice", e.name);
            let (thing, version) = e.name.rsplit_once('/').unwrap();
            assert!(
                thing.starts_with("headroom.") && thing.len() > 9,
                "{}",
                e.name
            );
            assert!(version.parse::<u32>().is_ok_and(|v| v >= 1), "{}", e.name);
            assert!(find(e.thing()).is_some_and(|f| f.name == e.name));
        }
    }

    #[test]
    fn every_schema_requires_its_name() {
        for e in ALL {
            let s = e.schema();
            assert_eq!(s["properties"]["schema"]["const"], e.name);
            assert_eq!(s["required"][0], "schema");
            assert_eq!(s["$id"], file_name(e.name));
        }
    }
}
