use super::*;
use crate::core::evidence_csv::{AnomalyKind, Item};
use crate::core::slot_reading::fixture::sample;

fn row(n: u64) -> Row {
    let mut reading = sample();
    reading.processes += n;
    Row {
        top_parent: Some((87537, "agency".into(), 600)),
        session_signal: "no-session".into(),
        ..Row::new(reading, "poll")
    }
}

#[test]
fn header_and_rows_in_the_documented_format() {
    let d = tempfile::tempdir().unwrap();
    let log = EvidenceLog::new(d.path());
    log.append(&[row(0), row(1)]).unwrap();
    let text = std::fs::read_to_string(log.path()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], columns().join(","));
    assert_eq!(
        lines[0],
        "at,uid,processes,tasks,zombies,used,limit,limit_source,usage_pct,free_slots,level,\
         growth_per_min,eta_seconds,trend_samples,partial,top_parent_pid,top_parent_name,\
         top_parent_zombies,session_signal,action,result,override"
    );
    assert_eq!(
        lines[1],
        "2026-08-29T22:42:41Z,501,3869,,3326,3869,4000,per-uid,96.73,131,critical,10.0,786,4,false,87537,agency,600,no-session,poll,,"
    );
    assert_eq!(lines.len(), 3);
}

#[test]
fn names_with_commas_and_newlines_stay_one_row() {
    let d = tempfile::tempdir().unwrap();
    let log = EvidenceLog::new(d.path());
    let mut r = row(0);
    r.top_parent = Some((1, "we,ird\nname".into(), 3));
    log.append(&[r]).unwrap();
    let (rows, anomalies) = read_file(&log.path()).unwrap();
    assert!(anomalies.is_empty());
    // Escaped as on a terminal: one row is one line, whatever the name holds.
    assert_eq!(rows[0].top_parent_name.as_deref(), Some("we,ird\\nname"));
    assert_eq!(
        std::fs::read_to_string(log.path()).unwrap().lines().count(),
        2
    );
}

#[test]
fn formula_names_are_neutralised_but_numbers_are_not() {
    let d = tempfile::tempdir().unwrap();
    let log = EvidenceLog::new(d.path());
    let names = [
        "=cmd|' /C calc'!A0",
        "+1",
        "-2+3",
        "@SUM(A1)",
        "\tx",
        "\rx",
        "agency",
    ];
    let rows: Vec<Row> = names
        .iter()
        .map(|n| {
            let mut r = row(0);
            r.top_parent = Some((1, (*n).into(), 3));
            r.reading.growth_per_min = Some(-1.5);
            r
        })
        .collect();
    log.append(&rows).unwrap();
    let (back, anomalies) = read_file(&log.path()).unwrap();
    assert!(anomalies.is_empty());
    let got: Vec<String> = back
        .iter()
        .map(|r| r.top_parent_name.clone().unwrap())
        .collect();
    assert_eq!(
        got,
        [
            "'=cmd|' /C calc'!A0",
            "'+1",
            "'-2+3",
            "'@SUM(A1)",
            "'\\tx",
            "'\\rx",
            "agency"
        ]
    );
    let text = std::fs::read_to_string(log.path()).unwrap();
    assert!(text.lines().nth(1).unwrap().contains(",-1.5,"), "{text}");
}

#[test]
fn a_torn_last_row_is_cut_off_before_appending() {
    let d = tempfile::tempdir().unwrap();
    let log = EvidenceLog::new(d.path());
    log.append(&[row(0)]).unwrap();
    let whole = std::fs::read(log.path()).unwrap();
    // A writer killed mid-row left half of one.
    let mut torn = whole.clone();
    torn.extend_from_slice(b"2026-08-29T22:42:41Z,3869,33");
    std::fs::write(log.path(), &torn).unwrap();
    let done = log.append_some(&[row(1), row(2)]);
    assert!(done.error.is_none());
    assert_eq!(done.written, 2);
    let (rows, anomalies) = read_file(&log.path()).unwrap();
    assert!(anomalies.is_empty(), "{anomalies:?}");
    assert_eq!(
        rows.iter().map(|r| r.reading.processes).collect::<Vec<_>>(),
        vec![Some(3869), Some(3870), Some(3871)]
    );
    // A torn header (killed while creating the file) is cut to nothing and rewritten,
    // not rotated aside: that would push the oldest archive out for an empty file.
    std::fs::write(log.path(), b"at,uid,proc").unwrap();
    log.append(&[row(3)]).unwrap();
    assert_eq!(read_file(&log.path()).unwrap().0.len(), 1);
    assert_eq!(log.files(), vec![log.path()], "nothing rotated");
    // Controls: a line of one's own without a newline is not a torn header of ours, nor is
    // a whole header of another layout: both are left where they are, and this writer
    // appends to its own layout's file.
    std::fs::write(log.path(), b"notes").unwrap();
    log.append(&[row(5)]).unwrap();
    assert_eq!(std::fs::read(log.path()).unwrap(), b"notes");
    assert_eq!(log.files(), vec![log.path(), side(&log)]);
}

