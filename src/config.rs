//! The config file (TOML) and defaults, resolved into one `Settings` whose every value knows
//! where it came from (default, file, flag), so `headroom config` can say so.
//!
//! An unknown key is an error naming the key and the file: a typo in a safety setting must
//! not silently fall back to a default.

use std::path::{Path, PathBuf};

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
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeFile {
    warn: Option<f64>,
    crit: Option<f64>,
}

/// Every setting, resolved.
#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    /// The config file that was read, if any.
    pub file: Option<PathBuf>,
    pub warn_pct: Sourced<f64>,
    pub crit_pct: Sourced<f64>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            file: None,
            warn_pct: Sourced::default(50.0),
            crit_pct: Sourced::default(75.0),
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
    fn missing_explicit_file_is_an_error() {
        let e = Settings::load(Some(Path::new("/nonexistent/headroom.toml"))).unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/headroom.toml"));
    }
}
