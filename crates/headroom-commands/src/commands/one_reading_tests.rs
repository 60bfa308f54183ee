//! One reading, five printed shapes: `probe`'s report, `watch`'s `reading` line, `reap`'s
//! `usage`, `limits`' report and a row of `evidence --json` (through the CSV on disk) carry the reading's
//! fields under the same names with the same values, and nothing else of a reading's kind:
//! each report's own fields are listed here, so a field one of them grows by itself (a
//! `used_slots` beside `used`) fails until it is either moved into `SlotReading` or
//! deliberately added to that report's own list.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::actions::reap_report::ReapReport;
use crate::commands::limits::LimitsReport;
use crate::commands::probe::ProbeReport;
use crate::commands::watch::events::{ReadingEvent, WatchEvent};
use crate::core::emergency::Emergency;
use crate::core::evidence_csv::{ReadRow, Row, columns, encode, parse};
use crate::core::limits::fixture::mac;
use crate::core::patterns::{AllowDeny, Patterns};
use crate::core::policy::{Policy, Selection};
use crate::core::reading::{self, Level, Thresholds, Trend};
use crate::core::slot_reading::SlotReading;
use crate::core::snapshot::Snapshot;
use crate::core::snapshot::fixture::{leaker, proc, snapshot};

/// The first incident: 3,869 of 4,000 (RLIMIT_NPROC, as `kern.maxprocperuid` read), 3,326
/// of them zombies.
fn incident() -> Snapshot {
    let mut procs = leaker(87537, 3326, 100_000);
    procs.extend((0..542).map(|i| proc(10_000 + i, 1, "zsh")));
    let mut s = snapshot("macos", procs);
    s.ceilings = mac(Some(4000), Some(4000), Some(6000), 3869, 0);
    s
}

fn growing() -> Trend {
    Trend {
        samples: 4,
        growth_per_min: Some(10.004),
        eta_seconds: Some(786.4),
    }
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

/// `m`'s reading fields, and the names of the rest.
fn split(m: &Map<String, Value>) -> (Map<String, Value>, BTreeSet<String>) {
    let reading = SlotReading::FIELDS
        .iter()
        .filter_map(|k| m.get(*k).map(|v| ((*k).to_string(), v.clone())))
        .collect();
    let own = m
        .keys()
        .filter(|k| !SlotReading::FIELDS.contains(&k.as_str()))
        .cloned()
        .collect();
    (reading, own)
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| (*s).to_string()).collect()
}

fn probe(snap: &Snapshot, trend: Option<&Trend>) -> Map<String, Value> {
    let r = reading::read(snap, Thresholds::default());
    let report = ProbeReport::new(snap, &r, Thresholds::default(), trend);
    object(serde_json::from_str(&crate::schema::to_line(&report).unwrap()).unwrap())
}

fn watch(snap: &Snapshot, trend: &Trend) -> Map<String, Value> {
    let r = reading::read(snap, Thresholds::default());
    let e = WatchEvent::Reading(ReadingEvent::new(&r, trend, Level::Warning));
    object(serde_json::from_str(&crate::schema::to_line(&e).unwrap()).unwrap())
}

fn reap(snap: &Snapshot) -> Map<String, Value> {
    let r = reading::read(snap, Thresholds::default());
    let sel = Selection {
        decisions: vec![],
        pressure: false,
        projected_used: 0,
    };
    let policy = Policy {
        allow_deny: AllowDeny {
            allow: Patterns::new(["agency"]),
            deny: Patterns::default(),
        },
        min_zombies: 100,
        max_targets: 10,
        spare_sessions: true,
        idle_threshold_s: 7200.0,
        emergency: Emergency::default(),
    };
    let report = ReapReport::new(snap, &r, &sel, true, &policy, std::time::Duration::ZERO);
    let v = object(serde_json::from_str(&crate::schema::to_line(&report).unwrap()).unwrap());
    object(v["usage"].clone())
}

fn limits(snap: &Snapshot) -> Map<String, Value> {
    let r = reading::read(snap, Thresholds::default());
    let report = LimitsReport::new(snap, &r, vec![], None);
    object(serde_json::from_str(&crate::schema::to_line(&report).unwrap()).unwrap())
}

/// The reading's `poll` row, written to CSV and read back as `evidence --json` prints it.
fn evidence(snap: &Snapshot, trend: Option<&Trend>) -> Map<String, Value> {
    let r = reading::read(snap, Thresholds::default());
    let mut bytes = encode(&columns()).unwrap();
    bytes.extend(encode(&Row::poll(&r, trend).csv_fields().unwrap()).unwrap());
    let (rows, anomalies) = parse(std::path::Path::new("evidence.csv"), &bytes);
    assert!(anomalies.is_empty(), "{anomalies:?}");
    let report = crate::commands::evidence::summarise(vec![], &rows, vec![]);
    let v = object(serde_json::to_value(&report).unwrap());
    object(v["peak_usage"].clone())
}

