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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
    reap: ReapFile,
    #[serde(default)]
    liveness: LivenessFile,
    #[serde(default)]
    emergency: EmergencyFile,
    #[serde(default)]
    watch: WatchFile,
    #[serde(default)]
    notifications: NotificationsFile,
    #[serde(default)]
    hangs: HangsFile,
    #[serde(default)]
    memory: MemoryFile,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoryFile {
    /// `[[memory.guard]]`: a name pattern and a limit, enforced by `watch`.
    guard: Option<Vec<GuardFile>>,
    grace: Option<HumanDuration>,
    /// Warn at this percentage of a memory limit (`run --limit`, the guards).
    warn_pct: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GuardFile {
    pattern: String,
    limit: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct WatchFile {
    interval: Option<HumanDuration>,
    auto_reap: Option<bool>,
    reap_cooldown: Option<HumanDuration>,
    hangs: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct NotificationsFile {
    enabled: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ProbeFile {
    warn: Option<f64>,
    crit: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReapFile {
    allow: Option<Vec<String>>,
    deny: Option<Vec<String>>,
    min_zombies: Option<u64>,
    max_targets: Option<u64>,
    grace: Option<HumanDuration>,
    spare_active_sessions: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct LivenessFile {
    idle_threshold: Option<HumanDuration>,
    cpu_active_pct: Option<f64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EmergencyFile {
    enabled: Option<bool>,
    free_pct: Option<f64>,
    recovery_pct: Option<f64>,
}

/// A duration written like `90s` or `2h` in the config file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HumanDuration(pub Duration);

impl<'de> Deserialize<'de> for HumanDuration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        crate::cli::parse_duration(&s)
            .map(HumanDuration)
            .map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HangsFile {
    allow: Option<Vec<String>>,
    deny: Option<Vec<String>>,
    grace: Option<String>,
    cooldown: Option<String>,
    min_interval: Option<String>,
}

/// `[memory] grace` at most: a guard's grace holds `watch`'s round.
pub const MEMORY_GRACE_MAX: Duration = Duration::from_secs(60);
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
    pub reap_allow: Sourced<Vec<String>>,
    pub reap_deny: Sourced<Vec<String>>,
    pub min_zombies: Sourced<u64>,
    pub max_targets: Sourced<u64>,
    pub grace: Sourced<Duration>,
    pub spare_active_sessions: Sourced<bool>,
    pub idle_threshold: Sourced<Duration>,
    /// CPU share of one core, in percent, below which a session child did no work.
    pub cpu_active_pct: Sourced<f64>,
    pub emergency_enabled: Sourced<bool>,
    pub emergency_free_pct: Sourced<f64>,
    pub emergency_recovery_pct: Sourced<f64>,
    pub watch_interval: Sourced<Duration>,
    pub auto_reap: Sourced<bool>,
    pub reap_cooldown: Sourced<Duration>,
    pub watch_hangs: Sourced<bool>,
    pub notifications: Sourced<bool>,
    /// `watch`'s memory guards.
    pub memory_guards: Sourced<Vec<crate::core::memory_guard::Rule>>,
    /// Wait between SIGTERM and SIGKILL when a memory guard ends a tree.
    pub memory_grace: Sourced<Duration>,
    /// Warn once at this percentage of a memory limit, before anything is done.
    pub memory_warn_pct: Sourced<f64>,
    /// `hangs`: regular apps to act on despite the default Apple/system-path exclusion.
    pub hangs_allow: Sourced<Vec<String>>,
    /// `hangs`: apps (or the service) never acted on.
    pub hangs_deny: Sourced<Vec<String>>,
    /// `hangs`: wait between SIGTERM and SIGKILL.
    pub hangs_grace: Sourced<Duration>,
    /// `hangs`: at most one automatic restart per app in this long.
    pub hangs_cooldown: Sourced<Duration>,
    /// Rounds closer than this count as one observation.
    pub hangs_min_interval: Sourced<Duration>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            file: None,
            warn_pct: Sourced::default(50.0),
            crit_pct: Sourced::default(75.0),
            reap_allow: Sourced::default(vec!["agency".to_string()]),
            reap_deny: Sourced::default(Vec::new()),
            min_zombies: Sourced::default(100),
            max_targets: Sourced::default(10),
            grace: Sourced::default(Duration::from_secs(2)),
            spare_active_sessions: Sourced::default(true),
            idle_threshold: Sourced::default(Duration::from_secs(2 * 3600)),
            cpu_active_pct: Sourced::default(0.1),
            emergency_enabled: Sourced::default(true),
            emergency_free_pct: Sourced::default(5.0),
            emergency_recovery_pct: Sourced::default(75.0),
            watch_interval: Sourced::default(Duration::from_secs(60)),
            auto_reap: Sourced::default(true),
            reap_cooldown: Sourced::default(Duration::from_secs(120)),
            watch_hangs: Sourced::default(true),
            notifications: Sourced::default(true),
            memory_guards: Sourced::default(Vec::new()),
            memory_grace: Sourced::default(Duration::from_secs(5)),
            memory_warn_pct: Sourced::default(crate::core::memory_warn::DEFAULT_WARN_PCT),
            hangs_allow: Sourced::default(Vec::new()),
            hangs_deny: Sourced::default(Vec::new()),
            hangs_grace: Sourced::default(Duration::from_secs(3)),
            hangs_cooldown: Sourced::default(HANGS_COOLDOWN_MIN),
            hangs_min_interval: Sourced::default(Duration::from_secs(5)),
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
            // Name the line and show it: the key is on it.
            let at = e.span().map(|s| {
                let start = s.start.min(text.len());
                let line_no = text[..start].matches('\n').count() + 1;
                let line = text.lines().nth(line_no - 1).unwrap_or("").trim();
                format!(" line {line_no} (`{}`)", crate::sanitize::sanitize(line))
            });
            UsageError(format!(
                "config file `{}`{}: {msg}",
                path.display(),
                at.unwrap_or_default()
            ))
        })?;
        let bad = |key: &str, msg: &str| -> anyhow::Error {
            UsageError(format!("config file `{}`: `{key}` {msg}", path.display())).into()
        };
        let mut s = Self {
            file: Some(path.to_path_buf()),
            ..Self::default()
        };
        s.warn_pct.file(file.probe.warn);
        s.crit_pct.file(file.probe.crit);
        s.reap_allow.file(file.reap.allow);
        s.reap_deny.file(file.reap.deny);
        if file.reap.min_zombies == Some(0) {
            return Err(bad("reap.min_zombies", "must be at least 1"));
        }
        s.min_zombies.file(file.reap.min_zombies);
        if file.reap.max_targets == Some(0) {
            return Err(bad("reap.max_targets", "must be at least 1"));
        }
        s.max_targets.file(file.reap.max_targets);
        s.grace.file(file.reap.grace.map(|d| d.0));
        s.spare_active_sessions
            .file(file.reap.spare_active_sessions);
        s.idle_threshold
            .file(file.liveness.idle_threshold.map(|d| d.0));
        if let Some(v) = file.liveness.cpu_active_pct {
            if !(v > 0.0 && v <= 100.0) {
                return Err(bad(
                    "liveness.cpu_active_pct",
                    "must be a percentage above 0 and at most 100",
                ));
            }
        }
        s.cpu_active_pct.file(file.liveness.cpu_active_pct);
        s.emergency_enabled.file(file.emergency.enabled);
        for (key, v) in [
            ("emergency.free_pct", file.emergency.free_pct),
            ("emergency.recovery_pct", file.emergency.recovery_pct),
        ] {
            if v.is_some_and(|v| !(0.0..=100.0).contains(&v)) {
                return Err(bad(key, "must be a percentage from 0 to 100"));
            }
        }
        s.emergency_free_pct.file(file.emergency.free_pct);
        s.emergency_recovery_pct.file(file.emergency.recovery_pct);
        if let Some(i) = file.watch.interval {
            crate::config::check_interval(i.0).map_err(|m| bad("watch.interval", &m))?;
        }
        s.watch_interval.file(file.watch.interval.map(|d| d.0));
        s.auto_reap.file(file.watch.auto_reap);
        s.reap_cooldown.file(file.watch.reap_cooldown.map(|d| d.0));
        s.watch_hangs.file(file.watch.hangs);
        s.notifications.file(file.notifications.enabled);
        if let Some(guards) = file.memory.guard {
            let mut rules = Vec::with_capacity(guards.len());
            for (i, g) in guards.iter().enumerate() {
                let key = format!("memory.guard[{i}]");
                if g.pattern.trim().is_empty() {
                    return Err(bad(
                        &key,
                        "has an empty `pattern`, which would match nothing",
                    ));
                }
                let limit_bytes = crate::cli::parse_size(&g.limit)
                    .map_err(|m| bad(&key, &format!("`limit` {m}")))?;
                rules.push(crate::core::memory_guard::Rule {
                    pattern: g.pattern.trim().to_string(),
                    limit_bytes,
                });
            }
            s.memory_guards.file(Some(rules));
        }
        if let Some(g) = file.memory.grace {
            // Enforcing a guard holds `watch`'s round for the grace.
            crate::cli::check_within(g.0, Duration::from_millis(1), MEMORY_GRACE_MAX)
                .map_err(|m| bad("memory.grace", &m))?;
        }
        s.memory_grace.file(file.memory.grace.map(|d| d.0));
        if let Some(w) = file.memory.warn_pct {
            if !(w > 0.0 && w < 100.0) {
                return Err(bad(
                    "memory.warn_pct",
                    &format!("is {w}; it must be above 0 and below 100"),
                ));
            }
        }
        s.memory_warn_pct.file(file.memory.warn_pct);
        let hbad = |msg: String| UsageError(format!("config file `{}`: {msg}", path.display()));
        for (key, list) in [("allow", &file.hangs.allow), ("deny", &file.hangs.deny)] {
            for entry in list.iter().flatten() {
                if entry.trim().is_empty() || entry.trim() != entry {
                    return Err(hbad(format!(
                        "[hangs] {key} entry `{entry}` must be a bundle id or an absolute bundle path"
                    ))
                    .into());
                }
                if entry.contains('/') && !entry.starts_with('/') {
                    return Err(hbad(format!(
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
                        hbad(format!(
                            "[hangs] {key} {}",
                            crate::cli::duration_error(text, &e)
                        ))
                    })?;
                    if d < min || d > max {
                        return Err(hbad(format!(
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
        let (lo, hi) = crate::core::hangs::MIN_ROUND_GAP_RANGE_MS;
        s.hangs_min_interval.file(duration(
            "min_interval",
            &file.hangs.min_interval,
            Duration::from_millis(lo as u64),
            Duration::from_millis(hi as u64),
        )?);
        Ok(s)
    }
}

/// `watch` rounds are at least 100 ms (a round costs a few milliseconds; a typo like `1ms`
/// would be a busy loop) and at most a day apart.
pub fn check_interval(d: Duration) -> Result<(), String> {
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
pub struct Entry {
    pub key: &'static str,
    pub value: serde_json::Value,
    pub origin: Origin,
}

fn entry<T: Serialize>(key: &'static str, s: &Sourced<T>) -> Entry {
    Entry {
        key,
        value: serde_json::to_value(&s.value).unwrap_or(serde_json::Value::Null),
        origin: s.origin,
    }
}

fn duration_entry(key: &'static str, s: &Sourced<Duration>) -> Entry {
    Entry {
        key,
        value: serde_json::Value::String(humantime::format_duration(s.value).to_string()),
        origin: s.origin,
    }
}

impl Settings {
    /// Every setting under its config-file key, in file order.
    pub fn entries(&self) -> Vec<Entry> {
        vec![
            entry("probe.warn", &self.warn_pct),
            entry("probe.crit", &self.crit_pct),
            entry("reap.allow", &self.reap_allow),
            entry("reap.deny", &self.reap_deny),
            entry("reap.min_zombies", &self.min_zombies),
            entry("reap.max_targets", &self.max_targets),
            duration_entry("reap.grace", &self.grace),
            entry("reap.spare_active_sessions", &self.spare_active_sessions),
            duration_entry("liveness.idle_threshold", &self.idle_threshold),
            entry("liveness.cpu_active_pct", &self.cpu_active_pct),
            entry("emergency.enabled", &self.emergency_enabled),
            entry("emergency.free_pct", &self.emergency_free_pct),
            entry("emergency.recovery_pct", &self.emergency_recovery_pct),
            duration_entry("watch.interval", &self.watch_interval),
            entry("watch.auto_reap", &self.auto_reap),
            duration_entry("watch.reap_cooldown", &self.reap_cooldown),
            entry("watch.hangs", &self.watch_hangs),
            entry("notifications.enabled", &self.notifications),
            entry("hangs.allow", &self.hangs_allow),
            entry("hangs.deny", &self.hangs_deny),
            duration_entry("hangs.grace", &self.hangs_grace),
            duration_entry("hangs.cooldown", &self.hangs_cooldown),
            duration_entry("hangs.min_interval", &self.hangs_min_interval),
            entry("memory.guard", &self.memory_guards),
            duration_entry("memory.grace", &self.memory_grace),
            entry("memory.warn_pct", &self.memory_warn_pct),
        ]
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
    fn reap_liveness_and_emergency_sections() {
        let t = "[reap]\nallow = [\"agency\", \"claude\"]\ngrace = \"5s\"\nmin_zombies = 50\n\
                 [liveness]\nidle_threshold = \"3h\"\n[emergency]\nenabled = false\n";
        let s = Settings::parse(t, Path::new("c.toml")).unwrap();
        assert_eq!(s.reap_allow.value, vec!["agency", "claude"]);
        assert_eq!(s.grace.value, Duration::from_secs(5));
        assert_eq!(
            s.min_zombies,
            Sourced {
                value: 50,
                origin: Origin::File
            }
        );
        assert_eq!(s.max_targets.origin, Origin::Default);
        assert_eq!(s.idle_threshold.value, Duration::from_secs(3 * 3600));
        assert!(!s.emergency_enabled.value);
        for (bad, key) in [
            ("[reap]\ngrace = \"abc\"\n", "abc"),
            ("[reap]\nmin_zombies = 0\n", "reap.min_zombies"),
            ("[reap]\nmax_targets = -1\n", "max_targets"),
            ("[emergency]\nfree_pct = 120\n", "emergency.free_pct"),
            ("[liveness]\ncpu_active_pct = 0\n", "cpu_active_pct"),
        ] {
            let e = Settings::parse(bad, Path::new("c.toml")).unwrap_err();
            assert!(format!("{e:#}").contains(key), "{bad}: {e:#}");
            assert!(e.downcast_ref::<UsageError>().is_some());
        }
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
        let m = Settings::parse("[hangs]\nmin_interval = \"20s\"\n", Path::new("c.toml")).unwrap();
        assert_eq!(m.hangs_min_interval.value, Duration::from_secs(20));
        for bad in ["500ms", "2m"] {
            let t = format!("[hangs]\nmin_interval = \"{bad}\"\n");
            let e = Settings::parse(&t, Path::new("c.toml")).unwrap_err();
            assert!(
                format!("{e:#}").contains("must be between 1s and 1m"),
                "{e:#}"
            );
        }
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
    fn memory_guards_parse_and_bad_ones_name_the_entry() {
        let t = "[[memory.guard]]\npattern = \"cargo\"\nlimit = \"8G\"\n[[memory.guard]]\npattern = \"node\"\nlimit = \"512\"\n";
        let s = Settings::parse(t, Path::new("c.toml")).unwrap();
        let g = &s.memory_guards.value;
        assert_eq!(
            (g[0].pattern.as_str(), g[0].limit_bytes),
            ("cargo", 8 << 30)
        );
        assert_eq!(g[1].limit_bytes, 512 << 20);
        let ok = Settings::parse("[memory]\ngrace = \"60s\"\n", Path::new("c.toml")).unwrap();
        assert_eq!(
            ok.memory_grace.value,
            Duration::from_secs(60),
            "the bound is allowed"
        );
        for (bad, says) in [
            (
                "[[memory.guard]]\npattern = \"\"\nlimit = \"1G\"\n",
                "memory.guard[0]",
            ),
            (
                "[[memory.guard]]\npattern = \"x\"\nlimit = \"lots\"\n",
                "lots",
            ),
            ("[[memory.guard]]\npattern = \"x\"\n", "limit"),
            (
                "[[memory.guard]]\npattern = \"x\"\nlimit = \"512B\"\n",
                "too small a unit",
            ),
            ("[memory]\ngrace = \"61s\"\n", "memory.grace"),
            ("[memory]\ngrace = \"500000000000y\"\n", "at most 3650 days"),
        ] {
            let e = Settings::parse(bad, Path::new("c.toml")).unwrap_err();
            assert!(format!("{e:#}").contains(says), "{bad}: {e:#}");
        }
    }

    #[test]
    fn missing_explicit_file_is_an_error() {
        let e = Settings::load(Some(Path::new("/nonexistent/headroom.toml"))).unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/headroom.toml"));
    }
}
