//! One convention for time, units and names across every published schema (issue 18),
//! checked on the schemas themselves (as `headroom schema NAME` prints them), so a field
//! added to any output is held to it the day it is added:
//!
//! - `*_seconds`, `*_ms`, `*_bytes`, `*_kb` are integers (or null when unknown);
//! - `at` and `*_at` are strings of format `date-time` (RFC 3339);
//! - no property is a bare time or size word (`ms`, `since`, `bytes`…) that does not say
//!   its unit or that it is an instant;
//! - every record (a one-shot report, each kind of line of a stream) requires `schema` and
//!   a constant `type`;
//! - every record of a stream (each kind of line of a JSON Lines output) requires `at`, the
//!   instant the thing it reports happened, but for the kinds listed in [`UNDATED`] with
//!   the reason. A summary reports the end of its stream and is dated by it (`at`): the
//!   start is the first line's `at`, so no `started_at`/`ended_at` pair is needed;
//! - an `Option` is required and nullable (unknown is `null`, never a missing key), but for
//!   the few fields listed in [`EXCEPTIONS`] with the reason.
//!
//! A field listed in [`EXCEPTIONS`] (with why) is exempt; a listed field that no longer
//! exists fails, so the list cannot outlive its reasons.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// Fields exempt from the convention, each with why (`Definition.field`, or `root.field`).
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "headroom.snapshot/1",
        "ProcessRecord.exe",
        "snapshot input format: recorded only for the processes a rule needs it of",
    ),
    (
        "headroom.snapshot/1",
        "ProcessRecord.argv",
        "snapshot input format: recorded only for session children (`--log-dir`)",
    ),
    (
        "headroom.snapshot/1",
        "ProcessRecord.cwd",
        "snapshot input format: recorded only where a relative `--log-dir` needs it",
    ),
];

/// Outputs printed as a stream of one kind of record (`top --watch` repeats its report):
/// held to the stream rule like those whose schema lists several kinds of line.
const REPEATED: &[&str] = &["headroom.top"];

/// Kinds of stream record exempt from requiring `at` (`schema`, `type`, why). None today:
/// every record of every stream reports something that happened, summaries included. A
/// listed kind that is dated after all fails, so the list cannot outlive its reasons.
type Undated = &'static [(&'static str, &'static str, &'static str)];
const UNDATED: Undated = &[];

/// Names that say neither a unit nor that they are an instant.
const BARE: &[&str] = &[
    "ms",
    "us",
    "ns",
    "s",
    "secs",
    "seconds",
    "minutes",
    "hours",
    "bytes",
    "kb",
    "mb",
    "size",
    "since",
    "until",
    "elapsed",
    "duration",
    "time",
    "timestamp",
    "ts",
    "age",
    "timeout",
    "interval",
    "mtime",
    "when",
    "date",
];

struct Walk<'a> {
    name: &'static str,
    root: &'a Value,
    problems: Vec<String>,
}

