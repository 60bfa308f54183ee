//! The evidence log's reader, one row at a time from any `Read` (the store hands it the
//! files; nothing here opens one). Columns are found by name, so every layout reads, older
//! (`timestamp`, `total_procs`, 13 to 16 columns) and newer (columns added by name).
//! Nothing is dropped silently: a row whose field count differs from its header, a count
//! that is not a count (`NaN`, `-1`, `1e3`), and lines before any header (a zero-filled
//! block left by a power cut, a user's notes at the top) are each an [`Anomaly`], and the
//! reader goes on with the next line — a header may also start again mid-file, where a
//! writer found the top of its file damaged.

mod columns;
mod row_view;

use std::io::Read;
use std::path::Path;

use serde::Serialize;

use crate::slot_reading::RecordedReading;
use columns::Layout;
pub use row_view::RowView;

/// A row that could not be interpreted: reported, never silently dropped.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Anomaly {
    pub file: String,
    /// 1-based line number (the first, for a stretch of lines).
    pub line: u64,
    pub fields: usize,
    /// The header's field count (0 where no header came before the line).
    pub expected: usize,
    /// The line as read (its first 1,000 characters, invalid UTF-8 replaced).
    pub text: String,
    /// Why it could not be interpreted.
    pub reason: AnomalyKind,
    /// `unreadable_value`: the column whose cell is not a value of its kind.
    pub column: Option<String>,
    /// `no_header`: the last of the lines without a header before them, reported as one.
    pub through_line: Option<u64>,
}

/// Why a row could not be interpreted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AnomalyKind {
    /// More or fewer fields than the header names.
    FieldCount,
    /// A whole-number column (a count, a pid, the uid) holds something else (`NaN`, `-1`).
    UnreadableValue,
    /// Lines with no header of any layout before them (a damaged top of the file, or a file
    /// that is not an evidence log).
    NoHeader,
    /// The file could not be read as CSV at that line.
    Csv,
    /// The file could not be opened or read at all (a symbolic link, no permission).
    FileUnreadable,
}

/// One row as read back, by column name (a layout without a column reads it as null): one
/// row of `evidence --json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ReadRow {
    /// Unix seconds of `at`, when it parses (not printed: `at` says it).
    #[serde(skip)]
    pub at_secs: Option<i64>,
    #[serde(flatten)]
    pub reading: RecordedReading,
    pub top_parent_pid: Option<i32>,
    pub top_parent_name: Option<String>,
    pub top_parent_zombies: Option<u64>,
    pub session_signal: Option<String>,
    pub action: String,
    pub result: String,
    #[serde(rename = "override")]
    pub override_: Option<String>,
}

/// What the reader found next.
#[derive(Debug)]
pub enum Item<'a> {
    Row(RowView<'a>),
    Anomaly(Anomaly),
}

/// Lines without a header before them, gathered until a header (or the end) comes.
#[derive(Debug)]
struct Headless {
    first: u64,
    last: u64,
    fields: usize,
    text: String,
}

/// The longest `text` an anomaly carries.
const TEXT_CHARS: usize = 1000;

fn record_text(rec: &csv::ByteRecord) -> String {
    let mut s = String::new();
    for (i, f) in rec.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&String::from_utf8_lossy(f));
        if s.len() > TEXT_CHARS * 4 {
            break;
        }
    }
    match s.char_indices().nth(TEXT_CHARS) {
        Some((cut, _)) => s[..cut].to_string(),
        None => s,
    }
}

/// The record is a header of some layout (the rule of [`super::is_header`]).
fn is_header_record(rec: &csv::ByteRecord) -> bool {
    matches!(rec.get(0), Some(b"at" | b"timestamp")) && rec.len() >= 3
}

/// The rows and anomalies of one file, read as they come.
#[derive(Debug)]
pub struct Reader<R: Read> {
    file: String,
    csv: csv::Reader<R>,
    rec: csv::ByteRecord,
    layout: Option<Layout>,
    headless: Option<Headless>,
    done: bool,
}

