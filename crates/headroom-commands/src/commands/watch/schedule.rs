//! Which rounds read the whole process table (`core::round_plan`). While every task on the machine
//! together is far below the warning threshold of the effective limit, the user's own slots are
//! too, and a round reads only that count and the ceilings (`ProcessSource::slot_bound`: one
//! `pread` of `/proc/loadavg`, and two per pids cgroup level with a limit, on Linux; one call, two
//! sysctls and a `getrlimit` on macOS): it prints nothing, records nothing and writes no state,
//! since nothing it could report has changed. The rounds that read the table are the first, every
//! round once the bound nears the threshold (so the reaction at the wall is unchanged: the bound is
//! above the user's count, and crosses the margin first), every round while the last reading or the
//! confirmed alert is above normal, every round with memory guards or parked trees (their own full
//! read runs anyway) or a cleanup in flight, and one at least every `--table-every` (by default
//! `core::round_plan::EXACT_EVERY_MS`) for the trend and the evidence row. `--once` and a table
//! that is not the live one (`--snapshot`, `--proc-root`) always read it.

use std::time::{Duration, Instant};

use crate::commands::watch::Watcher;
use crate::core::reading::Level;
use crate::core::round_plan::{self, Round, RoundFacts, Why};

/// What the schedule keeps between rounds.
#[derive(Debug)]
pub(super) struct Schedule {
    /// `--table-every` (ms).
    every_ms: u64,
    /// The last round that read the table: when, and its reading's level (`Unknown` when
    /// the read failed).
    last_exact: Option<(Instant, Level)>,
    /// Rounds that read only the bound.
    pub(super) quiet: u64,
}

impl Schedule {
    pub(super) fn new(table_every: Option<Duration>) -> Self {
        Self {
            every_ms: table_every.map_or(round_plan::EXACT_EVERY_MS, |d| {
                u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
            }),
            last_exact: None,
            quiet: 0,
        }
    }
}

impl Watcher<'_, '_> {
    /// Whether this round may read only the bound; counted when it does.
    pub(super) fn quiet_round(&mut self) -> bool {
        if self.once || self.ctx.redirected().is_some() {
            return false;
        }
        let now = self.clock.now();
        // Memory guards read the table anyway; a cleanup in flight reports in the round.
        let table_needed = !self.ctx.settings.memory.guard.value.is_empty()
            || !self.parked.is_empty()
            || self.cleaner.busy();
        let mut facts = RoundFacts {
            bound: None,
            thresholds: self.thresholds,
            last_exact: self
                .schedule
                .last_exact
                .map(|(at, level)| (now.saturating_duration_since(at).as_millis() as u64, level)),
            confirmed: self.persisted.alerts.confirmed,
            table_needed,
            exact_every_ms: self.schedule.every_ms,
        };
        // The bound is read only when it alone decides.
        if round_plan::plan(&facts) != Round::Exact(Why::NoBound) {
            return false;
        }
        let bound = self.source.slot_bound();
        facts.bound = bound.as_deref();
        let quiet = matches!(round_plan::plan(&facts), Round::Wait { .. });
        if quiet {
            self.schedule.quiet += 1;
        }
        quiet
    }

    /// A round read the table (or failed to): its level.
    pub(super) fn read_the_table(&mut self, level: Level) {
        self.schedule.last_exact = Some((self.clock.now(), level));
    }
}
