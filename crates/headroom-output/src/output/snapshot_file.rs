//! The snapshot file: what `headroom snapshot` and `probe --record` write and `--snapshot
//! FILE` replays (`headroom.snapshot/1`).

use crate::core::limits::Ceiling;
use crate::core::snapshot::{Detail, MemoryTotals, ProcessRecord, SNAPSHOT_SCHEMA, Snapshot};

/// A snapshot as `headroom snapshot` and `probe --record` write it: the [`Snapshot`] with
/// `type` beside `schema` and `taken_at`, the RFC 3339 twin of `taken_at_ms`. Both are
/// derived, and reading ignores them, so a snapshot without them (older, or written by a
/// test) replays the same.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct SnapshotFile<'a> {
    detail: Detail,
    /// `linux` or `macos`: which kernel produced it (decides what "slots" count).
    os: &'a str,
    taken_at: String,
    /// `taken_at` as Unix time in milliseconds (what replay reads).
    taken_at_ms: i64,
    /// The process that took the snapshot; its ancestors are protected on replay too.
    self_pid: i32,
    /// The real uid the snapshot is about.
    uid: u32,
    processes: &'a [ProcessRecord],
    /// Table entries that were listed but could not be read (EACCES under `hidepid`, a torn
    /// read): any of them may be a child or an ancestor nobody can see.
    unreadable: u64,
    /// `/proc` hides other users' processes (`hidepid=2`).
    others_hidden: bool,
    ceilings: &'a [Ceiling],
    memory: Option<MemoryTotals>,
}

impl crate::schema::Document for SnapshotFile<'_> {
    const SCHEMA: &'static str = SNAPSHOT_SCHEMA;
    const TYPE: Option<&'static str> = Some("snapshot");
}

impl<'a> SnapshotFile<'a> {
    pub(crate) fn new(snap: &'a Snapshot) -> Self {
        // Every field named, no `..`: a field added to `Snapshot` must be added here.
        let Snapshot {
            schema: _,
            detail,
            os,
            taken_at_ms,
            self_pid,
            uid,
            processes,
            unreadable,
            others_hidden,
            ceilings,
            memory,
        } = snap;
        Self {
            detail: *detail,
            os,
            taken_at: crate::core::time::format_ms(*taken_at_ms),
            taken_at_ms: *taken_at_ms,
            self_pid: *self_pid,
            uid: *uid,
            processes,
            unreadable: *unreadable,
            others_hidden: *others_hidden,
            ceilings,
            memory: *memory,
        }
    }
}

/// `snap` as a snapshot file (pretty JSON, no final newline).
pub fn to_json(snap: &Snapshot) -> serde_json::Result<Vec<u8>> {
    crate::schema::to_pretty(&SnapshotFile::new(snap)).map(String::into_bytes)
}
