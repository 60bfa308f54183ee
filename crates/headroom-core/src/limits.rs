//! Ceilings → the effective process-slot limit and which ceiling binds (all OSes).
//!
//! The rule, learned on 2026-08-29 when a watchdog read only `kern.maxprocperuid` and showed
//! 67.5 % while fork() was failing against RLIMIT_NPROC: the effective limit is the minimum
//! over every readable ceiling. An unreadable ceiling, or one ≤ 0, does not constrain (a
//! watchdog that sends SIGKILL must not manufacture pressure out of a failed syscall); with
//! nothing readable the limit is unknown, never "full". A shared ceiling counts against what
//! everybody else already holds.

use serde::{Deserialize, Serialize};

/// Where a ceiling comes from; the kebab-case name is the stable `limit_source` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LimitSource {
    /// macOS `kern.maxprocperuid`.
    PerUid,
    /// Soft RLIMIT_NPROC of this process (inherited at login on macOS).
    RlimitNproc,
    /// The cgroup's `pids.max` (Linux).
    CgroupPids,
    /// macOS `kern.maxproc`.
    SystemWide,
    /// Linux `kernel.threads-max`.
    ThreadsMax,
    /// Linux `kernel.pid_max`.
    PidMax,
}

impl LimitSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PerUid => "per-uid",
            Self::RlimitNproc => "rlimit-nproc",
            Self::CgroupPids => "cgroup-pids",
            Self::SystemWide => "system-wide",
            Self::ThreadsMax => "threads-max",
            Self::PidMax => "pid-max",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::PerUid,
            Self::RlimitNproc,
            Self::CgroupPids,
            Self::SystemWide,
            Self::ThreadsMax,
            Self::PidMax,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
}

impl std::fmt::Display for LimitSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a ceiling's value is compared against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Scope {
    /// The user's own slots (per-uid, RLIMIT_NPROC).
    User,
    /// Shared with everyone: `in_use` is what all users together hold now.
    Shared,
}

/// One ceiling exactly as read, before any judgement. Recorded in snapshots.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Ceiling {
    pub source: LimitSource,
    /// The value read; null when it could not be read.
    pub value: Option<i64>,
    /// The value is "unlimited" (RLIM_INFINITY, `max`).
    #[serde(default)]
    pub unlimited: bool,
    pub scope: Scope,
    /// For shared ceilings: slots held by everyone together (tasks or processes).
    #[serde(default)]
    pub in_use: Option<u64>,
    /// Where it was read from, e.g. `sysctl kern.maxprocperuid`.
    pub origin: String,
    /// False when the kernel does not apply it to this user (root and RLIMIT_NPROC).
    #[serde(default = "yes")]
    pub enforced: bool,
    /// Why the value is missing or not enforced.
    #[serde(default)]
    pub note: Option<String>,
}

fn yes() -> bool {
    true
}

/// How one ceiling was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CeilingStatus {
    /// Readable and counted.
    Constrains,
    /// Could not be read: does not constrain.
    Unreadable,
    /// Read as ≤ 0: treated as unreadable.
    NonPositive,
    Unlimited,
    NotEnforced,
    /// A shared ceiling whose current use could not be read.
    UsageUnknown,
}

/// A ceiling with its judgement and its limit expressed in the user's own slots.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CeilingEval {
    #[serde(flatten)]
    pub ceiling: Ceiling,
    pub status: CeilingStatus,
    /// The ceiling as a limit on the user's slots (shared ceilings minus what others hold).
    pub effective: Option<u64>,
    pub binds: bool,
}

/// The effective limit and the evaluation of every ceiling.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffectiveLimit {
    pub limit: Option<u64>,
    pub source: Option<LimitSource>,
    pub ceilings: Vec<CeilingEval>,
}

/// Evaluate `ceilings` (in order of consideration: per-user ones first, because ties name
/// the per-user ceiling) against the user's `used` slots.
pub fn effective_limit(ceilings: &[Ceiling], used: u64) -> EffectiveLimit {
    let mut evals: Vec<CeilingEval> = ceilings.iter().map(|c| evaluate(c, used)).collect();
    let mut best: Option<(usize, u64)> = None;
    for (i, e) in evals.iter().enumerate() {
        if let Some(v) = e.effective {
            if best.is_none_or(|(_, b)| v < b) {
                best = Some((i, v));
            }
        }
    }
    if let Some((i, _)) = best {
        evals[i].binds = true;
    }
    EffectiveLimit {
        limit: best.map(|(_, v)| v),
        source: best.map(|(i, _)| evals[i].ceiling.source),
        ceilings: evals,
    }
}

fn evaluate(c: &Ceiling, used: u64) -> CeilingEval {
    let (status, effective) = match c.value {
        _ if !c.enforced => (CeilingStatus::NotEnforced, None),
        _ if c.unlimited => (CeilingStatus::Unlimited, None),
        None => (CeilingStatus::Unreadable, None),
        Some(v) if v <= 0 => (CeilingStatus::NonPositive, None),
        Some(v) => match c.scope {
            Scope::User => (CeilingStatus::Constrains, Some(v as u64)),
            Scope::Shared => match c.in_use {
                // max(1, limit − slots held by others); floor 1 = "no headroom" is real.
                Some(all) => {
                    let others = all.saturating_sub(used);
                    (
                        CeilingStatus::Constrains,
                        Some((v as u64).saturating_sub(others).max(1)),
                    )
                }
                None => (CeilingStatus::UsageUnknown, None),
            },
        },
    };
    CeilingEval {
        ceiling: c.clone(),
        status,
        effective,
        binds: false,
    }
}

