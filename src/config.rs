//! The config file (TOML) and defaults, resolved into one `Settings` whose every value knows
//! where it came from (default, file, flag), so `headroom config` can say so.
//!
//! An unknown key is an error naming the key and the file: a typo in a safety setting must
//! not silently fall back to a default.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::exit::UsageError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Origin {
    Default,
    File,
    Flag,
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

    fn file(&mut self, v: Option<T>) {
        if let Some(v) = v {
            *self = Self {
                value: v,
                origin: Origin::File,
            };
        }
    }

    /// A command-line flag overrides file and default.
    pub fn flag(&mut self, v: Option<T>) {
        if let Some(v) = v {
            *self = Self {
                value: v,
                origin: Origin::Flag,
            };
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    #[serde(default)]
    probe: ProbeFile,
    #[serde(default)]
    hangs: HangsFile,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeFile {
    warn: Option<f64>,
    crit: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HangsFile {
    allow: Option<Vec<String>>,
    deny: Option<Vec<String>>,
    grace: Option<String>,
    cooldown: Option<String>,
}

/// `[hangs] grace` bounds: a restart must not stall a round for long.
pub const HANGS_GRACE_MAX: Duration = Duration::from_secs(60);
/// `[hangs] cooldown` bounds: at least the hour the seed requires, at most the 24 h that
/// restart times are kept.
pub const HANGS_COOLDOWN_MIN: Duration = Duration::from_secs(3600);
pub const HANGS_COOLDOWN_MAX: Duration = Duration::from_secs(24 * 3600);

/// Every setting, resolved.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// The config file that was read, if any.
    pub file: Option<PathBuf>,
    pub warn_pct: Sourced<f64>,
    pub crit_pct: Sourced<f64>,
    /// `hangs`: regular apps to act on despite the default Apple/system-path exclusion.
    pub hangs_allow: Sourced<Vec<String>>,
    /// `hangs`: apps (or the service) never acted on.
    pub hangs_deny: Sourced<Vec<String>>,
    /// `hangs`: wait between SIGTERM and SIGKILL.
    pub hangs_grace: Sourced<Duration>,
    /// `hangs`: at most one automatic restart per app in this long.
    pub hangs_cooldown: Sourced<Duration>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            file: None,
            warn_pct: Sourced::default(50.0),
            crit_pct: Sourced::default(75.0),
            hangs_allow: Sourced::default(Vec::new()),
            hangs_deny: Sourced::default(Vec::new()),
            hangs_grace: Sourced::default(Duration::from_secs(3)),
            hangs_cooldown: Sourced::default(HANGS_COOLDOWN_MIN),
        }
    }
}

