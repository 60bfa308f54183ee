//! Small persisted state in the state directory (reading history; later CPU history and the
//! hang monitor), written atomically (write + rename) under an advisory lock.
//!
//! A corrupt file is never fatal and never silently discarded: it is moved aside, the caller
//! starts fresh and says so.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::core::liveness::CpuEntry;
use crate::core::reading::{Sample, TREND_WINDOW_MS};
use crate::fsio::{Lock, replace};

/// What loading a state file found.
#[derive(Debug)]
pub enum Loaded<T> {
    Missing,
    Ok(T),
    /// Unparseable: moved to `aside`; start fresh.
    Corrupt {
        aside: PathBuf,
        error: String,
    },
}

/// Load `path` as JSON; a file that does not parse is moved aside.
pub fn load_json<T: DeserializeOwned>(path: &Path) -> Result<Loaded<T>> {
    let bytes = match crate::fsio::read_private(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::Missing),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot read state file `{}`", path.display()));
        }
    };
    match serde_json::from_slice::<T>(&bytes) {
        Ok(v) => Ok(Loaded::Ok(v)),
        Err(e) => {
            let mut aside = path.as_os_str().to_owned();
            aside.push(format!(".corrupt-{}", crate::platform::now_ms()));
            let aside = PathBuf::from(aside);
            std::fs::rename(path, &aside).with_context(|| {
                format!(
                    "state file `{}` is corrupt ({e}) and cannot be moved aside",
                    path.display()
                )
            })?;
            Ok(Loaded::Corrupt {
                aside,
                error: e.to_string(),
            })
        }
    }
}

pub fn save_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let bytes = serde_json::to_vec(value).context("cannot serialise state")?;
    replace(path, &bytes)
}

pub const READINGS_FILE: &str = "readings.json";
const READINGS_SCHEMA: &str = "headroom.readings/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct ReadingsFile {
    schema: String,
    uid: u32,
    samples: Vec<Sample>,
}

/// The outcome of recording one reading.
#[derive(Debug)]
pub struct History {
    /// The samples of the window, the new one included.
    pub samples: Vec<Sample>,
    /// A warning for the user (corrupt file set aside).
    pub warning: Option<String>,
}

/// Append `sample` to the reading history in `dir` and return the window. Samples of another
/// uid, from the future (a clock set back) or older than the window are dropped.
pub fn record_reading(dir: &Path, uid: u32, sample: Sample) -> Result<History> {
    let path = dir.join(READINGS_FILE);
    let _lock = Lock::acquire(&path)?;
    let mut warning = None;
    let mut samples = match load_json::<ReadingsFile>(&path)? {
        Loaded::Ok(f) if f.schema == READINGS_SCHEMA && f.uid == uid => f.samples,
        Loaded::Ok(_) | Loaded::Missing => Vec::new(),
        Loaded::Corrupt { aside, error } => {
            warning = Some(format!(
                "reading history `{}` was corrupt ({error}); kept it as `{}` and started fresh",
                path.display(),
                aside.display()
            ));
            Vec::new()
        }
    };
    samples.retain(|s| s.at_ms <= sample.at_ms && s.at_ms >= sample.at_ms - TREND_WINDOW_MS);
    samples.push(sample);
    samples.sort_by_key(|s| s.at_ms);
    save_json(
        &path,
        &ReadingsFile {
            schema: READINGS_SCHEMA.into(),
            uid,
            samples: samples.clone(),
        },
    )?;
    Ok(History { samples, warning })
}

pub const CPU_FILE: &str = "cpu-history.json";
const CPU_SCHEMA: &str = "headroom.cpu-history/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct CpuFile {
    schema: String,
    uid: u32,
    entries: Vec<CpuEntry>,
}

/// The CPU readings of session children across runs, held under the state lock from load
/// to save so a `watch` round and a `reap` from cron do not lose each other's readings.
#[derive(Debug)]
pub struct CpuHistory {
    path: PathBuf,
    uid: u32,
    _lock: Lock,
    pub entries: Vec<CpuEntry>,
    /// A warning for the user (corrupt file set aside).
    pub warning: Option<String>,
}

