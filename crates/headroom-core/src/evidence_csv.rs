//! The evidence log's rows (`store::evidence` keeps the files): the columns, a row's cells
//! as written — names escaped so that each row is one line, and neutralised against
//! spreadsheet formulas (the file is opened in Numbers or Excel for bug reports) — and the
//! reader, which tolerates old layouts (columns are found by name) and reports, never
//! silently drops, a row whose field count differs from its header.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;

use crate::reading::Level;
use crate::slot_reading::{RecordedReading, SlotReading};
use crate::time::parse_secs;

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

/// Names an older layout gave a reading's column (the 13-, 14- and 16-column files).
const OLD_NAMES: [(&str, &str); 2] = [("at", "timestamp"), ("processes", "total_procs")];

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

/// A row as read back, by column name (old layouts lack some columns, which read as null):
/// one row of `evidence --json`.
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

/// A row that could not be interpreted: reported, never silently dropped.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Anomaly {
    pub file: String,
    /// 1-based line number.
    pub line: u64,
    pub fields: usize,
    pub expected: usize,
    pub text: String,
}

/// The rows and anomalies of one file's `bytes` (`path` names it in messages). A file whose
/// header does not begin with `at` (`timestamp` in older layouts) is not an evidence log:
/// an error naming it.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<(Vec<ReadRow>, Vec<Anomaly>)> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut records = rdr.byte_records();
    let header: Vec<String> = match records.next() {
        None => return Ok((vec![], vec![])),
        Some(Err(e)) => anyhow::bail!("`{}` is not a headroom evidence log: {e}", path.display()),
        Some(Ok(h)) => h
            .iter()
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect(),
    };
    if !matches!(header.first().map(String::as_str), Some("at" | "timestamp")) || header.len() < 3 {
        let shown: String = header.join(",").chars().take(60).collect();
        anyhow::bail!(
            "`{}` is not a headroom evidence log: its first line is `{}`",
            path.display(),
            crate::sanitize::sanitize(&shown)
        );
    }
    // Columns are found by name, so a file written by an older layout still reads.
    let idx: std::collections::HashMap<&str, usize> = header
        .iter()
        .enumerate()
        .map(|(i, h)| (h.as_str(), i))
        .collect();
    let mut rows = Vec::new();
    let mut anomalies = Vec::new();
    for rec in records {
        let rec = match rec {
            Ok(r) => r,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                anomalies.push(Anomaly {
                    file: path.display().to_string(),
                    line,
                    fields: 0,
                    expected: header.len(),
                    text: e.to_string(),
                });
                continue;
            }
        };
        let line = rec.position().map_or(0, |p| p.line());
        if rec.len() != header.len() {
            let text: Vec<String> = rec
                .iter()
                .map(|f| String::from_utf8_lossy(f).into_owned())
                .collect();
            anomalies.push(Anomaly {
                file: path.display().to_string(),
                line,
                fields: rec.len(),
                expected: header.len(),
                text: text.join(","),
            });
            continue;
        }
        let get = |name: &str| -> Option<String> {
            let old = OLD_NAMES.iter().find(|(new, _)| *new == name).map(|o| o.1);
            let s = idx
                .get(name)
                .or_else(|| old.and_then(|o| idx.get(o)))
                .and_then(|&c| rec.get(c))
                .map(|f| String::from_utf8_lossy(f).into_owned())?;
            (!s.is_empty()).then_some(s)
        };
        let num = |name: &str| get(name).and_then(|s| s.parse::<u64>().ok());
        // Rust reads `inf`, `NaN` and `1e400` as floats; no row of ours holds one, and JSON
        // has none (it would print null, yet win `peak_usage`): not a value.
        let float = |name: &str| {
            get(name)
                .and_then(|s| s.replace(',', ".").parse::<f64>().ok())
                .filter(|v| v.is_finite())
        };
        // A time that does not parse is no time: null, as the schema's `date-time` allows.
        let at_secs = get("at").and_then(|t| parse_secs(&t).ok());
        let at = get("at").filter(|_| at_secs.is_some());
        let action = get("action").unwrap_or_default();
        let result = get("result").unwrap_or_default();
        // Before the `partial` column a partial table's poll row said so in `result`.
        let partial = get("partial")
            .and_then(|s| s.parse::<bool>().ok())
            .or_else(|| (action == "poll" && result == "partial").then_some(true));
        rows.push(ReadRow {
            at_secs,
            reading: RecordedReading {
                at,
                uid: get("uid").and_then(|s| s.parse().ok()),
                processes: num("processes"),
                tasks: num("tasks"),
                zombies: num("zombies"),
                used: num("used"),
                limit: num("limit"),
                limit_source: get("limit_source"),
                usage_pct: float("usage_pct"),
                free_slots: num("free_slots"),
                level: get("level").and_then(|s| Level::parse(&s)),
                growth_per_min: float("growth_per_min"),
                // Older layouts wrote it with a fraction.
                #[allow(clippy::cast_possible_truncation)]
                eta_seconds: float("eta_seconds").map(|v| v.round() as i64),
                trend_samples: get("trend_samples").and_then(|s| s.parse().ok()),
                partial,
            },
            top_parent_pid: get("top_parent_pid").and_then(|s| s.parse().ok()),
            top_parent_name: get("top_parent_name"),
            top_parent_zombies: num("top_parent_zombies"),
            session_signal: get("session_signal"),
            action,
            result,
            override_: get("override"),
        });
    }
    Ok((rows, anomalies))
}

