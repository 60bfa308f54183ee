//! `top`'s screen: the table fitted to the terminal's width (columns dropped in a fixed
//! order, the command cut last) and height, the reasons under it.

use std::fmt::Write as _;

use super::{HUMAN_ROWS, TopReport, TopRow};
use crate::core::top::ReasonCode;
use crate::output::{Printer, Style, human_bytes};
use crate::sanitize::sanitize;

/// At most `n` characters, marked when cut (char-safe).
pub(super) fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
    t.push('…');
    t
}

pub(crate) fn human(r: &TopReport, p: &Printer) -> String {
    human_sized(r, p, crate::platform::screen_width(), None)
}

/// Columns `top` drops, in this order, when the width cannot hold them all with a command of
/// `MIN_COMMAND` characters (the REASON code is also said on the lines under the table).
const DROP_ORDER: [&str; 4] = ["REASON", "PIDS", "STATE", "KB/s"];
const MIN_COMMAND: usize = 16;

/// The table laid out for `width` columns (columns dropped, every line cut to it) and, with
/// `height`, cut to that many rows like top(1): the header stays, the smallest trees go.
pub(crate) fn human_sized(
    r: &TopReport,
    p: &Printer,
    width: Option<usize>,
    height: Option<usize>,
) -> String {
    let mut s = String::new();
    let free = r
        .free_pct
        .map_or("unknown".to_string(), |f| format!("{f} %"));
    let _ = writeln!(
        s,
        "{} {} tree{} of uid {}, free memory {free}",
        p.paint("headroom top:", Style::Bold),
        r.processes.len(),
        if r.processes.len() == 1 { "" } else { "s" },
        r.uid
    );
    let (shown, command_width) = columns(width);
    let cell = |text: &str, (_, w, right): (&str, usize, bool)| {
        if right {
            format!("{text:>w$}  ")
        } else {
            format!("{text:<w$}  ")
        }
    };
    let mut header: String = shown.iter().map(|c| cell(c.0, *c)).collect();
    header.push_str("COMMAND");
    let _ = writeln!(s, "{header}");
    let hint = usize::from(r.processes.iter().any(|row| row.park_candidate));
    let rows = rows_shown(r, height, hint);
    for row in r.processes.iter().take(rows) {
        let cpu = row.cpu_pct.map_or("?".to_string(), |c| format!("{c:.1}%"));
        let code = serde_json::to_value(row.reason_code)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let code = if row.reason_code == ReasonCode::None {
            "-".to_string()
        } else {
            code
        };
        let value = |name: &str| match name {
            "PID" => row.pid.to_string(),
            "TREE" => human_bytes(row.footprint_kb * 1024),
            "PIDS" => row.process_count.to_string(),
            "STATE" => row.state.as_str().to_string(),
            "KB/s" => format!("{:+}", row.growth_kb_s),
            "CPU" => cpu.clone(),
            _ => code.clone(),
        };
        let mut line: String = shown.iter().map(|c| cell(&value(c.0), *c)).collect();
        line.push_str(&truncate(&sanitize(&row.cmd), command_width));
        let _ = writeln!(s, "{line}");
    }
    if r.processes.len() > rows {
        let _ = writeln!(
            s,
            "… and {} smaller trees (`--json` lists every one)",
            r.processes.len() - rows
        );
    }
    let flagged: Vec<&TopRow> = r
        .processes
        .iter()
        .take(rows)
        .filter(|row| row.reason_code != ReasonCode::None)
        .collect();
    for row in flagged {
        let _ = writeln!(s, "  {}: {}", row.pid, sanitize(&row.reason));
    }
    if hint == 1 {
        let _ = writeln!(
            s,
            "park a candidate with `headroom park-tree PID`; continue it with `headroom wake-tree PID`"
        );
    }
    match width {
        Some(w) => s
            .lines()
            .map(|l| crate::output::screen::cut(l, w) + "\n")
            .collect(),
        None => s,
    }
}

/// The columns that fit `width` (dropped in `DROP_ORDER` until a command of `MIN_COMMAND`
/// characters fits too), each as (name, width, right-aligned), and the command's width.
fn columns(width: Option<usize>) -> (Vec<(&'static str, usize, bool)>, usize) {
    let all: [(&str, usize, bool); 7] = [
        ("PID", 8, true),
        ("TREE", 9, true),
        ("PIDS", 4, true),
        ("STATE", 7, false),
        ("KB/s", 9, true),
        ("CPU", 6, true),
        ("REASON", 11, false),
    ];
    let mut shown: Vec<(&str, usize, bool)> = all.to_vec();
    let used = |cols: &[(&str, usize, bool)]| cols.iter().map(|c| c.1 + 2).sum::<usize>();
    if let Some(w) = width {
        for drop in DROP_ORDER {
            if used(&shown) + MIN_COMMAND <= w {
                break;
            }
            shown.retain(|c| c.0 != drop);
        }
    }
    let command_width = width.map_or(60, |w| w.saturating_sub(used(&shown)).clamp(1, 60));
    (shown, command_width)
}

/// How many rows are shown: at most `HUMAN_ROWS`, and with `height` as many as fit it with
/// the header, the "… and N smaller trees" line, the reasons and the `hint` line.
fn rows_shown(r: &TopReport, height: Option<usize>, hint: usize) -> usize {
    let flagged_in = |n: usize| {
        r.processes
            .iter()
            .take(n)
            .filter(|row| row.reason_code != ReasonCode::None)
            .count()
    };
    let mut rows = r.processes.len().min(HUMAN_ROWS);
    if let Some(h) = height {
        // One line is left for the cursor, so the header never scrolls away.
        let lines = |n: usize| 2 + n + usize::from(r.processes.len() > n) + flagged_in(n) + hint;
        while rows > 1 && lines(rows) > h.saturating_sub(1) {
            rows -= 1;
        }
    }
    rows
}
