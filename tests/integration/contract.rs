//! The JSON contract the tests hold every output to: the committed schemas in `schemas/`,
//! closed. A published schema is open (JSON Schema lets an object carry any property it does
//! not list, and an `int32` format is a note, not a check); the closed form refuses both, so
//! a field added, renamed or removed fails until the schema says so (and `generated.rs` fails
//! until the schema is regenerated and committed). This replaces the hand-written
//! `deny_unknown_fields` mirror the tests kept before: the contract is written once, by the
//! output types, and checked here.
//!
//! What the mirror checked that the published schemas do not say, and how the closed form
//! keeps it:
//! - no unknown field, at any depth: `unevaluatedProperties: false` on every schema that
//!   applies to an instance of its own (the root, each property, each array item), so it
//!   sees through `$ref`, `allOf`, `anyOf` and `oneOf` (a stream's record kinds, a nullable
//!   object) and refuses what no branch named;
//! - integer widths (serde refused a `uid` of -1 or a pid past `i32`): each `intN`/`uintN`
//!   format becomes the `minimum`/`maximum` of its type.
//!
//! What neither the schema nor this closing can say: `3.0` where an integer is published
//! (JSON Schema counts it an integer). serde_json never writes a Rust integer that way, and
//! the typed views in `schema.rs` still refuse it in the fields the tests read.

use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

/// The committed schema of `name` (`headroom.probe/2`), as published.
pub(crate) fn published(name: &str) -> Value {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("schemas")
        .join(headroom::testing::file_name(name));
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{}: {e} (run scripts/generate.sh)", file.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// `schema` in its closed form (see the module docs).
pub(crate) fn closed(mut schema: Value) -> Value {
    close(&mut schema, true);
    schema
}

/// `own_instance`: the schema applies to a value of its own (the root, a property, an item),
/// not in place beside others (`$defs`, `allOf`/`anyOf`/`oneOf`, `not`, `if`/`then`/`else`),
/// where closing would refuse the properties its siblings name.
fn close(node: &mut Value, own_instance: bool) {
    let Value::Object(map) = node else { return };
    for (key, sub) in map.iter_mut() {
        match key.as_str() {
            "properties" | "patternProperties" => each_schema(sub, true),
            "$defs" | "definitions" | "dependentSchemas" => each_schema(sub, false),
            "allOf" | "anyOf" | "oneOf" => each_schema(sub, false),
            "prefixItems" => each_schema(sub, true),
            "items" | "additionalProperties" | "contains" | "propertyNames" => close(sub, true),
            "not" | "if" | "then" | "else" => close(sub, false),
            _ => {}
        }
    }
    bound_integer(map);
    // A schema that says nothing of the value's shape (`json_schema`, a setting's `value`)
    // admits any value, objects of any fields included; closing it would change its meaning.
    let shaped = ["properties", "type", "$ref", "allOf", "anyOf", "oneOf"]
        .iter()
        .any(|k| map.contains_key(*k));
    if own_instance
        && shaped
        && !map.contains_key("additionalProperties")
        && !map.contains_key("unevaluatedProperties")
    {
        map.insert("unevaluatedProperties".into(), false.into());
    }
}

fn each_schema(v: &mut Value, own_instance: bool) {
    match v {
        Value::Object(m) => m.values_mut().for_each(|s| close(s, own_instance)),
        Value::Array(a) => a.iter_mut().for_each(|s| close(s, own_instance)),
        _ => {}
    }
}

/// The bounds an integer format stands for, where the schema gives none of its own.
fn bound_integer(map: &mut Map<String, Value>) {
    let (min, max) = match map.get("format").and_then(Value::as_str) {
        Some("int8") => (json!(i8::MIN), json!(i8::MAX)),
        Some("int16") => (json!(i16::MIN), json!(i16::MAX)),
        Some("int32") => (json!(i32::MIN), json!(i32::MAX)),
        Some("int64" | "int") => (json!(i64::MIN), json!(i64::MAX)),
        Some("uint8") => (json!(0), json!(u8::MAX)),
        Some("uint16") => (json!(0), json!(u16::MAX)),
        Some("uint32") => (json!(0), json!(u32::MAX)),
        Some("uint64" | "uint") => (json!(0), json!(u64::MAX)),
        _ => return,
    };
    map.entry("minimum").or_insert(min);
    map.entry("maximum").or_insert(max);
}

/// A validator for `name`'s closed schema, formats checked too (every `at`/`*_at` is
/// published as `date-time`, RFC 3339).
pub(crate) fn validator(name: &str) -> Validator {
    validator_of(name, &closed(published(name)))
}

/// A compiled schema: `boon` (draft 2020-12, with `unevaluatedProperties` and format
/// assertions; it passes the JSON Schema test suite). It replaced `jsonschema`, which with
/// its own regex, bigint and URI crates was a fifth of a cold test build's CPU for the same
/// checks (BENCHMARKS.md, "Time to a green test run").
pub(crate) struct Validator {
    schemas: boon::Schemas,
    index: boon::SchemaIndex,
}

pub(crate) fn validator_of(name: &str, schema: &Value) -> Validator {
    // The address only names the schema inside this compiler (a relative `$id` resolves
    // against it); nothing is fetched.
    let url = format!(
        "https://headroom.invalid/schemas/{}",
        headroom::testing::file_name(name)
    );
    let mut compiler = boon::Compiler::new();
    compiler.enable_format_assertions();
    let mut schemas = boon::Schemas::new();
    let compiled = match compiler.add_resource(&url, schema.clone()) {
        Ok(()) => compiler.compile(&url, &mut schemas),
        Err(e) => Err(e),
    };
    let index =
        compiled.unwrap_or_else(|e| panic!("schema {name} is not a valid JSON Schema: {e:#}"));
    Validator { schemas, index }
}

/// The validator's complaints about `record` (empty when it is valid): each failed keyword
/// with where in the record it failed.
pub(crate) fn errors(v: &Validator, record: &Value) -> Vec<String> {
    let mut out = Vec::new();
    if let Err(e) = v.schemas.validate(record, v.index) {
        leaves(&e, &mut out);
    }
    out
}

fn leaves(e: &boon::ValidationError, out: &mut Vec<String>) {
    if e.causes.is_empty() {
        out.push(format!("{} at {}", e.kind, e.instance_location));
    }
    e.causes.iter().for_each(|c| leaves(c, out));
}

/// Every record is valid under the closed schema `name` and carries its `schema` and a
/// `type` (the test of each record kind another test produces for real: `watch`'s
/// cleanup, memory and approaching-limit records, the MCP `run_limited` result).
pub(crate) fn assert_valid(name: &str, records: &[Value]) {
    assert!(!records.is_empty(), "no {name} record to validate");
    let v = validator(name);
    let failures: Vec<String> = records
        .iter()
        .filter_map(|r| {
            let errs = errors(&v, r);
            (r["schema"] != name || !r["type"].is_string() || !errs.is_empty())
                .then(|| format!("{errs:?}\n  {r}"))
        })
        .collect();
    assert!(failures.is_empty(), "not {name}:\n{}", failures.join("\n"));
}

/// `json`, held to the closed schema `name`, then read into the test's typed view of it;
/// `context` (the command's stderr) goes into the failure.
pub(crate) fn parse<T: DeserializeOwned>(name: &str, json: &[u8], context: &str) -> T {
    let text = String::from_utf8_lossy(json);
    let value: Value =
        serde_json::from_slice(json).unwrap_or_else(|e| panic!("{name}: {e}: {text}\n{context}"));
    let errs = errors(&validator(name), &value);
    assert!(errs.is_empty(), "not {name}: {errs:?}\n  {text}\n{context}");
    serde_json::from_value(value).unwrap_or_else(|e| panic!("{name} view: {e}: {text}"))
}

/// One JSON line held to `v` (the schema `what`), read into a view; the error says why not.
pub(crate) fn parse_line<T: DeserializeOwned>(
    v: &Validator,
    what: &str,
    line: &str,
) -> Result<T, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let errs = errors(v, &value);
    if !errs.is_empty() {
        return Err(format!("not {what}: {errs:?}"));
    }
    serde_json::from_value(value).map_err(|e| format!("{what} view: {e}"))
}

