//! The config file's sections, one per command, each value declared once: its file key, its
//! type, its default and the rule a file value must pass (`section!` writes the rest — the
//! file struct serde reads, `Default`, the overlay of the file, the `headroom config` rows).
//!
//! A refusal names the key, the value as written and the rule, e.g. "reap.min_zombies `0`
//! must be at least 1".

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{ListedSetting, Sourced};
use crate::core::memory_guard::Rule;

/// How a value is shown by `headroom config`: durations as the user writes them (`2m`),
/// the rest as JSON.
pub(super) trait Show {
    fn show(&self) -> serde_json::Value;
}

impl Show for Duration {
    fn show(&self) -> serde_json::Value {
        serde_json::Value::String(humantime::format_duration(*self).to_string())
    }
}

macro_rules! show_as_json {
    ($($t:ty),*) => {$(
        impl Show for $t {
            fn show(&self) -> serde_json::Value {
                serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
            }
        }
    )*};
}
show_as_json!(
    f64,
    u64,
    bool,
    Vec<String>,
    Vec<Rule>,
    PressureMode,
    Vec<ToolGroup>,
    Option<Vec<String>>
);

/// `[memory] pressure`: whether `watch` and `run --limit` wait on the OS's memory-pressure
/// signal (PSI, dispatch) beside their timer. `off` leaves the timer only: for a kernel whose
/// trigger misbehaves, and to measure what the signal buys (`bench/pressure_reaction.sh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PressureMode {
    /// The signal where the OS has one, else the timer.
    Auto,
    /// The timer only.
    Off,
}

/// A group of `headroom mcp`'s tools: a flag value first (`--tools`), so `cli` holds it.
pub use crate::cli::ToolGroup;

/// A refused file value: the key and what is wrong with the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidValue {
    pub key: &'static str,
    /// Follows the key: "`0` must be at least 1", or "[2] has an empty `pattern`…" for an
    /// entry of a list of tables.
    pub rule: String,
}

impl std::fmt::Display for InvalidValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sep = if self.rule.starts_with('[') { "" } else { " " };
        write!(f, "{}{sep}{}", self.key, self.rule)
    }
}

