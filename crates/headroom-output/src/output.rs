//! Printer: every byte headroom writes goes through here. stdout carries results only
//! (human text, one JSON object, JSON Lines or Prometheus text); diagnostics, progress and
//! warnings go to stderr. Colour only on a terminal, honouring `--color` and `NO_COLOR`.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};

use crate::schema::Document;

/// `--color` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    Bold,
    Dim,
    Green,
    Yellow,
    Red,
}

impl Style {
    fn code(self) -> &'static str {
        match self {
            Self::Bold => "1",
            Self::Dim => "2",
            Self::Green => "32",
            Self::Yellow => "33",
            Self::Red => "1;31",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Printer {
    json: bool,
    quiet: bool,
    color: bool,
    stdout_tty: bool,
    stderr_tty: bool,
    /// Set when a command runs inside `headroom mcp`: what it would print is kept here
    /// instead (stdout there carries only protocol messages).
    capture: Option<Arc<Mutex<Captured>>>,
    hook: Option<ReportHook>,
    /// `run --records-fd`: where what would go to stderr goes instead (stderr is then the
    /// command's alone).
    records: Option<Arc<std::fs::File>>,
}

/// What a capturing Printer was given: the bytes meant for stdout, the lines for stderr,
/// and the report handed to `json_value`, as the value it serializes to and what the
/// front end's hook (`capturing`) read from the typed report.
#[derive(Debug, Default)]
pub struct Captured {
    pub stdout: Vec<u8>,
    pub stderr: Vec<String>,
    pub report: Option<CapturedReport>,
}

/// A report a command handed to a capturing Printer.
#[derive(Debug)]
pub struct CapturedReport {
    /// The object `--json` prints (`schema` first).
    pub value: serde_json::Value,
    /// What the hook made of the typed report (`None` when it was not the type it reads).
    pub summary: Option<String>,
}

/// Reads a report where it is still typed: the Printer passes it as `Any`, the front end
/// downcasts it to the report type it expects (`headroom mcp`'s summary line).
#[derive(Clone)]
pub struct ReportHook(pub Arc<ReadReport>);

/// The hook's function: the typed report in, its summary out.
pub(crate) type ReadReport = dyn Fn(&dyn std::any::Any) -> Option<String> + Send + Sync;

impl std::fmt::Debug for ReportHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ReportHook")
    }
}

impl Printer {
    pub fn new(json: bool, quiet: bool, color: ColorChoice) -> Self {
        let stdout_tty = std::io::stdout().is_terminal();
        let stderr_tty = std::io::stderr().is_terminal();
        let color = colour_enabled(color, stdout_tty, &|k| std::env::var_os(k));
        Self {
            json,
            quiet,
            color,
            stdout_tty,
            stderr_tty,
            capture: None,
            hook: None,
            records: None,
        }
    }

    /// This printer with every stderr line going to `file` instead (`run --records-fd`).
    #[must_use]
    pub fn with_stderr_to(mut self, file: std::fs::File) -> Self {
        self.stderr_tty = false;
        self.records = Some(Arc::new(file));
        self
    }

    /// One whole line on stderr, or on the records descriptor when there is one.
    fn to_stderr(&self, line: String) {
        match &self.records {
            // One write per line, so the reader never sees half a record.
            Some(f) => {
                let _ = (&**f).write_all(line.as_bytes());
            }
            None => write_stderr(line),
        }
    }

    /// Whether colour (and so terminal control, like rewriting a status line) is on.
    pub fn is_color(&self) -> bool {
        self.color
    }

    /// A JSON printer whose output is kept for the caller (the MCP server's tools), with
    /// the handle to read it back; `hook` reads the report while it is typed.
    pub fn capturing(hook: Option<ReportHook>) -> (Self, Arc<Mutex<Captured>>) {
        let sink = Arc::new(Mutex::new(Captured::default()));
        let p = Self {
            json: true,
            quiet: false,
            color: false,
            stdout_tty: false,
            stderr_tty: false,
            capture: Some(Arc::clone(&sink)),
            hook,
            records: None,
        };
        (p, sink)
    }

    /// Keep `text` when capturing; false when it should be written for real.
    fn captured(&self, stdout: bool, text: &str) -> bool {
        let Some(sink) = &self.capture else {
            return false;
        };
        // Nothing panics while holding the lock; were it poisoned, the text is still good.
        let mut c = sink
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if stdout {
            c.stdout.extend_from_slice(text.as_bytes());
        } else {
            c.stderr.push(text.trim_end_matches('\n').to_string());
        }
        true
    }

