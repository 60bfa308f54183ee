//! Ceilings → the effective process-slot limit and which ceiling binds (all OSes).
//!
//! The rule, learned on 2026-08-29 when a watchdog read only `kern.maxprocperuid` and showed
//! 67.5 % while fork() was failing against RLIMIT_NPROC: the effective limit is the minimum
//! over every readable ceiling the kernel enforces. An unreadable ceiling, or one ≤ 0, does
//! not constrain (a watchdog that sends SIGKILL must not manufacture pressure out of a failed
//! syscall); with nothing readable the limit is unknown, never "full". A ceiling that could
//! not be read (its value, or a shared one's use) may still be the tightest, so the limit
//! of the others is then only an upper bound (`EffectiveLimit::incomplete`): the reading's
//! level is a floor, never a confident "normal" (`reading::judged_level`). A shared ceiling
//! counts against what everybody else already holds.
//!
//! macOS, as xnu enforces it (`bsd/kern/kern_fork.c` `fork1`): the uid's process count is
//! compared with the parent's soft RLIMIT_NPROC and nothing else, and the table as a whole
//! with `kern.maxproc`, where a non-root user may not take the last slot (`nprocs >= maxproc
//! - 1 && uid != 0`). `kern.maxprocperuid` is never checked by fork: it only clamps what a
//! non-root `setrlimit(RLIMIT_NPROC)` may set (`kern_resource.c`) and seeds the login
//! RLIMIT_NPROC (`bsd_init.c`). So it is information here, judged `not-enforced` however a
//! snapshot recorded it: after `launchctl limit maxproc 4000 4000` every session's
//! RLIMIT_NPROC is 4,000 while `kern.maxprocperuid` stays 2,666, and fork allows ~3,800.

use serde::{Deserialize, Serialize};

/// Where a ceiling comes from; the kebab-case name is the stable `limit_source` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LimitSource {
    /// macOS `kern.maxprocperuid`: information (fork never checks it; see the module docs).
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
    /// False when the kernel does not apply it to this user (root and RLIMIT_NPROC), or to
    /// anyone (`kern.maxprocperuid`).
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
    // It may still be the tightest: `EffectiveLimit::incomplete` (a plain comment, so the
    // published schema's description stays as it was).
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

/// Why `kern.maxprocperuid` never constrains (the module docs).
pub const PER_UID_NOTE: &str = "fork never checks it (xnu compares the uid's processes with \
    RLIMIT_NPROC only); it caps what a non-root setrlimit(RLIMIT_NPROC), such as `ulimit -u`, may set";

impl EffectiveLimit {
    /// Whether a ceiling the kernel enforces could not be judged (its value, or a shared
    /// one's current use, unreadable): it may bind below `limit`, which is then an upper
    /// bound only (the usage a floor).
    pub fn incomplete(&self) -> bool {
        self.ceilings.iter().any(|c| {
            matches!(
                c.status,
                CeilingStatus::Unreadable | CeilingStatus::UsageUnknown
            )
        })
    }
}

