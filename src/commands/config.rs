//! `headroom config`: the effective settings and where each came from (default, file, flag).

use std::fmt::Write as _;

use anyhow::Result;
use serde::Serialize;

use crate::cli::ConfigArgs;
use crate::commands::Ctx;
use crate::config::Entry;
use crate::exit::ExitStatus;

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ConfigReport {
    /// The config file that was read; null when none exists (defaults only).
    pub file: Option<String>,
    /// Where the file would be read from.
    pub default_file: Option<String>,
    pub settings: Vec<Entry>,
}

impl crate::schema::Document for ConfigReport {
    const SCHEMA: &'static str = "headroom.config/1";
    const TYPE: Option<&'static str> = Some("config");
}

pub fn run(ctx: &Ctx<'_>, args: &ConfigArgs) -> Result<ExitStatus> {
    let mut settings = ctx.settings.clone();
    (settings.probe, _) = settings.probe.with_flags(
        args.thresholds.warn,
        args.thresholds.crit,
        ctx.settings.file.as_deref(),
    )?;
    settings.watch = settings.watch.with_interval(args.interval)?;
    let report = ConfigReport {
        file: ctx.settings.file.as_ref().map(|p| p.display().to_string()),
        default_file: crate::store::paths::config_file()
            .ok()
            .map(|p| p.display().to_string()),
        settings: settings.entries(),
    };
    if ctx.printer.is_json() {
        ctx.printer.json_value(&report)?;
        return Ok(ExitStatus::Ok);
    }
    let mut s = String::new();
    match &report.file {
        Some(f) => {
            let _ = writeln!(s, "config file: {f}");
        }
        None => {
            let _ = writeln!(
                s,
                "config file: none (defaults); would be read from {}",
                report.default_file.as_deref().unwrap_or("?")
            );
        }
    }
    let width = report
        .settings
        .iter()
        .map(|e| e.key.len())
        .max()
        .unwrap_or(0);
    for e in &report.settings {
        let origin = e.origin.as_str();
        let _ = writeln!(
            s,
            "  {:<width$}  {:<24}  {origin}",
            e.key,
            e.value.to_string()
        );
    }
    ctx.printer.text(&s)?;
    Ok(ExitStatus::Ok)
}
