//! `headroom evidence`'s summary, kept as the rows stream past: the range (by the rows'
//! times, not their order in the files: a clock step must not make it read backwards), the
//! rows of the peak usage, the fewest free slots and the shortest ETA (each copied whole
//! only when it beats the one kept), every cleanup, every anomaly; and its human form, in
//! which every text of the log goes through the one sanitizer.

use std::fmt::Write as _;

use serde::Serialize;

use crate::core::evidence_csv::{Anomaly, AnomalyKind, ReadRow, RowView, is_cleanup};
use crate::output::{Printer, Style, human_duration, plural, thousands};
use crate::sanitize::sanitize;

/// The `headroom.evidence/3` report. Each row it names is printed whole: the reading's
/// fields as `probe` prints them (null where the row's file predates the column), then the
/// top zombie parent and what was done.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct EvidenceReport {
    pub files: Vec<String>,
    pub rows: usize,
    /// The earliest and the latest row's instant (by time, whatever the files' order).
    #[serde(rename = "first_at")]
    pub first: Option<String>,
    #[serde(rename = "last_at")]
    pub last: Option<String>,
    /// The row of the highest `usage_pct`.
    pub peak_usage: Option<ReadRow>,
    /// The row of the fewest `free_slots`.
    pub lowest_free: Option<ReadRow>,
    /// The row of the shortest `eta_seconds`.
    pub shortest_eta: Option<ReadRow>,
    /// Every cleanup row, by time: one per terminated parent (`kill:15+9`), or `cleanup`
    /// for a run that had nothing to do.
    pub cleanups: Vec<ReadRow>,
    pub anomalies: Vec<Anomaly>,
}

impl crate::schema::Document for EvidenceReport {
    const SCHEMA: &'static str = "headroom.evidence/3";
    const TYPE: Option<&'static str> = Some("evidence");
}

/// What the summary asks of a row: read in place while streaming, or already whole.
pub(crate) trait SummaryRow {
    fn at_secs(&self) -> Option<i64>;
    /// `at` as logged.
    fn at_text(&self) -> Option<String>;
    fn usage_pct(&self) -> Option<f64>;
    fn free_slots(&self) -> Option<u64>;
    fn eta_seconds(&self) -> Option<i64>;
    fn cleanup(&self) -> bool;
    fn whole(&self) -> ReadRow;
}

impl SummaryRow for RowView<'_> {
    fn at_secs(&self) -> Option<i64> {
        RowView::at_secs(self)
    }
    fn at_text(&self) -> Option<String> {
        self.to_row_at()
    }
    fn usage_pct(&self) -> Option<f64> {
        RowView::usage_pct(self)
    }
    fn free_slots(&self) -> Option<u64> {
        RowView::free_slots(self)
    }
    fn eta_seconds(&self) -> Option<i64> {
        RowView::eta_seconds(self)
    }
    fn cleanup(&self) -> bool {
        RowView::is_cleanup(self)
    }
    fn whole(&self) -> ReadRow {
        self.to_row()
    }
}

impl SummaryRow for ReadRow {
    fn at_secs(&self) -> Option<i64> {
        self.at_secs
    }
    fn at_text(&self) -> Option<String> {
        self.reading.at.clone()
    }
    fn usage_pct(&self) -> Option<f64> {
        self.reading.usage_pct
    }
    fn free_slots(&self) -> Option<u64> {
        self.reading.free_slots
    }
    fn eta_seconds(&self) -> Option<i64> {
        self.reading.eta_seconds
    }
    fn cleanup(&self) -> bool {
        is_cleanup(&self.action)
    }
    fn whole(&self) -> ReadRow {
        self.clone()
    }
}

/// The summary so far.
#[derive(Debug, Default)]
pub(crate) struct EvidenceSummary {
    rows: usize,
    /// The earliest and the latest time, with `at` as logged.
    first: Option<(i64, Option<String>)>,
    last: Option<(i64, Option<String>)>,
    peak: Option<(f64, ReadRow)>,
    lowest: Option<(u64, ReadRow)>,
    eta: Option<(i64, ReadRow)>,
    cleanups: Vec<ReadRow>,
    anomalies: Vec<Anomaly>,
}