impl CpuHistory {
    /// Load the history in `dir`. Entries from another uid, or from before a reboot (the
    /// awake clock went backwards), are dropped: their pids and start times mean nothing now.
    pub fn load(dir: &Path, uid: u32, awake_now_ms: i64) -> Result<Self> {
        let path = dir.join(CPU_FILE);
        let lock = Lock::acquire(&path)?;
        let mut warning = None;
        let mut entries = match load_json::<CpuFile>(&path)? {
            Loaded::Ok(f) if f.schema == CPU_SCHEMA && f.uid == uid => f.entries,
            Loaded::Ok(_) | Loaded::Missing => Vec::new(),
            Loaded::Corrupt { aside, error } => {
                warning = Some(format!(
                    "CPU history `{}` was corrupt ({error}); kept it as `{}` and started fresh: \
                     session children read as unknown until two readings exist",
                    path.display(),
                    aside.display()
                ));
                Vec::new()
            }
        };
        if entries.iter().any(|e| e.read_at_ms > awake_now_ms) {
            entries.clear();
        }
        Ok(Self {
            path,
            uid,
            _lock: lock,
            entries,
            warning,
        })
    }

    pub fn save(self, entries: Vec<CpuEntry>) -> Result<()> {
        save_json(
            &self.path,
            &CpuFile {
                schema: CPU_SCHEMA.into(),
                uid: self.uid,
                entries,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(at_s: i64, used: u64) -> Sample {
        Sample {
            at_ms: at_s * 1000,
            used,
        }
    }

    #[test]
    fn history_accumulates_prunes_and_ignores_other_uids() {
        let d = tempfile::tempdir().unwrap();
        record_reading(d.path(), 1, s(0, 10)).unwrap();
        record_reading(d.path(), 1, s(60, 20)).unwrap();
        let h = record_reading(d.path(), 1, s(120, 30)).unwrap();
        assert_eq!(h.samples.len(), 3);
        let h = record_reading(d.path(), 1, s(700, 40)).unwrap();
        assert_eq!(
            h.samples.iter().map(|x| x.used).collect::<Vec<_>>(),
            vec![30, 40]
        );
        let h = record_reading(d.path(), 2, s(710, 1)).unwrap();
        assert_eq!(h.samples.len(), 1);
        // A clock set back drops the "future" samples.
        let h = record_reading(d.path(), 2, s(100, 1)).unwrap();
        assert_eq!(h.samples.len(), 1);
    }

    #[test]
    fn corrupt_history_is_kept_aside_and_replaced() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join(READINGS_FILE), "{not json").unwrap();
        let h = record_reading(d.path(), 1, s(0, 10)).unwrap();
        assert!(h.warning.unwrap().contains("corrupt"));
        let names: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names
                .iter()
                .any(|n| n.starts_with("readings.json.corrupt-")),
            "{names:?}"
        );
        assert_eq!(h.samples.len(), 1);
    }

    #[test]
    fn cpu_history_round_trips_and_resets_after_a_reboot_or_corruption() {
        let d = tempfile::tempdir().unwrap();
        let e = CpuEntry {
            pid: 7,
            start_time: 9,
            cpu_ns: 5,
            read_at_ms: 1000,
            last_active_ms: 500,
        };
        CpuHistory::load(d.path(), 1, 2000)
            .unwrap()
            .save(vec![e.clone()])
            .unwrap();
        assert_eq!(
            CpuHistory::load(d.path(), 1, 2000).unwrap().entries,
            vec![e.clone()]
        );
        assert!(
            CpuHistory::load(d.path(), 2, 2000)
                .unwrap()
                .entries
                .is_empty(),
            "another uid"
        );
        assert!(
            CpuHistory::load(d.path(), 1, 10)
                .unwrap()
                .entries
                .is_empty(),
            "clock went backwards"
        );
        std::fs::write(d.path().join(CPU_FILE), "[[[").unwrap();
        let h = CpuHistory::load(d.path(), 1, 2000).unwrap();
        assert!(h.entries.is_empty());
        assert!(h.warning.unwrap().contains("kept it as"));
    }

    #[test]
    fn unwritable_dir_is_an_error_naming_it() {
        let e = record_reading(Path::new("/nonexistent/headroom-state"), 1, s(0, 1)).unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/headroom-state"));
    }
}