/// A validator for one of `name`'s `$defs` (a record the schema lists but no command
/// prints alone: a line of a state file), closed.
pub(crate) fn def_validator(name: &str, def: &str) -> Validator {
    let mut schema = published(name);
    let defs = schema
        .get_mut("$defs")
        .map(Value::take)
        .unwrap_or_else(|| panic!("{name} has no $defs"));
    assert!(defs.get(def).is_some(), "{name} has no $defs/{def}");
    let one = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": defs,
        "$ref": format!("#/$defs/{def}"),
    });
    validator_of(name, &closed(one))
}

/// The closed form refuses what the open one lets through: a field no schema names, at the
/// top, in a nested object, in an array's item, in a stream record's branch; and an integer
/// past its width. The control: the same records untouched pass both.
#[test]
fn the_closed_form_refuses_unknown_fields_and_integers_past_their_width() {
    let open = |name: &str| validator_of(name, &published(name));
    let probe = json!({
        "schema": "headroom.probe/2", "type": "probe", "at": "2026-08-28T18:05:00Z",
        "os": "linux", "uid": 1000, "processes": 10, "tasks": 12, "zombies": 0, "used": 12,
        "limit": 100, "limit_source": "rlimit-nproc", "usage_pct": 12.0, "free_slots": 88,
        "level": "normal", "warn_pct": 80.0, "crit_pct": 95.0,
        "top_parents": [{"pid": 1, "name": "init", "zombies": 0}],
        "growth_per_min": null, "eta_seconds": null, "trend_samples": 0, "history": false,
        "unreadable": 0, "others_hidden": false, "partial": false,
    });
    let (o, c) = (open("headroom.probe/2"), validator("headroom.probe/2"));
    assert!(errors(&o, &probe).is_empty() && errors(&c, &probe).is_empty());
    let changed = |f: &dyn Fn(&mut Value)| {
        let mut p = probe.clone();
        f(&mut p);
        p
    };
    for (what, bad) in [
        ("a new top-level field", changed(&|p| p["extra"] = 1.into())),
        (
            "a new field in an array's item",
            changed(&|p| p["top_parents"][0]["extra"] = 1.into()),
        ),
        ("a uid past u32", changed(&|p| p["uid"] = json!(1u64 << 32))),
        (
            "a pid past i32",
            changed(&|p| p["top_parents"][0]["pid"] = json!(1u64 << 31)),
        ),
    ] {
        assert!(
            errors(&o, &bad).is_empty(),
            "{what}: the open form refused it"
        );
        assert!(!errors(&c, &bad).is_empty(), "{what} was accepted: {bad}");
    }
    // The schema's own bound stays: a count below zero. And a format is checked in both
    // forms: an `at` that is not RFC 3339.
    assert!(!errors(&c, &changed(&|p| p["zombies"] = json!(-1))).is_empty());
    let undated = changed(&|p| p["at"] = json!("yesterday"));
    assert!(!errors(&o, &undated).is_empty() && !errors(&c, &undated).is_empty());

    // A stream record: a `run` summary (a branch of `oneOf` under `anyOf`, beside the root's
    // `schema`) and a nullable nested object (`command_status`).
    let summary = json!({
        "schema": "headroom.run/1", "type": "summary", "at": "2026-08-28T18:05:00Z",
        "exit_code": 0, "command_status": {"exit_code": 0, "signal": null},
        "peak_footprint_bytes": 1, "peak_processes": 1, "limit_bytes": 1,
        "lowest_effective_limit_bytes": 1, "breaches": 0, "parked": 0, "ended_by": null,
        "terminated": 0, "killed": 0, "forwarded": [], "survivors": [], "spared": [],
        "duration_ms": 1, "samples": 1,
    });
    let (o, c) = (open("headroom.run/1"), validator("headroom.run/1"));
    assert!(
        errors(&c, &summary).is_empty(),
        "{:?}",
        errors(&c, &summary)
    );
    for bad in [
        {
            let mut s = summary.clone();
            s["extra"] = 1.into();
            s
        },
        {
            let mut s = summary.clone();
            s["command_status"]["extra"] = 1.into();
            s
        },
    ] {
        assert!(errors(&o, &bad).is_empty(), "open already refused {bad}");
        assert!(!errors(&c, &bad).is_empty(), "accepted: {bad}");
    }
}