/// One `[section]`: `field: Type = default, file FileType => rule;` per key, in the order
/// `headroom config` lists them. `rule` turns the file's value into the setting or says why
/// not.
macro_rules! section {
    (
        $(#[$meta:meta])*
        $name:ident, $file:ident, $key:literal {
            $(
                $(#[$fmeta:meta])*
                $field:ident: $ty:ty = $default:expr, file $fty:ty => $rule:expr;
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize)]
        pub struct $name {
            $( $(#[$fmeta])* pub $field: Sourced<$ty>, )*
        }

        impl Default for $name {
            fn default() -> Self {
                Self { $( $field: Sourced::default($default), )* }
            }
        }

        #[derive(Debug, Default, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub(super) struct $file {
            $( $field: Option<$fty>, )*
        }

        impl $name {
            /// The defaults, overlaid with what the file sets, each value checked by its rule.
            pub(super) fn from_file(file: $file) -> Result<Self, InvalidValue> {
                let mut s = Self::default();
                $(
                    if let Some(v) = file.$field {
                        let v: $ty = ($rule)(v).map_err(|rule| InvalidValue {
                            key: concat!($key, ".", stringify!($field)),
                            rule,
                        })?;
                        s.$field = s.$field.with_file(v);
                    }
                )*
                Ok(s)
            }

            pub(super) fn entries(&self, out: &mut Vec<ListedSetting>) {
                $(
                    out.push(ListedSetting {
                        key: concat!($key, ".", stringify!($field)),
                        value: self.$field.value.show(),
                        origin: self.$field.origin,
                    });
                )*
            }
        }
    };
}

// --- Rules ---------------------------------------------------------------------------------

fn any<T>(v: T) -> Result<T, String> {
    Ok(v)
}

fn at_least_one(v: u64) -> Result<u64, String> {
    if v == 0 {
        return Err(format!("`{v}` must be at least 1"));
    }
    Ok(v)
}

/// In (0, 100]: a share of a limit or of a core.
fn pct_above_zero(v: f64) -> Result<f64, String> {
    if !(v > 0.0 && v <= 100.0) {
        return Err(format!(
            "`{v}` must be a percentage above 0 and at most 100"
        ));
    }
    Ok(v)
}

/// In [0, 100]: a share of memory.
fn pct(v: f64) -> Result<f64, String> {
    if !(0.0..=100.0).contains(&v) {
        return Err(format!("`{v}` must be a percentage from 0 to 100"));
    }
    Ok(v)
}

/// In (0, 100): warning at 100% would be the limit itself.
fn pct_below_limit(v: f64) -> Result<f64, String> {
    if !(v > 0.0 && v < 100.0) {
        return Err(format!("`{v}` must be above 0 and below 100"));
    }
    Ok(v)
}

/// A positive duration written like `90s` or `2h`.
fn duration(text: String) -> Result<Duration, String> {
    crate::cli::parse_duration(&text)
}

/// A duration within `[min, max]`, named as written.
fn duration_within(min: Duration, max: Duration) -> impl Fn(String) -> Result<Duration, String> {
    move |text| {
        let d = duration(text.clone())?;
        if d < min || d > max {
            return Err(format!(
                "`{text}` must be between {} and {}",
                humantime::format_duration(min),
                humantime::format_duration(max)
            ));
        }
        Ok(d)
    }
}

fn interval(text: String) -> Result<Duration, String> {
    let d = duration(text)?;
    super::check_interval(d)?;
    Ok(d)
}

fn tool_groups(list: Vec<String>) -> Result<Vec<ToolGroup>, String> {
    let mut out = Vec::new();
    for t in &list {
        let g = match t.as_str() {
            "read" => ToolGroup::Read,
            "act" => ToolGroup::Act,
            "run" => ToolGroup::Run,
            _ => return Err(format!("entry `{t}` must be \"read\", \"act\" or \"run\"")),
        };
        if !out.contains(&g) {
            out.push(g);
        }
    }
    Ok(out)
}

/// `[mcp] run_allow`: program names (looked up in PATH) or absolute paths.
fn programs(list: Vec<String>) -> Result<Option<Vec<String>>, String> {
    for p in &list {
        if p.trim().is_empty() || p.trim() != p {
            return Err(format!(
                "entry `{p}` must be a program name or an absolute path"
            ));
        }
        if p.contains('/') && !p.starts_with('/') {
            return Err(format!(
                "entry `{p}` is a relative path; use a name or an absolute path"
            ));
        }
    }
    Ok(Some(list))
}

fn pressure_mode(text: String) -> Result<PressureMode, String> {
    match text.as_str() {
        "auto" => Ok(PressureMode::Auto),
        "off" => Ok(PressureMode::Off),
        _ => Err(format!("`{text}` must be \"auto\" or \"off\"")),
    }
}

/// `[reap] allow/deny`: plain substrings, held to the one pattern rule.
fn patterns(list: Vec<String>) -> Result<Vec<String>, String> {
    crate::core::patterns::check_all(&list)?;
    Ok(list)
}

/// `[hangs] allow/deny`: bundle ids or absolute bundle paths, each matching one app exactly,
/// held to the one pattern rule too (`/`, `*`, `com.*` would match nothing here, and as a
/// deny entry deny nothing).
fn bundles(list: Vec<String>) -> Result<Vec<String>, String> {
    for entry in &list {
        let e = crate::sanitize::sanitize(entry);
        if entry.trim().is_empty() || entry.trim() != entry {
            return Err(format!(
                "entry `{e}` must be a bundle id or an absolute bundle path"
            ));
        }
        if entry.contains('/') && !entry.starts_with('/') {
            return Err(format!(
                "entry `{e}` is a relative path; use an absolute bundle path"
            ));
        }
        if let Err(why) = crate::core::patterns::check(entry) {
            return Err(format!("entry `{e}` is refused: {why}"));
        }
        if entry.starts_with('/') && !crate::core::hangs::eligibility::is_app_bundle_path(entry) {
            return Err(format!(
                "entry `{e}` is not an app bundle path (`/Applications/Name.app`): an entry \
                 matches one app exactly, never a folder"
            ));
        }
    }
    Ok(list)
}

/// `[[memory.guard]]`: a name pattern and a limit, enforced by `watch`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GuardFile {
    pattern: String,
    limit: String,
}

fn guards(list: Vec<GuardFile>) -> Result<Vec<Rule>, String> {
    let mut rules = Vec::with_capacity(list.len());
    for (i, g) in list.iter().enumerate() {
        if g.pattern.trim().is_empty() {
            return Err(format!(
                "[{i}] has an empty `pattern`, which would match nothing"
            ));
        }
        if let Err(why) = crate::core::patterns::check(&g.pattern) {
            return Err(format!(
                "[{i}] `pattern` `{}` is refused: {why}",
                crate::sanitize::sanitize(g.pattern.trim())
            ));
        }
        let limit_bytes =
            crate::cli::parse_size(&g.limit).map_err(|m| format!("[{i}] `limit` {m}"))?;
        rules.push(Rule {
            pattern: g.pattern.trim().to_string(),
            limit_bytes,
        });
    }
    Ok(rules)
}

/// The longest grace between SIGTERM and SIGKILL, one bound for `[reap] grace` (and
/// `reap --grace`, checked in its plan) and `[memory] grace`: a guard's grace holds
/// `watch`'s round, and a cleanup's keeps slots a SIGKILL would free taken at the wall.
pub(crate) const GRACE_MAX: Duration = Duration::from_secs(60);
/// `[hangs] grace` bounds: a restart must not stall a round for long.
pub(crate) const HANGS_GRACE_MAX: Duration = Duration::from_secs(60);
/// `[hangs] cooldown` bounds: at least the hour the seed requires, at most the 24 h that
/// restart times are kept.
pub(crate) const HANGS_COOLDOWN_MIN: Duration = Duration::from_secs(3600);
pub(crate) const HANGS_COOLDOWN_MAX: Duration = Duration::from_secs(24 * 3600);

const fn secs(s: u64) -> Duration {
    Duration::from_secs(s)
}

fn min_interval_bounds() -> (Duration, Duration) {
    let (lo, hi) = crate::core::hangs::MIN_ROUND_GAP_RANGE_MS;
    (
        Duration::from_millis(lo.unsigned_abs()),
        Duration::from_millis(hi.unsigned_abs()),
    )
}

// --- Sections ------------------------------------------------------------------------------

section! {
    /// `[probe]`: the thresholds of `probe`, `limits`, `watch` and the evidence chart.
    ProbeSection, ProbeFile, "probe" {
        /// Warning threshold, percent of the effective limit.
        warn: f64 = 50.0, file f64 => pct_above_zero;
        /// Critical threshold, percent of the effective limit.
        crit: f64 = 75.0, file f64 => pct_above_zero;
    }
}

section! {
    /// `[reap]`: which parents `reap` (and `watch`'s cleanup) may end, and how.
    ReapSection, ReapFile, "reap" {
        allow: Vec<String> = vec!["agency".to_string()], file Vec<String> => patterns;
        deny: Vec<String> = Vec::new(), file Vec<String> => patterns;
        min_zombies: u64 = 100, file u64 => at_least_one;
        max_targets: u64 = 10, file u64 => at_least_one;
        /// Wait between SIGTERM and SIGKILL (100 ms to 60 s, checked with `--grace` in
        /// `reap`'s plan).
        grace: Duration = secs(2), file String => duration;
        spare_active_sessions: bool = true, file bool => any;
    }
}

section! {
    /// `[liveness]`: when a session counts as finished.
    LivenessSection, LivenessFile, "liveness" {
        idle_threshold: Duration = secs(2 * 3600), file String => duration;
        /// CPU share of one core, in percent, below which a session child did no work.
        cpu_active_pct: f64 = 0.1, file f64 => pct_above_zero;
    }
}

impl LivenessSection {
    /// The CPU a session child must use between readings to count as working, as a fraction
    /// of one core: `cpu_active_pct`, or the default when it is not positive.
    pub fn active_fraction(&self) -> f64 {
        match self.cpu_active_pct.value {
            v if v > 0.0 => v / 100.0,
            _ => crate::core::liveness::DEFAULT_ACTIVE_FRACTION,
        }
    }
}

section! {
    /// `[emergency]`: relaxing the session guard at the wall.
    EmergencySection, EmergencyFile, "emergency" {
        enabled: bool = true, file bool => any;
        free_pct: f64 = 5.0, file f64 => pct;
        recovery_pct: f64 = 75.0, file f64 => pct;
    }
}

section! {
    /// `[watch]`: the guard's rounds.
    WatchSection, WatchFile, "watch" {
        interval: Duration = secs(60), file String => interval;
        auto_reap: bool = true, file bool => any;
        reap_cooldown: Duration = secs(120), file String => duration;
        /// Run a hangs round after each slot round (macOS).
        hangs: bool = true, file bool => any;
    }
}

section! {
    /// `[notifications]`.
    NotificationsSection, NotificationsFile, "notifications" {
        enabled: bool = true, file bool => any;
    }
}

section! {
    /// `[hangs]`: which apps `hangs` (and `watch`'s hangs round) may restart, and how.
    HangsSection, HangsFile, "hangs" {
        /// Regular apps to act on despite the default Apple/system-path exclusion.
        allow: Vec<String> = Vec::new(), file Vec<String> => bundles;
        /// Apps (or the service) never acted on.
        deny: Vec<String> = Vec::new(), file Vec<String> => bundles;
        /// Wait between SIGTERM and SIGKILL.
        grace: Duration = secs(3),
            file String => duration_within(Duration::from_millis(100), HANGS_GRACE_MAX);
        /// At most one automatic restart per app in this long.
        cooldown: Duration = HANGS_COOLDOWN_MIN,
            file String => duration_within(HANGS_COOLDOWN_MIN, HANGS_COOLDOWN_MAX);
        /// Rounds closer than this count as one observation.
        min_interval: Duration = secs(5), file String => {
            let (lo, hi) = min_interval_bounds();
            duration_within(lo, hi)
        };
    }
}

section! {
    /// `[memory]`: `watch`'s memory guards and the warning before a limit.
    MemorySection, MemoryFile, "memory" {
        /// `[[memory.guard]]`: name patterns and their limits.
        guard: Vec<Rule> = Vec::new(), file Vec<GuardFile> => guards;
        /// Wait between SIGTERM and SIGKILL when a guard ends a tree (it holds the round).
        grace: Duration = secs(5),
            file String => duration_within(Duration::from_millis(1), GRACE_MAX);
        /// Warn once at this percentage of a memory limit, before anything is done.
        warn_pct: f64 = crate::core::memory_warn::DEFAULT_WARN_PCT, file f64 => pct_below_limit;
        /// Wait on the OS's memory-pressure signal (`auto`) or on the timer only (`off`).
        pressure: PressureMode = PressureMode::Auto, file String => pressure_mode;
    }
}

section! {
    /// `[mcp]`: what `headroom mcp` offers an agent.
    McpSection, McpFile, "mcp" {
        /// The groups of tools offered (`--tools` overrides it): read, act, run.
        tools: Vec<ToolGroup> = vec![ToolGroup::Read, ToolGroup::Act, ToolGroup::Run],
            file Vec<String> => tool_groups;
        /// The only programs run_limited may start, by name (looked up in PATH) or absolute
        /// path; unset: any program.
        run_allow: Option<Vec<String>> = None, file Vec<String> => programs;
    }
}