/// This layout's own file, `evidence-<id>.csv`.
fn side(log: &EvidenceLog) -> std::path::PathBuf {
    log.own().live()
}

/// Rows of every file of the log, read as `evidence` reads them, and the anomalies.
fn read_all(log: &EvidenceLog) -> (Vec<ReadRow>, Vec<Anomaly>) {
    let (mut rows, mut anomalies) = (Vec::new(), Vec::new());
    for f in log.open_all() {
        f.read(&mut |item| match item {
            Item::Row(v) => rows.push(v.to_row()),
            Item::Anomaly(a) => anomalies.push(a),
        });
    }
    (rows, anomalies)
}

#[test]
fn another_layout_s_file_is_left_alone_and_this_one_writes_its_own() {
    let d = tempfile::tempdir().unwrap();
    let old = "timestamp,total_procs,zombies\n2026-08-28T18:09:53Z,801,239\n";
    std::fs::write(d.path().join(FILE), old).unwrap();
    let log = EvidenceLog::new(d.path());
    log.append(&[row(0)]).unwrap();
    assert_eq!(std::fs::read_to_string(log.path()).unwrap(), old);
    assert!(!d.path().join("evidence.1.csv").exists(), "nothing rotated");
    let own = std::fs::read_to_string(side(&log)).unwrap();
    assert!(own.starts_with("at,uid,processes,tasks,"), "{own}");
    log.append(&[row(1)]).unwrap();
    assert_eq!(read_file(&side(&log)).unwrap().0.len(), 2);
    let (rows, anomalies) = read_all(&log);
    assert!(anomalies.is_empty(), "{anomalies:?}");
    assert_eq!(rows.len(), 3, "both layouts read");
    // Control: with `evidence.csv` gone, this layout writes it again.
    std::fs::remove_file(log.path()).unwrap();
    log.append(&[row(2)]).unwrap();
    assert_eq!(read_file(&log.path()).unwrap().0.len(), 1);
    assert_eq!(read_file(&side(&log)).unwrap().0.len(), 2);
}

/// A row of a layout with one column more than this one's (a future version).
fn future_line(n: u64) -> anyhow::Result<Vec<u8>> {
    let mut f = row(n).csv_fields()?;
    f.push("cgroup-x".into());
    encode(&f)
}

fn future_columns() -> Vec<&'static str> {
    let mut c = columns();
    c.push("pids_cgroup");
    c
}

#[test]
fn two_writers_of_different_layouts_alternating_lose_nothing() {
    let d = tempfile::tempdir().unwrap();
    let this = EvidenceLog::with_limits(d.path(), 1 << 20, KEEP);
    let future_cols = future_columns();
    let future = EvidenceLog::with_layout(d.path(), 1 << 20, &future_cols);
    // Ten switches each way, as a `watch` of one version and a `probe` of the other do.
    for i in 0..10 {
        this.append(&[row(i)]).unwrap();
        let mut n = 0;
        future
            .append_lines(std::iter::once(future_line(1000 + i)), &mut n)
            .unwrap();
    }
    let (rows, anomalies) = read_all(&this);
    assert!(anomalies.is_empty(), "{anomalies:?}");
    let mut seen: Vec<u64> = rows.iter().filter_map(|r| r.reading.processes).collect();
    seen.sort_unstable();
    let mut expected: Vec<u64> = (0..10).chain(1000..1010).map(|n| 3869 + n).collect();
    expected.sort_unstable();
    assert_eq!(seen, expected, "every row of both writers is there");
    assert_eq!(this.files().len(), 2, "{:?}", this.files());
    assert!(
        !d.path().join("evidence.1.csv").exists(),
        "no header was rotated aside"
    );
    // The future writer reads the log too (its reader is this one): nothing lost either way.
    assert_eq!(read_all(&future).0.len(), 20);
}

