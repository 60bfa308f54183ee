//! `headroom snapshot`: record the process table, the ceilings and memory totals as JSON,
//! for bug reports, incident replays and tests (`--snapshot FILE` on any read-only command).

use anyhow::{Context, Result};

use crate::cli::SnapshotArgs;
use crate::commands::Ctx;
use crate::core::process_table::ProcessTable;
use crate::core::snapshot::{Detail, Snapshot};
use crate::exit::ExitStatus;
use crate::output::snapshot_file::to_json;
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
