//! The evidence log's rows (`store::evidence` keeps the files): the columns, a row's cells
//! as written — names escaped so that each row is one line, and neutralised against
//! spreadsheet formulas (the file is opened in Numbers or Excel for bug reports) — what a
//! file's first line says about who may write it, and the reader (`read.rs`), which
//! tolerates every layout (columns are found by name) and reports, never silently drops,
//! what it cannot interpret.

use anyhow::{Context, Result};
use serde_json::Value;

use crate::reading::{Reading, Trend};
use crate::slot_reading::SlotReading;

/// The columns after the reading's ([`SlotReading::FIELDS`]): the top zombie parent and
/// what was done.
pub const OWN_COLUMNS: [&str; 7] = [
    "top_parent_pid",
    "top_parent_name",
    "top_parent_zombies",
    "session_signal",
    "action",
    "result",
    "override",
];

/// Column order: the reading's fields under their JSON names, then [`OWN_COLUMNS`].
/// Changing it means a new header, which rotates old files aside.
pub fn columns() -> Vec<&'static str> {
    SlotReading::FIELDS.into_iter().chain(OWN_COLUMNS).collect()
}

/// One row. Unknown values are empty cells, never 0.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The reading, as `probe` prints it (a cleanup row: stamped with the cleanup's time).
    pub reading: SlotReading,
    pub top_parent: Option<(i32, String, u64)>,
    /// `cpu_idle=S;log_age=S` (`unknown` for an unreadable signal), `no-session`, or empty
    /// when not evaluated.
    pub session_signal: String,
    /// `poll` for a reading; `kill:15+9` per terminated parent; `cleanup` for a run with
    /// nothing to do.
    pub action: String,
    pub result: String,
    /// `emergency` when the override relaxed the session guard.
    pub override_: String,
}

impl Row {
    /// A row of `reading` with nothing else said.
    pub fn new(reading: SlotReading, action: &str) -> Self {
        Self {
            reading,
            top_parent: None,
            session_signal: String::new(),
            action: action.into(),
            result: String::new(),
            override_: String::new(),
        }
    }

    /// The row of one reading (`poll`), with its top zombie parent; the session signal is
    /// not evaluated for a reading.
    pub fn poll(r: &Reading, trend: Option<&Trend>) -> Self {
        Self {
            top_parent: r
                .top_parents
                .first()
                .map(|p| (p.pid, p.name.clone(), p.zombies)),
            ..Self::new(SlotReading::new(r, trend), "poll")
        }
    }

    /// The cells as written to the file: the reading's as its JSON has them (null empty),
    /// then the row's own. The text a process chose (its name) and free-form text are
    /// neutralised against spreadsheet formulas, and control characters escaped as on a
    /// terminal (`\n` → `\\n`), so every row is one line. Numbers are left as they are
    /// (a negative growth rate is not a formula).
    pub fn csv_fields(&self) -> Result<Vec<String>> {
        let value = serde_json::to_value(&self.reading).context("cannot encode a reading")?;
        let mut f = Vec::with_capacity(SlotReading::FIELDS.len() + OWN_COLUMNS.len());
        for name in SlotReading::FIELDS {
            f.push(match value.get(name) {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => neutralise(s),
                Some(v) => v.to_string(),
            });
        }
        let (pp, pn, pz) = match &self.top_parent {
            Some((pid, name, z)) => (pid.to_string(), neutralise(name), z.to_string()),
            None => (String::new(), String::new(), String::new()),
        };
        f.extend([pp, pn, pz]);
        for text in [
            &self.session_signal,
            &self.action,
            &self.result,
            &self.override_,
        ] {
            f.push(neutralise(text));
        }
        Ok(f)
    }
}

pub fn encode<S: AsRef<[u8]>>(fields: &[S]) -> Result<Vec<u8>> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    w.write_record(fields)
        .context("cannot encode an evidence row")?;
    w.into_inner()
        .map_err(|e| anyhow::anyhow!("cannot encode an evidence row: {e}"))
}

/// OWASP's CSV-injection rule: a cell a spreadsheet would run as a formula gets a leading `'`.
fn neutralise(s: &str) -> String {
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    crate::sanitize::sanitize(&s).into_owned()
}

/// A cleanup row: `kill:…` per terminated parent, `cleanup` for a run with nothing to do.
pub fn is_cleanup(action: &str) -> bool {
    action.starts_with("kill:") || action == "cleanup"
}

/// The first line of a file as the writer judges it, against the header of its own layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstLine {
    /// This layout's header: the file is this writer's to append to (and to rotate).
    Own,
    /// The start of this layout's header and nothing after it: a writer killed while
    /// creating the file. No row follows; the file is cut to nothing and written afresh.
    TornOwn,
    /// The header of another layout (older or newer: its first column is `at`, or
    /// `timestamp` before), whose writer may still be running.
    OtherLayout,
    /// Not a header of any layout: a zero-filled block, a user's notes, another program's
    /// file.
    Foreign,
}

/// What `first` (the first line without its newline; `whole` when a newline ended it) is
/// to the writer of `own` (its encoded header, newline included).
pub fn judge_first_line(first: &[u8], whole: bool, own: &[u8]) -> FirstLine {
    let own_line = own.strip_suffix(b"\n").unwrap_or(own);
    if first == own_line && whole {
        FirstLine::Own
    } else if !whole && own_line.starts_with(first) {
        FirstLine::TornOwn
    } else if is_header(first) {
        FirstLine::OtherLayout
    } else {
        FirstLine::Foreign
    }
}

/// Whether `line` is the header of some layout of the evidence log: its first column is
/// `at` (`timestamp` in the layouts before it) and it names at least three. Every layout
/// from this one on keeps `at` first and adds columns by name, so each reader from this
/// one on reads the rows of every later writer.
pub fn is_header(line: &[u8]) -> bool {
    let mut fields = line.split(|&b| b == b',');
    matches!(fields.next(), Some(b"at" | b"timestamp")) && fields.count() >= 2
}

/// A short name of the layout whose header is `header` (FNV-1a of its bytes, newline
/// excluded): the name of the file a writer of that layout appends to when `evidence.csv`
/// belongs to another (`evidence-<id>.csv`), so that two layouts never write one file.
pub fn layout_id(header: &[u8]) -> String {
    let header = header.strip_suffix(b"\n").unwrap_or(header);
    let mut h: u32 = 0x811c_9dc5;
    for &b in header {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

mod read;
pub use read::{Anomaly, AnomalyKind, Item, ReadRow, Reader, RowView, parse};

#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;

#[cfg(test)]
mod tests;
