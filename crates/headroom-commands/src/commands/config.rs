//! `headroom config`: the effective settings and where each came from (default, file, flag).

use std::fmt::Write as _;

use anyhow::Result;
use serde::Serialize;

use crate::cli::ConfigArgs;
use crate::commands::Ctx;
use crate::config::ListedSetting;
use crate::exit::ExitStatus;

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct ConfigReport {
    /// The config file that was read; null when none exists (defaults only).
    pub file: Option<String>,
    /// Where the file would be read from.
    pub default_file: Option<String>,
    pub settings: Vec<ListedSetting>,
}

impl crate::schema::Document for ConfigReport {
    const SCHEMA: &'static str = "headroom.config/1";
    const TYPE: Option<&'static str> = Some("config");
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &ConfigArgs) -> Result<ExitStatus> {
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
        let _ = writeln!(s, "  {:<width$}  {:<24}  {origin}", e.key, human_value(e));
    }
    ctx.printer.text(&s)?;
    Ok(ExitStatus::Ok)
}

/// A setting as a person reads it: the JSON value, except the memory guards, whose limits
/// are written as the config file writes them (`8G`), not as the bytes JSON carries.
fn human_value(e: &ListedSetting) -> String {
    if e.key != "memory.guard" {
        return e.value.to_string();
    }
    let Some(rules) = e.value.as_array() else {
        return e.value.to_string();
    };
    let shown: Vec<String> = rules
        .iter()
        .map(|r| {
            let pattern = r["pattern"].as_str().unwrap_or("?");
            let limit = r["limit_bytes"]
                .as_u64()
                .map_or_else(|| r["limit_bytes"].to_string(), size_text);
            format!("{pattern} ≤ {limit}")
        })
        .collect();
    format!("[{}]", shown.join(", "))
}

/// Bytes in the largest unit `parse_size` reads back exactly: 8589934592 → `8G`,
/// 1610612736 → `1536M`.
fn size_text(b: u64) -> String {
    for (unit, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        let m = 1u64 << shift;
        if b >= m && b % m == 0 {
            return format!("{}{unit}", b / m);
        }
    }
    format!("{b}B")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Origin;

    #[test]
    fn memory_guard_limits_read_as_the_file_writes_them() {
        let e = ListedSetting {
            key: "memory.guard",
            value: serde_json::json!([
                {"pattern": "cargo", "limit_bytes": 8_589_934_592u64},
                {"pattern": "npm", "limit_bytes": 1_610_612_736u64},
            ]),
            origin: Origin::File,
        };
        assert_eq!(human_value(&e), "[cargo ≤ 8G, npm ≤ 1536M]");
        for (b, t) in [
            (1u64 << 40, "1T"),
            (1 << 20, "1M"),
            (3072, "3K"),
            (1000, "1000B"),
        ] {
            assert_eq!(size_text(b), t);
            // What it says reads back as the same size (bytes are below parse_size's floor).
            if b >= 1 << 20 {
                assert_eq!(crate::cli::parse_size(t), Ok(b));
            }
        }
        // Control: every other key prints its JSON value as before.
        let grace = ListedSetting {
            key: "memory.grace",
            value: serde_json::json!("5s"),
            origin: Origin::Default,
        };
        assert_eq!(human_value(&grace), "\"5s\"");
    }
}
