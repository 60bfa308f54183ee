//! Printer: every byte headroom writes goes through here. stdout carries results only
//! (human text, one JSON object, JSON Lines or Prometheus text); diagnostics, progress and
//! warnings go to stderr. Colour only on a terminal, honouring `--color` and `NO_COLOR`.

#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::{IsTerminal, Write};
use std::sync::{Arc, Mutex};

use serde::Serialize;

/// `--color` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Default)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

/// The schema name a one-shot report carries as its first key.
pub fn schema(cmd: &str) -> String {
    format!("headroom.{cmd}/1")
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
}

/// What a capturing Printer was given: the bytes meant for stdout, the lines for stderr.
#[derive(Debug, Default)]
pub struct Captured {
    pub stdout: Vec<u8>,
    pub stderr: Vec<String>,
}

impl Printer {
    pub fn new(json: bool, quiet: bool, color: ColorChoice) -> Self {
        let stdout_tty = std::io::stdout().is_terminal();
        let stderr_tty = std::io::stderr().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let color = match color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => stdout_tty && !no_color,
        };
        Self {
            json,
            quiet,
            color,
            stdout_tty,
            stderr_tty,
            capture: None,
        }
    }

    /// A JSON printer whose output is kept for the caller (the MCP server's tools), with
    /// the handle to read it back.
    pub fn capturing() -> (Self, Arc<Mutex<Captured>>) {
        let sink = Arc::new(Mutex::new(Captured::default()));
        let p = Self {
            json: true,
            quiet: false,
            color: false,
            stdout_tty: false,
            stderr_tty: false,
            capture: Some(Arc::clone(&sink)),
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

    /// One JSON object (a one-shot report, or one JSON Lines record), flushed.
    pub fn json_value<T: Serialize + ?Sized>(&self, value: &T) -> std::io::Result<()> {
        // Serialise first, so a closed pipe surfaces as the io::Error it is (BrokenPipe,
        // which `lib::run` treats as success) rather than wrapped in a serde error.
        let mut text = serde_json::to_string(value).map_err(std::io::Error::other)?;
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
        if self.captured(false, &format!("warning: {msg}")) {
            return;
        }
        write_stderr(format!("headroom: warning: {msg}\n"));
    }

    /// An error line on stderr.
    pub fn error(&self, msg: &str) {
        if self.captured(false, &format!("error: {msg}")) {
            return;
        }
        write_stderr(format!("headroom: error: {msg}\n"));
    }

    /// Free-form diagnostics on stderr (progress summaries, `run`'s final line).
    pub fn stderr_line(&self, msg: &str) {
        if self.captured(false, msg) {
            return;
        }
        write_stderr(format!("{msg}\n"));
    }

    /// A JSON Lines record on stderr (`run --json`, where stdout belongs to the command).
    pub fn stderr_json<T: Serialize + ?Sized>(&self, value: &T) {
        if let Ok(s) = serde_json::to_string(value) {
            if self.captured(false, &s) {
                return;
            }
            let _ = writeln!(std::io::stderr().lock(), "{s}");
        }
    }
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

/// Bytes in binary units: "512 MiB", "1.5 GiB".
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
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
/// (`watch_output`), so that a round never waits for a stderr nobody reads.
static STDERR_QUEUE: std::sync::Mutex<Option<crate::commands::watch_output::Output>> =
    std::sync::Mutex::new(None);

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
        *q = Some(crate::commands::watch_output::Output::stderr());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capturing_printer_keeps_what_it_would_print() {
        let (p, sink) = Printer::capturing();
        assert!(p.is_json());
        p.json_value(&serde_json::json!({"schema": "headroom.x/1"}))
            .unwrap();
        p.warn("careful");
        p.error("broken");
        p.stderr_line("plain");
        let c = sink.lock().unwrap();
        assert_eq!(c.stdout, b"{\"schema\":\"headroom.x/1\"}\n");
        assert_eq!(c.stderr, ["warning: careful", "error: broken", "plain"]);
    }

    #[test]
    fn formats() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(3869), "3,869");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(human_duration(786.0), "13 min");
        assert_eq!(human_duration(4320.0), "1 h 12 min");
        assert_eq!(human_duration(7200.0), "2 h");
        assert_eq!(human_duration(59.4), "59 s");
        assert_eq!(human_duration(200_000.0), "over 2 days");
        assert_eq!(human_duration(-1.0), "unknown");
        assert_eq!(human_bytes(512 * 1024 * 1024), "512 MiB");
        assert_eq!(human_bytes(1536 * 1024 * 1024), "1.5 GiB");
        assert_eq!(human_bytes(100), "100 B");
        assert_eq!(bar(50.0, 10), "[#####-----]");
        assert_eq!(bar(150.0, 4), "[####]");
        assert_eq!(schema("probe"), "headroom.probe/1");
    }
}