#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slot_reading::fixture::sample;

    #[test]
    fn parse_reads_columns_by_name_and_reports_a_row_of_the_wrong_width() {
        let p = Path::new("e.csv");
        let text = "timestamp,zombies,action,result\n\
                    2026-08-29T22:42:41Z,7,poll,\n\
                    2026-08-29T22:43:41Z,8,poll,,extra\n";
        let (rows, anomalies) = parse(p, text.as_bytes()).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].reading.zombies, Some(7));
        assert_eq!(rows[0].reading.processes, None, "a column the layout lacks");
        assert_eq!(rows[0].at_secs, Some(1_788_043_361));
        assert_eq!(rows[0].reading.at.as_deref(), Some("2026-08-29T22:42:41Z"));
        assert_eq!((anomalies[0].line, anomalies[0].fields), (3, 5));
        let e = parse(p, b"name,pid,cpu\n1,2,3\n").unwrap_err().to_string();
        assert!(e.contains("`e.csv` is not a headroom evidence log"), "{e}");
    }

    #[test]
    fn a_number_cell_that_is_not_finite_reads_as_null() {
        let text = "timestamp,usage_pct,growth_per_min,eta_seconds,action,result\n\
                    2026-08-29T22:42:41Z,inf,NaN,1e400,poll,\n\
                    2026-08-29T22:43:41Z,-inf,infinity,-NaN,poll,\n\
                    2026-08-29T22:44:41Z,96.7,-2.5,786.4,poll,\n";
        let (rows, anomalies) = parse(Path::new("e.csv"), text.as_bytes()).unwrap();
        assert!(anomalies.is_empty(), "{anomalies:?}");
        let got: Vec<_> = rows
            .iter()
            .map(|r| {
                let r = &r.reading;
                (r.usage_pct, r.growth_per_min, r.eta_seconds)
            })
            .collect();
        assert_eq!(
            got,
            [
                (None, None, None),
                (None, None, None),
                (Some(96.7), Some(-2.5), Some(786)),
            ],
            "control: the finite row reads as written"
        );
    }

    #[test]
    fn a_time_that_does_not_parse_reads_as_null() {
        let text = "timestamp,zombies,action,result\n\
                    yesterday,1,poll,\n\
                    2026-08-29T22:42:41+02:00,2,poll,\n\
                    2026-13-01T00:00:00Z,3,poll,\n";
        let (rows, _) = parse(Path::new("e.csv"), text.as_bytes()).unwrap();
        let got: Vec<_> = rows
            .iter()
            .map(|r| (r.reading.at.as_deref(), r.at_secs, r.reading.zombies))
            .collect();
        assert_eq!(
            got,
            [
                (None, None, Some(1)),
                (
                    Some("2026-08-29T22:42:41+02:00"),
                    Some(1_788_036_161),
                    Some(2)
                ),
                (None, None, Some(3)),
            ],
            "the row is kept; only its time is unknown (control: an offset time reads as written)"
        );
    }

    #[test]
    fn the_16_column_layout_reads_under_the_new_names() {
        let text = "timestamp,total_procs,zombies,limit,limit_source,usage_pct,free_slots,growth_per_min,eta_seconds,top_parent_pid,top_parent_name,top_parent_zombies,session_signal,action,result,override\n\
                    2026-08-29T22:42:41Z,3869,3326,4000,per-uid,96.7,131,10.00,786.4,87537,agency,600,no-session,poll,partial,\n";
        let (rows, anomalies) = parse(Path::new("e.csv"), text.as_bytes()).unwrap();
        assert!(anomalies.is_empty());
        let r = &rows[0].reading;
        assert_eq!(
            (r.processes, r.used, r.used_or_processes(), r.eta_seconds),
            (Some(3869), None, Some(3869), Some(786))
        );
        assert_eq!((r.partial, r.level, r.uid), (Some(true), None, None));
        assert_eq!(rows[0].top_parent_name.as_deref(), Some("agency"));
    }

    #[test]
    fn cells_a_spreadsheet_would_run_are_neutralised_and_numbers_are_not() {
        let mut reading = sample();
        reading.growth_per_min = Some(-2.0);
        let row = Row {
            top_parent: Some((7, "=cmd|x".into(), 1)),
            ..Row::new(reading, "poll")
        };
        let f = row.csv_fields().unwrap();
        let col = |name: &str| columns().iter().position(|c| *c == name).unwrap();
        assert_eq!(f[col("top_parent_name")], "'=cmd|x");
        assert_eq!(
            f[col("growth_per_min")],
            "-2.0",
            "control: a negative number is not a formula"
        );
        assert_eq!(
            encode(&f).unwrap().iter().filter(|&&b| b == b'\n').count(),
            1
        );
    }
}