    pub fn is_json(&self) -> bool {
        self.json
    }

    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    pub fn stdout_is_terminal(&self) -> bool {
        self.stdout_tty
    }

    pub fn stderr_is_terminal(&self) -> bool {
        self.stderr_tty
    }

    /// `text` in `style` when colour is on.
    pub fn paint(&self, text: &str, style: Style) -> String {
        if self.color {
            format!("\x1b[{}m{text}\x1b[0m", style.code())
        } else {
            text.to_string()
        }
    }

    /// One JSON object (a one-shot report, or one JSON Lines record), flushed. A capturing
    /// Printer keeps it as a value, and its hook reads the typed report.
    pub fn json_value<T: Document + 'static>(&self, value: &T) -> std::io::Result<()> {
        if let Some(sink) = &self.capture {
            let v = crate::schema::to_value(value).map_err(std::io::Error::other)?;
            let summary = self.hook.as_ref().and_then(|h| (h.0)(value));
            let mut c = sink
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            c.report = Some(CapturedReport { value: v, summary });
            return Ok(());
        }
        // Serialise first, so a closed pipe surfaces as the io::Error it is (BrokenPipe,
        // which `lib::run` treats as success) rather than wrapped in a serde error.
        let text = crate::schema::to_line(value).map_err(std::io::Error::other)?;
        self.json_text(text)
    }

    /// One protocol message (`headroom mcp`'s JSON-RPC replies): not a headroom document,
    /// so without a `schema`.
    pub fn json_protocol(&self, value: &serde_json::Value) -> std::io::Result<()> {
        self.json_text(value.to_string())
    }

    fn json_text(&self, mut text: String) -> std::io::Result<()> {
        text.push('\n');
        if self.captured(true, &text) {
            return Ok(());
        }
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()
    }

    /// Human text on stdout; suppressed by `--quiet`.
    pub fn text(&self, text: &str) -> std::io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        self.raw(text)
    }

    /// Bytes on stdout whatever `--quiet` says (machine formats the user asked for).
    pub fn raw(&self, text: &str) -> std::io::Result<()> {
        if self.captured(true, text) {
            return Ok(());
        }
        let mut out = std::io::stdout().lock();
        out.write_all(text.as_bytes())?;
        out.flush()
    }

    /// A warning on stderr (kept under `--quiet`: warnings are never results).
    pub fn warn(&self, msg: &str) {
        let msg = &clip_words(msg);
        if self.captured(false, &format!("warning: {msg}")) {
            return;
        }
        self.to_stderr(format!("headroom: warning: {msg}\n"));
    }

    /// An error line on stderr.
    pub fn error(&self, msg: &str) {
        let msg = &clip_words(msg);
        if self.captured(false, &format!("error: {msg}")) {
            return;
        }
        self.to_stderr(format!("headroom: error: {msg}\n"));
    }

    /// Free-form diagnostics on stderr (progress summaries, `run`'s final line).
    pub fn stderr_line(&self, msg: &str) {
        if self.captured(false, msg) {
            return;
        }
        self.to_stderr(format!("{msg}\n"));
    }

    /// A JSON Lines record on stderr (`run --json`, where stdout belongs to the command).
    pub fn stderr_json<T: Document + ?Sized>(&self, value: &T) {
        if let Ok(s) = crate::schema::to_line(value) {
            if self.captured(false, &s) {
                return;
            }
            // One write, the newline with the record: stderr is unbuffered, and `writeln!`
            // writes the newline apart, so a command sharing the terminal could write between.
            let line = format!("{s}\n");
            match &self.records {
                Some(f) => {
                    let _ = (&**f).write_all(line.as_bytes());
                }
                None => {
                    let _ = std::io::stderr().lock().write_all(line.as_bytes());
                }
            }
        }
    }
}

/// `--color`, then the environment: `CLICOLOR_FORCE` (not `0`) forces it on, `NO_COLOR` or
/// `TERM=dumb` turns it off, else colour when stdout is a terminal.
pub(crate) fn colour_enabled(
    choice: ColorChoice,
    stdout_tty: bool,
    env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> bool {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if set("CLICOLOR_FORCE").is_some_and(|v| v != "0") => true,
        ColorChoice::Auto => {
            stdout_tty && set("NO_COLOR").is_none() && set("TERM").is_none_or(|t| t != "dumb")
        }
    }
}

/// The most characters of one word (a run without whitespace: a value, a path) a diagnostic
/// echoes back: a 100,000-character argument must not become 200 KB of stderr.
pub(crate) const CLIP_CHARS: usize = 200;

