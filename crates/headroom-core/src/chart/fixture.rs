//! Evidence logs for tests of the chart model, here and in the main crate's drawings (the
//! `fixtures` feature): rows of a short header, read as `evidence` reads a file.

use super::{Chart, Survey};
use crate::evidence_csv::{Item, Reader};

pub const T0: i64 = 1_787_997_600; // 2026-08-29T10:00:00Z

pub const HEADER: &str = "at,used,zombies,limit,limit_source,growth_per_min,eta_seconds,top_parent_pid,top_parent_name,top_parent_zombies,action,result,override";

/// A poll row of `HEADER`.
pub fn poll(at: i64, used: u64, limit: u64, source: &str) -> String {
    format!(
        "{},{used},{},{limit},{source},,,,,,poll,,",
        crate::time::format_secs(at),
        used / 2
    )
}

/// A kill row: `pid name (zombies)` terminated with `result`.
pub fn kill(at: i64, used: u64, result: &str, emergency: bool) -> String {
    format!(
        "{},{used},{},2666,rlimit-nproc,,,9126,agency,265,kill:15+9,{result},{}",
        crate::time::format_secs(at),
        used / 2,
        if emergency { "emergency" } else { "" }
    )
}

/// Ten polls a minute apart from `T0` and a cleanup logged an hour after the last: the log
/// after which nothing may be drawn up to the cleanup.
pub fn polls_then_a_late_cleanup() -> Vec<String> {
    let mut rows: Vec<String> = (0..10)
        .map(|i| poll(T0 + i * 60, 2000, 2666, "rlimit-nproc"))
        .collect();
    rows.push(kill(
        T0 + 9 * 60 + 3600,
        1900,
        "sigkill;reaped=5;freed=6",
        false,
    ));
    rows
}

/// The chart of `rows` (lines of `HEADER`) read as `evidence` reads a file.
pub fn chart(rows: &[String]) -> Chart {
    let text = format!("{HEADER}\n{}\n", rows.join("\n"));
    survey(&text).finish(50.0, 75.0)
}

pub fn survey(text: &str) -> Survey {
    let mut s = Survey::new();
    let mut r = Reader::new("e.csv", text.as_bytes());
    while let Some(item) = r.next_item() {
        match item {
            Item::Row(v) => s.row("e.csv", &v),
            Item::Anomaly(a) => s.anomaly(&a),
        }
    }
    s
}
