//! The evidence log's rows (`store::evidence` keeps the files): the columns, a row's cells
//! as written — names escaped so that each row is one line, and neutralised against
//! spreadsheet formulas (the file is opened in Numbers or Excel for bug reports) — and the
//! reader, which tolerates old layouts (columns are found by name) and reports, never
//! silently drops, a row whose field count differs from its header.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::core::time::parse_secs;

/// Column order; changing it means a new header, which rotates old files aside.
pub const COLUMNS: [&str; 16] = [
    "timestamp",
    "total_procs",
    "zombies",
    "limit",
    "limit_source",
    "usage_pct",
    "free_slots",
    "growth_per_min",
    "eta_seconds",
    "top_parent_pid",
    "top_parent_name",
    "top_parent_zombies",
    "session_signal",
    "action",
    "result",
    "override",
];

/// One row. Unknown values are empty cells, never 0.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// RFC 3339, UTC, whole seconds.
    pub timestamp: String,
    pub total_procs: u64,
    pub zombies: u64,
    pub limit: Option<u64>,
    pub limit_source: Option<String>,
    pub usage_pct: Option<f64>,
    pub free_slots: Option<u64>,
    pub growth_per_min: Option<f64>,
    pub eta_seconds: Option<f64>,
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

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

impl Row {
    pub fn fields(&self) -> [String; 16] {
        let (pp, pn, pz) = match &self.top_parent {
            Some((pid, name, z)) => (pid.to_string(), name.clone(), z.to_string()),
            None => (String::new(), String::new(), String::new()),
        };
        [
            self.timestamp.clone(),
            self.total_procs.to_string(),
            self.zombies.to_string(),
            opt(self.limit),
            self.limit_source.clone().unwrap_or_default(),
            self.usage_pct
                .map(|v| format!("{v:.1}"))
                .unwrap_or_default(),
            opt(self.free_slots),
            self.growth_per_min
                .map(|v| format!("{v:.2}"))
                .unwrap_or_default(),
            self.eta_seconds
                .map(|v| format!("{v:.0}"))
                .unwrap_or_default(),
            pp,
            pn,
            pz,
            self.session_signal.clone(),
            self.action.clone(),
            self.result.clone(),
            self.override_.clone(),
        ]
    }
}

impl Row {
    /// The cells as written to the file: the text a process chose (its name) and free-form
    /// text neutralised against spreadsheet formulas, and control characters escaped as on a
    /// terminal (`\n` → `\\n`), so every row is one line. Numbers are left as they are
    /// (a negative growth rate is not a formula).
    pub fn csv_fields(&self) -> [String; 16] {
        let mut f = self.fields();
        for i in [4, 10, 12, 13, 14, 15] {
            f[i] = neutralise(&f[i]);
        }
        f
    }
}

pub fn encode(fields: &[String]) -> Result<Vec<u8>> {
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

/// A row as read back, by column name (old layouts lack some columns).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReadRow {
    pub timestamp: String,
    /// Unix seconds, when the timestamp parses.
    pub at: Option<i64>,
    pub total_procs: Option<u64>,
    pub zombies: Option<u64>,
    pub limit: Option<u64>,
    pub limit_source: Option<String>,
    pub usage_pct: Option<f64>,
    pub free_slots: Option<u64>,
    pub eta_seconds: Option<f64>,
    pub top_parent_pid: Option<i32>,
    pub top_parent_name: Option<String>,
    pub top_parent_zombies: Option<u64>,
    pub session_signal: Option<String>,
    pub action: String,
    pub result: String,
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
/// header does not begin with `timestamp` is not an evidence log: an error naming it.
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
    if header.first().map(String::as_str) != Some("timestamp") || header.len() < 3 {
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
            let s = idx
                .get(name)
                .and_then(|&c| rec.get(c))
                .map(|f| String::from_utf8_lossy(f).into_owned())?;
            (!s.is_empty()).then_some(s)
        };
        let num = |name: &str| get(name).and_then(|s| s.parse::<u64>().ok());
        let float = |name: &str| get(name).and_then(|s| s.replace(',', ".").parse::<f64>().ok());
        let timestamp = get("timestamp").unwrap_or_default();
        rows.push(ReadRow {
            at: parse_secs(&timestamp).ok(),
            timestamp,
            total_procs: num("total_procs"),
            zombies: num("zombies"),
            limit: num("limit"),
            limit_source: get("limit_source"),
            usage_pct: float("usage_pct"),
            free_slots: num("free_slots"),
            eta_seconds: float("eta_seconds"),
            top_parent_pid: get("top_parent_pid").and_then(|s| s.parse().ok()),
            top_parent_name: get("top_parent_name"),
            top_parent_zombies: num("top_parent_zombies"),
            session_signal: get("session_signal"),
            action: get("action").unwrap_or_default(),
            result: get("result").unwrap_or_default(),
            override_: get("override"),
        });
    }
    Ok((rows, anomalies))
}

#[cfg(test)]
pub(crate) mod fixture;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_reads_columns_by_name_and_reports_a_row_of_the_wrong_width() {
        let p = Path::new("e.csv");
        let text = "timestamp,zombies,action,result\n\
                    2026-08-29T22:42:41Z,7,poll,\n\
                    2026-08-29T22:43:41Z,8,poll,,extra\n";
        let (rows, anomalies) = parse(p, text.as_bytes()).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].zombies, Some(7));
        assert_eq!(rows[0].total_procs, None, "a column the layout lacks");
        assert_eq!(rows[0].at, Some(1_788_043_361));
        assert_eq!((anomalies[0].line, anomalies[0].fields), (3, 5));
        let e = parse(p, b"name,pid,cpu\n1,2,3\n").unwrap_err().to_string();
        assert!(e.contains("`e.csv` is not a headroom evidence log"), "{e}");
    }

    #[test]
    fn cells_a_spreadsheet_would_run_are_neutralised_and_numbers_are_not() {
        let row = Row {
            top_parent: Some((7, "=cmd|x".into(), 1)),
            growth_per_min: Some(-2.0),
            action: "poll".into(),
            ..Row::default()
        };
        let f = row.csv_fields();
        assert_eq!(f[10], "'=cmd|x");
        assert_eq!(f[7], "-2.00", "control: a negative number is not a formula");
        assert_eq!(
            encode(&f).unwrap().iter().filter(|&&b| b == b'\n').count(),
            1
        );
    }
}
