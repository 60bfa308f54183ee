//! The evidence log's reader, one row at a time from any `Read` (the store hands it the
//! files; nothing here opens one). Columns are found by name, so every layout reads, older
//! (`timestamp`, `total_procs`, 13 to 16 columns) and newer (columns added by name).
//! Nothing is dropped silently: a row whose field count differs from its header, a count
//! that is not a count (`NaN`, `-1`, `1e3`), and lines before any header (a zero-filled
//! block left by a power cut, a user's notes at the top) are each an [`Anomaly`], and the
//! reader goes on with the next line — a header may also start again mid-file, where a
//! writer found the top of its file damaged.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use serde::Serialize;

use crate::reading::Level;
use crate::slot_reading::RecordedReading;
use crate::time::parse_secs;

/// The columns the reader knows, under every name a layout gave them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Col {
    At,
    Uid,
    Processes,
    Tasks,
    Zombies,
    Used,
    Limit,
    LimitSource,
    UsagePct,
    FreeSlots,
    Level,
    Growth,
    Eta,
    TrendSamples,
    Partial,
    TopPid,
    TopName,
    TopZombies,
    Signal,
    Action,
    Result,
    Override,
}

const KNOWN: usize = 22;

/// Each column's names: its own, then the one an older layout gave it.
const NAMES: [(Col, &str, Option<&str>); KNOWN] = [
    (Col::At, "at", Some("timestamp")),
    (Col::Uid, "uid", None),
    (Col::Processes, "processes", Some("total_procs")),
    (Col::Tasks, "tasks", None),
    (Col::Zombies, "zombies", None),
    (Col::Used, "used", None),
    (Col::Limit, "limit", None),
    (Col::LimitSource, "limit_source", None),
    (Col::UsagePct, "usage_pct", None),
    (Col::FreeSlots, "free_slots", None),
    (Col::Level, "level", None),
    (Col::Growth, "growth_per_min", None),
    (Col::Eta, "eta_seconds", None),
    (Col::TrendSamples, "trend_samples", None),
    (Col::Partial, "partial", None),
    (Col::TopPid, "top_parent_pid", None),
    (Col::TopName, "top_parent_name", None),
    (Col::TopZombies, "top_parent_zombies", None),
    (Col::Signal, "session_signal", None),
    (Col::Action, "action", None),
    (Col::Result, "result", None),
    (Col::Override, "override", None),
];

/// How a whole-number column must read; a cell that does not is an unreadable row.
#[derive(Debug, Clone, Copy)]
enum Whole {
    U64,
    U32,
    I32,
    Usize,
}

const WHOLE: [(Col, Whole); 10] = [
    (Col::Uid, Whole::U32),
    (Col::Processes, Whole::U64),
    (Col::Tasks, Whole::U64),
    (Col::Zombies, Whole::U64),
    (Col::Used, Whole::U64),
    (Col::Limit, Whole::U64),
    (Col::FreeSlots, Whole::U64),
    (Col::TrendSamples, Whole::Usize),
    (Col::TopPid, Whole::I32),
    (Col::TopZombies, Whole::U64),
];

/// Where each known column sits in one header.
#[derive(Debug, Clone)]
struct Layout {
    at: [Option<usize>; KNOWN],
    width: usize,
    /// The header's own names, for messages.
    names: Vec<String>,
}

impl Layout {
    fn new(header: &csv::ByteRecord) -> Self {
        let names: Vec<String> = header
            .iter()
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        let mut at = [None; KNOWN];
        for (i, (_, new, old)) in NAMES.iter().enumerate() {
            at[i] = names
                .iter()
                .position(|n| n == new)
                .or_else(|| old.and_then(|o| names.iter().position(|n| n == o)));
        }
        Self {
            at,
            width: names.len(),
            names,
        }
    }

    fn index(&self, c: Col) -> Option<usize> {
        self.at[c as usize]
    }
}

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

/// One interpretable row, read in place: its cells are parsed when asked for, and a whole
/// [`ReadRow`] is made only for the rows a report keeps.
#[derive(Debug, Clone, Copy)]
pub struct RowView<'a> {
    layout: &'a Layout,
    rec: &'a csv::ByteRecord,
    line: u64,
    /// `at` in Unix seconds, parsed once: the summary, the chart and `--since` all ask.
    at: Option<i64>,
}

