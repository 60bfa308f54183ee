//! `watch-parked.json`: the processes `watch`'s memory guards stopped (SIGSTOP) and have not
//! continued, by identity (pid, start time, uid) and boot, so that a `watch` ended by SIGKILL
//! (a crash, the OOM killer, a service manager's stop timeout) leaves a record the next
//! `watch` wakes them by (issue 25 item 8). Nothing parked, no file.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::core::snapshot::Identity;
use crate::state::{Loaded, load_json, save_json};

pub const PARKED_FILE: &str = "watch-parked.json";
const PARKED_SCHEMA: &str = "headroom.watch-parked/1";

#[derive(Debug, Serialize, Deserialize)]
struct ParkedFile {
    schema: String,
    uid: u32,
    /// The boot the identities belong to (`platform::boot_id`): start times of another boot
    /// name other processes.
    boot: String,
    parked: Vec<Identity>,
}

/// What the record in a state directory holds.
#[derive(Debug, PartialEq, Eq)]
pub enum Recorded {
    /// No record: nothing was left parked.
    None,
    /// Processes parked in this boot by this uid's `watch`, not continued since.
    Parked(Vec<Identity>),
    /// A record that names no process to wake now (the reason: another boot, another uid,
    /// another schema, or unparseable and moved aside).
    Unusable(String),
}

/// The record in `dir`, for `uid` in the boot `boot`.
pub fn load(dir: &Path, uid: u32, boot: &str) -> Result<Recorded> {
    let path = dir.join(PARKED_FILE);
    Ok(match load_json::<ParkedFile>(&path)? {
        Loaded::Missing => Recorded::None,
        Loaded::Corrupt { aside, error } => Recorded::Unusable(format!(
            "`{}` was corrupt ({error}); kept it as `{}`",
            path.display(),
            aside.display()
        )),
        Loaded::Ok(f) if f.schema != PARKED_SCHEMA => Recorded::Unusable(format!(
            "`{}` is `{}`, not `{PARKED_SCHEMA}`",
            path.display(),
            f.schema
        )),
        Loaded::Ok(f) if f.uid != uid => Recorded::Unusable(format!(
            "`{}` belongs to uid `{}`, not `{uid}`",
            path.display(),
            f.uid
        )),
        Loaded::Ok(f) if f.boot != boot => Recorded::Unusable(format!(
            "`{}` is from another boot, whose pids name other processes now",
            path.display()
        )),
        Loaded::Ok(f) => Recorded::Parked(f.parked),
    })
}

/// Record `parked` as what is stopped now; nothing parked removes the record.
pub fn save(dir: &Path, uid: u32, boot: &str, parked: &[Identity]) -> Result<()> {
    let path = dir.join(PARKED_FILE);
    if parked.is_empty() {
        return match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot remove `{}`", path.display()))
            }
            _ => Ok(()),
        };
    }
    save_json(
        &path,
        &ParkedFile {
            schema: PARKED_SCHEMA.into(),
            uid,
            boot: boot.into(),
            parked: parked.to_vec(),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(pid: i32) -> Identity {
        Identity {
            pid,
            start_time: 1000 + pid as u64,
            uid: 501,
        }
    }

    #[test]
    fn a_record_is_read_back_for_its_uid_and_boot_only() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(load(d.path(), 501, "b1").unwrap(), Recorded::None);
        save(d.path(), 501, "b1", &[id(7), id(8)]).unwrap();
        assert_eq!(
            load(d.path(), 501, "b1").unwrap(),
            Recorded::Parked(vec![id(7), id(8)]),
            "control: the same uid and boot"
        );
        let other_boot = load(d.path(), 501, "b2").unwrap();
        assert!(
            matches!(&other_boot, Recorded::Unusable(w) if w.contains("another boot")),
            "{other_boot:?}"
        );
        let other_uid = load(d.path(), 502, "b1").unwrap();
        assert!(
            matches!(&other_uid, Recorded::Unusable(w) if w.contains("uid `501`")),
            "{other_uid:?}"
        );
    }

    #[test]
    fn nothing_parked_removes_the_record_and_garbage_is_unusable() {
        let d = tempfile::tempdir().unwrap();
        save(d.path(), 501, "b1", &[id(7)]).unwrap();
        save(d.path(), 501, "b1", &[]).unwrap();
        assert!(!d.path().join(PARKED_FILE).exists());
        save(d.path(), 501, "b1", &[]).unwrap();
        std::fs::write(d.path().join(PARKED_FILE), "{not json").unwrap();
        assert!(matches!(
            load(d.path(), 501, "b1").unwrap(),
            Recorded::Unusable(_)
        ));
    }
}
