//! `headroom log-probe DIR [--at RFC3339]`: what the session-log reader makes of one log
//! directory, file by file, with the mtime it replaced beside each verdict and the cost of
//! each scan; then the directory's verdict. `--at` replays an archived directory as of the
//! instant it was captured. Reads files only; touches no process.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, anyhow};
use serde::Serialize;

use crate::cli::LogProbeArgs;
use crate::commands::Ctx;
use crate::core::session_log::{
    DirReport, DirVerdict, FileReport, FileVerdict, FutureLines, ReaderLimits, UnknownWhy,
};
use crate::core::time::{self, BadTime, format_secs};
use crate::exit::{self, ExitStatus};
use crate::output::{Printer, Style, human_bytes, human_duration};
use crate::sanitize::sanitize;
use crate::store::log_files;

/// The arguments resolved: the directory, the instant judged, and the reader's limits.
#[derive(Debug)]
struct LogProbePlan {
    dir: PathBuf,
    now: i64,
    replay: bool,
    limits: ReaderLimits,
}

/// Verdict names in `--json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    Work,
    HeartbeatOnly,
    Unknown,
    Skipped,
}

/// The reader's limits, as used.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LimitsEntry {
    pub chunk_bytes: usize,
    pub budget_bytes: u64,
    pub horizon_seconds: i64,
    pub max_files: usize,
    /// Further files read only at their end, `tail_bytes` each.
    pub max_tail_files: usize,
    pub tail_bytes: u64,
}

/// One file. `last_activity` is the newest work (`work`) or the latest the last work can
/// have been (`heartbeat-only`); `age_seconds` is the time since then, so for
/// `heartbeat-only` a lower bound.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct FileEntry {
    pub name: String,
    pub size_bytes: u64,
    #[serde(rename = "modified_at")]
    pub mtime: Option<String>,
    /// Negative when the file was modified after the instant judged.
    pub mtime_age_seconds: Option<i64>,
    pub verdict: VerdictKind,
    pub skip_reason: Option<&'static str>,
    /// Read only at its end (`limits.tail_bytes`): the directory holds more than
    /// `limits.max_files` files and this one is not among the newest by mtime. Its
    /// `heartbeat-only` bound is then the oldest line in that tail (it errs towards active).
    pub tail_only: bool,
    #[serde(rename = "last_activity_at")]
    pub last_activity: Option<String>,
    pub age_seconds: Option<i64>,
    pub bytes_read: u64,
    /// Time spent reading it, in whole milliseconds.
    pub read_ms: u64,
    /// The same in microseconds, for the human line (which shows tenths of a millisecond).
    #[serde(skip)]
    pub read_us: u64,
    pub error: Option<String>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DirectoryEntry {
    pub verdict: VerdictKind,
    #[serde(rename = "last_activity_at")]
    pub last_activity: Option<String>,
    pub age_seconds: Option<i64>,
    /// Why the verdict is unknown; null otherwise.
    pub unknown_reason: Option<String>,
    pub bytes_read: u64,
    /// Time spent reading the directory, in whole milliseconds.
    pub read_ms: u64,
    #[serde(skip)]
    pub read_us: u64,
}

/// The `headroom.log-probe/4` report. Fields are added, never renamed, within a version.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct LogProbeReport {
    pub dir: String,
    /// The instant judged (now, or `--at`).
    pub at: String,
    /// `--at` was given: lines stamped after it are ignored.
    pub replay: bool,
    pub limits: LimitsEntry,
    pub files: Vec<FileEntry>,
    pub directory: DirectoryEntry,
}

impl crate::schema::Document for LogProbeReport {
    const SCHEMA: &'static str = "headroom.log-probe/4";
    const TYPE: Option<&'static str> = Some("log-probe");
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &LogProbeArgs) -> Result<ExitStatus> {
    let plan = resolve(args)?;
    let dir =
        log_files::judge_dir(&plan.dir, plan.now, &plan.limits, Instant::now).map_err(|e| {
            // One line naming the path and what is wrong (the path may hold anything).
            anyhow!("{}", sanitize(&format!("{:#}", anyhow::Error::new(e))))
        })?;
    let report = LogProbeReport::new(&plan, &dir);
    if ctx.printer.is_json() {
        ctx.printer.json_value(&report)?;
    } else {
        ctx.printer.text(&human(&report, ctx.printer))?;
    }
    // The verdict is the output, not the exit status: unknown protects, it is not an error.
    Ok(ExitStatus::Ok)
}

