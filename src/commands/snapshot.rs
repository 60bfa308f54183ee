//! `headroom snapshot`: record the process table, the ceilings and memory totals as JSON,
//! for bug reports, incident replays and tests (`--snapshot FILE` on any read-only command).

use anyhow::{Context, Result};

use crate::cli::SnapshotArgs;
use crate::commands::Ctx;
use crate::core::limits::Ceiling;
use crate::core::snapshot::{Detail, MemoryTotals, ProcessRecord, SNAPSHOT_SCHEMA};
use crate::core::snapshot::{ProcessTable, Snapshot};
use crate::exit::ExitStatus;
use crate::platform::ProcessSource;
use crate::store::fsio::atomic_write;

pub(crate) fn run(ctx: &Ctx<'_>, args: &SnapshotArgs) -> Result<ExitStatus> {
    let source = ctx.source()?;
    let mut snap = source
        .snapshot(Detail::Full)
        .context("cannot read the process table")?;
    record_session_argv(source.as_ref(), &mut snap);
    let mut bytes = to_json(&snap).context("cannot serialise the snapshot")?;
    bytes.push(b'\n');
    match &args.output {
        Some(path) => atomic_write(path, &bytes)?,
        None => ctx.printer.raw(&String::from_utf8_lossy(&bytes))?,
    }
    Ok(ExitStatus::Ok)
}

/// A snapshot as `headroom snapshot` and `probe --record` write it: the [`Snapshot`] with
/// `type` beside `schema` and `taken_at`, the RFC 3339 twin of `taken_at_ms`. Both are
/// derived, and reading ignores them, so a snapshot without them (older, or written by a
/// test) replays the same.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub(crate) struct Recorded<'a> {
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

impl crate::schema::Document for Recorded<'_> {
    const SCHEMA: &'static str = SNAPSHOT_SCHEMA;
    const TYPE: Option<&'static str> = Some("snapshot");
}

impl<'a> Recorded<'a> {
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
pub(crate) fn to_json(snap: &Snapshot) -> serde_json::Result<Vec<u8>> {
    crate::schema::to_pretty(&Recorded::new(snap)).map(String::into_bytes)
}

/// The liveness guard reads `--log-dir` from the arguments of the live children of zombie
/// parents (and resolves a relative one against the child's working directory); record
/// exactly those (and no one else's) so a replay can judge them.
pub(crate) fn record_session_argv(source: &dyn ProcessSource, snap: &mut Snapshot) {
    let wanted: Vec<i32> = {
        let table = ProcessTable::new(snap);
        table
            .zombie_parents(snap.uid)
            .iter()
            .flat_map(|zp| {
                table
                    .children(zp.pid)
                    .filter(|c| !c.is_zombie() && c.uid == snap.uid)
                    .map(|c| c.pid)
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    for p in snap
        .processes
        .iter_mut()
        .filter(|p| p.argv.is_none() && wanted.contains(&p.pid))
    {
        p.argv = source.argv(p.pid).ok();
        p.cwd = source
            .cwd(p.pid)
            .ok()
            .map(|d| d.to_string_lossy().into_owned());
    }
}
