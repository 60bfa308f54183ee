use super::fixture::sample;
use super::*;
use crate::evidence_csv::{Row, columns, encode, parse};

fn keys(v: &serde_json::Value) -> Vec<String> {
    v.as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

fn schema_properties<T: schemars::JsonSchema>() -> Vec<String> {
    let s = schemars::schema_for!(T).to_value();
    keys(&s["properties"])
}

#[test]
fn fields_are_the_printed_keys_in_order_and_the_schema_s() {
    let line = serde_json::to_string(&sample()).unwrap();
    let at: Vec<usize> = SlotReading::FIELDS
        .iter()
        .map(|f| line.find(&format!("\"{f}\":")).unwrap())
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{line}");
    let mut sorted = keys(&serde_json::to_value(sample()).unwrap());
    assert_eq!(sorted.len(), SlotReading::FIELDS.len(), "{line}");
    sorted.sort();
    let mut props = schema_properties::<SlotReading>();
    props.sort();
    assert_eq!(props, sorted);
    // The evidence log's reader has each of them too, under the same name.
    let mut recorded = schema_properties::<RecordedReading>();
    recorded.sort();
    assert_eq!(recorded, sorted);
}

#[test]
fn a_reading_reads_back_from_the_evidence_log_as_it_was_printed() {
    for mut r in [sample(), {
        let mut s = sample();
        (s.tasks, s.limit, s.limit_source, s.usage_pct, s.free_slots) =
            (Some(9000), None, None, None, None);
        (s.level, s.growth_per_min, s.eta_seconds, s.partial) =
            (Level::Unknown, Some(-1.25), None, true);
        s
    }] {
        r.trend_samples += 1;
        let mut bytes = encode(&columns()).unwrap();
        bytes.extend(encode(&Row::new(r.clone(), "poll").csv_fields().unwrap()).unwrap());
        let (rows, anomalies) = parse(std::path::Path::new("e.csv"), &bytes).unwrap();
        assert!(anomalies.is_empty(), "{anomalies:?}");
        assert_eq!(
            serde_json::to_value(&rows[0].reading).unwrap(),
            serde_json::to_value(&r).unwrap()
        );
    }
}

#[test]
fn the_eta_is_whole_seconds_and_unknown_is_null() {
    use crate::snapshot::fixture::{proc, snapshot};
    let snap = snapshot("linux", vec![proc(10, 1, "zsh")]);
    let r = crate::reading::read(&snap, crate::reading::Thresholds::default());
    let trend = Trend {
        samples: 3,
        growth_per_min: Some(1.234),
        eta_seconds: Some(89.5),
    };
    let v = serde_json::to_value(SlotReading::new(&r, Some(&trend))).unwrap();
    assert_eq!(
        (&v["eta_seconds"], &v["growth_per_min"]),
        (&90.into(), &1.23.into())
    );
    let v = serde_json::to_value(SlotReading::new(&r, None)).unwrap();
    assert_eq!(
        (&v["eta_seconds"], &v["growth_per_min"], &v["trend_samples"]),
        (
            &serde_json::Value::Null,
            &serde_json::Value::Null,
            &0.into()
        )
    );
}