/// What a writer before this rule did on every append: rotate `evidence.csv` aside when
/// its header is not its own (the older layout, 16 columns), then append.
fn old_writer_append(dir: &std::path::Path, n: u64) {
    let header = "timestamp,total_procs,zombies,limit,limit_source,usage_pct,free_slots,growth_per_min,eta_seconds,top_parent_pid,top_parent_name,top_parent_zombies,session_signal,action,result,override\n";
    let p = dir.join(FILE);
    let first = std::fs::read_to_string(&p).ok();
    if first.as_deref().is_some_and(|t| !t.starts_with(header)) {
        let prim = Family {
            dir: dir.to_path_buf(),
            stem: STEM.into(),
        };
        prim.rotate(KEEP).unwrap();
    }
    let mut text = std::fs::read_to_string(&p).unwrap_or_else(|_| header.to_string());
    text.push_str(&format!(
        "2026-08-29T22:42:41Z,{},1,4000,per-uid,1.0,3000,,,1,agency,1,,poll,,\n",
        10_000 + n
    ));
    std::fs::write(&p, text).unwrap();
}

#[test]
fn an_old_writer_that_rotates_other_headers_cannot_push_this_one_s_rows_out() {
    let d = tempfile::tempdir().unwrap();
    let this = EvidenceLog::new(d.path());
    // This version first (a fresh `evidence.csv`), then the old `watch` and this `probe`
    // taking turns: the old writer rotates this one's file aside once; from then on this one
    // writes its own file, and the old one's rotations (three kept) never reach it.
    for i in 0..10 {
        this.append(&[row(i)]).unwrap();
        old_writer_append(d.path(), i);
    }
    let (rows, anomalies) = read_all(&this);
    assert!(anomalies.is_empty(), "{anomalies:?}");
    let ours = rows
        .iter()
        .filter(|r| r.reading.processes < Some(10_000))
        .count();
    let old = rows.len() - ours;
    assert_eq!((ours, old), (10, 10), "{:?}", this.files());
}

#[test]
fn a_foreign_first_line_is_left_in_place_and_reported() {
    let d = tempfile::tempdir().unwrap();
    let log = EvidenceLog::new(d.path());
    log.append(&[row(0)]).unwrap();
    // A power cut zeroed the top of the file: its header and half of the first row.
    let mut bytes = std::fs::read(log.path()).unwrap();
    let cut = bytes.len() - 20;
    bytes[..cut].fill(0);
    std::fs::write(log.path(), &bytes).unwrap();
    log.append(&[row(1), row(2)]).unwrap();
    assert_eq!(std::fs::read(log.path()).unwrap(), bytes, "left as it was");
    assert!(!d.path().join("evidence.1.csv").exists());
    let (rows, anomalies) = read_all(&log);
    assert_eq!(rows.len(), 2, "the rows after it read");
    assert_eq!(anomalies.len(), 1);
    assert_eq!(anomalies[0].reason, AnomalyKind::NoHeader);
    assert_eq!(anomalies[0].file, log.path().display().to_string());
}

#[test]
#[cfg(unix)]
fn a_symbolic_link_in_the_log_is_reported_not_read() {
    let d = tempfile::tempdir().unwrap();
    let secret = d.path().join("secret");
    std::fs::write(&secret, "root:x:0:0\n").unwrap();
    std::os::unix::fs::symlink(&secret, d.path().join("evidence.2.csv")).unwrap();
    let log = EvidenceLog::new(d.path());
    log.append(&[row(0)]).unwrap();
    let (rows, anomalies) = read_all(&log);
    assert_eq!(rows.len(), 1, "control: the log's own file reads");
    assert_eq!(anomalies.len(), 1);
    assert_eq!(anomalies[0].reason, AnomalyKind::FileUnreadable);
    assert!(!anomalies[0].text.contains("root:x"), "{:?}", anomalies[0]);
}

#[test]
fn file_names_of_the_log() {
    assert_eq!(log_name("evidence.csv"), Some(("evidence", 0)));
    assert_eq!(log_name("evidence.3.csv"), Some(("evidence", 3)));
    assert_eq!(
        log_name("evidence-0a1b2c3d.12.csv"),
        Some(("evidence-0a1b2c3d", 12))
    );
    for not in [
        "evidence.csv.lock",
        "evidence.x.csv",
        "evidence-0A1B2C3D.csv",
        "evidence-0a1b.csv",
        "other.csv",
        ".evidence.csv.tmp.1",
        "evidence..csv",
    ] {
        assert_eq!(log_name(not), None, "{not}");
    }
}

