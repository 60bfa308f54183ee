//! What the hang monitor keeps in the state directory (the event type and the retention
//! rules are `core::hang_event`'s):
//!
//! - `hangs.json`: the monitor state (pending observations, restart times, blocked), so
//!   rounds run from cron or from `hangs --watch` are consecutive. Written atomically; a
//!   corrupt file is set aside and the monitor starts fresh (which can only delay a restart,
//!   never cause one).
//! - `hangs-events.jsonl`: one JSON object per line (`detected`, `restarted`,
//!   `restart-failed`, `blocked`) with the app identity, display name, pid, bundle path and
//!   time, never arguments or document content. Events older than 30 days are pruned
//!   whenever events are written, and the file never holds more than `MAX_EVENTS` lines.

use std::path::Path;

use anyhow::{Context, Result};

pub use crate::core::hang_event::HangEvent;
// Re-exported for the unit tests only (they name it by this path).
#[cfg(test)]
pub(crate) use crate::core::hang_event::MAX_EVENTS;
use crate::core::hang_event::{parse_events, retain, since_filter};
use crate::core::hangs::{MonitorState, STATE_SCHEMA};
use crate::fsio::{Lock, atomic_write};
use crate::state::{Loaded, load_json, save_json};

pub const STATE_FILE: &str = "hangs.json";
pub const EVENTS_FILE: &str = "hangs-events.jsonl";
/// Load the monitor state; a missing, foreign-schema or corrupt file starts fresh (the
/// warning says so and where a corrupt file was kept).
pub fn load_state(dir: &Path) -> Result<(MonitorState, Option<String>)> {
    let path = dir.join(STATE_FILE);
    Ok(match load_json::<MonitorState>(&path)? {
        Loaded::Ok(s) if s.schema == STATE_SCHEMA => (s, None),
        Loaded::Ok(s) => (
            MonitorState::default(),
            Some(format!(
                "hang monitor state `{}` has schema `{}`, expected `{STATE_SCHEMA}`; started fresh",
                path.display(),
                s.schema
            )),
        ),
        Loaded::Missing => (MonitorState::default(), None),
        Loaded::Corrupt { aside, error } => (
            MonitorState::default(),
            Some(format!(
                "hang monitor state `{}` was corrupt ({error}); kept it as `{}` and started fresh",
                path.display(),
                aside.display()
            )),
        ),
    })
}

pub fn save_state(dir: &Path, state: &MonitorState) -> Result<()> {
    save_json(&dir.join(STATE_FILE), state)
}

/// The lock that serialises whole rounds (load, decide, act, save) between a cron run and
/// a `--watch` loop, so two of them never restart the same app.
pub fn lock_state(dir: &Path) -> Result<Lock> {
    Lock::acquire(&dir.join(STATE_FILE))
}

