//! Small persisted state in the state directory (reading history, CPU history, and the JSON
//! load/save the hang monitor and `watch` share), written atomically (write + rename) under
//! an advisory lock. The rules over what is read (`core::state_rules`) decide what is kept.
//!
//! A corrupt file is never fatal and never silently discarded: it is moved aside, the caller
//! starts fresh and says so.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::core::liveness::CpuEntry;
use crate::core::reading::HistorySample;
use crate::core::state_rules::{consistent, dir_rule, in_window};
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

pub(crate) const READINGS_FILE: &str = "readings.json";
const READINGS_SCHEMA: &str = "headroom.readings/1";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct ReadingsFile {
    schema: String,
    uid: u32,
    samples: Vec<HistorySample>,
}

/// The outcome of recording one reading.
#[derive(Debug)]
pub struct ReadingHistory {
    /// The samples of the window, the new one included.
    pub samples: Vec<HistorySample>,
    /// A warning for the user (corrupt file set aside).
    pub warning: Option<String>,
}

/// Append `sample` to the reading history in `dir` and return the window. Samples of another
/// uid, from the future (a clock set back) or older than the window are dropped.
pub fn record_reading(dir: &Path, uid: u32, sample: HistorySample) -> Result<ReadingHistory> {
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
    in_window(&mut samples, sample);
    save_json(
        &path,
        &ReadingsFile {
            schema: READINGS_SCHEMA.into(),
            uid,
            samples: samples.clone(),
        },
    )?;
    Ok(ReadingHistory { samples, warning })
}

pub(crate) const CPU_FILE: &str = "cpu-history.json";
const CPU_SCHEMA: &str = "headroom.cpu-history/2";

#[derive(Debug, Clone, Serialize)]
struct CpuFile<'a> {
    schema: &'a str,
    uid: u32,
    /// The boot the readings were taken in (`platform::boot_id`).
    boot: &'a str,
    entries: Vec<CpuEntry>,
}

/// The file as read: entries one by one, so that one malformed entry (a negative counter)
/// is dropped alone.
#[derive(Debug, Deserialize)]
struct CpuFileIn {
    schema: String,
    uid: u32,
    #[serde(default)]
    boot: Option<String>,
    #[serde(default)]
    entries: Vec<serde_json::Value>,
}

