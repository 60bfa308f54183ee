//! Reading the tree: one sample (the members the tracker follows, their footprint, the
//! limit as free memory lowers it, the CPU history idle parking judges by), and what each
//! sample adds to the summary and the approaching-limit warning.

use std::time::Instant;

use super::notify::{warn_body, without_helpers};
use super::{RunEvent, Watchdog, WatchdogSample, after, now_at};
use crate::core::memory::{effective_limit, tree_footprint};
use crate::core::snapshot::ProcessRecord;
use crate::platform::TreeQuery;

impl Watchdog<'_, '_> {
    /// Read the tree once: members, footprint, effective limit, CPU history, peak.
    pub(super) fn tick(&mut self, now: Instant) {
        self.next_tick = after(now, self.tick_every());
        if let Some(s) = self.sample() {
            self.summary.samples += 1;
            if s.footprint >= self.summary.peak_footprint_bytes {
                self.summary.peak_footprint_bytes = s.footprint;
                self.summary.peak_processes = s.members.len();
            }
            self.summary.lowest_effective_limit_bytes =
                self.summary.lowest_effective_limit_bytes.min(s.effective);
            if let Some(a) = self
                .warn_line
                .observe(s.footprint, s.effective, self.cfg.warn_pct)
            {
                (self.emit)(&RunEvent::ApproachingLimit {
                    at: crate::core::time::format_ms(s.at_ms),
                    footprint_bytes: a.footprint_bytes,
                    limit_bytes: a.limit_bytes,
                    pct: a.pct,
                    warn_pct: a.warn_pct,
                });
                if self.cfg.notify {
                    let body = warn_body(&self.cfg.command, &a);
                    // Best effort, like every notification: no notifier (a headless box) is
                    // the ordinary case, not news. Started without waiting.
                    let _ = self.notifier.post("headroom: memory limit near", &body);
                }
            }
            self.last = Some(s);
        }
    }

    pub(super) fn sample(&mut self) -> Option<WatchdogSample> {
        let now = Instant::now();
        let scan_group = self.spec.pgid.is_some()
            && (std::mem::take(&mut self.force_scan)
                || self
                    .last_group_scan
                    .is_none_or(|t| now.duration_since(t) >= self.group_scan_every));
        let known = self.tracker.known_pids();
        let query = TreeQuery {
            roots: &[self.self_pid],
            pgid: if scan_group { self.spec.pgid } else { None },
            extra: &known,
        };
        let records = match self.source.tree_sample(&query) {
            Ok(r) => without_helpers(r, &self.notifier.pids()),
            Err(e) => {
                self.warn_once(format!("cannot read the process tree: {e}"));
                return None;
            }
        };
        if scan_group {
            self.last_group_scan = Some(now);
        }
        let members: Vec<ProcessRecord> = self
            .tracker
            .update(&records, &self.spec)
            .into_iter()
            .cloned()
            .collect();
        if let Some(cmd) = members.iter().find(|m| m.pid == self.cmd_pid) {
            self.sid = cmd.sid.or(self.sid);
        }
        let refs: Vec<&ProcessRecord> = members.iter().collect();
        let (footprint, _unknown) = tree_footprint(&refs);
        let at_ms = now.duration_since(self.started).as_millis() as u64;
        self.cpu.record(at_ms, &refs);
        let free_pct = match self.source.memory() {
            Ok(m) if m.total_bytes > 0 => Some(m.free_pct()),
            Ok(_) => None,
            Err(e) => {
                self.warn_once(format!(
                    "cannot read free memory: {e}; the limit is not lowered under pressure"
                ));
                None
            }
        };
        Some(WatchdogSample {
            at_ms: crate::platform::now_ms(),
            effective: effective_limit(self.cfg.limit, free_pct),
            members,
            footprint,
            free_pct,
        })
    }

    pub(super) fn warn_once(&mut self, message: String) {
        if !self.warned {
            self.warned = true;
            (self.emit)(&RunEvent::Warning {
                at: now_at(),
                message,
            });
        }
    }
}
