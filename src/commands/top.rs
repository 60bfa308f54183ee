//! `headroom top [--pid PID] [--park-min-mb N]`: one row per process tree the user owns,
//! largest footprint first, from two samples ~500 ms apart (growth and CPU), with caproom's
//! park-candidate verdict. JSON: `headroom.top/2`, keeping caproom's field names where they
//! mean the same (`pid`, `cmd`, `footprint_kb`, `tree_pids`, `state`, `growth_kb_s`,
//! `free_pct`, `park_candidate`, `reason_code`, `reason`).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::cli::TopArgs;
use crate::commands::Ctx;
use crate::core::memory::PRESSURE_FREE_PCT;
use crate::core::parking::ParkPermission;
use crate::core::proc_tree::{self, Change, OwnTree, own_trees, tree_at};
use crate::core::snapshot::{Detail, ProcessTable, Snapshot};
use crate::core::top::{Facts, GROWTH_KB_S, NotParkable, ReasonCode, TreeState, Verdict, judge};
use crate::exit::{self, ExitStatus, Failure};
use crate::output::{Printer, Style, human_bytes};
use crate::platform::ProcessSource;
use crate::sanitize::sanitize;

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

pub fn run(ctx: &Ctx<'_>, args: &TopArgs) -> Result<ExitStatus> {
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
                Change {
                    growth_kb_s: 0,
                    cpu_fraction: None,
                },
                |b| proc_tree::change(b, t, dt_ms, uid, me),
            );
            let facts = Facts {
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
fn reason(v: &Verdict, f: &Facts, park_min_bytes: u64, free_pct: Option<f64>) -> String {
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

/// At most `n` characters, marked when cut (char-safe).
fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
    t.push('…');
    t
}

pub fn human(r: &TopReport, p: &Printer) -> String {
    human_sized(r, p, crate::platform::screen_width(), None)
}

/// Columns `top` drops, in this order, when the width cannot hold them all with a command of
/// `MIN_COMMAND` characters (the REASON code is also said on the lines under the table).
const DROP_ORDER: [&str; 4] = ["REASON", "PIDS", "STATE", "KB/s"];
const MIN_COMMAND: usize = 16;

/// The table laid out for `width` columns (columns dropped, every line cut to it) and, with
/// `height`, cut to that many rows like top(1): the header stays, the smallest trees go.
pub fn human_sized(
    r: &TopReport,
    p: &Printer,
    width: Option<usize>,
    height: Option<usize>,
) -> String {
    let mut s = String::new();
    let free = r
        .free_pct
        .map_or("unknown".to_string(), |f| format!("{f} %"));
    let _ = writeln!(
        s,
        "{} {} tree{} of uid {}, free memory {free}",
        p.paint("headroom top:", Style::Bold),
        r.processes.len(),
        if r.processes.len() == 1 { "" } else { "s" },
        r.uid
    );
    // (name, width, right-aligned)
    let all: [(&str, usize, bool); 7] = [
        ("PID", 8, true),
        ("TREE", 9, true),
        ("PIDS", 4, true),
        ("STATE", 7, false),
        ("KB/s", 9, true),
        ("CPU", 6, true),
        ("REASON", 11, false),
    ];
    let mut shown: Vec<(&str, usize, bool)> = all.to_vec();
    let used = |cols: &[(&str, usize, bool)]| cols.iter().map(|c| c.1 + 2).sum::<usize>();
    if let Some(w) = width {
        for drop in DROP_ORDER {
            if used(&shown) + MIN_COMMAND <= w {
                break;
            }
            shown.retain(|c| c.0 != drop);
        }
    }
    let command_width = width.map_or(60, |w| w.saturating_sub(used(&shown)).clamp(1, 60));
    let cell = |text: &str, (_, w, right): (&str, usize, bool)| {
        if right {
            format!("{text:>w$}  ")
        } else {
            format!("{text:<w$}  ")
        }
    };
    let mut header: String = shown.iter().map(|c| cell(c.0, *c)).collect();
    header.push_str("COMMAND");
    let _ = writeln!(s, "{header}");
    let flagged_in = |n: usize| {
        r.processes
            .iter()
            .take(n)
            .filter(|row| row.reason_code != ReasonCode::None)
            .count()
    };
    let hint = usize::from(r.processes.iter().any(|row| row.park_candidate));
    let mut rows = r.processes.len().min(HUMAN_ROWS);
    if let Some(h) = height {
        // One line is left for the cursor, so the header never scrolls away.
        let lines = |n: usize| 2 + n + usize::from(r.processes.len() > n) + flagged_in(n) + hint;
        while rows > 1 && lines(rows) > h.saturating_sub(1) {
            rows -= 1;
        }
    }
    for row in r.processes.iter().take(rows) {
        let cpu = row.cpu_pct.map_or("?".to_string(), |c| format!("{c:.1}%"));
        let code = serde_json::to_value(row.reason_code)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let code = if row.reason_code == ReasonCode::None {
            "-".to_string()
        } else {
            code
        };
        let value = |name: &str| match name {
            "PID" => row.pid.to_string(),
            "TREE" => human_bytes(row.footprint_kb * 1024),
            "PIDS" => row.process_count.to_string(),
            "STATE" => row.state.as_str().to_string(),
            "KB/s" => format!("{:+}", row.growth_kb_s),
            "CPU" => cpu.clone(),
            _ => code.clone(),
        };
        let mut line: String = shown.iter().map(|c| cell(&value(c.0), *c)).collect();
        line.push_str(&truncate(&sanitize(&row.cmd), command_width));
        let _ = writeln!(s, "{line}");
    }
    if r.processes.len() > rows {
        let _ = writeln!(
            s,
            "… and {} smaller trees (`--json` lists every one)",
            r.processes.len() - rows
        );
    }
    let flagged: Vec<&TopRow> = r
        .processes
        .iter()
        .take(rows)
        .filter(|row| row.reason_code != ReasonCode::None)
        .collect();
    for row in flagged {
        let _ = writeln!(s, "  {}: {}", row.pid, sanitize(&row.reason));
    }
    if hint == 1 {
        let _ = writeln!(
            s,
            "park a candidate with `headroom park-tree PID`; continue it with `headroom wake-tree PID`"
        );
    }
    match width {
        Some(w) => s
            .lines()
            .map(|l| crate::output::screen::cut(l, w) + "\n")
            .collect(),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(trees: usize) -> TopReport {
        let row = |i: usize| TopRow {
            pid: 1000 + i as i32,
            cmd: format!("cargo build --release --workspace --all-features job {i}"),
            footprint_kb: (trees - i) as u64 * 1024,
            tree_pids: vec![1000 + i as i32],
            process_count: 1,
            state: TreeState::Running,
            growth_kb_s: 300,
            cpu_pct: Some(50.0),
            park_candidate: i == 0,
            reason_code: if i % 4 == 0 {
                ReasonCode::GrowthRate
            } else {
                ReasonCode::None
            },
            reason: "growing 300 KB/s, faster than 200 KB/s".into(),
        };
        TopReport {
            at: "t".into(),
            uid: 501,
            free_pct: Some(40),
            total_bytes: None,
            available_bytes: None,
            park_min_mb: 512,
            sample_ms: 500,
            processes: (0..trees).map(row).collect(),
        }
    }

    #[test]
    fn a_watched_screen_fits_the_terminal_height_and_keeps_its_header() {
        let p = Printer::new(false, false, crate::output::ColorChoice::Never);
        for (w, h) in [(60, 12), (80, 24), (200, 8)] {
            let s = human_sized(&report(30), &p, Some(w), Some(h));
            let lines: Vec<&str> = s.lines().collect();
            assert!(lines.len() < h, "{w}x{h}: {} lines\n{s}", lines.len());
            assert!(lines[0].starts_with("headroom top: 30 trees"), "{s}");
            assert!(lines[1].trim_start().starts_with("PID"), "{s}");
            assert!(lines.iter().any(|l| l.starts_with("… and ")), "{s}");
            assert!(lines.iter().all(|l| l.chars().count() <= w), "{s}");
            // The largest tree is the one kept.
            assert!(lines[2].trim_start().starts_with("1000 "), "{s}");
        }
        // Control: without a height, the usual 25 rows.
        let s = human_sized(&report(30), &p, None, None);
        assert!(s.lines().count() > 25, "{s}");
    }

    use crate::core::snapshot::fixture::MIB;

    /// `judge`'s verdict and its reason in words, as a row gets them.
    struct Judged {
        park_candidate: bool,
        reason_code: ReasonCode,
        reason: String,
    }

    fn judge(f: &Facts, park_min_bytes: u64, free_pct: Option<f64>) -> Judged {
        let v = super::judge(f, park_min_bytes, free_pct);
        Judged {
            park_candidate: v.park_candidate(),
            reason_code: v.reason_code,
            reason: reason(&v, f, park_min_bytes, free_pct),
        }
    }

    fn facts(mib: u64, cpu: Option<f64>, growth: i64) -> Facts {
        Facts {
            state: TreeState::Running,
            footprint_bytes: mib * MIB,
            change: Change {
                growth_kb_s: growth,
                cpu_fraction: cpu,
            },
            refusal: None,
            window_ms: 500,
        }
    }

    #[test]
    fn reason_codes_in_caproom_precedence() {
        let v = judge(&facts(600, Some(0.001), 5000), 512 * MIB, Some(5.0));
        assert!(v.park_candidate);
        assert_eq!(v.reason_code, ReasonCode::ParkIdle);
        assert!(
            v.reason.contains("idle") && v.reason.contains("600 MiB ≥ 512 MiB"),
            "{}",
            v.reason
        );

        let v = judge(&facts(600, Some(0.5), 5000), 512 * MIB, Some(5.0));
        assert_eq!(
            (v.park_candidate, v.reason_code),
            (false, ReasonCode::GrowthRate)
        );
        assert!(v.reason.contains("busy: 50.0 % CPU"), "{}", v.reason);

        let v = judge(&facts(100, Some(0.0), 100), 512 * MIB, Some(5.0));
        assert_eq!(v.reason_code, ReasonCode::Pressure);
        assert!(v.reason.contains("100 MiB < 512 MiB"), "{}", v.reason);

        let v = judge(&facts(100, Some(0.0), 100), 512 * MIB, Some(40.0));
        assert_eq!(v.reason_code, ReasonCode::None);
        let v = judge(&facts(100, Some(0.0), 100), 512 * MIB, None);
        assert_eq!(
            v.reason_code,
            ReasonCode::None,
            "unknown free is not pressure"
        );

        let mut f = facts(900, None, 0);
        assert!(!judge(&f, 512 * MIB, None).park_candidate, "unknown CPU");
        f.change.cpu_fraction = Some(0.0);
        f.refusal = Some("headroom runs inside it".into());
        let v = judge(&f, 512 * MIB, None);
        assert!(!v.park_candidate && v.reason.contains("headroom runs inside it"));
        f.refusal = None;
        f.state = TreeState::Parked;
        assert_eq!(judge(&f, 512 * MIB, None).reason, "already parked");
    }

    #[test]
    fn truncation_is_char_safe() {
        assert_eq!(truncate("héllo wörld", 5), "héll…");
        assert_eq!(truncate("short", 60), "short");
        assert_eq!(truncate("🦀🦀🦀", 2), "🦀…");
    }
}