/// `core::state_rules::dir_rule` for the directory on disk (following a symlink to what it names).
pub fn check_dir(dir: &Path, uid: u32) -> Result<(), String> {
    let meta = std::fs::metadata(dir)
        .map_err(|e| format!("cannot inspect state directory `{}`: {e}", dir.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        dir_rule(dir, uid, meta.uid(), meta.mode())
    }
    #[cfg(not(unix))]
    {
        let _ = (meta, uid);
        Ok(())
    }
}

/// The CPU readings of session children across runs, held under the state lock from load
/// to save so a `watch` round and a `reap` from cron do not lose each other's readings.
#[derive(Debug)]
pub struct SavedCpuHistory {
    path: PathBuf,
    uid: u32,
    boot: String,
    _lock: Lock,
    pub entries: Vec<CpuEntry>,
    /// A warning for the user (corrupt file set aside).
    pub warning: Option<String>,
}

impl SavedCpuHistory {
    /// Load the history in `dir`. Kept are only entries of this uid and this boot (`boot`:
    /// pids, start times and awake-clock readings of another boot mean nothing now) that
    /// are `core::state_rules::consistent` at awake-clock `awake_now_ms`; the rest is dropped.
    pub fn load(dir: &Path, uid: u32, boot: &str, awake_now_ms: i64) -> Result<Self> {
        let path = dir.join(CPU_FILE);
        let lock = Lock::acquire(&path)?;
        let mut warning = None;
        let raw = match load_json::<CpuFileIn>(&path)? {
            Loaded::Ok(f)
                if f.schema == CPU_SCHEMA && f.uid == uid && f.boot.as_deref() == Some(boot) =>
            {
                f.entries
            }
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
        let entries = raw
            .into_iter()
            .filter_map(|v| serde_json::from_value::<CpuEntry>(v).ok())
            .filter(|e| consistent(e, awake_now_ms))
            .collect();
        Ok(Self {
            path,
            uid,
            boot: boot.to_string(),
            _lock: lock,
            entries,
            warning,
        })
    }

    pub fn save(self, entries: Vec<CpuEntry>) -> Result<()> {
        save_json(
            &self.path,
            &CpuFile {
                schema: CPU_SCHEMA,
                uid: self.uid,
                boot: &self.boot,
                entries,
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(at_s: i64, used: u64) -> HistorySample {
        HistorySample {
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

    fn entry(cpu_ns: u64, read_at_ms: i64, last_active_ms: i64) -> CpuEntry {
        CpuEntry {
            pid: 7,
            start_time: 9,
            cpu_ns,
            read_at_ms,
            last_active_ms,
        }
    }

    const BOOT: &str = "4f3c0b7e-boot-a";

    #[test]
    fn cpu_history_round_trips_and_resets_for_another_uid_or_corruption() {
        let d = tempfile::tempdir().unwrap();
        let e = entry(5, 1000, 500);
        SavedCpuHistory::load(d.path(), 1, BOOT, 2000)
            .unwrap()
            .save(vec![e.clone()])
            .unwrap();
        assert_eq!(
            SavedCpuHistory::load(d.path(), 1, BOOT, 2000)
                .unwrap()
                .entries,
            vec![e.clone()],
            "control: a consistent entry of this uid and boot is kept"
        );
        assert!(
            SavedCpuHistory::load(d.path(), 2, BOOT, 2000)
                .unwrap()
                .entries
                .is_empty(),
            "another uid"
        );
        std::fs::write(d.path().join(CPU_FILE), "[[[").unwrap();
        let h = SavedCpuHistory::load(d.path(), 1, BOOT, 2000).unwrap();
        assert!(h.entries.is_empty());
        assert!(h.warning.unwrap().contains("kept it as"));
    }

    #[test]
    fn history_of_another_boot_is_discarded() {
        let d = tempfile::tempdir().unwrap();
        let e = entry(5, 1000, 500);
        SavedCpuHistory::load(d.path(), 1, BOOT, 2000)
            .unwrap()
            .save(vec![e.clone()])
            .unwrap();
        assert!(
            SavedCpuHistory::load(d.path(), 1, "another-boot", 2000)
                .unwrap()
                .entries
                .is_empty(),
            "another boot, even with a plausible awake clock"
        );
        assert_eq!(
            SavedCpuHistory::load(d.path(), 1, BOOT, 2000)
                .unwrap()
                .entries,
            vec![e],
            "control: the same boot keeps it"
        );
        // A file of the previous schema has no boot identity: discarded.
        std::fs::write(
            d.path().join(CPU_FILE),
            r#"{"schema":"headroom.cpu-history/2","uid":1,"entries":[{"pid":7,"start_time":9,"cpu_ns":5,"read_at_ms":1000,"last_active_ms":500}]}"#,
        )
        .unwrap();
        assert!(
            SavedCpuHistory::load(d.path(), 1, BOOT, 2000)
                .unwrap()
                .entries
                .is_empty(),
            "no recorded boot"
        );
    }

    #[test]
    fn inconsistent_entries_are_dropped_one_by_one() {
        let d = tempfile::tempdir().unwrap();
        let good = entry(5, 1000, 500);
        let mut good2 = entry(5, 1500, 1500);
        good2.pid = 8;
        let bad = [
            entry(5, 1000, 1001), // last activity after the reading
            entry(5, 3000, 100),  // reading in the future (now is 2000)
            entry(5, -1, -5),     // negative times
            entry(5, 1000, -1),   // negative last activity
        ];
        let mut all = vec![good.clone(), good2.clone()];
        all.extend(bad.iter().cloned());
        SavedCpuHistory::load(d.path(), 1, BOOT, 2000)
            .unwrap()
            .save(all)
            .unwrap();
        // A negative counter cannot be written by headroom; a hand-edited one drops alone.
        let path = d.path().join(CPU_FILE);
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.replacen(
            r#""entries":["#,
            r#""entries":[{"pid":9,"start_time":1,"cpu_ns":-40,"read_at_ms":10,"last_active_ms":10},"#,
            1,
        );
        std::fs::write(&path, text).unwrap();
        let kept = SavedCpuHistory::load(d.path(), 1, BOOT, 2000).unwrap();
        assert_eq!(kept.entries, vec![good.clone(), good2]);
        assert!(kept.warning.is_none(), "{:?}", kept.warning);
        for b in &bad {
            assert!(!consistent(b, 2000), "{b:?}");
        }
        assert!(consistent(&good, 2000), "control");
        assert!(consistent(&entry(0, 2000, 2000), 2000), "the boundary");
    }

    #[cfg(unix)]
    #[test]
    fn check_dir_reads_the_owner_and_mode_on_disk() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let uid = crate::platform::current_uid();
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(check_dir(d.path(), uid), Ok(()));
        std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(check_dir(d.path(), uid).unwrap_err().contains("mode 0777"));
        assert!(
            check_dir(d.path(), uid + 1)
                .unwrap_err()
                .contains("owned by uid")
        );
        assert!(check_dir(&d.path().join("missing"), uid).is_err());
    }

    #[test]
    fn unwritable_dir_is_an_error_naming_it() {
        let e = record_reading(Path::new("/nonexistent/headroom-state"), 1, s(0, 1)).unwrap_err();
        assert!(format!("{e:#}").contains("/nonexistent/headroom-state"));
    }
}
