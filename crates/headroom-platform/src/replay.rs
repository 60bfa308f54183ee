//! A `ProcessSource` over a recorded snapshot file (`--snapshot FILE`): bug reports,
//! incident replays and tests of every core rule without touching real processes. A capture
//! from a Mac replays on Linux unchanged.

use std::path::Path;

use crate::core::snapshot::{Detail, MemoryTotals, ProcessRecord, SNAPSHOT_SCHEMA, Snapshot};
use crate::{PlatformError, ProcessSource};

#[derive(Debug, Clone)]
pub struct ReplaySource {
    snapshot: Snapshot,
}

impl ReplaySource {
    #[cfg(test)]
    pub(crate) fn new(snapshot: Snapshot) -> Self {
        Self { snapshot }
    }

    /// Load and validate a snapshot file (`-`: standard input); the error names the file and
    /// what is wrong.
    pub fn load(path: &Path) -> Result<Self, PlatformError> {
        let text = if path.as_os_str() == "-" {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text)
                .map_err(|e| PlatformError::io("cannot read a snapshot from standard input", e))?;
            text
        } else {
            std::fs::read_to_string(path).map_err(|e| {
                PlatformError::io(format!("cannot read snapshot `{}`", path.display()), e)
            })?
        };
        Self::parse(&text)
            .map_err(|e| PlatformError::Invalid(format!("snapshot `{}` {e}", path.display())))
    }

    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        if text.trim().is_empty() {
            return Err("is empty".into());
        }
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("is not valid JSON: {e}"))?;
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(SNAPSHOT_SCHEMA) => {}
            Some(other) => {
                return Err(format!(
                    "has schema `{other}`, expected `{SNAPSHOT_SCHEMA}`"
                ));
            }
            None => {
                return Err(format!(
                    "has no `schema` field: it is not a headroom snapshot ({SNAPSHOT_SCHEMA})"
                ));
            }
        }
        let snapshot: Snapshot =
            serde_json::from_value(value).map_err(|e| format!("is malformed: {e}"))?;
        if !matches!(snapshot.os.as_str(), "linux" | "macos") {
            return Err(format!(
                "names os `{}`, expected `linux` or `macos`",
                snapshot.os
            ));
        }
        Ok(Self { snapshot })
    }
}

impl ProcessSource for ReplaySource {
    fn os(&self) -> &str {
        &self.snapshot.os
    }

    fn snapshot(&self, detail: Detail) -> Result<Snapshot, PlatformError> {
        if detail == Detail::Full && self.snapshot.detail == Detail::Slots {
            return Err(PlatformError::Invalid(
                "the snapshot holds slot counts only (from `probe --record`); record a full one with \
                 `headroom snapshot`"
                    .into(),
            ));
        }
        Ok(self.snapshot.clone())
    }

    fn process(&self, pid: i32) -> Result<Option<ProcessRecord>, PlatformError> {
        Ok(self
            .snapshot
            .processes
            .iter()
            .find(|p| p.pid == pid)
            .cloned())
    }

    fn argv(&self, pid: i32) -> Result<Vec<String>, PlatformError> {
        match self.snapshot.processes.iter().find(|p| p.pid == pid) {
            None => Err(PlatformError::NoSuchProcess { pid }),
            Some(p) => p.argv.clone().ok_or_else(|| {
                PlatformError::Invalid(format!(
                    "the snapshot did not record the arguments of pid `{pid}`"
                ))
            }),
        }
    }

    fn cwd(&self, pid: i32) -> Result<std::path::PathBuf, PlatformError> {
        match self.snapshot.processes.iter().find(|p| p.pid == pid) {
            None => Err(PlatformError::NoSuchProcess { pid }),
            Some(p) => p.cwd.clone().map(Into::into).ok_or_else(|| {
                PlatformError::Invalid(format!(
                    "the snapshot did not record the working directory of pid `{pid}`"
                ))
            }),
        }
    }

    fn memory(&self) -> Result<MemoryTotals, PlatformError> {
        self.snapshot.memory.ok_or_else(|| {
            PlatformError::Invalid("the snapshot did not record memory totals".into())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::snapshot::fixture;

    #[test]
    fn round_trips_and_rejects_bad_files() {
        let snap = fixture::snapshot("macos", fixture::leaker(10, 3, 100));
        let text = serde_json::to_string(&snap).unwrap();
        let r = ReplaySource::parse(&text).unwrap();
        assert_eq!(r.snapshot(Detail::Full).unwrap(), snap);
        let mut slots = snap.clone();
        slots.detail = Detail::Slots;
        let rs = ReplaySource::new(slots);
        assert!(
            rs.snapshot(Detail::Full)
                .unwrap_err()
                .to_string()
                .contains("headroom snapshot")
        );
        assert!(rs.snapshot(Detail::Slots).is_ok());
        assert_eq!(r.process(10).unwrap().unwrap().name, "agency");
        assert!(r.process(11).unwrap().is_none());
        assert!(r.argv(10).is_err());
        assert_eq!(ReplaySource::parse("").unwrap_err(), "is empty");
        assert!(
            ReplaySource::parse("{")
                .unwrap_err()
                .starts_with("is not valid JSON")
        );
        assert!(
            ReplaySource::parse("{}")
                .unwrap_err()
                .contains("no `schema`")
        );
        assert!(
            ReplaySource::parse(r#"{"schema":"headroom.probe/1"}"#)
                .unwrap_err()
                .contains("headroom.probe/1")
        );
        assert!(
            ReplaySource::parse(r#"{"schema":"headroom.snapshot/1"}"#)
                .unwrap_err()
                .starts_with("is malformed")
        );
    }
}