impl EvidenceSummary {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn row(&mut self, r: &dyn SummaryRow) {
        self.rows += 1;
        if let Some(at) = r.at_secs() {
            if self.first.as_ref().is_none_or(|f| at < f.0) {
                self.first = Some((at, r.at_text()));
            }
            if self.last.as_ref().is_none_or(|l| at > l.0) {
                self.last = Some((at, r.at_text()));
            }
        }
        if let Some(v) = r.usage_pct() {
            if self.peak.as_ref().is_none_or(|(b, _)| v > *b) {
                self.peak = Some((v, r.whole()));
            }
        }
        if let Some(v) = r.free_slots() {
            if self.lowest.as_ref().is_none_or(|(b, _)| v < *b) {
                self.lowest = Some((v, r.whole()));
            }
        }
        if let Some(v) = r.eta_seconds() {
            if self.eta.as_ref().is_none_or(|(b, _)| v < *b) {
                self.eta = Some((v, r.whole()));
            }
        }
        if r.cleanup() {
            self.cleanups.push(r.whole());
        }
    }

    pub(crate) fn anomaly(&mut self, a: Anomaly) {
        self.anomalies.push(a);
    }

    pub(crate) fn has_anomalies(&self) -> bool {
        !self.anomalies.is_empty()
    }

    pub(crate) fn finish(mut self, files: Vec<String>) -> EvidenceReport {
        // Cleanups by time (the files of two layouts interleave); untimed ones last.
        self.cleanups
            .sort_by_key(|r| r.at_secs.map_or((1, 0), |t| (0, t)));
        EvidenceReport {
            files,
            rows: self.rows,
            first: self.first.and_then(|r| r.1),
            last: self.last.and_then(|r| r.1),
            peak_usage: self.peak.map(|p| p.1),
            lowest_free: self.lowest.map(|p| p.1),
            shortest_eta: self.eta.map(|p| p.1),
            cleanups: self.cleanups,
            anomalies: self.anomalies,
        }
    }
}

/// The report of `rows` already read whole.
#[cfg(test)]
pub(crate) fn summarise(
    files: Vec<String>,
    rows: &[ReadRow],
    anomalies: Vec<Anomaly>,
) -> EvidenceReport {
    let mut s = EvidenceSummary::new();
    for r in rows {
        s.row(r);
    }
    anomalies.into_iter().for_each(|a| s.anomaly(a));
    s.finish(files)
}

/// The most anomalies listed one by one on a terminal.
const LISTED: usize = 20;

pub(crate) fn human(r: &EvidenceReport, p: &Printer) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}: {}{} ({})",
        p.paint("evidence", Style::Bold),
        plural(r.rows as u64, "row"),
        match (&r.first, &r.last) {
            (Some(a), Some(b)) => format!(" from {} to {}", sanitize(a), sanitize(b)),
            _ => String::new(),
        },
        plural(r.files.len() as u64, "file")
    );
    let at = |row: &ReadRow| {
        row.reading
            .at
            .as_deref()
            .map_or("?".into(), |t| sanitize(t).into_owned())
    };
    if let Some((pct, row)) = r
        .peak_usage
        .as_ref()
        .and_then(|row| Some((row.reading.usage_pct?, row)))
    {
        let src = row
            .reading
            .limit_source
            .as_deref()
            .map(|x| format!(" ({})", sanitize(x)))
            .unwrap_or_default();
        let _ = writeln!(s, "  peak usage     {pct:.1} % at {}{src}", at(row));
    }
    if let Some((free, row)) = r
        .lowest_free
        .as_ref()
        .and_then(|row| Some((row.reading.free_slots?, row)))
    {
        let _ = writeln!(
            s,
            "  lowest free    {} at {}",
            plural(free, "slot"),
            at(row)
        );
    }
    if let Some((eta, row)) = r
        .shortest_eta
        .as_ref()
        .and_then(|row| Some((row.reading.eta_seconds?, row)))
    {
        let _ = writeln!(
            s,
            "  shortest ETA   {} at {}",
            human_duration(eta as f64),
            at(row)
        );
    }
    let _ = writeln!(s, "  cleanups: {}", r.cleanups.len());
    for c in &r.cleanups {
        let parent = match (c.top_parent_pid, &c.top_parent_name) {
            (Some(pid), Some(name)) => format!(
                "{pid} {} ({})",
                sanitize(name),
                c.top_parent_zombies.map_or("?".into(), thousands)
            ),
            _ => String::new(),
        };
        let ov = c
            .override_
            .as_deref()
            .map(|o| format!("  [{}]", sanitize(o)))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "    {}  {:<10} {parent:<28} {}{ov}",
            at(c),
            sanitize(&c.action),
            sanitize(&c.result)
        );
    }
    if !r.anomalies.is_empty() {
        let _ = writeln!(
            s,
            "  {} could not be interpreted (kept in the files, left out of the summary):",
            plural(r.anomalies.len() as u64, "row")
        );
        for a in r.anomalies.iter().take(LISTED) {
            let _ = writeln!(s, "    {}", anomaly_line(a));
        }
        if r.anomalies.len() > LISTED {
            let _ = writeln!(
                s,
                "    … and {} more (`headroom evidence --json` lists every one)",
                thousands((r.anomalies.len() - LISTED) as u64)
            );
        }
    }
    s
}

