use std::path::Path;

use super::*;
use crate::slot_reading::fixture::sample;

#[test]
fn parse_reads_columns_by_name_and_reports_a_row_of_the_wrong_width() {
    let p = Path::new("e.csv");
    let text = "timestamp,zombies,action,result\n\
                2026-08-29T22:42:41Z,7,poll,\n\
                2026-08-29T22:43:41Z,8,poll,,extra\n";
    let (rows, anomalies) = parse(p, text.as_bytes());
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].reading.zombies, Some(7));
    assert_eq!(rows[0].reading.processes, None, "a column the layout lacks");
    assert_eq!(rows[0].at_secs, Some(1_788_043_361));
    assert_eq!(rows[0].reading.at.as_deref(), Some("2026-08-29T22:42:41Z"));
    assert_eq!((anomalies[0].line, anomalies[0].fields), (3, 5));
    assert_eq!(anomalies[0].reason, AnomalyKind::FieldCount);
}

#[test]
fn a_number_cell_that_is_not_finite_reads_as_null() {
    let text = "timestamp,usage_pct,growth_per_min,eta_seconds,action,result\n\
                2026-08-29T22:42:41Z,inf,NaN,1e400,poll,\n\
                2026-08-29T22:43:41Z,-inf,infinity,-NaN,poll,\n\
                2026-08-29T22:44:41Z,96.7,-2.5,786.4,poll,\n";
    let (rows, anomalies) = parse(Path::new("e.csv"), text.as_bytes());
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
    let (rows, _) = parse(Path::new("e.csv"), text.as_bytes());
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
    let (rows, anomalies) = parse(Path::new("e.csv"), text.as_bytes());
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

#[test]
fn lines_before_any_header_are_one_anomaly_and_the_rows_after_a_header_read() {
    let p = Path::new("e.csv");
    // A power cut's zero-filled block (no newline in it) over the top of the file, then
    // the rest of a row and whole rows without their header: nothing is guessed.
    let mut zeros = vec![0u8; 4096];
    zeros.extend_from_slice(b"01:00Z,1,poll,\n2026-08-29T22:43:41Z,8,poll,\n");
    let (rows, anomalies) = parse(p, &zeros);
    assert!(rows.is_empty());
    assert_eq!(anomalies.len(), 1, "{anomalies:?}");
    let a = &anomalies[0];
    assert_eq!(
        (a.reason, a.line, a.through_line, a.expected),
        (AnomalyKind::NoHeader, 1, Some(2), 0)
    );
    assert!(a.text.starts_with('\0') && a.text.chars().count() <= 1000);
    // A user's notes above the header: reported, and the log under them reads.
    let notes = "incident 08-29, see ticket 4411\nnote two\n\
                 timestamp,zombies,action,result\n\
                 2026-08-29T22:42:41Z,7,poll,\n";
    let (rows, anomalies) = parse(p, notes.as_bytes());
    assert_eq!(rows.len(), 1, "control: the rows under the header read");
    assert_eq!(
        anomalies
            .iter()
            .map(|a| (a.reason, a.line, a.through_line))
            .collect::<Vec<_>>(),
        [(AnomalyKind::NoHeader, 1, Some(2))]
    );
    assert_eq!(anomalies[0].text, "incident 08-29, see ticket 4411");
    // A header again mid-file (a writer that found the top damaged starts a new one).
    let (rows, anomalies) = parse(
        p,
        b"garbage\nat,zombies,action\n2026-08-29T22:42:41Z,1,poll\nat,used,zombies,action\n2026-08-29T22:43:41Z,5,2,poll\n",
    );
    assert_eq!(anomalies.len(), 1);
    assert_eq!(
        rows.iter()
            .map(|r| (r.reading.used, r.reading.zombies))
            .collect::<Vec<_>>(),
        [(None, Some(1)), (Some(5), Some(2))]
    );
    // Not an evidence log at all: one anomaly naming it, never an error.
    let (rows, anomalies) = parse(p, b"name,pid,cpu\n1,2,3\n");
    assert!(rows.is_empty());
    assert_eq!(
        (anomalies[0].reason, anomalies[0].text.as_str()),
        (AnomalyKind::NoHeader, "name,pid,cpu")
    );
}

#[test]
fn a_count_that_is_not_a_count_makes_the_row_an_anomaly() {
    let p = Path::new("e.csv");
    let header = "at,uid,processes,zombies,used,limit,usage_pct,action,result";
    for bad in [
        "NaN",
        "inf",
        "-1",
        "1e3",
        "2.5",
        "0x10",
        "99999999999999999999999",
    ] {
        let text = format!(
            "{header}\n2026-08-29T22:42:41Z,501,10,2,{bad},4000,0.3,poll,\n2026-08-29T22:43:41Z,501,10,2,11,4000,0.3,poll,\n"
        );
        let (rows, anomalies) = parse(p, text.as_bytes());
        assert_eq!(rows.len(), 1, "{bad}: control: the good row reads");
        assert_eq!(rows[0].reading.used, Some(11));
        assert_eq!(anomalies.len(), 1, "{bad}");
        let a = &anomalies[0];
        assert_eq!(
            (a.reason, a.column.as_deref(), a.line),
            (AnomalyKind::UnreadableValue, Some("used"), 2),
            "{bad}"
        );
    }
    // The same in the uid and a pid column; and an empty cell is no value, not a bad one.
    let text = format!(
        "{header},top_parent_pid\n2026-08-29T22:42:41Z,-5,10,2,11,4000,0.3,poll,,7\n2026-08-29T22:42:41Z,501,10,,11,,,poll,,x\n2026-08-29T22:42:41Z,501,10,,11,,,poll,,\n"
    );
    let (rows, anomalies) = parse(p, text.as_bytes());
    assert_eq!(
        anomalies
            .iter()
            .map(|a| a.column.as_deref())
            .collect::<Vec<_>>(),
        [Some("uid"), Some("top_parent_pid")]
    );
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].reading.zombies, rows[0].reading.limit),
        (None, None)
    );
}

#[test]
fn the_writer_owns_only_its_own_header() {
    let own = encode(&columns()).unwrap();
    let line = own.strip_suffix(b"\n").unwrap();
    assert_eq!(judge_first_line(line, true, &own), FirstLine::Own);
    assert_eq!(
        judge_first_line(&line[..9], false, &own),
        FirstLine::TornOwn
    );
    // A whole line that is only the start of ours is another (shorter) layout's header.
    assert_eq!(
        judge_first_line(&line[..40], true, &own),
        FirstLine::OtherLayout
    );
    for other in [
        &b"timestamp,total_procs,zombies,limit"[..],
        b"at,uid,processes,tasks,zombies,used,limit,limit_source,usage_pct,free_slots,level,growth_per_min,eta_seconds,trend_samples,partial,top_parent_pid,top_parent_name,top_parent_zombies,session_signal,action,result,override,cgroup",
    ] {
        assert_eq!(judge_first_line(other, true, &own), FirstLine::OtherLayout);
    }
    for foreign in [
        &b"\0\0\0\0"[..],
        b"my notes",
        b"at,x",
        b"",
        b"name,at,zombies",
    ] {
        assert_eq!(
            judge_first_line(foreign, true, &own),
            FirstLine::Foreign,
            "{foreign:?}"
        );
    }
    assert_eq!(
        layout_id(&own),
        layout_id(line),
        "the newline is not part of it"
    );
    assert_ne!(layout_id(&own), layout_id(b"at,uid,zombies"));
    assert_eq!(layout_id(&own).len(), 8);
}