/// The MCP `run_limited` result passes `run`'s summary line on whole: the closed schema
/// takes it with the `schema` and `type` `run` printed, and no other field (an unknown one
/// in the summary is refused, which the open form lets through), nor another record's
/// names or a summary without them. The control: the same result with `summary` null.
#[test]
fn a_run_limited_result_is_held_closed_down_to_its_summary_record() {
    let name = "headroom.run-limited/1";
    let (open, closed) = (validator_of(name, &published(name)), validator(name));
    let result = json!({
        "schema": name, "type": "run-limited", "command": ["true"], "cwd": "/",
        "limit_bytes": 1, "timeout_ms": 1, "exit_code": 0, "capped": false,
        "timed_out": false, "killed_after_timeout": false, "peak_footprint_bytes": 1,
        "duration_ms": 1, "stdout_tail": "", "stdout_bytes": 0, "stderr_tail": "",
        "stderr_bytes": 0,
        "summary": {
            "schema": "headroom.run/1", "type": "summary", "at": "2026-08-28T18:05:00Z",
            "exit_code": 0, "command_status": {"exit_code": 0, "signal": null},
            "peak_footprint_bytes": 1, "peak_processes": 1, "limit_bytes": 1,
            "lowest_effective_limit_bytes": 1, "breaches": 0, "parked": 0, "ended_by": null,
            "terminated": 0, "killed": 0, "forwarded": [], "survivors": [], "spared": [],
            "duration_ms": 1, "samples": 1,
        },
    });
    assert_eq!(errors(&closed, &result), Vec::<String>::new(), "{result}");
    let mut unstarted = result.clone();
    unstarted["summary"] = Value::Null;
    assert_eq!(errors(&closed, &unstarted), Vec::<String>::new());
    let summary_changed = |f: &dyn Fn(&mut Map<String, Value>)| {
        let mut r = result.clone();
        f(r["summary"].as_object_mut().unwrap());
        r
    };
    let extra = summary_changed(&|s| {
        s.insert("extra".into(), 1.into());
    });
    assert!(
        errors(&open, &extra).is_empty(),
        "open already refused {extra}"
    );
    for (what, bad) in [
        ("an unknown field in the summary", extra),
        (
            "another record's type",
            summary_changed(&|s| {
                s.insert("type".into(), "breach".into());
            }),
        ),
        (
            "another schema's name",
            summary_changed(&|s| {
                s.insert("schema".into(), "headroom.watch/3".into());
            }),
        ),
        (
            "no schema",
            summary_changed(&|s| {
                s.remove("schema");
            }),
        ),
    ] {
        assert!(
            !errors(&closed, &bad).is_empty(),
            "{what} was accepted: {bad}"
        );
    }
}