/// One anomaly in words.
fn anomaly_line(a: &Anomaly) -> String {
    let text: String = a.text.chars().take(120).collect();
    let text = sanitize(&text);
    let file = sanitize(&a.file);
    match a.reason {
        AnomalyKind::FieldCount => format!(
            "{file} line {}: {} where the header has {}: {text}",
            a.line,
            plural(a.fields as u64, "field"),
            a.expected
        ),
        AnomalyKind::UnreadableValue => format!(
            "{file} line {}: `{}` is not a whole number: {text}",
            a.line,
            sanitize(a.column.as_deref().unwrap_or("?"))
        ),
        AnomalyKind::NoHeader => {
            let lines = match a.through_line {
                Some(b) if b > a.line => format!("lines {}–{b}", a.line),
                _ => format!("line {}", a.line),
            };
            format!(
                "{file} {lines}: no evidence-log header before them, skipped (first line `{text}`)"
            )
        }
        AnomalyKind::Csv => format!("{file} line {}: {text}", a.line),
        AnomalyKind::FileUnreadable => format!("{file}: {text}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::ColorChoice;

    /// A poll and a cleanup row of today's layout, with `text` in every text field the
    /// summary prints (limit_source, top_parent_name, action, result, override).
    fn log(text: &str) -> String {
        let q = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let t = q(text);
        // A cleanup's action starts `kill:`; what follows is the log's.
        let a = q(&format!("kill:{text}"));
        format!(
            "{}\n\
             2026-08-29T22:43:06Z,501,2744,,2000,2744,2666,{t},102.9,0,critical,,,,false,7,{t},5,,poll,,\n\
             2026-08-29T22:44:00Z,501,2744,,2000,2744,2666,per-uid,102.9,0,critical,,,,false,7,{t},5,,{a},{t},{t}\n",
            crate::store::evidence::columns().join(",")
        )
    }

    fn summary(text: &str) -> (EvidenceReport, String) {
        let (rows, anomalies) =
            crate::core::evidence_csv::parse(std::path::Path::new("e.csv"), text.as_bytes());
        assert!(anomalies.is_empty(), "{anomalies:?}");
        let r = summarise(vec!["e.csv".into()], &rows, vec![]);
        let out = human(&r, &Printer::new(false, false, ColorChoice::Never));
        (r, out)
    }

    #[test]
    fn log_text_reaches_the_summary_escaped_and_the_json_exact() {
        let hostile = "x\u{1b}[2J\u{1b}]8;;https://evil.example\u{7}y\u{202e}z\n  peak usage     1.0 % forged";
        let (r, out) = summary(&log(hostile));
        for raw in ['\u{1b}', '\u{7}', '\u{202e}'] {
            assert!(!out.contains(raw), "{raw:?} in {out:?}");
        }
        assert_eq!(
            out.lines()
                .filter(|l| l.starts_with("  peak usage"))
                .count(),
            1,
            "a newline in limit_source forges no summary line: {out}"
        );
        let cleanup = out
            .lines()
            .find(|l| l.starts_with("    2026-08-29T22:44:00Z"))
            .unwrap();
        // action, result, override and the parent's name, each escaped on the one line.
        assert_eq!(cleanup.matches("x\\u{1b}[2J").count(), 4, "{cleanup}");
        // JSON is the log's text exactly.
        let peak = r.peak_usage.as_ref().unwrap();
        assert_eq!(peak.reading.limit_source.as_deref(), Some(hostile));
        assert_eq!(r.cleanups[0].result, hostile);
        // Control: plain text prints as it is.
        let (_, plain) = summary(&log("agency"));
        assert!(
            plain.contains("102.9 % at 2026-08-29T22:43:06Z (agency)"),
            "{plain}"
        );
        assert!(
            plain.contains("kill:agency 7 agency (5)") && plain.contains("agency  [agency]"),
            "{plain}"
        );
    }
}