/// Evaluate `ceilings` (in order of consideration: per-user ones first, because ties name
/// the per-user ceiling) against the `used` slots of `uid`.
pub fn effective_limit(ceilings: &[Ceiling], used: u64, uid: u32) -> EffectiveLimit {
    let mut evals: Vec<CeilingEval> = ceilings.iter().map(|c| evaluate(c, used, uid)).collect();
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

fn evaluate(c: &Ceiling, used: u64, uid: u32) -> CeilingEval {
    if c.source == LimitSource::PerUid {
        // Information only, whatever the recording says (older snapshots mark it enforced).
        let mut ceiling = c.clone();
        ceiling.enforced = false;
        ceiling.note = match (&c.note, c.enforced) {
            (None, _) => Some(PER_UID_NOTE.into()),
            // Recorded as enforced (an older snapshot): its note was about the value.
            (Some(n), true) => Some(format!("{n}; {PER_UID_NOTE}")),
            (Some(n), false) => Some(n.clone()),
        };
        return CeilingEval {
            ceiling,
            status: CeilingStatus::NotEnforced,
            effective: None,
            binds: false,
        };
    }
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
                        Some(
                            usable(c.source, v as u64, uid)
                                .saturating_sub(others)
                                .max(1),
                        ),
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

/// How much of a shared ceiling of `value` the processes of `uid` may fill with everyone
/// else's: all of `kern.maxproc` for root, all but the last slot for anyone else (xnu
/// `fork1`: "Don't allow a nonprivileged user to use the last process"). Linux's shared
/// ceilings keep nothing back.
pub fn usable(source: LimitSource, value: u64, uid: u32) -> u64 {
    match source {
        LimitSource::SystemWide if uid != 0 => value.saturating_sub(1),
        _ => value,
    }
}

/// What macOS's two per-uid traps compare: `kern.maxprocperuid` as read, whether or not it
/// constrains (it never is enforced, but it is the trap), and the RLIMIT_NPROC that
/// constrains; `None` unless both are known. `limits` words the trap it finds and `doctor`
/// checks the one where the sysctl is above the rlimit.
pub fn per_uid_and_rlimit(l: &EffectiveLimit) -> Option<(i64, i64)> {
    let constraining = |source| {
        l.ceilings
            .iter()
            .find(|c| c.ceiling.source == source && c.status == CeilingStatus::Constrains)?
            .ceiling
            .value
    };
    let read = |source| {
        l.ceilings
            .iter()
            .find(|c| c.ceiling.source == source && !c.ceiling.unlimited)?
            .ceiling
            .value
            .filter(|v| *v > 0)
    };
    Some((
        read(LimitSource::PerUid)?,
        constraining(LimitSource::RlimitNproc)?,
    ))
}

/// Which of macOS's two per-uid traps a `kern.maxprocperuid` and the RLIMIT_NPROC that
/// constrains (`per_uid_and_rlimit`) are in; `None` when they are equal. `limits` words
/// each; `doctor` checks the first against the system's own answer: one rule for both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerUidTrap {
    /// The sysctl is above the rlimit this session inherited at login: raising the sysctl
    /// raises nothing (`launchctl limit maxproc` and a new login do).
    InheritedRlimit,
    /// The rlimit is above the sysctl: fork does not check the sysctl, but a non-root
    /// `setrlimit(RLIMIT_NPROC)` is cut to it.
    SetrlimitCut,
}

/// The per-uid trap `per_uid` (the sysctl) and `rlimit` are in, if any.
pub fn per_uid_trap(per_uid: i64, rlimit: i64) -> Option<PerUidTrap> {
    match per_uid.cmp(&rlimit) {
        std::cmp::Ordering::Greater => Some(PerUidTrap::InheritedRlimit),
        std::cmp::Ordering::Less => Some(PerUidTrap::SetrlimitCut),
        std::cmp::Ordering::Equal => None,
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

    /// A user other than root.
    const U: u32 = 501;

    #[test]
    fn the_per_uid_trap_compares_the_sysctl_as_read_with_the_rlimit_that_constrains() {
        // kern.maxprocperuid never constrains, yet it is what the trap compares.
        let l = effective_limit(&mac(Some(4000), Some(2666), Some(4000), 10, 0), 10, U);
        assert_eq!(per_uid_and_rlimit(&l), Some((4000, 2666)));
        // Control: an unread sysctl, or an rlimit that does not constrain, is no comparison.
        let unread = effective_limit(&mac(None, Some(2666), Some(4000), 10, 0), 10, U);
        assert_eq!(per_uid_and_rlimit(&unread), None);
        let mut ceilings = mac(Some(4000), Some(2666), Some(4000), 10, 0);
        ceilings[1].enforced = false;
        let loose = effective_limit(&ceilings, 10, U);
        assert_eq!(per_uid_and_rlimit(&loose), None);
    }

    #[test]
    fn the_sysctl_above_the_rlimit_is_the_inherited_trap_and_below_it_the_setrlimit_cut() {
        assert_eq!(per_uid_trap(4000, 2666), Some(PerUidTrap::InheritedRlimit));
        assert_eq!(per_uid_trap(2666, 4000), Some(PerUidTrap::SetrlimitCut));
        assert_eq!(per_uid_trap(2666, 2666), None);
    }

    #[test]
    fn pl1_rlimit_binds_below_per_uid_on_the_night_of_2026_08_29() {
        let l = effective_limit(&mac(Some(4000), Some(2666), Some(4000), 2744, 0), 2744, U);
        assert_eq!(l.limit, Some(2666));
        assert_eq!(l.source, Some(LimitSource::RlimitNproc));
        assert!(l.ceilings[1].binds && !l.ceilings[0].binds);
    }

    #[test]
    fn pl3_rlimit_binds_under_a_large_maxproc() {
        let l = effective_limit(&mac(Some(4000), Some(2666), Some(10000), 10, 0), 10, U);
        assert_eq!(
            (l.limit, l.source),
            (Some(2666), Some(LimitSource::RlimitNproc))
        );
    }

    #[test]
    fn pl4_system_wide_binds_when_other_uids_hold_1500() {
        // Nobody else: RLIMIT_NPROC 4,000 against 3,999 of kern.maxproc (the last is root's).
        let l = effective_limit(&mac(Some(4000), Some(4000), Some(4000), 100, 0), 100, U);
        assert_eq!(
            (l.limit, l.source),
            (Some(3999), Some(LimitSource::SystemWide))
        );
        let l = effective_limit(&mac(Some(4000), Some(4000), Some(4000), 100, 1500), 100, U);
        assert_eq!(
            (l.limit, l.source),
            (Some(2499), Some(LimitSource::SystemWide))
        );
    }

    #[test]
    fn pl5_ties_name_the_per_user_ceiling_first() {
        let l = effective_limit(&mac(Some(2666), Some(2666), Some(2667), 0, 0), 0, U);
        assert_eq!(
            (l.limit, l.source),
            (Some(2666), Some(LimitSource::RlimitNproc))
        );
    }

    #[test]
    fn pl6_unreadable_ceilings_do_not_constrain() {
        let l = effective_limit(&mac(Some(4000), None, Some(6000), 10, 900), 10, U);
        assert_eq!(
            (l.limit, l.source),
            (Some(5099), Some(LimitSource::SystemWide))
        );
        assert_eq!(l.ceilings[1].status, CeilingStatus::Unreadable);
        assert!(l.incomplete(), "the unread one may be the tightest");
        // Control: every enforced ceiling read, or not enforced, or unlimited.
        let l = effective_limit(&mac(Some(4000), Some(2666), Some(6000), 10, 900), 10, U);
        assert!(!l.incomplete());
        let mut c = mac(Some(4000), Some(2666), Some(6000), 10, 900);
        c[1].value = None;
        c[1].enforced = false;
        assert!(!effective_limit(&c, 10, U).incomplete());
    }

    #[test]
    fn pl7_nothing_readable_is_unknown_never_full() {
        let l = effective_limit(&mac(Some(2666), Some(0), None, 3000, 0), 3000, U);
        assert_eq!((l.limit, l.source), (None, None));
        assert_eq!(l.ceilings[1].status, CeilingStatus::NonPositive);
        assert!(l.ceilings.iter().all(|c| !c.binds));
    }

    /// Issue 25 item 12, the breaking input: `sudo launchctl limit maxproc 4000 4000` gives
    /// every session RLIMIT_NPROC 4,000 while kern.maxprocperuid stays 2,666. fork checks
    /// RLIMIT_NPROC and kern.maxproc (less the last slot and what others hold), never
    /// kern.maxprocperuid: 2,100 processes are 55 % of 3,799, not "critical 78.8 %" of 2,666.
    #[test]
    fn kern_maxprocperuid_is_information_after_launchctl_raised_the_rlimit() {
        let l = effective_limit(&mac(Some(2666), Some(4000), Some(4000), 2100, 200), 2100, U);
        assert_eq!(
            (l.limit, l.source),
            (Some(3799), Some(LimitSource::SystemWide))
        );
        let per_uid = &l.ceilings[0];
        assert_eq!(per_uid.status, CeilingStatus::NotEnforced);
        assert!(!per_uid.ceiling.enforced && !per_uid.binds);
        assert_eq!(per_uid.effective, None);
        assert_eq!(per_uid.ceiling.value, Some(2666), "kept, as information");
        assert!(
            per_uid
                .ceiling
                .note
                .as_deref()
                .unwrap()
                .contains("fork never checks it")
        );
        // Control, the default machine: RLIMIT_NPROC inherited from kern.maxprocperuid at
        // login binds at the same 2,666, named for what fork checks.
        let l = effective_limit(&mac(Some(2666), Some(2666), Some(4000), 2100, 200), 2100, U);
        assert_eq!(
            (l.limit, l.source),
            (Some(2666), Some(LimitSource::RlimitNproc))
        );
        // And with RLIMIT_NPROC unreadable, kern.maxprocperuid does not stand in for it.
        let l = effective_limit(&mac(Some(2666), None, Some(4000), 2100, 200), 2100, U);
        assert_eq!(l.source, Some(LimitSource::SystemWide));
    }

    /// A snapshot recorded before this rule marks kern.maxprocperuid enforced: it is judged
    /// by the kernel's rule all the same, its own note kept beside the reason.
    #[test]
    fn an_older_recording_of_kern_maxprocperuid_is_not_enforced_either() {
        let mut c = mac(Some(2666), Some(4000), Some(4000), 2100, 200);
        c[0].note = Some("read at login".into());
        let l = effective_limit(&c, 2100, U);
        assert_eq!(l.ceilings[0].status, CeilingStatus::NotEnforced);
        let note = l.ceilings[0].ceiling.note.clone().unwrap();
        assert!(
            note.starts_with("read at login; fork never checks"),
            "{note}"
        );
    }

    /// Root may fill kern.maxproc to the last slot; anyone else one less (xnu fork1), and
    /// Linux's shared ceilings keep nothing back.
    #[test]
    fn the_last_process_slot_is_roots() {
        let c = mac(Some(2666), Some(4000), Some(4000), 100, 200);
        assert_eq!(effective_limit(&c, 100, U).limit, Some(3799));
        let mut root = c.clone();
        root[1].enforced = false;
        assert_eq!(effective_limit(&root, 100, 0).limit, Some(3800));
        let t = [shared(LimitSource::ThreadsMax, Some(1000), 300)];
        assert_eq!(effective_limit(&t, 50, U).limit, Some(750));
        assert_eq!(usable(LimitSource::PidMax, 10, U), 10);
    }

    #[test]
    fn system_wide_floor_is_one_slot() {
        let l = effective_limit(&mac(None, None, Some(4000), 10, 5000), 10, U);
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
            U,
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
        let l = effective_limit(&[s], 10, U);
        assert_eq!(l.limit, None);
        assert_eq!(l.ceilings[0].status, CeilingStatus::UsageUnknown);
        assert!(l.incomplete());
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