/// A whole number without a sign (`+` allowed), as `str::parse::<u64>` reads it, straight
/// from the cell's bytes: a million rows × ten columns must not each pay for a UTF-8
/// check and a `str` parse.
fn unsigned(b: &[u8]) -> Option<u64> {
    let d = b.strip_prefix(b"+").unwrap_or(b);
    if d.is_empty() {
        return None;
    }
    d.iter().try_fold(0u64, |acc, &c| {
        if c.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(c - b'0'))
        } else {
            None
        }
    })
}

/// A whole number with an optional sign, as `str::parse::<i64>` reads it.
fn signed(b: &[u8]) -> Option<i64> {
    match b.first() {
        Some(b'-') => {
            let v = unsigned(&b[1..]).filter(|_| b.get(1) != Some(&b'+'))?;
            0i64.checked_sub_unsigned(v)
        }
        _ => i64::try_from(unsigned(b)?).ok(),
    }
}

/// The cell is a whole number of the column's kind.
fn is_whole(b: &[u8], kind: Whole) -> bool {
    match kind {
        Whole::U64 => unsigned(b).is_some(),
        Whole::U32 => unsigned(b).is_some_and(|v| u32::try_from(v).is_ok()),
        Whole::Usize => unsigned(b).is_some_and(|v| usize::try_from(v).is_ok()),
        Whole::I32 => signed(b).is_some_and(|v| i32::try_from(v).is_ok()),
    }
}

impl<'a> RowView<'a> {
    fn cell(&self, c: Col) -> Option<&'a [u8]> {
        let f = self.rec.get(self.layout.index(c)?)?;
        (!f.is_empty()).then_some(f)
    }

    fn text(&self, c: Col) -> Option<Cow<'a, str>> {
        self.cell(c).map(String::from_utf8_lossy)
    }

    fn parsed<T: std::str::FromStr>(&self, c: Col) -> Option<T> {
        std::str::from_utf8(self.cell(c)?).ok()?.parse().ok()
    }

    fn count(&self, c: Col) -> Option<u64> {
        unsigned(self.cell(c)?)
    }

    /// Rust reads `inf`, `NaN` and `1e400` as floats; no row of ours holds one, and JSON
    /// has none (it would print null, yet win `peak_usage`): not a value.
    fn float(&self, c: Col) -> Option<f64> {
        let s = std::str::from_utf8(self.cell(c)?).ok()?;
        let v: f64 = if s.contains(',') {
            s.replace(',', ".").parse().ok()?
        } else {
            s.parse().ok()?
        };
        v.is_finite().then_some(v)
    }

    /// 1-based line of the row in its file.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Unix seconds of `at`; None when it does not parse (a time that does not parse is no
    /// time: null, as the schema's `date-time` allows).
    pub fn at_secs(&self) -> Option<i64> {
        self.at
    }

    fn parse_at(layout: &Layout, rec: &csv::ByteRecord) -> Option<i64> {
        let f = rec.get(layout.index(Col::At)?)?;
        parse_secs(std::str::from_utf8(f).ok()?).ok()
    }

    /// `at` as logged, when it parses.
    pub fn to_row_at(&self) -> Option<String> {
        self.at_secs()?;
        self.text(Col::At).map(Cow::into_owned)
    }

    /// The slots compared with the limit; a row written before the `used` column has only
    /// its process count.
    pub fn used(&self) -> Option<u64> {
        self.count(Col::Used).or_else(|| self.count(Col::Processes))
    }

    pub fn zombies(&self) -> Option<u64> {
        self.count(Col::Zombies)
    }

    pub fn limit(&self) -> Option<u64> {
        self.count(Col::Limit)
    }

    pub fn limit_source(&self) -> Option<Cow<'a, str>> {
        self.text(Col::LimitSource)
    }

    pub fn usage_pct(&self) -> Option<f64> {
        self.float(Col::UsagePct)
    }

    pub fn free_slots(&self) -> Option<u64> {
        self.count(Col::FreeSlots)
    }

    pub fn growth_per_min(&self) -> Option<f64> {
        self.float(Col::Growth)
    }

    /// Whole seconds (older layouts wrote a fraction).
    #[allow(clippy::cast_possible_truncation)]
    pub fn eta_seconds(&self) -> Option<i64> {
        self.float(Col::Eta).map(|v| v.round() as i64)
    }

    pub fn action(&self) -> Cow<'a, str> {
        self.text(Col::Action).unwrap_or_default()
    }

    /// The row records a cleanup ([`super::is_cleanup`], on the cell's bytes).
    pub fn is_cleanup(&self) -> bool {
        self.cell(Col::Action)
            .is_some_and(|a| a.starts_with(b"kill:") || a == b"cleanup")
    }

    pub fn result(&self) -> Cow<'a, str> {
        self.text(Col::Result).unwrap_or_default()
    }

    /// The `override=emergency` column: the session guard was relaxed at the wall.
    pub fn is_emergency(&self) -> bool {
        self.cell(Col::Override) == Some(b"emergency")
    }

    /// The top zombie parent: the one terminated, on a cleanup row.
    pub fn top_parent(&self) -> (Option<i32>, Option<Cow<'a, str>>, Option<u64>) {
        (
            self.parsed(Col::TopPid),
            self.text(Col::TopName),
            self.parsed(Col::TopZombies),
        )
    }

    /// The whole row, as `evidence --json` prints it.
    pub fn to_row(&self) -> ReadRow {
        let own = |c: Col| self.text(c).map(Cow::into_owned);
        let at_secs = self.at_secs();
        let action = self.action().into_owned();
        let result = self.result().into_owned();
        // Before the `partial` column a partial table's poll row said so in `result`.
        let partial = self
            .parsed::<bool>(Col::Partial)
            .or_else(|| (action == "poll" && result == "partial").then_some(true));
        ReadRow {
            at_secs,
            reading: RecordedReading {
                at: own(Col::At).filter(|_| at_secs.is_some()),
                uid: self.parsed(Col::Uid),
                processes: self.parsed(Col::Processes),
                tasks: self.parsed(Col::Tasks),
                zombies: self.zombies(),
                used: self.parsed(Col::Used),
                limit: self.limit(),
                limit_source: own(Col::LimitSource),
                usage_pct: self.usage_pct(),
                free_slots: self.free_slots(),
                level: self.text(Col::Level).and_then(|s| Level::parse(&s)),
                growth_per_min: self.growth_per_min(),
                eta_seconds: self.eta_seconds(),
                trend_samples: self.parsed(Col::TrendSamples),
                partial,
            },
            top_parent_pid: self.parsed(Col::TopPid),
            top_parent_name: own(Col::TopName),
            top_parent_zombies: self.parsed(Col::TopZombies),
            session_signal: own(Col::Signal),
            action,
            result,
            override_: own(Col::Override),
        }
    }

    /// The first whole-number column whose cell is not one, with its name in this header;
    /// or, for a reading, the count it lacks (every layout with a count column writes it).
    fn unreadable(&self) -> Option<String> {
        let name = |c: Col| self.layout.index(c).map(|i| self.layout.names[i].clone());
        if !self.is_cleanup()
            && self.cell(Col::Used).is_none()
            && self.cell(Col::Processes).is_none()
        {
            if let Some(n) = name(Col::Used).or_else(|| name(Col::Processes)) {
                return Some(n);
            }
        }
        WHOLE.iter().find_map(|&(c, kind)| {
            let ok = is_whole(self.cell(c)?, kind);
            (!ok).then(|| self.layout.names[self.layout.index(c).unwrap_or(0)].clone())
        })
    }
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