/// `s` with every word longer than `CLIP_CHARS` cut to that many characters and `…` (its
/// closing quote kept, so a backticked value still reads as one).
pub fn clip_words(s: &str) -> std::borrow::Cow<'_, str> {
    if !s
        .split_whitespace()
        .any(|w| w.chars().nth(CLIP_CHARS).is_some())
    {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len().min(4096));
    let mut rest = s;
    while !rest.is_empty() {
        let ws = rest
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(rest.len());
        out.push_str(&rest[..ws]);
        rest = &rest[ws..];
        let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let word = &rest[..end];
        match word.char_indices().nth(CLIP_CHARS) {
            Some((cut, _)) => {
                out.push_str(&word[..cut]);
                out.push('…');
                if let Some(q) = word
                    .chars()
                    .last()
                    .filter(|c| matches!(c, '`' | '\'' | '"'))
                {
                    out.push(q);
                }
            }
            None => out.push_str(word),
        }
        rest = &rest[end..];
    }
    std::borrow::Cow::Owned(out)
}

/// Say `n thing` with the noun (its last word) in the plural unless `n` is 1: "1 file",
/// "3 files", "2 idle processes", "2 children"; the count grouped as `thousands` has it
/// ("3,869 zombies").
pub fn plural(n: impl Into<u64>, one: &str) -> String {
    let n = n.into();
    if n == 1 {
        return format!("1 {one}");
    }
    let many = if let Some(stem) = one.strip_suffix("child") {
        format!("{stem}children")
    } else if one.ends_with('s') || one.ends_with("sh") || one.ends_with("ch") {
        format!("{one}es")
    } else {
        format!("{one}s")
    };
    format!("{} {many}", thousands(n))
}

/// "1 parent holds", "2 parents hold": a count, its noun and a verb that agrees.
pub fn plural_verb(n: impl Into<u64>, one: &str, verb_one: &str, verb_many: &str) -> String {
    let n = n.into();
    format!(
        "{} {}",
        plural(n, one),
        if n == 1 { verb_one } else { verb_many }
    )
}

/// 3869 → "3,869".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A short duration for people: "45 s", "13 min", "1 h 12 min", "over 2 days".
pub fn human_duration(secs: f64) -> String {
    if !secs.is_finite() || secs < 0.0 {
        return "unknown".into();
    }
    let s = secs.round() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min", s / 60),
        3600..=172_799 => {
            let (h, m) = (s / 3600, (s % 3600) / 60);
            if m == 0 {
                format!("{h} h")
            } else {
                format!("{h} h {m} min")
            }
        }
        _ => "over 2 days".into(),
    }
}

/// Bytes in binary units: "512 MiB", "1.5 GiB" (never "1 GiB" for 1.5 GiB), "1 GiB" for
/// 1023.96 MiB (a value that rounds to 1024 of a unit is said in the next one).
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1023.5 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 || v >= 100.0 || (v - v.round()).abs() < 0.05 {
        format!("{:.0} {}", v, UNITS[i])
    } else {
        format!("{:.1} {}", v, UNITS[i])
    }
}

/// A 30-cell usage bar for a percentage (capped at full).
pub fn bar(pct: f64, width: usize) -> String {
    let filled = ((pct / 100.0) * width as f64)
        .round()
        .clamp(0.0, width as f64) as usize;
    format!("[{}{}]", "#".repeat(filled), "-".repeat(width - filled))
}

/// While `watch` runs, stderr lines go through a bounded queue on a thread of its own
/// (`queue`), so that a round never waits for a stderr nobody reads.
static STDERR_QUEUE: std::sync::Mutex<Option<queue::Output>> = std::sync::Mutex::new(None);

fn write_stderr(line: String) {
    let mut q = STDERR_QUEUE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    match q.as_mut() {
        Some(out) => out.send(line),
        None => {
            drop(q);
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        }
    }
}

/// Send stderr's lines through a bounded queue until `finish_stderr`.
pub fn queue_stderr() {
    let mut q = STDERR_QUEUE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if q.is_none() {
        *q = Some(queue::Output::stderr());
    }
}

/// Lines dropped from stderr so far (its reader was behind).
pub fn stderr_lost() -> u64 {
    STDERR_QUEUE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .as_ref()
        .map_or(0, |o| o.lost())
}

/// Let the queued stderr lines go out (waiting at most `wait`), then write directly again.
pub fn finish_stderr(wait: std::time::Duration) {
    let out = STDERR_QUEUE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .take();
    if let Some(mut out) = out {
        out.finish(wait);
    }
}

pub mod progress;
pub mod queue;
pub mod screen;
pub mod snapshot_file;

#[cfg(test)]
mod tests;
