//! The hang monitor's restart clock: how long ago an identity was last restarted, and which
//! restart times may be forgotten. Measured on the boot clock (`HangRound::boot_ms`) when the
//! round and the restart both have it, so that a wall clock stepped forward cannot end a
//! cooldown early and one stepped back cannot stretch it; on the wall clock otherwise.

use crate::hangs::{HangRound, MAX_TRACKED, MonitorState, RESTART_RETENTION_MS};

/// How long ago the last restart of `identity` was, at least, or `None` for none. On the
/// boot clock when both the restart and this round have it: within one boot that is exact
/// whatever the wall clock did; across a reboot (the clock went back) at least this boot's
/// uptime has passed, and a positive difference never overstates it (the boot clock never
/// runs ahead of real time). Otherwise (a recorded round, an older state file) the wall.
pub(crate) fn since_restart(
    state: &MonitorState,
    identity: &str,
    round: &HangRound,
) -> Option<i64> {
    let wall = *state.restarts.get(identity)?;
    Some(elapsed(
        wall,
        state.restarts_boot.get(identity).copied(),
        round,
    ))
}

fn elapsed(wall: i64, boot: Option<i64>, round: &HangRound) -> i64 {
    boot_elapsed(boot, round).unwrap_or_else(|| round.at_ms.saturating_sub(wall))
}

fn boot_elapsed(boot: Option<i64>, round: &HangRound) -> Option<i64> {
    match (boot, round.boot_ms) {
        (Some(then), Some(now)) if now >= then => Some(now - then),
        (Some(_), Some(now)) => Some(now),
        _ => None,
    }
}

/// Restart times older than 24 h go; so do times more than 24 h in the future (a clock
/// that was wrong), which would otherwise never be pruned, unless the boot clock says the
/// restart is within the cooldown (a wall clock set back by a day right after it). Past
/// the cap, the oldest times that are older than the cooldown go too; a time within the
/// cooldown is never forgotten (that would allow a second restart within it), so a stuffed
/// state file may stay over the cap, and no restart is made until it is back under.
pub(crate) fn prune_restarts(state: &mut MonitorState, round: &HangRound, cooldown: i64) {
    let now = round.at_ms;
    let boot = &state.restarts_boot;
    state.restarts.retain(|k, t| {
        now.saturating_sub(*t).saturating_abs() < RESTART_RETENTION_MS
            || boot_elapsed(boot.get(k).copied(), round).is_some_and(|e| e < cooldown)
    });
    while state.restarts.len() >= MAX_TRACKED {
        let oldest = state
            .restarts
            .iter()
            .filter(|(k, t)| elapsed(**t, state.restarts_boot.get(*k).copied(), round) >= cooldown)
            .min_by_key(|(_, t)| **t)
            .map(|(k, _)| k.clone());
        match oldest {
            Some(k) => state.restarts.remove(&k),
            None => break,
        };
    }
    let restarts = &state.restarts;
    state.restarts_boot.retain(|k, _| restarts.contains_key(k));
}
