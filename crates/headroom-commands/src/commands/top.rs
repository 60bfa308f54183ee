//! `headroom top [--pid PID] [--park-min-mb N]`: one row per process tree the user owns,
//! largest footprint first, from two samples ~500 ms apart (growth and CPU), with caproom's
//! park-candidate verdict. JSON: `headroom.top/2`, keeping caproom's field names where they
//! mean the same (`pid`, `cmd`, `footprint_kb`, `tree_pids`, `state`, `growth_kb_s`,
//! `free_pct`, `park_candidate`, `reason_code`, `reason`).

mod human;

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::cli::TopArgs;
use crate::commands::Ctx;
use crate::core::memory::PRESSURE_FREE_PCT;
use crate::core::parking::ParkPermission;
use crate::core::proc_tree::{self, OwnTree, TreeChange, own_trees, tree_at};
use crate::core::process_table::ProcessTable;
use crate::core::snapshot::{Detail, Snapshot};
use crate::core::top::{
    GROWTH_KB_S, NotParkable, ParkVerdict, ReasonCode, TreeFacts, TreeState, judge,
};
use crate::exit::{self, ExitStatus, Failure};
use crate::output::human_bytes;
use crate::platform::ProcessSource;
pub(crate) use human::{human, human_sized};

/// Time between the two samples.
const WINDOW: Duration = Duration::from_millis(500);
/// Rows a person sees; `--json` lists every tree.
const HUMAN_ROWS: usize = 25;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TopRow {
    pub pid: i32,
    /// The root's command line (or executable, or name when that cannot be read).
    pub cmd: String,
    /// Footprint of the whole tree, KiB (caproom's unit).
    pub footprint_kb: u64,
    pub tree_pids: Vec<i32>,
    pub process_count: usize,
    pub state: TreeState,
    pub growth_kb_s: i64,
    /// CPU of the whole tree between the samples, percent of one core; null when unknown.
    pub cpu_pct: Option<f64>,
    pub park_candidate: bool,
    pub reason_code: ReasonCode,
    pub reason: String,
}

/// The `headroom.top/2` report.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct TopReport {
    /// When the second sample was taken (RFC 3339 UTC).
    pub at: String,
    pub uid: u32,
    pub free_pct: Option<u8>,
    pub total_bytes: Option<u64>,
    pub available_bytes: Option<u64>,
    pub park_min_mb: u64,
    /// Time between the two samples (0 when replaying one snapshot).
    pub sample_ms: u64,
    pub processes: Vec<TopRow>,
}

impl crate::schema::Document for TopReport {
    const SCHEMA: &'static str = "headroom.top/2";
    const TYPE: Option<&'static str> = Some("top");
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &TopArgs) -> Result<ExitStatus> {
    let source = ctx.source()?;
    let read = |s: &dyn ProcessSource| -> Result<Snapshot> {
        s.snapshot(Detail::Full)
            .context("cannot read the process table")
    };
    let first = read(source.as_ref())?;
    let (before, after, dt) = if ctx.replaying() {
        (None, first, 0)
    } else {
        let t0 = Instant::now();
        std::thread::sleep(WINDOW);
        let second = read(source.as_ref())?;
        (Some(first), second, t0.elapsed().as_millis() as u64)
    };
    let report = build(source.as_ref(), before.as_ref(), &after, dt, args)?;
    if !args.watch {
        if ctx.printer.is_json() {
            ctx.printer.json_value(&report)?;
        } else {
            ctx.printer.text(&human(&report, ctx.printer))?;
        }
        return Ok(ExitStatus::Ok);
    }
    if ctx.replaying() {
        return Err(exit::usage(
            "top --watch refreshes a live view; a recorded --snapshot has one instant",
        ));
    }
    watch(ctx, source.as_ref(), args, report, after)
}

/// `top --watch`: each round's growth and CPU are measured since the round before.
fn watch(
    ctx: &Ctx<'_>,
    source: &dyn ProcessSource,
    args: &TopArgs,
    mut report: TopReport,
    mut last: Snapshot,
) -> Result<ExitStatus> {
    use crate::platform::stop_flag;
    stop_flag::install().context("top --watch cannot handle SIGINT/SIGTERM")?;
    let interval = args.interval.unwrap_or(Duration::from_secs(2));
    // A live view (the screen redrawn in place) needs a terminal that takes control codes;
    // piped, or without colour, each round is a plain table after the last.
    let live = ctx.printer.stdout_is_terminal() && ctx.printer.is_color();
    loop {
        if ctx.printer.is_json() {
            ctx.printer.json_value(&report)?;
        } else if live {
            // Redrawn in place, the table must fit the screen or its header scrolls away.
            let screen = human_sized(
                &report,
                ctx.printer,
                crate::platform::screen_width(),
                crate::platform::screen_height(),
            );
            ctx.printer.raw(&format!("\x1b[H\x1b[2J{screen}"))?;
        } else {
            ctx.printer
                .text(&format!("{}\n", human(&report, ctx.printer)))?;
        }
        let t0 = Instant::now();
        stop_flag::sleep(interval);
        if stop_flag::requested().is_some() {
            break;
        }
        let now = source
            .snapshot(Detail::Full)
            .context("cannot read the process table")?;
        report = build(
            source,
            Some(&last),
            &now,
            t0.elapsed().as_millis() as u64,
            args,
        )?;
        last = now;
    }
    Ok(exit::after_stop(stop_flag::requested(), ExitStatus::Ok))
}