fn resolve(args: &LogProbeArgs) -> Result<LogProbePlan> {
    let mut limits = ReaderLimits::default();
    let (now, replay) = match &args.at {
        Some(at) => {
            limits.future = FutureLines::Ignore;
            let now = unix_now().context("cannot read the system clock")?;
            (parse_at(at, now)?, true)
        }
        None => {
            let now = unix_now().context("cannot read the system clock")?;
            (now, false)
        }
    };
    Ok(LogProbePlan {
        dir: args.dir.clone(),
        now,
        replay,
        limits,
    })
}

/// `--at`: an RFC 3339 instant with any UTC offset (`Z`, `+02:00`, `-05:30`), as Unix
/// seconds in UTC, not after `now` (a replay judges the past).
fn parse_at(s: &str, now: i64) -> Result<i64> {
    let bad = |why: &str| {
        exit::usage(format!(
            "--at `{}` {why}; write it like `2026-08-29T09:21:47Z` or \
             `2026-08-29T11:21:47+02:00`",
            sanitize(s)
        ))
    };
    let secs = time::parse_secs(s.trim()).map_err(|e| {
        bad(match e {
            BadTime::Shape | BadTime::Range => "is not an RFC 3339 instant",
            BadTime::NoOffset => "is not an RFC 3339 instant with a UTC offset",
            BadTime::OffsetRange => "has an offset beyond ±23:59",
        })
    })?;
    if secs < 0 {
        return Err(bad("is before 1970"));
    }
    if secs > now {
        return Err(bad(
            "is in the future: --at replays what was written up to a past instant",
        ));
    }
    Ok(secs)
}

fn unix_now() -> Result<i64> {
    let d = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_err(|_| anyhow!("the clock is set before 1970"))?;
    i64::try_from(d.as_secs()).map_err(|_| anyhow!("the clock is beyond the year 292 billion"))
}

fn ms(micros: u64) -> f64 {
    micros as f64 / 1000.0
}

/// Rounded to the nearest millisecond.
fn whole_ms(micros: u64) -> u64 {
    micros.saturating_add(500) / 1000
}

fn age(now: i64, t: i64) -> i64 {
    now.saturating_sub(t).max(0)
}

impl LogProbeReport {
    fn new(plan: &LogProbePlan, dir: &DirReport) -> Self {
        let now = plan.now;
        let files = dir.files.iter().map(|f| file_entry(now, f)).collect();
        let (verdict, unknown_reason) = match &dir.verdict {
            DirVerdict::Work { .. } => (VerdictKind::Work, None),
            DirVerdict::HeartbeatOnly { .. } => (VerdictKind::HeartbeatOnly, None),
            DirVerdict::Unknown(why) => (VerdictKind::Unknown, Some(unknown_text(why))),
        };
        Self {
            dir: plan.dir.display().to_string(),
            at: format_secs(now),
            replay: plan.replay,
            limits: LimitsEntry {
                chunk_bytes: plan.limits.chunk,
                budget_bytes: plan.limits.budget,
                horizon_seconds: plan.limits.horizon_secs,
                max_files: plan.limits.max_files,
                max_tail_files: plan.limits.max_tail_files,
                tail_bytes: plan.limits.tail,
            },
            files,
            directory: DirectoryEntry {
                verdict,
                last_activity: dir.last_activity.map(format_secs),
                age_seconds: dir.age(now),
                unknown_reason,
                bytes_read: dir.files.iter().map(|f| f.bytes_read).sum(),
                read_ms: whole_ms(dir.micros),
                read_us: dir.micros,
            },
        }
    }
}

fn file_entry(now: i64, f: &FileReport) -> FileEntry {
    let (verdict, skip_reason) = match f.verdict {
        FileVerdict::Work { .. } => (VerdictKind::Work, None),
        FileVerdict::HeartbeatOnly { .. } => (VerdictKind::HeartbeatOnly, None),
        FileVerdict::Unknown => (VerdictKind::Unknown, None),
        FileVerdict::Skipped(why) => (VerdictKind::Skipped, Some(why.as_str())),
    };
    let bound = f.verdict.activity_bound();
    FileEntry {
        name: f.name.clone(),
        size_bytes: f.size,
        mtime: f.mtime.map(format_secs),
        mtime_age_seconds: f.mtime.map(|m| now.saturating_sub(m)),
        verdict,
        skip_reason,
        tail_only: f.tail_only,
        last_activity: bound.map(format_secs),
        age_seconds: bound.map(|t| age(now, t)),
        bytes_read: f.bytes_read,
        read_ms: whole_ms(f.micros),
        read_us: f.micros,
        error: f.error.clone(),
    }
}