/// Appends numbered rows (the number in `processes`) with a rotation every few rows until
/// told to stop; returns how many it wrote.
fn rotating_writer(
    dir: std::path::PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let log = EvidenceLog::with_limits(&dir, 700, KEEP);
        let mut n = 0;
        while !stop.load(std::sync::atomic::Ordering::Relaxed) && n < 200_000 {
            log.append(&[row(n)]).unwrap();
            n += 1;
        }
        n
    })
}

/// The numbered rows read are consecutive: no file hidden, none read twice.
fn assert_consecutive(files: Vec<OpenFile>, round: usize) {
    let mut seen = Vec::new();
    for f in files {
        f.read(&mut |item| {
            if let Item::Row(v) = item {
                seen.push(v.to_row().reading.processes.unwrap_or(0) - 3869);
            }
        });
    }
    seen.sort_unstable();
    let holes_or_twice = seen.windows(2).filter(|w| w[1] != w[0] + 1).count();
    assert_eq!(holes_or_twice, 0, "round {round}: {seen:?}");
}

#[test]
fn reading_while_a_writer_rotates_sees_every_row_once() {
    let d = tempfile::tempdir().unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = rotating_writer(d.path().to_path_buf(), stop.clone());
    let log = EvidenceLog::new(d.path());
    let guard = StopOnDrop(stop.clone());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while log.files().len() <= KEEP {
        assert!(
            std::time::Instant::now() < deadline,
            "the writer never rotated"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // Under the writers' lock, and by listing twice and comparing inodes where there is no
    // lock to take: each round is one consistent set.
    for round in 0..100 {
        assert_consecutive(log.open_all(), round);
        assert_consecutive(log.open_stable(), round);
    }
    drop(guard);
    assert!(writer.join().unwrap() > 0);
}

struct StopOnDrop(std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

#[test]
fn size_rotation_keeps_three() {
    let d = tempfile::tempdir().unwrap();
    let log = EvidenceLog::with_limits(d.path(), 512, 3);
    for i in 0..40 {
        log.append(&[row(i)]).unwrap();
    }
    assert!(d.path().join("evidence.1.csv").exists());
    assert!(d.path().join("evidence.3.csv").exists());
    assert!(!d.path().join("evidence.4.csv").exists());
    assert!(std::fs::metadata(log.path()).unwrap().len() < 1024);
    for f in log.files() {
        let (rows, anomalies) = read_file(&f).unwrap();
        assert!(anomalies.is_empty() && !rows.is_empty(), "{}", f.display());
    }
    assert_eq!(log.files().last(), Some(&log.path()));
}

#[test]
fn the_archived_over_long_final_row_is_reported_not_dropped_silently() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("evidence.1.csv");
    std::fs::write(
        &p,
        crate::core::evidence_csv::fixture::archived_14_field_row(),
    )
    .unwrap();
    let (rows, anomalies) = read_file(&p).unwrap();
    assert_eq!(rows.len(), 86);
    assert_eq!(anomalies.len(), 1);
    assert_eq!(
        (
            anomalies[0].line,
            anomalies[0].fields,
            anomalies[0].expected
        ),
        (88, 14, 13)
    );
    assert_eq!(rows[0].reading.zombies, Some(239));
    assert_eq!(
        rows[0].reading.processes,
        Some(801),
        "read under its new name"
    );
    assert_eq!(
        rows[0].reading.limit_source, None,
        "an old layout lacks the column"
    );
}

#[test]
fn a_file_that_is_not_evidence_is_one_anomaly_and_appending_leaves_it() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("evidence.csv");
    std::fs::write(&p, b"\x00\x01\x02garbage\xff\nmore").unwrap();
    let (rows, anomalies) = read_file(&p).unwrap();
    assert!(rows.is_empty());
    assert_eq!(
        (
            anomalies[0].reason,
            anomalies[0].line,
            anomalies[0].through_line
        ),
        (AnomalyKind::NoHeader, 1, Some(2))
    );
    let log = EvidenceLog::new(d.path());
    log.append(&[row(0)]).unwrap();
    assert!(!d.path().join("evidence.1.csv").exists());
    assert_eq!(read_file(&side(&log)).unwrap().0.len(), 1);
}
