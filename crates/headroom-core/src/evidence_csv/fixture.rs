//! Evidence files for tests of the reader and of what is built from it (the chart), here
//! and in the main crate (the `fixtures` feature). The core writes no file: each is its text.

/// An archived log of the old 13-column layout (no `limit_source`, no `session_signal`):
/// 86 polls, then at line 88 a row written with a stray `session_signal` cell, so 14
/// fields under 13 headers, at 2026-08-28T18:09:53Z. The text of the file `evidence.1.csv`.
pub fn archived_14_field_row() -> String {
    let header = "timestamp,total_procs,zombies,limit,usage_pct,free_slots,growth_per_min,eta_seconds,top_parent_pid,top_parent_name,top_parent_zombies,action,result";
    let mut text = format!("{header}\n");
    for i in 0..86 {
        text.push_str(&format!(
            "2026-08-28T17:{:02}:53Z,801,239,4000,20.0,3199,0.00,,86183,agency,115,poll,\n",
            i % 60
        ));
    }
    text.push_str("2026-08-28T18:09:53Z,801,239,4000,20.0,3199,0.00,,86183,agency,115,cpu_idle=unknown;log_age=8,poll,\n");
    text
}
