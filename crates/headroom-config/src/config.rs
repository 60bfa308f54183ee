//! The config file (TOML) and defaults, resolved into one `Settings` of typed sections
//! (`sections.rs`, one per command) whose every value knows where it came from (default,
//! file, flag), so `headroom config` can say so. A command's plan is its section overlaid
//! with its flags (`ProbeSection::with_flags`, `WatchSection::with_interval`,
//! `config::reap_plan`, `commands::hang_round_settings`).
//!
//! An unknown key is an error naming the key and the file: a typo in a safety setting must
//! not silently fall back to a default.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::core::reading::Thresholds;
use crate::exit::UsageError;

mod reap_plan;
mod sections;

pub use reap_plan::reap_plan;

pub(crate) use sections::GRACE_MAX;
pub use sections::{
    EmergencySection, HangsSection, InvalidValue, LivenessSection, McpSection, MemorySection,
    NotificationsSection, PressureMode, ProbeSection, ReapSection, ToolGroup, WatchSection,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    Default,
    File,
    Flag,
}

impl Origin {
    /// As `headroom config` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Default => "default",
            Origin::File => "file",
            Origin::Flag => "flag",
        }
    }
}

/// A setting and where its value came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sourced<T> {
    pub value: T,
    pub origin: Origin,
}

impl<T> Sourced<T> {
    fn default(value: T) -> Self {
        Self {
            value,
            origin: Origin::Default,
        }
    }

    /// The config file's value, over the default.
    fn with_file(self, value: T) -> Self {
        Self {
            value,
            origin: Origin::File,
        }
    }

    /// A command-line flag, when given, over file and default.
    #[must_use]
    pub(crate) fn with_flag(self, v: Option<T>) -> Self {
        match v {
            Some(value) => Self {
                value,
                origin: Origin::Flag,
            },
            None => self,
        }
    }
}

/// The file as serde reads it: each section's keys, every one optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
struct FileConfig {
    probe: sections::ProbeFile,
    reap: sections::ReapFile,
    liveness: sections::LivenessFile,
    emergency: sections::EmergencyFile,
    watch: sections::WatchFile,
    notifications: sections::NotificationsFile,
    hangs: sections::HangsFile,
    memory: sections::MemoryFile,
    mcp: sections::McpFile,
}

/// Every setting, resolved: one section per command, in file order.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Settings {
    /// The config file that was read, if any.
    pub file: Option<PathBuf>,
    /// Why that file may not steer a command that signals (someone else could have written
    /// it), one line; `None` when it may, or no file was read.
    #[serde(skip)]
    pub untrusted: Option<String>,
    pub probe: ProbeSection,
    pub reap: ReapSection,
    pub liveness: LivenessSection,
    pub emergency: EmergencySection,
    pub watch: WatchSection,
    pub notifications: NotificationsSection,
    pub hangs: HangsSection,
    pub memory: MemorySection,
    pub mcp: McpSection,
}

impl Settings {
    /// Defaults, overlaid with the config file. `explicit` (`--config FILE`) must exist; the
    /// default location may be absent.
    pub fn load(explicit: Option<&Path>) -> Result<Self> {
        let (path, required) = match explicit {
            Some(p) => (p.to_path_buf(), true),
            None => (crate::store::paths::config_file()?, false),
        };
        let read = match crate::store::config_file::read(&path) {
            Ok(t) => t,
            // The default location may be absent, or under something that is not a directory.
            Err(e)
                if !required
                    && matches!(
                        e.kind(),
                        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                    ) =>
            {
                return Ok(Self::default());
            }
            // A `--config FILE` that is not there is a wrong command line, as a bad value in
            // it is (exit 64); a file that exists but cannot be read stays an I/O error.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
                ) =>
            {
                return Err(UsageError(format!(
                    "--config `{}` does not exist: {e}",
                    path.display()
                ))
                .into());
            }
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot read config file `{}`", path.display()));
            }
        };
        Ok(Self {
            untrusted: read.untrusted,
            ..Self::parse(&read.text, &path)?
        })
    }

    /// Refuse (exit 2) when the file read is not one the user alone controls
    /// (`core::state_rules::config_rule`): what a command that signals calls before it
    /// acts on these settings. `Ok` when no file was read or it is trusted.
    pub fn trusted_for_action(&self) -> Result<(), crate::exit::Failure> {
        match &self.untrusted {
            Some(why) => Err(crate::exit::Failure::Failed(format!(
                "{why}; nothing was signalled"
            ))),
            None => Ok(()),
        }
    }

    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let file: FileConfig = toml::from_str(text).map_err(|e| {
            // serde names Rust types (`expected f64`); the user wrote TOML.
            let msg = e
                .message()
                .replace("expected f64", "expected a number")
                .replace("expected u64", "expected a whole number");
            // Name the line, its key and show it.
            let at = e.span().map(|s| {
                let start = s.start.min(text.len());
                let line_no = text[..start].matches('\n').count() + 1;
                let line = text.lines().nth(line_no - 1).unwrap_or("").trim();
                let key = key_at(text, line_no)
                    .map(|k| format!(", key `{}`", crate::sanitize::sanitize(&k)))
                    .unwrap_or_default();
                format!(
                    " line {line_no}{key} (`{}`)",
                    crate::sanitize::sanitize(line)
                )
            });
            UsageError(format!(
                "config file `{}`{}: {msg}",
                path.display(),
                at.unwrap_or_default()
            ))
        })?;
        Self::from_file(file)
            .map_err(|r| {
                UsageError(format!(
                    "config file `{}`: {}",
                    path.display(),
                    crate::sanitize::sanitize(&r.to_string())
                ))
                .into()
            })
            .map(|s| Self {
                file: Some(path.to_path_buf()),
                ..s
            })
    }

    fn from_file(f: FileConfig) -> Result<Self, InvalidValue> {
        Ok(Self {
            file: None,
            untrusted: None,
            probe: ProbeSection::from_file(f.probe)?,
            reap: ReapSection::from_file(f.reap)?,
            liveness: LivenessSection::from_file(f.liveness)?,
            emergency: EmergencySection::from_file(f.emergency)?,
            watch: WatchSection::from_file(f.watch)?,
            notifications: NotificationsSection::from_file(f.notifications)?,
            hangs: HangsSection::from_file(f.hangs)?,
            memory: MemorySection::from_file(f.memory)?,
            mcp: McpSection::from_file(f.mcp)?,
        })
    }

    /// Every setting under its config-file key, in file order.
    pub fn entries(&self) -> Vec<ListedSetting> {
        let mut out = Vec::new();
        self.probe.entries(&mut out);
        self.reap.entries(&mut out);
        self.liveness.entries(&mut out);
        self.emergency.entries(&mut out);
        self.watch.entries(&mut out);
        self.notifications.entries(&mut out);
        self.hangs.entries(&mut out);
        self.memory.entries(&mut out);
        self.mcp.entries(&mut out);
        out
    }
}

