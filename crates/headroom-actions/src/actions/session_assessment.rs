//! The session assessment `reap`, `idle-watch` and `watch` share: the sessions of every
//! zombie parent, argv read through the platform, log content through the session-log
//! reader, the CPU history kept in the state directory (the liveness verdict is the core's).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use anyhow::Result;

use crate::core::liveness::{self, ChildReader, Clocks, CpuTracker, LogJudge, Session};
use crate::core::process_table::ProcessTable;
use crate::core::session_log::ReaderLimits;
use crate::core::snapshot::Snapshot;
use crate::platform::{self, ProcessSource};
use crate::store::state::SavedCpuHistory;

/// The content reader behind the log signal.
#[derive(Debug, Default)]
pub(crate) struct ContentJudge {
    pub limits: ReaderLimits,
}

impl LogJudge for ContentJudge {
    fn last_activity(&self, dir: &Path, now: i64) -> Option<i64> {
        crate::store::log_files::judge_dir(dir, now, &self.limits, std::time::Instant::now)
            .ok()?
            .last_activity
    }
}

/// What an assessment found.
#[derive(Debug, Default)]
pub struct Assessment {
    pub sessions: HashMap<i32, Session>,
    pub warnings: Vec<String>,
}

/// Where the CPU history comes from and whether it may be used.
#[derive(Debug, Clone)]
pub enum History {
    /// A replay: nothing persisted, no history, the CPU signal reads unknown.
    None,
    /// The state directory, owned by the user and not writable by group or others.
    Dir(PathBuf),
    /// A state directory that failed the rule (the reason): its history is not used and the
    /// CPU signal reads unknown.
    Untrusted(String),
    /// No state directory could be made (the reason): no history, the CPU signal reads
    /// unknown. Unlike an untrusted one this fakes nothing, so a cleanup may still act: no
    /// history means busy.
    Unavailable(String),
}

impl History {
    /// The live state directory (created if missing), judged by the rule of
    /// `core::state_rules::dir_rule`.
    pub fn live(uid: u32) -> Self {
        let dir = match crate::store::paths::ensure_state_dir() {
            Ok(d) => d,
            Err(e) => return Self::Unavailable(format!("{e:#}")),
        };
        match crate::store::state::check_dir(&dir, uid) {
            Ok(()) => Self::Dir(dir),
            Err(why) => Self::Untrusted(why),
        }
    }
}

/// CPU-history writes this process could not make (a full or read-only state directory).
static LOST_WRITES: AtomicU64 = AtomicU64::new(0);
/// Whether a history that could not be read was said already.
static UNREAD_SAID: AtomicBool = AtomicBool::new(false);

/// How many CPU-history writes were lost in this process (`watch`'s summary counts them).
pub fn lost_history_writes() -> u64 {
    LOST_WRITES.load(Ordering::Relaxed)
}

/// A failed write of the history: counted, and said the first time only. A cleanup never
/// depends on it (issue 25 item 9): the readings of this round are lost, nothing else.
fn lost_write(e: &anyhow::Error) -> Option<String> {
    let n = LOST_WRITES.fetch_add(1, Ordering::Relaxed);
    (n == 0).then(|| {
        format!(
            "CPU history not written ({e:#}); acting without it: this round's readings of \
             session children are lost (counted; said once)"
        )
    })
}

/// Assess every parent of the user's zombies. With [`History::Dir`], the CPU history is
/// read from and written back to that directory, if the awake clock and the boot identity
/// can be read; otherwise no CPU reading is taken, the CPU signal reads unknown (no history
/// means busy) and a warning says why.
pub fn assess(
    source: &dyn ProcessSource,
    snap: &Snapshot,
    table: &ProcessTable<'_>,
    active_fraction: f64,
    state: &History,
) -> Result<Assessment> {
    let parents: Vec<i32> = table
        .zombie_parents(snap.uid)
        .iter()
        .map(|p| p.pid)
        .collect();
    let mut warnings = Vec::new();
    let unknown = "session children's CPU reads unknown";
    let mut history = None;
    let mut awake_ms = None;
    match state {
        History::None => {}
        History::Untrusted(why) => warnings.push(format!("CPU history not used: {why}; {unknown}")),
        History::Unavailable(why) => {
            if !UNREAD_SAID.swap(true, Ordering::Relaxed) {
                warnings.push(format!("CPU history not used: {why}; {unknown}"));
            }
        }
        History::Dir(dir) => match (platform::awake_ms(), platform::boot_id()) {
            (Ok(now), Ok(boot)) => match SavedCpuHistory::load(dir, snap.uid, &boot, now) {
                Ok(h) => {
                    history = Some(h);
                    awake_ms = Some(now);
                }
                // Unreadable (a lock that cannot be made on a full or read-only disk): no
                // history, which protects; the cleanup goes on.
                Err(e) => {
                    if !UNREAD_SAID.swap(true, Ordering::Relaxed) {
                        warnings.push(format!("CPU history not read ({e:#}); {unknown}"));
                    }
                }
            },
            (Err(e), _) | (_, Err(e)) => {
                warnings.push(format!("CPU history not used: {e}; {unknown}"));
            }
        },
    }
    let entries = history
        .as_ref()
        .map(|h| h.entries.clone())
        .unwrap_or_default();
    if let Some(w) = history.as_ref().and_then(|h| h.warning.clone()) {
        warnings.push(w);
    }
    let mut tracker = CpuTracker::new(entries, active_fraction);
    let argv = |pid: i32| -> Option<Vec<String>> {
        table
            .get(pid)
            .and_then(|p| p.argv.clone())
            .or_else(|| source.argv(pid).ok())
    };
    let cwd = |pid: i32| -> Option<PathBuf> {
        table
            .get(pid)
            .and_then(|p| p.cwd.clone())
            .map(PathBuf::from)
            .or_else(|| source.cwd(pid).ok())
    };
    let read = ChildReader {
        argv: &argv,
        cwd: &cwd,
    };
    let clocks = Clocks {
        wall_s: snap.taken_at_ms.div_euclid(1000),
        awake_ms,
    };
    let judge = ContentJudge::default();
    let sessions = liveness::assess(table, &parents, &mut tracker, &read, &judge, clocks);
    if let Some(h) = history {
        if let Err(e) = h.save(tracker.entries()) {
            warnings.extend(lost_write(&e));
        }
    }
    Ok(Assessment { sessions, warnings })
}