impl Walk<'_> {
    fn resolve<'v>(&'v self, s: &'v Value) -> &'v Value {
        match s.get("$ref").and_then(Value::as_str) {
            Some(r) => r
                .strip_prefix("#/$defs/")
                .and_then(|d| self.root.get("$defs")?.get(d))
                .unwrap_or(s),
            None => s,
        }
    }

    /// The JSON types a value of `s` may have (following `$ref` and unions).
    fn types(&self, s: &Value, depth: usize) -> BTreeSet<String> {
        let s = self.resolve(s);
        let mut out = BTreeSet::new();
        match s.get("type") {
            Some(Value::String(t)) => {
                out.insert(t.clone());
            }
            Some(Value::Array(ts)) => {
                out.extend(ts.iter().filter_map(|t| t.as_str().map(String::from)))
            }
            _ => {}
        }
        if s.get("const").is_some_and(Value::is_null) {
            out.insert("null".into());
        }
        for k in ["anyOf", "oneOf", "allOf"] {
            if let (Some(Value::Array(alts)), true) = (s.get(k), depth < 8) {
                for a in alts {
                    out.extend(self.types(a, depth + 1));
                }
            }
        }
        out
    }

    fn excepted(&self, key: &str) -> bool {
        EXCEPTIONS
            .iter()
            .any(|(schema, field, _)| *schema == self.name && *field == key)
    }

    fn property(&mut self, at: &str, name: &str, prop: &Value) {
        if self.excepted(&format!("{at}.{name}")) {
            return;
        }
        let types = self.types(prop, 0);
        let only = |allowed: &[&str]| {
            !types.is_empty() && types.iter().all(|t| allowed.contains(&t.as_str()))
        };
        if ["_seconds", "_ms", "_bytes", "_kb"]
            .iter()
            .any(|u| name.ends_with(u))
            && !(only(&["integer", "null"]) && types.contains("integer"))
        {
            self.problems.push(format!(
                "{at}.{name} is {types:?}, not an integer (or null)"
            ));
        }
        if name == "at" || name.ends_with("_at") {
            let format = self.resolve(prop).get("format").and_then(Value::as_str);
            if !(only(&["string", "null"]) && types.contains("string"))
                || format != Some("date-time")
            {
                self.problems.push(format!(
                    "{at}.{name} is {types:?} (format {format:?}), not an RFC 3339 date-time string"
                ));
            }
        }
        if BARE.contains(&name) {
            self.problems.push(format!(
                "{at}.{name} is a bare word: say the unit (`_seconds`, `_ms`, `_bytes`) or `_at`"
            ));
        }
    }

    fn object(&mut self, at: &str, s: &Map<String, Value>) {
        let Some(Value::Object(props)) = s.get("properties") else {
            return;
        };
        let required: BTreeSet<&str> = match s.get("required") {
            Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
            _ => BTreeSet::new(),
        };
        for (name, prop) in props {
            self.property(at, name, prop);
            let key = format!("{at}.{name}");
            if !required.contains(name.as_str()) && !self.excepted(&key) {
                self.problems.push(format!(
                    "{key} may be missing: unknown is null, so it must be required (or listed in EXCEPTIONS with why)"
                ));
            }
        }
    }

    /// Every object schema in `s`, named by its definition (or `root`).
    fn all(&mut self, at: &str, s: &Value) {
        match s {
            Value::Object(m) => {
                if m.contains_key("properties") {
                    self.object(at, m);
                }
                for (k, v) in m {
                    if k == "$defs" {
                        continue;
                    }
                    self.all(at, v);
                }
            }
            Value::Array(a) => a.iter().for_each(|v| self.all(at, v)),
            _ => {}
        }
    }

    /// Each kind of record the output prints: the root, or each alternative of its union
    /// (a `$ref` beside a `type`, or each variant of a tagged enum).
    fn records<'v>(&'v self, s: &'v Value, out: &mut Vec<Value>, depth: usize) {
        let alts = ["anyOf", "oneOf"].iter().find_map(|k| {
            s.get(*k)
                .or_else(|| self.resolve(s).get(*k))
                .and_then(Value::as_array)
        });
        match alts {
            Some(alts) if depth < 8 => {
                for a in alts {
                    self.records(a, out, depth + 1);
                }
            }
            _ => {
                // A `$ref` with the `type` beside it: both parts make the record.
                let mut merged = self.resolve(s).clone();
                if let (Value::Object(m), Value::Object(own)) = (&mut merged, s) {
                    for k in ["properties", "required"] {
                        if let Some(extra) = own.get(k) {
                            match (m.get_mut(k), extra) {
                                (Some(Value::Object(a)), Value::Object(b)) => {
                                    a.extend(b.clone());
                                }
                                (Some(Value::Array(a)), Value::Array(b)) => {
                                    a.extend(b.clone());
                                }
                                _ => {
                                    m.insert(k.into(), extra.clone());
                                }
                            }
                        }
                    }
                }
                out.push(merged);
            }
        }
    }
}

/// The convention's breaches in one published schema.
fn problems(name: &'static str, schema: &Value) -> Vec<String> {
    problems_with(name, schema, UNDATED)
}