/// The dotted key (`probe.warn`) that `key = …` on line `line_no` (from 1) sets: the last
/// `[table]` header above it, then the key. `None` when the line sets no key.
fn key_at(text: &str, line_no: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().take(line_no).collect();
    let (key, _) = lines.last()?.split_once('=')?;
    let key = key.trim();
    if key.is_empty() || key.starts_with('[') {
        return None;
    }
    let table = lines.iter().rev().skip(1).find_map(|l| {
        let l = l.trim();
        l.strip_prefix('[')
            .map(|t| t.trim_matches(|c| c == '[' || c == ']').trim())
    });
    Some(match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key.to_string(),
    })
}

impl ProbeSection {
    /// `--warn`/`--crit` over this section, checked together (warn ≤ crit): what `probe`,
    /// `limits`, `watch` and `config` compare a reading with.
    /// `file` is the config file read, named when one of the two came from it.
    pub fn with_flags(
        &self,
        warn: Option<f64>,
        crit: Option<f64>,
        file: Option<&Path>,
    ) -> Result<(Self, Thresholds), UsageError> {
        let s = Self {
            warn: self.warn.clone().with_flag(warn),
            crit: self.crit.clone().with_flag(crit),
        };
        if s.warn.value > s.crit.value {
            // Name each side where it came from: a user who wrote only the file never typed
            // `--warn`.
            let side = |key: &str, v: &Sourced<f64>| match v.origin {
                Origin::Flag => format!("--{key} `{}`", v.value),
                Origin::File => format!("`[probe] {key} = {}`", v.value),
                Origin::Default => format!("the default {key} `{}`", v.value),
            };
            let in_file = match file {
                Some(f) if [&s.warn, &s.crit].iter().any(|v| v.origin == Origin::File) => {
                    format!(" (config file `{}`)", f.display())
                }
                _ => String::new(),
            };
            return Err(UsageError(format!(
                "{} is above {}{in_file}: the warning threshold must not exceed the critical one",
                side("warn", &s.warn),
                side("crit", &s.crit)
            )));
        }
        let t = Thresholds::new(s.warn.value, s.crit.value).map_err(UsageError)?;
        Ok((s, t))
    }
}

impl WatchSection {
    /// `--interval` over `[watch] interval`, held to the same bounds.
    pub fn with_interval(&self, flag: Option<Duration>) -> Result<Self, UsageError> {
        if let Some(i) = flag {
            check_interval(i).map_err(|m| UsageError(format!("--interval {m}")))?;
        }
        Ok(Self {
            interval: self.interval.clone().with_flag(flag),
            ..self.clone()
        })
    }
}

/// `watch` rounds are at least 100 ms (a round costs a few milliseconds; a typo like `1ms`
/// would be a busy loop) and at most a day apart.
pub(crate) fn check_interval(d: Duration) -> Result<(), String> {
    if d < Duration::from_millis(100) {
        return Err(format!(
            "`{}` is too short: at least 100ms",
            humantime::format_duration(d)
        ));
    }
    if d > Duration::from_secs(24 * 3600) {
        return Err(format!(
            "`{}` is too long: at most 24h",
            humantime::format_duration(d)
        ));
    }
    Ok(())
}

/// One setting as `headroom config` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Entry")]
pub struct ListedSetting {
    pub key: &'static str,
    pub value: serde_json::Value,
    pub origin: Origin,
}

#[cfg(test)]
mod tests;