fn read_text(path: &Path) -> Result<String> {
    match std::fs::read(path) {
        Ok(b) => Ok(String::from_utf8_lossy(&b).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(e).with_context(|| format!("cannot read events file `{}`", path.display())),
    }
}

/// Append `new` to the events file, pruning events older than 30 days (as of `now_ms`).
/// Unreadable lines are kept in a copy set aside, and the warning says where.
pub fn append_events(dir: &Path, new: &[HangEvent], now_ms: i64) -> Result<Option<String>> {
    if new.is_empty() {
        return Ok(None);
    }
    let path = dir.join(EVENTS_FILE);
    let _lock = Lock::acquire(&path)?;
    let text = read_text(&path)?;
    let (mut events, bad) = parse_events(&text);
    let mut warning = None;
    if bad > 0 {
        let mut aside = path.as_os_str().to_owned();
        aside.push(format!(".corrupt-{now_ms}"));
        let aside = std::path::PathBuf::from(aside);
        std::fs::copy(&path, &aside).with_context(|| {
            format!(
                "events file `{}` has {bad} unreadable lines and cannot be copied aside",
                path.display()
            )
        })?;
        warning = Some(format!(
            "events file `{}` had {bad} unreadable lines; kept a copy as `{}` and dropped them",
            path.display(),
            aside.display()
        ));
    }
    retain(&mut events, new, now_ms);
    let mut out = String::new();
    for e in &events {
        out.push_str(&serde_json::to_string(e).context("cannot serialise an event")?);
        out.push('\n');
    }
    atomic_write(&path, out.as_bytes())?;
    Ok(warning)
}

/// Events at or after `since_ms` (all when `None`), oldest first, and how many lines could
/// not be read.
pub fn read_events(dir: &Path, since_ms: Option<i64>) -> Result<(Vec<HangEvent>, usize)> {
    let text = read_text(&dir.join(EVENTS_FILE))?;
    let (mut events, bad) = parse_events(&text);
    if let Some(since) = since_ms {
        since_filter(&mut events, since);
    }
    Ok((events, bad))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::hangs::{
        ActivationPolicy, AppDecision, AppObservation, EventKind, HangState, RecoveryKind,
    };

    const DAY: i64 = 24 * 3_600_000;
    const T0: i64 = 1_796_032_800_000;

    fn decision() -> AppDecision {
        AppDecision {
            app: AppObservation {
                pid: 501,
                start_time: Some(1),
                uid: Some(501),
                bundle_id: Some("com.example.Editor".into()),
                bundle_path: "/Applications/Editor.app".into(),
                name: "Editor".into(),
                policy: ActivationPolicy::Regular,
                responsive: false,
                state: None,
            },
            identity: "com.example.Editor".into(),
            kind: Some(RecoveryKind::App),
            state: HangState::Confirmed,
            reason: None,
            rounds: 2,
            cooldown_until_ms: None,
            detected: true,
            restart: true,
            newly_blocked: false,
        }
    }

    fn ev(kind: EventKind, at: i64) -> HangEvent {
        HangEvent::new(kind, at, &decision(), RecoveryKind::App)
    }

    #[test]
    fn b19_every_event_type_is_logged_with_identity_name_pid_path_and_time() {
        let d = tempfile::tempdir().unwrap();
        let all = [
            EventKind::Detected,
            EventKind::Restarted,
            EventKind::RestartFailed,
            EventKind::Blocked,
        ];
        let new: Vec<_> = all.iter().map(|k| ev(*k, T0)).collect();
        append_events(d.path(), &new, T0).unwrap();
        let text = std::fs::read_to_string(d.path().join(EVENTS_FILE)).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let types: Vec<_> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
        assert_eq!(
            types,
            vec!["detected", "restarted", "restart-failed", "blocked"]
        );
        for l in &lines {
            assert_eq!(l["identity"], "com.example.Editor");
            assert_eq!(l["name"], "Editor");
            assert_eq!(l["pid"], 501);
            assert_eq!(l["bundle_path"], "/Applications/Editor.app");
            assert_eq!(l["at"], "2026-11-30T10:00:00Z");
            // Nothing else about the process: no arguments, no documents.
            let keys: Vec<_> = l.as_object().unwrap().keys().cloned().collect();
            assert_eq!(
                keys.len(),
                10,
                "only the documented fields are stored: {keys:?}"
            );
        }
    }

    #[test]
    fn events_older_than_30_days_are_pruned_on_write_and_since_filters() {
        let d = tempfile::tempdir().unwrap();
        append_events(
            d.path(),
            &[
                ev(EventKind::Detected, T0 - 31 * DAY),
                ev(EventKind::Blocked, T0 - 29 * DAY),
            ],
            T0 - 29 * DAY,
        )
        .unwrap();
        append_events(d.path(), &[ev(EventKind::Restarted, T0)], T0).unwrap();
        let (events, bad) = read_events(d.path(), None).unwrap();
        assert_eq!(bad, 0);
        assert_eq!(
            events.iter().map(|e| e.event).collect::<Vec<_>>(),
            vec![EventKind::Blocked, EventKind::Restarted]
        );
        let (recent, _) = read_events(d.path(), Some(T0 - DAY)).unwrap();
        assert_eq!(recent.len(), 1);
    }

    #[test]
    fn events_file_is_capped() {
        let d = tempfile::tempdir().unwrap();
        let many: Vec<_> = (0..MAX_EVENTS as i64 + 5)
            .map(|i| ev(EventKind::Detected, T0 + i))
            .collect();
        append_events(d.path(), &many, T0).unwrap();
        let (events, _) = read_events(d.path(), None).unwrap();
        assert_eq!(events.len(), MAX_EVENTS);
    }

    #[test]
    fn unreadable_event_lines_are_set_aside_and_counted() {
        let d = tempfile::tempdir().unwrap();
        let good = serde_json::to_string(&ev(EventKind::Detected, T0)).unwrap();
        std::fs::write(
            d.path().join(EVENTS_FILE),
            format!("{good}\n{{\"type\":\"detec\n"),
        )
        .unwrap();
        let (events, bad) = read_events(d.path(), None).unwrap();
        assert_eq!((events.len(), bad), (1, 1));
        let w = append_events(d.path(), &[ev(EventKind::Blocked, T0)], T0)
            .unwrap()
            .unwrap();
        assert!(w.contains("1 unreadable lines"), "{w}");
        let (events, bad) = read_events(d.path(), None).unwrap();
        assert_eq!((events.len(), bad), (2, 0));
        assert!(std::fs::read_dir(d.path()).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("hangs-events.jsonl.corrupt-")
        }));
    }

    #[test]
    fn missing_files_are_empty_and_corrupt_state_starts_fresh() {
        let d = tempfile::tempdir().unwrap();
        assert!(read_events(d.path(), None).unwrap().0.is_empty());
        let (s, w) = load_state(d.path()).unwrap();
        assert_eq!(s, MonitorState::default());
        assert!(w.is_none());
        std::fs::write(d.path().join(STATE_FILE), "{\"schema\":").unwrap();
        let (s, w) = load_state(d.path()).unwrap();
        assert_eq!(s, MonitorState::default());
        assert!(w.unwrap().contains("corrupt"));
        let mut s = MonitorState::default();
        s.restarts.insert("x".into(), 5);
        save_state(d.path(), &s).unwrap();
        assert_eq!(load_state(d.path()).unwrap().0, s);
        std::fs::write(
            d.path().join(STATE_FILE),
            r#"{"schema":"headroom.hangs-state/99","last_round_ms":null,"observations":{},"restarts":{},"blocked":{}}"#,
        )
        .unwrap();
        assert!(load_state(d.path()).unwrap().1.unwrap().contains("/99"));
    }
}