/// [`problems`], with `undated` the stream records exempt from `at`.
fn problems_with(name: &'static str, schema: &Value, undated: Undated) -> Vec<String> {
    let mut w = Walk {
        name,
        root: schema,
        problems: Vec::new(),
    };
    w.all("root", schema);
    if let Some(Value::Object(defs)) = schema.get("$defs") {
        for (d, s) in defs {
            w.all(d, s);
        }
    }
    let root_requires = |k: &str| {
        schema["required"]
            .as_array()
            .is_some_and(|r| r.iter().any(|v| v == k))
    };
    if !root_requires("schema") || schema["properties"]["schema"]["const"] != name {
        w.problems
            .push("the root does not require its `schema`".into());
    }
    let mut records = Vec::new();
    w.records(schema, &mut records, 0);
    let stream = records.len() > 1 || REPEATED.iter().any(|t| name.split('/').next() == Some(t));
    for r in records.iter().filter(|_| stream) {
        let kind = r["properties"]["type"]["const"].as_str().unwrap_or("?");
        let dated = r["required"]
            .as_array()
            .is_some_and(|q| q.iter().any(|v| v == "at"));
        let exempt = undated
            .iter()
            .find(|(s, k, _)| *s == name && *k == kind)
            .map(|(_, _, why)| *why);
        match (dated, exempt) {
            (false, None) => w.problems.push(format!(
                "the `{kind}` record of a stream does not require `at`, when it happened"
            )),
            (true, Some(why)) => w.problems.push(format!(
                "the `{kind}` record is listed as undated ({why}) but requires `at`"
            )),
            _ => {}
        }
    }
    for r in &records {
        let requires = r["required"]
            .as_array()
            .is_some_and(|q| q.iter().any(|v| v == "type"))
            || root_requires("type");
        let t = &r["properties"]["type"];
        let constant = t.get("const").is_some_and(Value::is_string)
            || schema["properties"]["type"]
                .get("const")
                .is_some_and(Value::is_string);
        if !requires || !constant {
            w.problems.push(format!(
                "a record does not require a constant `type` ({})",
                r.get("description").and_then(Value::as_str).unwrap_or("?")
            ));
        }
    }
    w.problems
}

#[test]
fn every_published_schema_follows_the_convention() {
    let mut all = Vec::new();
    for e in headroom::testing::ALL {
        let s = e.schema();
        all.extend(
            problems(e.name, &s)
                .into_iter()
                .map(|p| format!("{}: {p}", e.name)),
        );
    }
    assert!(all.is_empty(), "{}", all.join("\n"));
    // Each listed exception is still there (not a stale list that excuses nothing).
    for (schema, field, why) in EXCEPTIONS {
        let s = headroom::testing::find(schema).unwrap().schema();
        let (def, prop) = field.split_once('.').unwrap();
        let props = if def == "root" {
            &s["properties"]
        } else {
            &s["$defs"][def]["properties"]
        };
        assert!(
            props.get(prop).is_some(),
            "{schema} {field} is listed ({why}) but no longer exists"
        );
    }
}

/// The walk catches each kind of breach; the control (a conforming schema) passes.
#[test]
fn the_convention_check_refuses_each_kind_of_breach() {
    let good = serde_json::json!({
        "properties": {
            "schema": {"const": "headroom.x/1", "type": "string"},
            "type": {"const": "x", "type": "string"},
            "at": {"type": "string", "format": "date-time"},
            "eta_seconds": {"type": ["integer", "null"]},
            "size_bytes": {"type": "integer"},
        },
        "required": ["schema", "type", "at", "eta_seconds", "size_bytes"],
        "type": "object",
    });
    assert_eq!(problems("headroom.x/1", &good), Vec::<String>::new());
    let breach = |f: &dyn Fn(&mut Value)| {
        let mut s = good.clone();
        f(&mut s);
        problems("headroom.x/1", &s)
    };
    for (what, found) in [
        (
            "float seconds",
            breach(&|s| s["properties"]["eta_seconds"] = serde_json::json!({"type": "number"})),
        ),
        (
            "integer instant",
            breach(&|s| s["properties"]["at"] = serde_json::json!({"type": "integer"})),
        ),
        (
            "instant without format",
            breach(&|s| s["properties"]["at"] = serde_json::json!({"type": "string"})),
        ),
        (
            "bare ms",
            breach(&|s| {
                s["properties"]["ms"] = serde_json::json!({"type": "integer"});
                s["required"].as_array_mut().unwrap().push("ms".into());
            }),
        ),
        (
            "optional field",
            breach(&|s| s["required"] = serde_json::json!(["schema", "type", "at", "size_bytes"])),
        ),
        (
            "no type",
            breach(&|s| {
                s["properties"].as_object_mut().unwrap().remove("type");
                s["required"] = serde_json::json!(["schema", "at", "eta_seconds", "size_bytes"]);
            }),
        ),
    ] {
        assert!(!found.is_empty(), "{what} passed the convention check");
    }
}

