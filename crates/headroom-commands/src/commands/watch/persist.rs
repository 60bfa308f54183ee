//! What `watch` keeps in the state directory: the alert and cooldown state between rounds
//! and runs, the reading history, and the evidence rows (kept in memory while they cannot
//! be written).

use serde::{Deserialize, Serialize};

use crate::commands::watch::Watcher;
use crate::commands::watch::events::Severity;
use crate::core::alerts::AlertState;
use crate::core::reading::{self, Reading, Trend};
use crate::store::evidence::{EvidenceLog, Row};
use crate::store::state::{self, Loaded, load_json, save_json};

const STATE_FILE: &str = "watch-state.json";
/// Evidence rows kept in memory while the state directory cannot be written (a full disk),
/// written out in order as soon as it can be: a week of readings at the default 60 s
/// interval, about 4 MB. Past it the oldest are dropped, and a notice says how many.
pub(super) const MAX_PENDING_ROWS: usize = 10_000;

/// What survives between rounds, and between `watch --once` runs from cron.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct Persisted {
    pub(super) alerts: AlertState,
    /// Unix ms of the last cleanup that had targets (the cooldown).
    pub(super) last_cleanup_ms: Option<i64>,
}

impl Watcher<'_, '_> {
    pub(super) fn load_state(&mut self) {
        if self.ctx.replaying() {
            return;
        }
        let dir = match crate::store::paths::ensure_state_dir() {
            Ok(d) => self.state_dir.insert(d),
            Err(e) => {
                self.notice(
                    Severity::Error,
                    &format!("{e:#}; readings are kept in memory until it can be written"),
                );
                return;
            }
        };
        match load_json::<Persisted>(&dir.join(STATE_FILE)) {
            Ok(Loaded::Ok(p)) => self.persisted = p,
            Ok(Loaded::Missing) => {}
            Ok(Loaded::Corrupt { aside, error }) => {
                let m = format!(
                    "watch state was corrupt ({error}); kept it as `{}` and started fresh",
                    aside.display()
                );
                self.notice(Severity::Warning, &m);
            }
            Err(e) => self.notice(Severity::Error, &format!("{e:#}")),
        }
    }

    pub(super) fn save_state(&mut self) {
        let Some(dir) = self.state_dir.clone() else {
            return;
        };
        // Unchanged state (most rounds) is not rewritten.
        let now = serde_json::to_string(&self.persisted).ok();
        if now.is_some() && now == self.saved {
            return;
        }
        // Remembered only once written: a failed write (a full disk) is retried next round.
        match save_json(&dir.join(STATE_FILE), &self.persisted) {
            Ok(()) => self.saved = now,
            Err(e) => self.notice(Severity::Error, &format!("{e:#}")),
        }
    }

    /// History and the evidence row; rows that cannot be written wait in memory.
    pub(super) fn record(&mut self, r: &Reading) -> Trend {
        let none = Trend::none(0);
        if self.state_dir.is_none() && !self.ctx.replaying() {
            self.state_dir = crate::store::paths::ensure_state_dir().ok();
        }
        let Some(dir) = self.state_dir.clone() else {
            return none;
        };
        if !dir.is_dir() {
            // Removed while we run (a cleanup script, `rm -rf ~/.local/state`): made again.
            if let Err(e) = crate::store::paths::create_private_dir(&dir) {
                self.notice(Severity::Error, &format!("{e:#}"));
            }
        }
        let trend = match state::record_reading(&dir, r.uid, r.sample()) {
            Ok(h) => reading::trend(&h.samples, r.limit.limit),
            Err(e) => {
                self.notice(Severity::Error, &format!("{e:#}"));
                none
            }
        };
        self.pending.push(Row::poll(r, Some(&trend)));
        self.write_pending(&dir);
        trend
    }

    /// Write the rows waiting in memory, in order; those that cannot be written stay (at
    /// most [`MAX_PENDING_ROWS`], the oldest dropped first, said).
    pub(super) fn write_pending(&mut self, dir: &std::path::Path) {
        if self.pending.len() > MAX_PENDING_ROWS {
            let drop = self.pending.len() - MAX_PENDING_ROWS;
            self.pending.drain(..drop);
            self.notice(
                Severity::Error,
                &format!(
                    "{drop} evidence rows dropped: the state directory has been unwritable too long"
                ),
            );
        }
        // Rows written before a failure are not offered again (no duplicates); the rest
        // stay, in order.
        let done = EvidenceLog::new(dir).append_some(&self.pending);
        self.pending.drain(..done.written);
        if let Some(e) = done.error {
            let m = format!(
                "{e:#}; {} evidence rows kept in memory (at most {MAX_PENDING_ROWS}) and retried next round",
                self.pending.len()
            );
            self.notice(Severity::Error, &m);
        }
    }
}
