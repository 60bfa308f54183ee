//! `reap`'s plan and `watch`'s cleanup plan: the `[reap]`, `[liveness]`, `[emergency]` and
//! `[probe]` sections with `reap`'s flags over them, and the rules that bind the resolved
//! values whatever their origin.

use std::time::Duration;

use anyhow::Result;

use crate::cli::ReapArgs;
use crate::config::{GRACE_MAX, Settings};
use crate::core::emergency::Emergency;
use crate::core::liveness::RECKLESS_THRESHOLD_S;
use crate::core::patterns::{AllowDeny, Patterns};
use crate::core::policy::Policy;
use crate::core::reap_plan::ReapPlan;
use crate::exit::UsageError;

/// The shortest idle threshold `reap` and `watch` accept.
pub(crate) const MIN_IDLE_THRESHOLD: Duration = Duration::from_secs(60);
/// The shortest grace between SIGTERM and SIGKILL.
pub(crate) const MIN_GRACE: Duration = Duration::from_millis(100);

/// `reap`'s plan: its flags (`None` for `watch`'s cleanup, which has none) over the `[reap]`,
/// `[liveness]`, `[emergency]` and `[probe]` sections of `s`. `redirected` is the flag that
/// points the process table away from the live OS (`Ctx::redirected`); `dry_run` decides
/// nothing here but whether it is refused.
pub fn reap_plan(
    s: &Settings,
    flags: Option<&ReapArgs>,
    redirected: Option<&str>,
    dry_run: bool,
) -> Result<ReapPlan> {
    let mut warnings = Vec::new();
    let allow = (s.reap.allow.clone())
        .with_flag(flags.and_then(|a| (!a.allow.is_empty()).then(|| a.allow.clone())));
    // The denylist only ever grows: patterns from the command line are added to the
    // configured ones (an allowlist from the command line replaces the configured one).
    let deny = s.reap.deny.clone().with_flag(flags.and_then(|a| {
        (!a.deny.is_empty()).then(|| {
            let mut merged = s.reap.deny.value.clone();
            merged.extend(a.deny.iter().cloned());
            merged
        })
    }));
    let allow_deny = AllowDeny {
        allow: Patterns::new(&allow.value),
        deny: Patterns::new(&deny.value),
    };
    // The one pattern rule (`core::patterns::check`), for the flags and MCP's arguments;
    // the config file's lists were held to it when read.
    for (list, raw) in [("allow", &allow.value), ("deny", &deny.value)] {
        crate::core::patterns::check_all(raw).map_err(|e| UsageError(format!("{list} {e}")))?;
    }
    if allow_deny.allow.is_empty() {
        warnings.push("the allowlist is empty, so it matches nothing: no parent will be selected (fail-closed)".into());
    }
    let min = s
        .reap
        .min_zombies
        .clone()
        .with_flag(flags.and_then(|a| a.min_zombies));
    let max = s
        .reap
        .max_targets
        .clone()
        .with_flag(flags.and_then(|a| a.max_targets));
    let grace = s.reap.grace.clone().with_flag(flags.and_then(|a| a.grace));
    let idle = (s.liveness.idle_threshold.clone()).with_flag(flags.and_then(|a| a.idle_threshold));
    if idle.value < MIN_IDLE_THRESHOLD {
        return Err(UsageError(format!(
            "idle threshold `{}` is refused: reap and watch need at least 60s (a live session \
             between turns would read as finished; idle-watch, which never signals, may go lower)",
            humantime::format_duration(idle.value)
        ))
        .into());
    }
    if grace.value < MIN_GRACE {
        return Err(UsageError(format!(
            "grace `{}` is refused: at least 100ms, or SIGTERM is never given a chance",
            humantime::format_duration(grace.value)
        ))
        .into());
    }
    if grace.value > GRACE_MAX {
        return Err(UsageError(format!(
            "grace `{}` is refused: at most {} (as `[memory] grace`), or the slots a SIGKILL \
             would free stay taken that long at the wall",
            humantime::format_duration(grace.value),
            humantime::format_duration(GRACE_MAX)
        ))
        .into());
    }
    let idle_s = idle.value.as_secs_f64();
    if idle_s < RECKLESS_THRESHOLD_S {
        warnings.push(format!(
            "idle threshold `{}` is below 30 min: a live session between turns will read as finished",
            humantime::format_duration(idle.value)
        ));
    }
    let emergency = Emergency {
        enabled: s.emergency.enabled.value && !flags.is_some_and(|a| a.no_emergency),
        free_fraction: s.emergency.free_pct.value / 100.0,
        recovery_fraction: s.emergency.recovery_pct.value / 100.0,
    };
    if let Some(flag) = redirected.filter(|_| !dry_run) {
        return Err(UsageError(format!(
            "reap {flag} needs --dry-run: a recorded or redirected process table cannot be acted on"
        ))
        .into());
    }
    let (_, thresholds) = s.probe.with_flags(None, None, s.file.as_deref())?;
    Ok(ReapPlan {
        policy: Policy {
            allow_deny,
            min_zombies: min.value,
            max_targets: usize::try_from(max.value).unwrap_or(usize::MAX),
            spare_sessions: s.reap.spare_active_sessions.value,
            idle_threshold_s: idle_s,
            emergency,
        },
        grace: grace.value,
        dry_run,
        active_fraction: s.liveness.active_fraction(),
        thresholds,
        warnings,
    })
}