fn build(
    source: &dyn ProcessSource,
    before: Option<&Snapshot>,
    after: &Snapshot,
    dt_ms: u64,
    args: &TopArgs,
) -> Result<TopReport> {
    let table = ProcessTable::new(after);
    let uid = after.uid;
    let me = after.self_pid;
    let trees: Vec<OwnTree<'_>> = match args.pid {
        Some(pid) => {
            let t = tree_at(&table, pid, uid, me)
                .ok_or_else(|| Failure::Failed(format!("no such process `{pid}`")))?;
            if t.root.uid != uid {
                return Err(Failure::Failed(format!(
                    "pid `{pid}` belongs to uid {}; top shows your own trees (uid {uid})",
                    t.root.uid
                ))
                .into());
            }
            vec![t]
        }
        None => own_trees(&table, uid, me),
    };
    let before_table = before.map(ProcessTable::new);
    let permission = ParkPermission::new(&table);
    let free = after
        .memory
        .filter(|m| m.total_bytes > 0)
        .map(|m| m.free_pct());
    let park_min = args.park_min_mb.saturating_mul(1 << 20);
    let rows = trees
        .iter()
        .map(|t| {
            let change = before_table.as_ref().map_or(
                TreeChange {
                    growth_kb_s: 0,
                    cpu_fraction: None,
                },
                |b| proc_tree::change(b, t, dt_ms, uid, me),
            );
            let facts = TreeFacts {
                state: TreeState::of(t.root),
                footprint_bytes: t.footprint_bytes,
                change,
                refusal: permission.check(t.root).err().map(|r| r.to_string()),
                window_ms: dt_ms,
            };
            let v = judge(&facts, park_min, free);
            let reason = reason(&v, &facts, park_min, free);
            TopRow {
                pid: t.root.pid,
                cmd: command_of(source, t),
                footprint_kb: t.footprint_bytes / 1024,
                tree_pids: t.pids(),
                process_count: t.members.len(),
                state: facts.state,
                growth_kb_s: change.growth_kb_s,
                cpu_pct: change.cpu_fraction.map(|c| (c * 1000.0).round() / 10.0),
                park_candidate: v.park_candidate(),
                reason_code: v.reason_code,
                reason,
            }
        })
        .collect();
    Ok(TopReport {
        at: crate::core::time::format_ms(after.taken_at_ms),
        uid,
        free_pct: free.map(|f| f.floor().clamp(0.0, 100.0) as u8),
        total_bytes: after.memory.map(|m| m.total_bytes),
        available_bytes: after.memory.map(|m| m.available_bytes),
        park_min_mb: args.park_min_mb,
        sample_ms: dt_ms,
        processes: rows,
    })
}

/// The verdict in words, with the numbers it was drawn from.
fn reason(v: &ParkVerdict, f: &TreeFacts, park_min_bytes: u64, free_pct: Option<f64>) -> String {
    let secs = f.window_ms as f64 / 1000.0;
    let size = format!(
        "tree {} {} {} park threshold",
        human_bytes(f.footprint_bytes),
        if f.footprint_bytes >= park_min_bytes {
            "≥"
        } else {
            "<"
        },
        human_bytes(park_min_bytes)
    );
    let why = match &v.not_parkable {
        None => {
            let cpu = f.change.cpu_fraction.unwrap_or(0.0) * 100.0;
            return format!("idle: {cpu:.1} % CPU over {secs:.1} s, {size}");
        }
        Some(NotParkable::AlreadyParked) => "already parked".into(),
        Some(NotParkable::Zombie) => "its root has exited (zombie)".into(),
        Some(NotParkable::Refused(r)) => format!("not parkable: {r}"),
        Some(NotParkable::CpuUnknown) => {
            "CPU unknown (processes started between the samples)".into()
        }
        Some(NotParkable::Busy(c)) => format!("busy: {:.1} % CPU over {secs:.1} s", c * 100.0),
        Some(NotParkable::Small) => size,
    };
    match v.reason_code {
        ReasonCode::GrowthRate => format!(
            "growing {} KB/s (> {GROWTH_KB_S}); {why}",
            f.change.growth_kb_s
        ),
        ReasonCode::Pressure => format!(
            "memory pressure: {:.0} % free (< {PRESSURE_FREE_PCT:.0} %); {why}",
            free_pct.unwrap_or(0.0)
        ),
        ReasonCode::ParkIdle | ReasonCode::None => why,
    }
}

/// The root's command line when it can be read, else its executable, else its name.
fn command_of(source: &dyn ProcessSource, t: &OwnTree<'_>) -> String {
    let r = t.root;
    if let Some(a) = &r.argv {
        return a.join(" ");
    }
    if !r.is_zombie() {
        if let Ok(argv) = source.argv(r.pid) {
            if !argv.is_empty() {
                return argv.join(" ");
            }
        }
    }
    r.exe.clone().unwrap_or_else(|| r.name.clone())
}

#[cfg(test)]
mod tests;
