//! One check round decided (the lifecycle in `hangs`'s module comment): pending, confirmed,
//! restart or blocked per app, the interface's absence clearing everything pending; and the
//! record of a restart performed, the only thing that starts the cooldown.

use std::collections::BTreeMap;

use crate::hangs::cooldown::{prune_restarts, since_restart};
use crate::hangs::{
    AppDecision, AppObservation, CONFIRM_ROUNDS, COOLDOWN_MS, HangRound, HangState, Ineligible,
    MAX_ROUND_GAP_MS, MAX_TRACKED, MIN_ROUND_GAP_RANGE_MS, MonitorConfig, MonitorState, Pending,
    RecoveryKind, RoundOutcome, eligibility,
};

/// The round being decided (its `at_ms` is the clock) and its pace, as `round` read it
/// from the config and the state.
struct Pace<'a> {
    round: &'a HangRound,
    cooldown: i64,
    min_gap: i64,
    /// The previous round is recent enough for this one to continue its observations.
    consecutive: bool,
}

/// The maps this round rebuilds, as it goes through the apps.
#[derive(Default)]
struct Next {
    observations: BTreeMap<String, Pending>,
    blocked: BTreeMap<String, i64>,
    /// Restarts decided this round, not yet recorded (`record_restart` follows the act): they
    /// count against the cap on restart times as if they were.
    decided: usize,
}

/// Run one round: update `state` and say what to do. Pure: `round.at_ms` is the clock.
pub fn round(state: &mut MonitorState, round: &HangRound, cfg: &MonitorConfig) -> RoundOutcome {
    let now = round.at_ms;
    let cooldown = cfg.cooldown_ms.max(COOLDOWN_MS);
    let (lo, hi) = MIN_ROUND_GAP_RANGE_MS;
    let pace = Pace {
        round,
        cooldown,
        min_gap: cfg.min_gap_ms.clamp(lo, hi),
        consecutive: state
            .last_round_ms
            .is_some_and(|last| now >= last && now - last <= MAX_ROUND_GAP_MS),
    };
    prune_restarts(state, round, cooldown);
    state.last_round_ms = Some(now);

    if !round.available {
        return unavailable(state, round);
    }

    let verdicts: Vec<Result<RecoveryKind, Ineligible>> =
        round.apps.iter().map(|a| eligibility(a, cfg)).collect();
    let instances = instances(round, &verdicts);
    let mut next = Next::default();
    let mut decisions = Vec::new();
    for (app, verdict) in round.apps.iter().zip(verdicts.iter().cloned()) {
        if app.responsive {
            continue;
        }
        decisions.push(decide(state, &pace, app, verdict, &instances, &mut next));
    }
    keep_blocked(state, round, &mut next.blocked);
    state.observations = next.observations;
    state.blocked = next.blocked;
    RoundOutcome {
        at_ms: now,
        available: true,
        unavailable_reason: None,
        checked: round.apps.len(),
        decisions,
        cleared_pending: 0,
    }
}

/// The interface was not there: every pending observation is cleared, nothing is done.
fn unavailable(state: &mut MonitorState, round: &HangRound) -> RoundOutcome {
    let cleared = state.observations.len();
    state.observations.clear();
    RoundOutcome {
        at_ms: round.at_ms,
        available: false,
        unavailable_reason: round.unavailable_reason.clone(),
        checked: 0,
        decisions: Vec::new(),
        cleared_pending: cleared,
    }
}

/// Eligible processes per identity: two of them (`open -n`) cannot be told apart by
/// identity, so neither is acted on; an ineligible lookalike does not count.
fn instances<'a>(
    round: &'a HangRound,
    verdicts: &[Result<RecoveryKind, Ineligible>],
) -> BTreeMap<&'a str, usize> {
    let mut instances: BTreeMap<&str, usize> = BTreeMap::new();
    for (app, v) in round.apps.iter().zip(verdicts) {
        if v.is_ok() {
            *instances.entry(app.identity()).or_default() += 1;
        }
    }
    instances
}

/// The decision on one unresponsive `app`; what it leaves pending or blocked goes to `next`.
fn decide(
    state: &MonitorState,
    pace: &Pace<'_>,
    app: &AppObservation,
    verdict: Result<RecoveryKind, Ineligible>,
    instances: &BTreeMap<&str, usize>,
    next: &mut Next,
) -> AppDecision {
    let identity = app.identity().to_string();
    let mut d = AppDecision {
        app: app.clone(),
        identity: identity.clone(),
        kind: None,
        state: HangState::Ignored,
        reason: None,
        rounds: 0,
        cooldown_until_ms: None,
        detected: false,
        restart: false,
        newly_blocked: false,
    };
    let eligible =
        verdict.and_then(
            |kind| match instances.get(identity.as_str()).copied().unwrap_or(0) {
                n if n > 1 => Err(Ineligible::SharedIdentity(n)),
                _ if next.observations.len() >= MAX_TRACKED => Err(Ineligible::TooMany),
                _ => Ok(kind),
            },
        );
    let kind = match eligible {
        Ok(k) => k,
        Err(reason) => {
            d.reason = Some(reason.to_string());
            return d;
        }
    };
    d.kind = Some(kind);
    if let Some(held) = app.held() {
        // Neither pending nor blocked is carried on: both maps are rebuilt from this
        // round, and a held app enters neither.
        d.state = held;
        d.reason = Some(held_reason(held));
        return d;
    }
    let (mut pending, too_soon) = observe(state, pace, app, &identity);
    d.rounds = pending.rounds;
    d.cooldown_until_ms = since_restart(state, &identity, pace.round)
        .filter(|elapsed| *elapsed < pace.cooldown)
        .map(|elapsed| pace.round.at_ms.saturating_add(pace.cooldown - elapsed));
    settle(state, pace, &identity, too_soon, &mut d, &mut pending, next);
    next.observations.insert(identity, pending);
    d
}

