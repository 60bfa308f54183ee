//! The evidence log: concurrent writers, the archived anomaly, files that are not evidence.

use crate::schema;
use crate::support::Env;

fn evidence_json(env: &Env, extra: &[&str]) -> (schema::Evidence, i32) {
    let out = env
        .cmd()
        .args(["evidence", "--json"])
        .args(extra)
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    (
        schema::read_or(&out.stdout, &String::from_utf8_lossy(&out.stderr)),
        code,
    )
}

#[test]
#[cfg(target_os = "linux")]
fn two_processes_appending_1000_rows_each_leave_2000_well_formed_rows() {
    let env = Env::new();
    let home = env.home.to_str().unwrap().to_string();
    let mut a = env.spawn(env.fixture(), &["evidence-writer", &home, "1000"]);
    let mut b = env.spawn(env.fixture(), &["evidence-writer", &home, "1000"]);
    a.expect("done");
    b.expect("done");
    let (r, code) = evidence_json(&env, &[]);
    assert_eq!((code, r.rows, r.anomalies.len()), (0, 2000, 0));
    let text = std::fs::read_to_string(env.home.join("evidence.csv")).unwrap();
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut n = 0;
    for rec in rdr.records() {
        let rec = rec.unwrap();
        assert_eq!(rec.len(), headroom_core::evidence_csv::columns().len());
        assert!(rec[16].starts_with("writer,"), "{rec:?}");
        n += 1;
    }
    assert_eq!(n, 2000);
}

#[test]
fn an_over_long_final_row_is_summarised_and_reported() {
    let env = Env::new();
    let header = "timestamp,total_procs,zombies,limit,usage_pct,free_slots,growth_per_min,eta_seconds,top_parent_pid,top_parent_name,top_parent_zombies,action,result";
    let mut text = format!("{header}\n");
    text.push_str("2026-08-28T18:00:00Z,801,239,4000,20.0,3199,0.00,786,86183,agency,115,poll,\n");
    text.push_str("2026-08-28T18:05:00Z,2744,2038,2666,102.9,0,10.00,0,28979,agency,526,kill:15+9,sigkill;reaped=526;freed=527;verified=true\n");
    text.push_str("2026-08-28T18:09:53Z,801,239,4000,20.0,3199,0.00,,86183,agency,115,cpu_idle=unknown;log_age=8,poll,\n");
    std::fs::write(env.home.join("evidence.1.csv"), text).unwrap();
    let (r, code) = evidence_json(&env, &[]);
    assert_eq!(code, 1);
    assert_eq!(r.rows, 2);
    let peak = r.peak_usage.as_ref().unwrap();
    assert_eq!(
        (
            peak.usage_pct,
            peak.processes,
            peak.used,
            peak.level.as_deref()
        ),
        (Some(102.9), Some(2744), None, None),
        "the 13-column layout reads under the new names, null where it has no column"
    );
    assert_eq!(
        r.lowest_free
            .as_ref()
            .map(|m| (m.free_slots, m.at.as_deref())),
        Some((Some(0), Some("2026-08-28T18:05:00Z")))
    );
    assert_eq!(
        r.shortest_eta.as_ref().map(|m| m.eta_seconds),
        Some(Some(0))
    );
    assert_eq!(r.cleanups.len(), 1);
    assert_eq!(
        r.cleanups[0].result,
        "sigkill;reaped=526;freed=527;verified=true"
    );
    assert_eq!(
        (
            r.anomalies[0].line,
            r.anomalies[0].fields,
            r.anomalies[0].expected
        ),
        (4, 14, 13)
    );
    let human = env.cmd().arg("evidence").output().unwrap();
    let out = String::from_utf8(human.stdout).unwrap();
    assert!(
        out.contains("line 4: 14 fields where the header has 13"),
        "{out}"
    );
    let (recent, _) = evidence_json(&env, &["--since", "1h"]);
    assert_eq!(recent.rows, 0);
}

#[test]
fn a_file_that_is_not_csv_is_skipped_and_reported_and_the_rest_reads() {
    let env = Env::new();
    std::fs::write(
        env.home.join("evidence.csv"),
        b"\x7fELF\x02\x01\x01\x00garbage\n",
    )
    .unwrap();
    // The rows written since (a writer appends to its own file beside the foreign one).
    let header = headroom_core::evidence_csv::columns().join(",");
    let row = "2026-08-29T22:42:41Z,501,3869,,3326,3869,4000,per-uid,96.73,131,critical,10.0,786,4,false,87537,agency,600,no-session,poll,,";
    std::fs::write(
        env.home.join("evidence.1.csv"),
        format!("{header}\n{row}\n"),
    )
    .unwrap();
    let out = env.cmd().arg("evidence").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "reported, the unhappy answer");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("evidence: 1 row"), "{text}");
    assert!(
        text.contains("evidence.csv line 1: no evidence-log header before them, skipped"),
        "{text}"
    );
    assert!(
        !text.contains('\u{7f}'),
        "the line is shown escaped: {text}"
    );
    let (r, code) = evidence_json(&env, &[]);
    assert_eq!((code, r.rows, r.anomalies.len()), (1, 1, 1));
    assert_eq!(r.anomalies[0].reason, "no_header");
    // Control: without the foreign file the same log reads clean.
    std::fs::remove_file(env.home.join("evidence.csv")).unwrap();
    let (r, code) = evidence_json(&env, &[]);
    assert_eq!((code, r.rows, r.anomalies.len()), (0, 1, 0));
}

