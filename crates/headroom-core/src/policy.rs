//! Reap candidate selection: every safety rule, in a fixed order, each with a stable reason
//! name (all OSes, pure). Every rule here was added after a measurement showed the previous
//! set was insufficient; see the OpenZombr seed, "Safety rules for the killer".
//!
//! Order: the unconditional protections (pid ≤ 1, foreign uid, headroom and its ancestors,
//! zombie parent) come first and nothing unlocks them; then the session guard (the only rule
//! the emergency override may relax, and never for an unreadable signal); then the
//! allow/deny policy, the zombie threshold and the run limit.

use std::collections::HashMap;

use serde::Serialize;

use crate::emergency::{Emergency, oldest_sign_of_life_first, relief};
use crate::liveness::{Session, SessionVerdict};
use crate::patterns::AllowDeny;
use crate::process_table::ProcessTable;
use crate::snapshot::Identity;

/// Why a parent holding zombies was not targeted. The kebab-case names are stable (JSON, CSV).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    InitProcess,
    ForeignUid,
    ProtectedAncestor,
    ParentIsZombie,
    ParentUnreadable,
    SessionSignalUnavailable,
    HasActiveSession,
    EmergencyReliefReached,
    NotPermittedByPolicy,
    BelowZombieThreshold,
    RunLimitReached,
}

impl SkipReason {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InitProcess => "init-process",
            Self::ForeignUid => "foreign-uid",
            Self::ProtectedAncestor => "protected-ancestor",
            Self::ParentIsZombie => "parent-is-zombie",
            Self::ParentUnreadable => "parent-unreadable",
            Self::SessionSignalUnavailable => "session-signal-unavailable",
            Self::HasActiveSession => "has-active-session",
            Self::EmergencyReliefReached => "emergency-relief-reached",
            Self::NotPermittedByPolicy => "not-permitted-by-policy",
            Self::BelowZombieThreshold => "below-zombie-threshold",
            Self::RunLimitReached => "run-limit-reached",
        }
    }

    /// The session gave no basis for a decision.
    pub fn is_blind(self) -> bool {
        self == Self::SessionSignalUnavailable
    }

    /// For people.
    pub fn describe(self) -> &'static str {
        match self {
            Self::InitProcess => "pid 0 and 1 are never touched",
            Self::ForeignUid => "belongs to another user",
            Self::ProtectedAncestor => "headroom itself or one of its ancestors",
            Self::ParentIsZombie => "the parent is itself a zombie",
            Self::ParentUnreadable => "the parent could not be read (gone, or no identity)",
            Self::SessionSignalUnavailable => "session signals unreadable: no basis for a decision",
            Self::HasActiveSession => "hosts an active session",
            Self::EmergencyReliefReached => {
                "active session; the emergency relief is already projected"
            }
            Self::NotPermittedByPolicy => "not permitted by the allow/deny policy",
            Self::BelowZombieThreshold => "fewer zombies than the threshold",
            Self::RunLimitReached => "the per-run target limit is reached",
        }
    }
}

/// Every tunable of the selection.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Policy {
    #[serde(flatten)]
    pub allow_deny: AllowDeny,
    /// A parent with fewer zombies is skipped (`< N`), so exactly N is a candidate.
    pub min_zombies: u64,
    pub max_targets: usize,
    /// Spare parents whose session is active or unreadable.
    pub spare_sessions: bool,
    #[serde(
        rename = "idle_threshold_seconds",
        serialize_with = "crate::serialize::seconds"
    )]
    #[schemars(with = "i64")]
    pub idle_threshold_s: f64,
    pub emergency: Emergency,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
#[schemars(rename = "Verdict")]
pub enum ReapVerdict {
    Target,
    Skipped,
}

/// One parent holding zombies, and what was decided about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    pub pid: i32,
    pub name: String,
    pub exe: Option<String>,
    pub zombies: u64,
    pub verdict: ReapVerdict,
    pub reason: Option<SkipReason>,
    pub session: Session,
    pub session_verdict: SessionVerdict,
    /// `Some("emergency")` when the override relaxed the session guard for this target.
    #[serde(rename = "override")]
    pub override_: Option<&'static str>,
    #[serde(skip)]
    pub identity: Option<Identity>,
}

impl Decision {
    pub fn is_target(&self) -> bool {
        self.verdict == ReapVerdict::Target
    }
}

/// The decision table, in candidate order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Selection {
    pub decisions: Vec<Decision>,
    /// The emergency trigger fired (free slots at or below the threshold).
    pub pressure: bool,
    /// Slots projected to be in use once every target is gone.
    pub projected_used: u64,
}

impl Selection {
    pub fn targets(&self) -> impl Iterator<Item = &Decision> {
        self.decisions.iter().filter(|d| d.is_target())
    }

    pub fn skipped_for(&self, reason: SkipReason) -> usize {
        self.decisions
            .iter()
            .filter(|d| d.reason == Some(reason))
            .count()
    }

    pub fn used_override(&self) -> bool {
        self.decisions.iter().any(|d| d.override_.is_some())
    }
}