#[cfg(test)]
mod whole_tests {
    use super::*;

    #[test]
    fn whole_numbers_read_from_bytes_as_str_parse_reads_them() {
        let cases = [
            "0",
            "7",
            "+7",
            "-7",
            "-0",
            "+",
            "-",
            "-+7",
            "+-7",
            "++7",
            "07",
            "1e3",
            "2.5",
            "NaN",
            "inf",
            "0x10",
            " 7",
            "7 ",
            "4294967295",
            "4294967296",
            "2147483647",
            "2147483648",
            "-2147483648",
            "-2147483649",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999",
            "-9223372036854775808",
            "١٢",
            "7\u{0}",
        ];
        for c in cases {
            let b = c.as_bytes();
            assert_eq!(unsigned(b), c.parse::<u64>().ok(), "u64 `{c}`");
            assert_eq!(signed(b), c.parse::<i64>().ok(), "i64 `{c}`");
            assert_eq!(
                is_whole(b, Whole::U32),
                c.parse::<u32>().is_ok(),
                "u32 `{c}`"
            );
            assert_eq!(
                is_whole(b, Whole::I32),
                c.parse::<i32>().is_ok(),
                "i32 `{c}`"
            );
            assert_eq!(
                is_whole(b, Whole::Usize),
                c.parse::<usize>().is_ok(),
                "usize `{c}`"
            );
        }
    }
}