#[test]
fn an_unreadable_count_is_marked_and_is_the_unhappy_answer() {
    let env = Env::new();
    let header = "timestamp,total_procs,zombies,limit,action,result";
    let mut text = format!("{header}\n");
    for (i, used) in ["2700", "NaN", "-1", "1e3", "2710"].iter().enumerate() {
        text.push_str(&format!("2026-08-29T22:4{i}:00Z,{used},2000,4000,poll,\n"));
    }
    std::fs::write(env.home.join("evidence.csv"), text).unwrap();
    let (r, code) = evidence_json(&env, &[]);
    assert_eq!((code, r.rows, r.anomalies.len()), (1, 2, 3));
    assert!(
        r.anomalies
            .iter()
            .all(|a| a.reason == "unreadable_value" && a.column.as_deref() == Some("total_procs"))
    );
    let out = env
        .cmd()
        .args(["evidence", "--chart", "--width", "60"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let chart = String::from_utf8(out.stdout).unwrap();
    assert!(chart.contains("? row not interpreted (3)"), "{chart}");
    assert!(
        chart.contains("`total_procs` is not a whole number"),
        "{chart}"
    );
}

#[test]
fn no_log_yet_says_so() {
    let env = Env::new();
    let out = env.cmd().arg("evidence").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("no evidence log yet")
    );
}

#[test]
#[cfg(target_os = "linux")]
fn probe_readings_are_logged_as_poll_rows() {
    let env = Env::new();
    for _ in 0..3 {
        env.cmd()
            .args(["probe", "-q"])
            .assert()
            .code(predicates::prelude::predicate::in_iter([0, 1, 2]));
    }
    let (r, code) = evidence_json(&env, &[]);
    assert_eq!((code, r.rows), (0, 3));
    assert!(r.cleanups.is_empty());
    let text = std::fs::read_to_string(env.home.join("evidence.csv")).unwrap();
    assert!(text.lines().skip(1).all(|l| l.contains(",poll,")), "{text}");
}

/// A reading printed by `probe --json` comes back from `evidence --json` with the same
/// fields and values (the CSV between them names its columns as the JSON does), old rows
/// beside it with null for what their layout lacks, and the whole report validates against
/// the published schema.
#[test]
#[cfg(target_os = "linux")]
fn a_probe_reading_reads_back_from_evidence_as_probe_printed_it() {
    let env = Env::new();
    let header = "timestamp,total_procs,zombies,limit,usage_pct,free_slots,growth_per_min,eta_seconds,top_parent_pid,top_parent_name,top_parent_zombies,action,result";
    std::fs::write(
        env.home.join("evidence.1.csv"),
        format!(
            "{header}\n2026-08-28T18:05:00Z,2744,2038,2666,,3,10.00,12.6,28979,agency,526,poll,\n"
        ),
    )
    .unwrap();
    let out = env.cmd().args(["probe", "--json"]).output().unwrap();
    let probe: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        probe["usage_pct"].is_f64(),
        "pid_max is always readable: {probe}"
    );
    let out = env.cmd().args(["evidence", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    crate::contract::assert_valid("headroom.evidence/3", std::slice::from_ref(&report));
    // The old row has the lowest free count and the shortest ETA (rounded to whole seconds),
    // the new one the peak usage (the old one's is unknown).
    let old = &report["shortest_eta"];
    assert_eq!(
        (&old["at"], &old["processes"], &old["eta_seconds"]),
        (&"2026-08-28T18:05:00Z".into(), &2744.into(), &13.into())
    );
    assert_eq!(
        (&old["used"], &old["level"]),
        (&None::<u64>.into(), &None::<u64>.into())
    );
    // The new row is the one probe printed, field for field.
    let new = &report["peak_usage"];
    assert_ne!(new["at"], old["at"], "{report}");
    let fields: Vec<&str> = probe
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|k| new.get(*k).is_some())
        .collect();
    assert_eq!(fields.len(), 15, "{fields:?}");
    for k in fields {
        assert_eq!(new[k], probe[k], "{k}");
    }
}