#[cfg(any(test, feature = "fixtures"))]
pub mod fixture {
    //! Ceilings for tests, here and in the main crate (the `fixtures` feature).
    use super::*;

    pub fn user(source: LimitSource, value: Option<i64>) -> Ceiling {
        Ceiling {
            source,
            value,
            unlimited: false,
            scope: Scope::User,
            in_use: None,
            origin: "test".into(),
            enforced: true,
            note: None,
        }
    }

    pub fn shared(source: LimitSource, value: Option<i64>, in_use: u64) -> Ceiling {
        Ceiling {
            scope: Scope::Shared,
            in_use: Some(in_use),
            ..user(source, value)
        }
    }

    /// The three macOS ceilings; `foreign` processes of other uids share `kern.maxproc`.
    pub fn mac(
        per_uid: Option<i64>,
        rlimit: Option<i64>,
        maxproc: Option<i64>,
        used: u64,
        foreign: u64,
    ) -> Vec<Ceiling> {
        vec![
            user(LimitSource::PerUid, per_uid),
            user(LimitSource::RlimitNproc, rlimit),
            shared(LimitSource::SystemWide, maxproc, used + foreign),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::fixture::*;
    use super::*;

    #[test]
    fn pl1_rlimit_binds_below_per_uid_on_the_night_of_2026_08_29() {
        let l = effective_limit(&mac(Some(4000), Some(2666), Some(4000), 2744, 0), 2744);
        assert_eq!(l.limit, Some(2666));
        assert_eq!(l.source, Some(LimitSource::RlimitNproc));
        assert!(l.ceilings[1].binds && !l.ceilings[0].binds);
    }

    #[test]
    fn pl3_rlimit_binds_under_a_large_maxproc() {
        let l = effective_limit(&mac(Some(4000), Some(2666), Some(10000), 10, 0), 10);
        assert_eq!(
            (l.limit, l.source),
            (Some(2666), Some(LimitSource::RlimitNproc))
        );
    }

    #[test]
    fn pl4_system_wide_binds_when_other_uids_hold_1500() {
        let l = effective_limit(&mac(Some(4000), Some(4000), Some(4000), 100, 0), 100);
        assert_eq!((l.limit, l.source), (Some(4000), Some(LimitSource::PerUid)));
        let l = effective_limit(&mac(Some(4000), Some(4000), Some(4000), 100, 1500), 100);
        assert_eq!(
            (l.limit, l.source),
            (Some(2500), Some(LimitSource::SystemWide))
        );
    }

    #[test]
    fn pl5_ties_name_the_per_user_ceiling_first() {
        let l = effective_limit(&mac(Some(2666), Some(2666), Some(2666), 0, 0), 0);
        assert_eq!((l.limit, l.source), (Some(2666), Some(LimitSource::PerUid)));
    }

    #[test]
    fn pl6_unreadable_ceilings_do_not_constrain() {
        let l = effective_limit(&mac(Some(4000), None, None, 10, 900), 10);
        assert_eq!((l.limit, l.source), (Some(4000), Some(LimitSource::PerUid)));
        assert_eq!(l.ceilings[1].status, CeilingStatus::Unreadable);
    }

    #[test]
    fn pl7_nothing_readable_is_unknown_never_full() {
        let l = effective_limit(&mac(Some(0), None, None, 3000, 0), 3000);
        assert_eq!((l.limit, l.source), (None, None));
        assert_eq!(l.ceilings[0].status, CeilingStatus::NonPositive);
        assert!(l.ceilings.iter().all(|c| !c.binds));
    }

    #[test]
    fn system_wide_floor_is_one_slot() {
        let l = effective_limit(&mac(None, None, Some(4000), 10, 5000), 10);
        assert_eq!(l.limit, Some(1));
    }

    #[test]
    fn unlimited_and_not_enforced_do_not_constrain() {
        let mut r = user(LimitSource::RlimitNproc, Some(100));
        r.enforced = false;
        let mut u = user(LimitSource::RlimitNproc, Some(i64::MAX));
        u.unlimited = true;
        let l = effective_limit(
            &[r, u, shared(LimitSource::ThreadsMax, Some(1000), 300)],
            50,
        );
        assert_eq!(l.ceilings[0].status, CeilingStatus::NotEnforced);
        assert_eq!(l.ceilings[1].status, CeilingStatus::Unlimited);
        assert_eq!(
            (l.limit, l.source),
            (Some(750), Some(LimitSource::ThreadsMax))
        );
    }

    #[test]
    fn shared_ceiling_with_unknown_use_does_not_constrain() {
        let mut s = shared(LimitSource::PidMax, Some(100), 0);
        s.in_use = None;
        let l = effective_limit(&[s], 10);
        assert_eq!(l.limit, None);
        assert_eq!(l.ceilings[0].status, CeilingStatus::UsageUnknown);
    }

    #[test]
    fn source_names_round_trip() {
        for s in [
            "per-uid",
            "rlimit-nproc",
            "cgroup-pids",
            "system-wide",
            "threads-max",
            "pid-max",
        ] {
            assert_eq!(LimitSource::parse(s).map(|x| x.as_str()), Some(s));
        }
        assert_eq!(LimitSource::parse("bogus"), None);
    }
}