impl<R: Read> Reader<R> {
    /// A reader of `input`, named `file` in its anomalies.
    pub fn new(file: &str, input: R) -> Self {
        let csv = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .buffer_capacity(1 << 16)
            .from_reader(input);
        Self {
            file: file.to_string(),
            csv,
            rec: csv::ByteRecord::new(),
            layout: None,
            headless: None,
            done: false,
        }
    }

    fn headless_anomaly(&mut self) -> Option<Anomaly> {
        let h = self.headless.take()?;
        Some(Anomaly {
            file: self.file.clone(),
            line: h.first,
            fields: h.fields,
            expected: 0,
            text: h.text,
            reason: AnomalyKind::NoHeader,
            column: None,
            through_line: Some(h.last),
        })
    }

    fn anomaly(&self, line: u64, reason: AnomalyKind, column: Option<String>) -> Anomaly {
        Anomaly {
            file: self.file.clone(),
            line,
            fields: self.rec.len(),
            expected: self.layout.as_ref().map_or(0, |l| l.width),
            text: record_text(&self.rec),
            reason,
            column,
            through_line: None,
        }
    }

    /// The next row or anomaly; None at the end of the input.
    pub fn next_item(&mut self) -> Option<Item<'_>> {
        loop {
            if self.done {
                return None;
            }
            match self.csv.read_byte_record(&mut self.rec) {
                Err(e) => {
                    // An I/O error ends the file; what was read stays read.
                    let line = e.position().map_or(0, csv::Position::line);
                    self.done = true;
                    let mut a = self.anomaly(line, AnomalyKind::Csv, None);
                    a.text = e.to_string();
                    return Some(Item::Anomaly(a));
                }
                Ok(false) => {
                    self.done = true;
                    return self.headless_anomaly().map(Item::Anomaly);
                }
                Ok(true) => {}
            }
            let line = self.rec.position().map_or(0, csv::Position::line);
            if is_header_record(&self.rec) {
                self.layout = Some(Layout::new(&self.rec));
                if let Some(a) = self.headless_anomaly() {
                    return Some(Item::Anomaly(a));
                }
                continue;
            }
            let Some(layout) = &self.layout else {
                match &mut self.headless {
                    Some(h) => h.last = line,
                    None => {
                        self.headless = Some(Headless {
                            first: line,
                            last: line,
                            fields: self.rec.len(),
                            text: record_text(&self.rec),
                        })
                    }
                }
                continue;
            };
            if self.rec.len() != layout.width {
                return Some(Item::Anomaly(self.anomaly(
                    line,
                    AnomalyKind::FieldCount,
                    None,
                )));
            }
            let at = RowView::parse_at(layout, &self.rec);
            let view = RowView {
                layout,
                rec: &self.rec,
                line,
                at,
            };
            if let Some(column) = view.unreadable() {
                let a = self.anomaly(line, AnomalyKind::UnreadableValue, Some(column));
                return Some(Item::Anomaly(a));
            }
            // Re-borrowed: the view above ends where the anomaly branch needs `self`.
            let layout = self.layout.as_ref()?;
            return Some(Item::Row(RowView {
                layout,
                rec: &self.rec,
                line,
                at,
            }));
        }
    }
}

/// Every row and anomaly of one file's `bytes` (`path` names it in the anomalies).
pub fn parse(path: &Path, bytes: &[u8]) -> (Vec<ReadRow>, Vec<Anomaly>) {
    let mut r = Reader::new(&path.display().to_string(), bytes);
    let (mut rows, mut anomalies) = (Vec::new(), Vec::new());
    while let Some(item) = r.next_item() {
        match item {
            Item::Row(v) => rows.push(v.to_row()),
            Item::Anomaly(a) => anomalies.push(a),
        }
    }
    (rows, anomalies)
}