/// What the selection is made against.
#[derive(Debug, Clone, Copy)]
pub struct Situation<'a, 't> {
    pub table: &'t ProcessTable<'a>,
    /// The user whose slots are counted.
    pub uid: u32,
    /// headroom's own pid: it and every ancestor are protected, recomputed from this table.
    pub self_pid: i32,
    /// More of headroom's ancestors, read directly where this table has a gap in the chain
    /// (`ProcessTable::ancestry`); protected too.
    pub ancestry: &'t [i32],
    pub used: u64,
    pub limit: Option<u64>,
    pub sessions: &'t HashMap<i32, Session>,
}

/// Decide about every parent holding the user's zombies.
pub fn select(s: Situation<'_, '_>, policy: &Policy) -> Selection {
    select_among(s, policy, None)
}

/// Decide again, on a fresh table, about `only` these parents (by identity): the gate before
/// `reap`'s SIGKILL, asking which grace survivors are still targets. Every other parent is
/// left out of the table entirely, so it neither takes a place under the run limit nor
/// counts toward the emergency relief (it will not be signalled); a survivor whose zombies
/// are gone is no zombie parent and is not chosen.
pub fn select_among(s: Situation<'_, '_>, policy: &Policy, only: Option<&[Identity]>) -> Selection {
    let mut protected = s.table.self_and_ancestors(s.self_pid);
    protected.extend_from_slice(s.ancestry);
    let emergency = policy.emergency.clamped();
    let pressure = emergency.under_pressure(s.used, s.limit);
    // A parent nobody assessed has no known session: unreadable, never "no session".
    let unknown = Session::unknown();

    let mut rows: Vec<(crate::snapshot::ZombieParent, &Session, SessionVerdict)> = s
        .table
        .zombie_parents(s.uid)
        .into_iter()
        .filter(|zp| {
            only.is_none_or(|ids| {
                (zp.record.as_ref().and_then(|r| r.identity())).is_some_and(|i| ids.contains(&i))
            })
        })
        .map(|zp| {
            let session = s.sessions.get(&zp.pid).unwrap_or(&unknown);
            let verdict = session.verdict(policy.idle_threshold_s);
            (zp, session, verdict)
        })
        .collect();
    // Not active first, biggest offender first; then the active ones by oldest sign of life.
    let busy = |v: SessionVerdict| matches!(v, SessionVerdict::Active | SessionVerdict::Unreadable);
    rows.sort_by(|(a, sa, va), (b, sb, vb)| {
        busy(*va).cmp(&busy(*vb)).then_with(|| {
            if busy(*va) {
                oldest_sign_of_life_first(
                    (sa.log_age_s, sa.cpu_idle_s, a.zombies, a.pid),
                    (sb.log_age_s, sb.cpu_idle_s, b.zombies, b.pid),
                )
            } else {
                b.zombies.cmp(&a.zombies).then(a.pid.cmp(&b.pid))
            }
        })
    });

    let mut projected = s.used;
    let mut taken = 0usize;
    let mut decisions = Vec::with_capacity(rows.len());
    for (zp, session, sverdict) in rows {
        let record = zp.record.as_ref();
        let mut override_ = None;
        let reason = (|| {
            if zp.pid <= 1 {
                return Some(SkipReason::InitProcess);
            }
            let Some(r) = record else {
                return Some(SkipReason::ParentUnreadable);
            };
            if r.uid != s.uid {
                return Some(SkipReason::ForeignUid);
            }
            if protected.contains(&zp.pid) {
                return Some(SkipReason::ProtectedAncestor);
            }
            if r.is_zombie() {
                return Some(SkipReason::ParentIsZombie);
            }
            if r.identity().is_none() {
                return Some(SkipReason::ParentUnreadable);
            }
            if policy.spare_sessions {
                match sverdict {
                    SessionVerdict::Unreadable => {
                        return Some(SkipReason::SessionSignalUnavailable);
                    }
                    SessionVerdict::Active if !pressure => {
                        return Some(SkipReason::HasActiveSession);
                    }
                    SessionVerdict::Active if !emergency.needs_more_relief(projected, s.limit) => {
                        return Some(SkipReason::EmergencyReliefReached);
                    }
                    SessionVerdict::Active => override_ = Some("emergency"),
                    SessionVerdict::Idle | SessionVerdict::NoSession => {}
                }
            }
            if !policy.allow_deny.permits(&r.name, r.exe.as_deref()) {
                return Some(SkipReason::NotPermittedByPolicy);
            }
            if zp.zombies < policy.min_zombies {
                return Some(SkipReason::BelowZombieThreshold);
            }
            if taken >= policy.max_targets {
                return Some(SkipReason::RunLimitReached);
            }
            None
        })();
        if reason.is_some() {
            override_ = None;
        } else {
            taken += 1;
            projected = projected.saturating_sub(relief(zp.zombies));
        }
        decisions.push(Decision {
            pid: zp.pid,
            name: zp.name.clone(),
            exe: record.and_then(|r| r.exe.clone()),
            zombies: zp.zombies,
            verdict: if reason.is_none() {
                ReapVerdict::Target
            } else {
                ReapVerdict::Skipped
            },
            reason,
            session: session.clone(),
            session_verdict: sverdict,
            override_,
            identity: record.and_then(|r| r.identity()),
        });
    }
    Selection {
        decisions,
        pressure,
        projected_used: projected,
    }
}

#[cfg(test)]
mod emergency_tests;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod protections_tests;

#[cfg(test)]
mod props;