fn unknown_text(why: &UnknownWhy) -> String {
    match why {
        UnknownWhy::NoUsableFiles => "no file to judge".into(),
        UnknownWhy::FileUnknown { name } => format!("`{name}` could not be judged"),
        UnknownWhy::TooManyFiles { files, cap } => {
            format!(
                "{} to read, more than the {cap} read at most",
                crate::output::plural(*files as u64, "file")
            )
        }
    }
}

fn dur(secs: i64) -> String {
    human_duration(secs as f64)
}

/// "at least 2 days", never "at least over 2 days" (`human_duration` says "over" past 2 days).
fn at_least(secs: i64) -> String {
    let d = dur(secs);
    d.strip_prefix("over ").map_or(d.clone(), str::to_string)
}

/// The verdict column of one file.
fn file_verdict(f: &FileEntry) -> String {
    let age = f.age_seconds.unwrap_or(0);
    match f.verdict {
        VerdictKind::Work => format!("work {} ago", dur(age)),
        VerdictKind::HeartbeatOnly if f.tail_only => format!(
            "heartbeat only for at least {} (its end only)",
            at_least(age)
        ),
        VerdictKind::HeartbeatOnly => format!("heartbeat only for at least {}", at_least(age)),
        VerdictKind::Unknown => match &f.error {
            Some(e) => format!("unknown: {}", sanitize(e)),
            None => "unknown: no timestamped line read".into(),
        },
        VerdictKind::Skipped => format!("skipped: {}", f.skip_reason.unwrap_or("?")),
    }
}

fn mtime_text(f: &FileEntry) -> String {
    match f.mtime_age_seconds {
        None => "mtime unknown".into(),
        Some(a) if a >= 0 => format!("mtime {} ago", dur(a)),
        Some(a) => format!("mtime {} later", dur(a.saturating_neg())),
    }
}

/// Rendered from the report alone, so it cannot say anything `--json` does not.
pub(crate) fn human(r: &LogProbeReport, p: &Printer) -> String {
    let mut s = String::new();
    let when = if r.replay {
        format!("as of {}; later lines ignored", r.at)
    } else {
        format!("as of {}", r.at)
    };
    let _ = writeln!(
        s,
        "{} {} ({when})",
        p.paint("log directory", Style::Bold),
        sanitize(&r.dir)
    );
    let names: Vec<String> = r
        .files
        .iter()
        .map(|f| sanitize(&f.name).into_owned())
        .collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    // Columns as wide as their widest cell, two spaces apart: they never run together.
    let mtimes: Vec<String> = r.files.iter().map(mtime_text).collect();
    let mwidth = mtimes.iter().map(|m| m.chars().count()).max().unwrap_or(0);
    for ((f, name), mtime) in r.files.iter().zip(&names).zip(&mtimes) {
        let pad = width.saturating_sub(name.chars().count());
        let mut line = format!(
            "  {name}{:pad$}  {:>9}  {mtime:<mwidth$}  {}",
            "",
            human_bytes(f.size_bytes),
            file_verdict(f)
        );
        if f.verdict != VerdictKind::Skipped {
            let _ = write!(
                line,
                "  [{:.1} ms, {} read]",
                ms(f.read_us),
                human_bytes(f.bytes_read)
            );
        }
        let _ = writeln!(s, "{line}");
    }
    if r.files.is_empty() {
        let _ = writeln!(s, "  (no files)");
    }
    let d = &r.directory;
    let at = d.last_activity.as_deref().unwrap_or("?");
    let verdict = match d.verdict {
        VerdictKind::Work => p.paint(
            &format!("work {} ago (at {at})", dur(d.age_seconds.unwrap_or(0))),
            Style::Green,
        ),
        VerdictKind::HeartbeatOnly => p.paint(
            &format!(
                "heartbeat only for at least {} (no work after {at})",
                at_least(d.age_seconds.unwrap_or(0))
            ),
            Style::Yellow,
        ),
        VerdictKind::Unknown | VerdictKind::Skipped => p.paint(
            &format!(
                "unknown: {} (an unknown session is protected)",
                sanitize(d.unknown_reason.as_deref().unwrap_or("?"))
            ),
            Style::Red,
        ),
    };
    let _ = writeln!(
        s,
        "directory: {verdict}  [{:.1} ms, {} read]",
        ms(d.read_us),
        human_bytes(d.bytes_read)
    );
    s
}

#[cfg(test)]
mod tests;