impl Settings {
    /// Defaults, overlaid with the config file. `explicit` (`--config FILE`) must exist; the
    /// default location may be absent.
    pub fn load(explicit: Option<&Path>) -> Result<Self> {
        let (path, required) = match explicit {
            Some(p) => (p.to_path_buf(), true),
            None => (crate::paths::config_file()?, false),
        };
        let text = match std::fs::read_to_string(&path) {
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
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("cannot read config file `{}`", path.display()));
            }
        };
        Self::parse(&text, &path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let file: FileConfig = toml::from_str(text).map_err(|e| {
            let msg = e.message().to_string();
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            UsageError(match line {
                Some(l) => format!("config file `{}` line {l}: {msg}", path.display()),
                None => format!("config file `{}`: {msg}", path.display()),
            })
        })?;
        let mut s = Self {
            file: Some(path.to_path_buf()),
            ..Self::default()
        };
        s.warn_pct.file(file.probe.warn);
        s.crit_pct.file(file.probe.crit);
        let bad = |msg: String| UsageError(format!("config file `{}`: {msg}", path.display()));
        for (key, list) in [("allow", &file.hangs.allow), ("deny", &file.hangs.deny)] {
            for entry in list.iter().flatten() {
                if entry.trim().is_empty() || entry.trim() != entry {
                    return Err(bad(format!(
                        "[hangs] {key} entry `{entry}` must be a bundle id or an absolute bundle path"
                    ))
                    .into());
                }
                if entry.contains('/') && !entry.starts_with('/') {
                    return Err(bad(format!(
                        "[hangs] {key} entry `{entry}` is a relative path; use an absolute bundle path"
                    ))
                    .into());
                }
            }
        }
        s.hangs_allow.file(file.hangs.allow);
        s.hangs_deny.file(file.hangs.deny);
        let duration = |key: &str, v: &Option<String>, min: Duration, max: Duration| {
            v.as_deref()
                .map(|text| {
                    let d = humantime::parse_duration(text).map_err(|e| {
                        bad(format!("[hangs] {key} `{text}` is not a duration ({e})"))
                    })?;
                    if d < min || d > max {
                        return Err(bad(format!(
                            "[hangs] {key} `{text}` must be between {} and {}",
                            humantime::format_duration(min),
                            humantime::format_duration(max)
                        )));
                    }
                    Ok(d)
                })
                .transpose()
        };
        s.hangs_grace.file(duration(
            "grace",
            &file.hangs.grace,
            Duration::from_millis(100),
            HANGS_GRACE_MAX,
        )?);
        s.hangs_cooldown.file(duration(
            "cooldown",
            &file.hangs.cooldown,
            HANGS_COOLDOWN_MIN,
            HANGS_COOLDOWN_MAX,
        )?);
        Ok(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_overrides_default_and_flag_overrides_file() {
        let mut s = Settings::parse("[probe]\nwarn = 60\n", Path::new("c.toml")).unwrap();
        assert_eq!(
            s.warn_pct,
            Sourced {
                value: 60.0,
                origin: Origin::File
            }
        );
        assert_eq!(
            s.crit_pct,
            Sourced {
                value: 75.0,
                origin: Origin::Default
            }
        );
        s.warn_pct.flag(Some(70.0));
        assert_eq!(s.warn_pct.origin, Origin::Flag);
    }

    #[test]
    fn unknown_key_and_wrong_type_name_the_key_and_file() {
        let e = Settings::parse("[probe]\nwarm = 60\n", Path::new("/x/c.toml")).unwrap_err();
        let m = format!("{e:#}");
        assert!(
            m.contains("warm") && m.contains("/x/c.toml") && m.contains("line 2"),
            "{m}"
        );
        assert!(e.downcast_ref::<UsageError>().is_some());
        let e = Settings::parse("[probe]\nwarn = \"high\"\n", Path::new("c.toml")).unwrap_err();
        assert!(format!("{e:#}").contains("c.toml"));
        let e = Settings::parse("[bogus]\n", Path::new("c.toml")).unwrap_err();
        assert!(format!("{e:#}").contains("bogus"));
    }

    #[test]
    fn hangs_section_sets_allow_deny_grace_and_cooldown() {
        let s = Settings::parse(
            "[hangs]\nallow = [\"com.apple.Safari\"]\ndeny = [\"/Applications/Precious.app\"]\n\
             grace = \"5s\"\ncooldown = \"2h\"\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(s.hangs_allow.value, vec!["com.apple.Safari".to_string()]);
        assert_eq!(s.hangs_allow.origin, Origin::File);
        assert_eq!(
            s.hangs_deny.value,
            vec!["/Applications/Precious.app".to_string()]
        );
        assert_eq!(s.hangs_grace.value, Duration::from_secs(5));
        assert_eq!(s.hangs_cooldown.value, Duration::from_secs(7200));
        let d = Settings::default();
        assert_eq!(d.hangs_cooldown.value, Duration::from_secs(3600));
        assert_eq!(d.hangs_grace.value, Duration::from_secs(3));
    }

    #[test]
    fn hangs_section_rejects_unknown_keys_and_bad_values() {
        for (text, says) in [
            ("[hangs]\nalow = []\n", "alow"),
            (
                "[hangs]\ncooldown = \"10m\"\n",
                "cooldown `10m` must be between 1h and 1day",
            ),
            (
                "[hangs]\ngrace = \"soon\"\n",
                "grace `soon` is not a duration",
            ),
            ("[hangs]\ngrace = \"5m\"\n", "grace `5m` must be between"),
            (
                "[hangs]\nallow = [\"Applications/X.app\"]\n",
                "relative path",
            ),
            ("[hangs]\ndeny = [\"\"]\n", "deny entry"),
        ] {
            let e = Settings::parse(text, Path::new("/x/c.toml")).unwrap_err();
            let m = format!("{e:#}");
            assert!(m.contains(says) && m.contains("/x/c.toml"), "{text}: {m}");
            assert!(e.downcast_ref::<UsageError>().is_some());
        }
    }

    #[test]
    fn missing_explicit_file_is_an_error() {
        let e = Settings::load(Some(Path::new("/nonexistent/headroom.toml"))).unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/headroom.toml"));
    }
}