#[test]
fn the_five_shapes_of_one_reading_carry_the_same_fields_and_values() {
    let snap = incident();
    let none = Trend::none(0);
    let trend = growing();
    let all = names(&SlotReading::FIELDS);
    // (what, without a trend, with one, its own fields)
    type Case<'a> = (
        &'a str,
        Map<String, Value>,
        Map<String, Value>,
        &'a [&'a str],
    );
    let cases: [Case<'_>; 5] = [
        (
            "probe",
            probe(&snap, None),
            probe(&snap, Some(&trend)),
            &[
                "schema",
                "type",
                "os",
                "warn_pct",
                "crit_pct",
                "top_parents",
                "history",
                "unreadable",
                "others_hidden",
            ],
        ),
        (
            "watch reading",
            watch(&snap, &none),
            watch(&snap, &trend),
            &["schema", "type", "confirmed_level"],
        ),
        // `reap` keeps no history: its usage has no trend whatever the others had.
        ("reap usage", reap(&snap), reap(&snap), &[]),
        // Nor does `limits`.
        (
            "limits",
            limits(&snap),
            limits(&snap),
            &[
                "schema",
                "type",
                "os",
                "ceilings",
                "notes",
                "memory_pressure",
            ],
        ),
        (
            "evidence row",
            evidence(&snap, None),
            evidence(&snap, Some(&trend)),
            &[
                "top_parent_pid",
                "top_parent_name",
                "top_parent_zombies",
                "session_signal",
                "action",
                "result",
                "override",
            ],
        ),
    ];
    let (without, _) = split(&cases[0].1);
    let (with, _) = split(&cases[0].2);
    // The control: the reading is a real one, and the trend shows in it.
    assert_eq!(without["used"], 3869);
    assert_eq!(without["free_slots"], 131);
    assert_eq!(without["level"], "critical");
    assert_eq!(without["eta_seconds"], Value::Null);
    assert_eq!(
        (&with["eta_seconds"], &with["growth_per_min"]),
        (&786.into(), &10.0.into())
    );
    for (what, plain, trended, own) in &cases {
        for (m, expected) in [(plain, &without), (trended, &with)] {
            let (reading, extra) = split(m);
            let keys: BTreeSet<String> = reading.keys().cloned().collect();
            assert_eq!(keys, all, "{what}: the reading's fields");
            assert_eq!(&extra, &names(own), "{what}: its own fields");
            if !matches!(*what, "reap usage" | "limits") || std::ptr::eq(m, plain) {
                assert_eq!(&reading, expected, "{what}");
            }
        }
    }
    assert_eq!(split(&cases[2].2).0, without, "reap: no trend");
    assert_eq!(split(&cases[3].2).0, without, "limits: no trend");
}

/// The published schemas say the same: each report's properties are the reading's plus its
/// own (what the instances above show could hide a field that is only sometimes printed).
#[test]
fn the_schemas_of_the_five_shapes_have_the_reading_s_properties() {
    fn props<T: schemars::JsonSchema>() -> BTreeSet<String> {
        let s = schemars::schema_for!(T).to_value();
        s["properties"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }
    let all = names(&SlotReading::FIELDS);
    let with = |own: &[&str]| all.union(&names(own)).cloned().collect::<BTreeSet<_>>();
    assert_eq!(
        props::<ProbeReport>(),
        with(&[
            "os",
            "warn_pct",
            "crit_pct",
            "top_parents",
            "history",
            "unreadable",
            "others_hidden"
        ])
    );
    assert_eq!(props::<ReadingEvent>(), with(&["confirmed_level"]));
    assert_eq!(
        props::<LimitsReport>(),
        with(&["os", "ceilings", "notes", "memory_pressure"])
    );
    assert_eq!(props::<SlotReading>(), all);
    assert_eq!(
        props::<ReadRow>(),
        with(&[
            "top_parent_pid",
            "top_parent_name",
            "top_parent_zombies",
            "session_signal",
            "action",
            "result",
            "override"
        ])
    );
    let reap = schemars::schema_for!(ReapReport).to_value();
    assert_eq!(reap["properties"]["usage"]["$ref"], "#/$defs/SlotReading");
    // The evidence log's columns are the JSON's names.
    let cols: BTreeSet<String> = columns().iter().map(|c| (*c).to_string()).collect();
    assert_eq!(cols, props::<ReadRow>());
}