/// A stream of two kinds of line: each dated passes; one undated fails, unless it is
/// listed (and a listed kind that is dated after all fails: the list cannot go stale).
#[test]
fn every_kind_of_stream_line_must_say_when() {
    let line = |kind: &str, at: bool| {
        let mut props = serde_json::json!({"type": {"const": kind, "type": "string"}});
        let mut required = vec![serde_json::json!("type")];
        if at {
            props["at"] = serde_json::json!({"type": "string", "format": "date-time"});
            required.push("at".into());
        }
        serde_json::json!({"type": "object", "properties": props, "required": required})
    };
    let stream = |b_dated: bool| {
        serde_json::json!({
            "type": "object",
            "properties": {"schema": {"const": "headroom.x/1", "type": "string"}},
            "required": ["schema"],
            "anyOf": [line("a", true), line("b", b_dated)],
        })
    };
    let found = |b_dated, undated| problems_with("headroom.x/1", &stream(b_dated), undated);
    assert_eq!(found(true, &[]), Vec::<String>::new());
    let undated = found(false, &[]);
    assert!(
        undated.len() == 1 && undated[0].contains("`b`") && undated[0].contains("`at`"),
        "{undated:?}"
    );
    let listed: Undated = &[("headroom.x/1", "b", "reason")];
    assert_eq!(found(false, listed), Vec::<String>::new());
    assert!(!found(true, listed).is_empty(), "a stale listing passed");
    // A one-shot report is not a stream: it need not say `at` (`limits` reads no instant);
    // a repeated one (`top --watch`) is.
    let report = |name: &'static str| {
        let mut one = line("x", false);
        one["properties"]["schema"] = serde_json::json!({"const": name, "type": "string"});
        one["required"] = serde_json::json!(["schema", "type"]);
        problems(name, &one)
    };
    assert_eq!(report("headroom.x/1"), Vec::<String>::new());
    let top = report("headroom.top/9");
    assert!(top.len() == 1 && top[0].contains("`at`"), "{top:?}");
}

/// Words of the Rust source, not of the output: a published description says `null`, not
/// `None`, and names no module, type or trait of headroom's own.
const JARGON: &[&str] = &[
    "None",
    "Some(",
    "::",
    "Option<",
    "Vec<",
    "ProcessControl",
    "ProcessSource",
    "enum",
    "struct",
    "crate",
    "serde",
    "schemars",
    "`Err",
    "`Ok",
];

/// Every description in `s` that uses a word of [`JARGON`], with the path to it.
fn jargon(path: &str, s: &Value, out: &mut Vec<String>) {
    match s {
        Value::Object(m) => {
            if let Some(Value::String(d)) = m.get("description") {
                let words: Vec<&str> = d
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .collect();
                for j in JARGON {
                    let hit = if j.chars().all(char::is_alphanumeric) {
                        words.contains(j)
                    } else {
                        d.contains(j)
                    };
                    if hit {
                        out.push(format!("{path}: `{j}` in {d:?}"));
                    }
                }
            }
            for (k, v) in m {
                jargon(&format!("{path}/{k}"), v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| jargon(path, v, out)),
        _ => {}
    }
}

/// Published descriptions are for the reader of the JSON (schemars takes them from the doc
/// comments, which are also for the reader of the code): none speaks the source's language.
#[test]
fn published_descriptions_speak_the_output_s_language() {
    let mut found = Vec::new();
    for e in headroom::testing::ALL {
        jargon(e.name, &e.schema(), &mut found);
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
    // The control: the check sees a doc comment that leaked.
    let leaked = serde_json::json!({"$defs": {"Signal": {
        "description": "Signals understood by `ProcessControl`."}}});
    let mut out = Vec::new();
    jargon("x", &leaked, &mut out);
    assert_eq!(out.len(), 1, "{out:?}");
    let mut out = Vec::new();
    jargon(
        "x",
        &serde_json::json!({"description": "`None` when unread."}),
        &mut out,
    );
    assert_eq!(out.len(), 1, "{out:?}");
    let mut out = Vec::new();
    jargon(
        "x",
        &serde_json::json!({"description": "null when unread; none left."}),
        &mut out,
    );
    assert!(out.is_empty(), "{out:?}");
}
