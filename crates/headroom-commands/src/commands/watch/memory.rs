//! `watch`'s memory round: the guarded trees' warnings, the memory guards (parked trees
//! re-judged, breaching trees enforced like `run --limit`), and the pressure source firing
//! between rounds.

use crate::actions::memory_guard;
use crate::commands::watch::events::Severity;
use crate::commands::watch::events::WatchEvent;
use crate::commands::watch::{Watcher, park_journal, pressure};
use crate::core::memory_guard::{Guarded, breaches, guarded};
use crate::core::time::format_ms;
use crate::platform;

impl Watcher<'_, '_> {
    /// The warning step before a guard acts: one `approaching-limit` event and notification
    /// per crossing of `[memory] warn_pct` (`core::memory_warn`), for the trees the round's
    /// one pass found (`core::memory_guard::guarded`).
    fn guard_warnings(&mut self, trees: &[Guarded]) {
        let lines: Vec<(i32, u64, u64)> = trees
            .iter()
            .map(|t| (t.root, t.footprint_bytes, t.effective_bytes))
            .collect();
        let warn_pct = self.ctx.settings.memory.warn_pct.value;
        for (root, a) in self.warn_lines.round(&lines, warn_pct) {
            let Some(t) = trees.iter().find(|t| t.root == root) else {
                continue;
            };
            let e = WatchEvent::ApproachingLimit {
                at: format_ms(platform::now_ms()),
                root,
                name: t.name.clone(),
                pattern: t.pattern.clone(),
                footprint_bytes: a.footprint_bytes,
                limit_bytes: a.limit_bytes,
                pct: a.pct,
                warn_pct: a.warn_pct,
            };
            let body = e.human();
            self.emit(&e);
            if self.notify {
                if let Err(err) = self.notifier.post("headroom: memory limit near", &body) {
                    self.notice(Severity::Info, &format!("notification not posted: {err}"));
                }
            }
        }
    }

    /// The pressure source fired (or went away) between rounds.
    pub(super) fn on_pressure(&mut self, fired: pressure::EarlyWake) {
        use pressure::EarlyWake;
        match fired {
            EarlyWake::Pressure => {
                self.notice(
                    Severity::Info,
                    "memory pressure: running the memory guards now",
                );
                self.memory_guards();
            }
            EarlyWake::Gone(what) => {
                self.notice(
                    Severity::Warning,
                    &format!("memory pressure source lost: {what}"),
                );
            }
        }
    }

    /// The configured memory guards: wake what was parked once its tree is well under its
    /// limit again, then enforce every breaching tree (like `run --limit`).
    pub(super) fn memory_guards(&mut self) {
        // The settings outlive `self`'s borrow: no copy of the rules each round.
        let ctx = self.ctx;
        let rules = &ctx.settings.memory.guard.value;
        if rules.is_empty() && self.parked.is_empty() {
            return;
        }
        // Full detail: footprints (macOS reads them only then) and identities.
        let Some(snap) = self.full_snapshot("the memory guards") else {
            return;
        };
        let snap = &snap;
        let table = crate::core::process_table::ProcessTable::new(snap);
        let free = snap.memory.map(|m| m.free_pct());
        // One pass over the table: the warnings and the breaches both come from it.
        let trees = guarded(&table, rules, free);
        self.guard_warnings(&trees);
        let opts = memory_guard::EnforceOptions {
            park: !self.once,
            grace: self.ctx.settings.memory.grace.value,
        };
        let mut events = Vec::new();
        let mut errors = Vec::new();
        {
            let native = platform::native_control(self.source.as_ref());
            // Every process is recorded before it is stopped (`park_journal.rs`).
            let control = park_journal::Journaled {
                inner: native.as_ref(),
                journal: &self.journal,
            };
            // Parked trees are re-judged every round: woken when under (or gone), kept
            // between 90 % and the limit, ended when over (they are among the breaches).
            for p in self.parked.rejudge(snap) {
                memory_guard::wake(&control, &p.ids);
            }
            let mut taken = Vec::new();
            let targets: Vec<memory_guard::BreachingTree> = breaches(&trees)
                .into_iter()
                .map(|breach| {
                    let before = self.parked.take(breach.identity);
                    let parked_before = before.as_ref().map(|p| p.ids.clone()).unwrap_or_default();
                    taken.push(before);
                    memory_guard::BreachingTree {
                        breach,
                        parked_before,
                    }
                })
                .collect();
            if !targets.is_empty() {
                match memory_guard::enforce(
                    self.source.as_ref(),
                    &control,
                    snap,
                    targets,
                    self.clock.as_ref(),
                    opts,
                ) {
                    Ok(reports) => {
                        for r in reports {
                            self.parked.remember(&r);
                            events.push(WatchEvent::Memory(Box::new(r)));
                        }
                    }
                    Err(e) => {
                        // Not acted on: what was parked stays tracked.
                        for before in taken {
                            self.parked.put_back(before);
                        }
                        errors.push(format!("memory guard failed: {e:#}"));
                    }
                }
            }
        }
        self.sync_parked();
        for e in events {
            self.emit(&e);
        }
        for e in errors {
            self.notice(Severity::Error, &e);
        }
    }

    /// The record of parked processes follows the parked trees; its lines are said.
    pub(super) fn sync_parked(&mut self) {
        let notices = {
            let mut j = self.journal.borrow_mut();
            j.sync(self.parked.ids());
            j.take_notices()
        };
        for n in notices {
            self.notice(Severity::Warning, &n);
        }
    }

    /// At start-up: the journal in the state directory, and whatever an earlier `watch` left
    /// parked (it was killed before it could wake it) continued, by identity.
    pub(super) fn wake_left_parked(&mut self) {
        let journal =
            park_journal::ParkJournal::new(self.state_dir.clone(), platform::current_uid());
        *self.journal.get_mut() = journal;
        let woken = {
            let control = platform::native_control(self.source.as_ref());
            self.journal.get_mut().wake_recorded(control.as_ref())
        };
        if let Some(w) = woken {
            self.notice(Severity::Warning, &w.line());
        }
        let notices = self.journal.get_mut().take_notices();
        for n in notices {
            self.notice(Severity::Warning, &n);
        }
    }
}