fn held_reason(held: HangState) -> String {
    match held {
        HangState::Traced => {
            "a debugger holds it (traced): it cannot answer until released; never restarted".into()
        }
        _ => "stopped (parked, SIGSTOP): it cannot answer until continued; never restarted".into(),
    }
}

/// This round's observation of `app`, counted on from the pending one of the same process
/// when the rounds are consecutive; and whether it came too soon after the last counted one
/// to count.
fn observe(
    state: &MonitorState,
    pace: &Pace<'_>,
    app: &AppObservation,
    identity: &str,
) -> (Pending, bool) {
    let now = pace.round.at_ms;
    let prev = state
        .observations
        .get(identity)
        .filter(|p| pace.consecutive && p.pid == app.pid && p.start_time == app.start_time);
    // An observation too soon after the last counted one is the same observation: it
    // neither counts as a round nor moves the time the next one is measured from.
    let last_ms = prev.map(|p| p.last_ms.unwrap_or(p.since_ms));
    let too_soon = last_ms.is_some_and(|l| now.saturating_sub(l) < pace.min_gap);
    let rounds = match prev {
        None => 1,
        Some(p) if too_soon => p.rounds,
        Some(p) => p.rounds.saturating_add(1),
    };
    let counted_ms = if too_soon {
        last_ms.unwrap_or(now)
    } else {
        now
    };
    let pending = Pending {
        pid: app.pid,
        start_time: app.start_time,
        rounds,
        since_ms: prev.map_or(now, |p| p.since_ms),
        last_ms: Some(counted_ms),
        attempts: prev.map_or(0, |p| p.attempts),
    };
    (pending, too_soon)
}

/// Where the counted observation leaves the app: still blocked, pending or cooling down,
/// newly blocked (confirmed within the cooldown), confirmed with a restart to retry at a
/// counted round, refused for want of room to record a restart, or restarted.
fn settle(
    state: &MonitorState,
    pace: &Pace<'_>,
    identity: &str,
    too_soon: bool,
    d: &mut AppDecision,
    pending: &mut Pending,
    next: &mut Next,
) {
    let attempts = pending.attempts;
    if let Some(since) = state.blocked.get(identity) {
        // Blocked lasts until the app responds or goes from the list, whatever happens
        // to the round count (a gap, a relaunch between two rounds): notified once.
        next.blocked.insert(identity.to_string(), *since);
        d.state = HangState::Blocked;
        d.reason = Some("still unresponsive; already reported".into());
    } else if pending.rounds < CONFIRM_ROUNDS {
        d.state = if d.cooldown_until_ms.is_some() {
            HangState::CoolingDown
        } else {
            HangState::Pending
        };
    } else if d.cooldown_until_ms.is_some() {
        next.blocked.insert(identity.to_string(), pace.round.at_ms);
        d.state = HangState::Blocked;
        d.detected = true;
        d.newly_blocked = true;
        d.reason = Some(format!(
            "unresponsive again within {} min of an automatic restart",
            pace.cooldown / 60_000
        ));
    } else if too_soon && attempts > 0 {
        // Confirmed before, and the restart then performed nothing (a performed one would
        // have started the cooldown): tried again only at a counted round.
        d.state = HangState::Confirmed;
        d.reason =
            Some("the last restart performed nothing; it is tried again at the next round".into());
    } else if !state.restarts.contains_key(identity)
        && state.restarts.len().saturating_add(next.decided) >= MAX_TRACKED
    {
        // Forgetting a restart time to make room would allow a second restart within the
        // cooldown: refuse instead (the observation is kept; it restarts once room frees).
        d.kind = None;
        d.state = HangState::Ignored;
        d.reason = Some(format!(
            "{MAX_TRACKED} apps were restarted within the cooldown: no room to record \
             another restart, so none is made"
        ));
    } else {
        next.decided += 1;
        d.state = HangState::Confirmed;
        // Detected once per observation: a retry of a restart that performed nothing is
        // not a new detection.
        d.detected = attempts == 0;
        d.restart = true;
        if attempts > 0 {
            d.reason = Some(format!(
                "restart tried again: {} earlier attempt(s) performed nothing",
                attempts
            ));
        }
        pending.attempts = attempts.saturating_add(1);
    }
}

/// Blocked lasts until the app responds or quits, whatever the instance count does: an
/// identity skipped this round (a second instance, `open -n`) that is still unresponsive
/// stays blocked, so it is not notified again when the extra instance goes.
fn keep_blocked(state: &MonitorState, round: &HangRound, blocked: &mut BTreeMap<String, i64>) {
    for (identity, since) in &state.blocked {
        let still = round
            .apps
            .iter()
            .any(|a| !a.responsive && a.held().is_none() && a.identity() == identity.as_str());
        if still && !blocked.contains_key(identity) && blocked.len() < MAX_TRACKED {
            blocked.insert(identity.clone(), *since);
        }
    }
}
/// Record that the restart `round` decided for `identity` was performed (something was
/// signalled; in a replay or dry run, planned): this, and only this, starts the cooldown. A
/// restart refused before acting, or one that signalled nothing, is not recorded, so the app
/// is neither reported as unresponsive "again after a restart" nor kept from a retry.
pub fn record_restart(state: &mut MonitorState, identity: &str, round: &HangRound) {
    state.restarts.insert(identity.to_string(), round.at_ms);
    match round.boot_ms {
        Some(b) => state.restarts_boot.insert(identity.to_string(), b),
        None => state.restarts_boot.remove(identity),
    };
}
