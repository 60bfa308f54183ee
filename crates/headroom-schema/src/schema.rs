//! Every JSON object headroom prints says what it is: its first key is `schema`,
//! `headroom.<thing>/<version>`, its second `type`, the kind of object (`probe`; in a JSON
//! Lines stream, the kind of line: `poll`, `summary`). Both are constants of the printed type
//! ([`Document`]), added by the printer ([`to_line`]) rather than kept as fields, so they
//! cannot be left out or set to another type's name, and a report embedded in a stream
//! (`reap`'s inside `watch`'s `cleanup`) carries the stream's names only. A stream whose
//! lines are one tagged enum (`watch`, `run`) has its `type` from the enum's tag instead.
//!
//! The JSON Schemas (draft 2020-12) of those objects are generated from the same types
//! (`schemars`, serialisation contract: what is printed, not what would be accepted) and
//! published in `schemas/` and by `headroom schema`; the list of them (`ALL`) names every
//! command's report, so it is the commands' (`commands::schema`), and this module imports
//! nothing above the core.

use schemars::JsonSchema;
use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// A type headroom prints as one JSON object (a report, or a JSON Lines record).
pub trait Document: Serialize + JsonSchema {
    /// `headroom.<thing>/<version>`: bump the version when a field is renamed or removed.
    const SCHEMA: &'static str;
    /// The `type` printed beside `schema`: what the object is (`probe`, `round`, `summary`).
    /// `None` only for a type that serialises its own `type` (a `#[serde(tag = "type")]`
    /// enum of stream lines); the convention test holds every schema to requiring one.
    const TYPE: Option<&'static str>;
}

/// `doc` with its `schema` and `type` first.
#[derive(Serialize)]
struct Stamped<'a, T: ?Sized> {
    schema: &'static str,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    #[serde(flatten)]
    doc: &'a T,
}

/// `doc` as one line of JSON (no newline), `schema` and `type` first.
pub fn to_line<T: Document + ?Sized>(doc: &T) -> serde_json::Result<String> {
    serde_json::to_string(&Stamped {
        schema: T::SCHEMA,
        kind: T::TYPE,
        doc,
    })
}

/// `doc` as a JSON value, `schema` and `type` first: what `headroom mcp` returns as a
/// tool's `structuredContent`, the same object `to_line` prints.
pub fn to_value<T: Document + ?Sized>(doc: &T) -> serde_json::Result<serde_json::Value> {
    serde_json::to_value(Stamped {
        schema: T::SCHEMA,
        kind: T::TYPE,
        doc,
    })
}

/// `doc` as indented JSON (a file a person may read: `headroom snapshot`).
pub fn to_pretty<T: Document + ?Sized>(doc: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&Stamped {
        schema: T::SCHEMA,
        kind: T::TYPE,
        doc,
    })
}

pub use crate::core::serialize::{seconds, whole_seconds};

/// One published schema: its name and the record types an output of that name is made of
/// (a one-shot report is one; a JSON Lines stream is each kind of line it prints).
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    pub name: &'static str,
    /// What the output is, in a line.
    pub title: &'static str,
    pub parts: &'static [Part],
}

/// One kind of record of an output: its schema (usually a `$ref`) and the `type` the
/// printer adds to it, if it does.
pub(crate) type Part = fn(&mut SchemaGenerator) -> (schemars::Schema, Option<&'static str>);

/// `type` as the printer adds it: a required constant.
fn add_type(schema: &mut Map<String, Value>, kind: &str) {
    let props = schema.entry("properties").or_insert_with(|| json!({}));
    if let Value::Object(p) = props {
        p.insert("type".into(), json!({"type": "string", "const": kind}));
    }
    match schema.get_mut("required") {
        Some(Value::Array(r)) => r.insert(0, json!("type")),
        _ => {
            schema.insert("required".into(), json!(["type"]));
        }
    }
}

impl Entry {
    /// The JSON Schema (draft 2020-12) of this output. A one-record output is its type's
    /// schema inlined at the root (so `properties` lists its fields, as an MCP client
    /// reads an `outputSchema`); a stream is `anyOf` its kinds of line.
    pub fn schema(&self) -> Value {
        let mut g = generator();
        let mut parts: Vec<(Value, Option<&str>)> = self
            .parts
            .iter()
            .map(|f| {
                let (s, kind) = f(&mut g);
                (s.to_value(), kind)
            })
            .collect();
        let mut defs = g.take_definitions(true);
        let mut root = Map::new();
        if let [(one, kind)] = parts.as_mut_slice() {
            let inlined = one
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/$defs/"))
                .map(str::to_string)
                .and_then(|name| defs.remove(&name));
            match inlined {
                Some(Value::Object(body)) => root = body,
                _ => {
                    root.insert("allOf".into(), json!([one.take()]));
                }
            }
            if let Some(kind) = kind {
                add_type(&mut root, kind);
            }
        } else {
            // A typed part is its `$ref` beside the `type` (not the definition changed: a
            // stream may embed the same type under its own tag, as `watch`'s `hang`).
            let parts = parts
                .into_iter()
                .map(|(one, kind)| match (one, kind) {
                    (Value::Object(mut s), Some(kind)) => {
                        add_type(&mut s, kind);
                        Value::Object(s)
                    }
                    (s, _) => s,
                })
                .collect();
            root.insert("anyOf".into(), Value::Array(parts));
        }
        root.insert(
            "$schema".into(),
            json!("https://json-schema.org/draft/2020-12/schema"),
        );
        root.insert("$id".into(), json!(file_name(self.name)));
        root.insert("title".into(), json!(self.name));
        if !self.title.is_empty() {
            root.insert("description".into(), json!(self.title));
        }
        root.insert("type".into(), json!("object"));
        let props = root.entry("properties").or_insert_with(|| json!({}));
        if let Value::Object(p) = props {
            p.insert(
                "schema".into(),
                json!({"type": "string", "const": self.name}),
            );
        }
        let mut required = vec![json!("schema")];
        if let Some(Value::Array(r)) = root.remove("required") {
            required.extend(r.into_iter().filter(|v| v != "schema"));
        }
        root.insert("required".into(), Value::Array(required));
        if !defs.is_empty() {
            root.insert("$defs".into(), Value::Object(defs));
        }
        Value::Object(root)
    }

    /// The short name (`probe` for `headroom.probe/1`).
    pub fn thing(&self) -> &'static str {
        let rest = self.name.strip_prefix("headroom.").unwrap_or(self.name);
        rest.split('/').next().unwrap_or(rest)
    }
}

/// `headroom.probe/1` → `headroom.probe.1.json`, the file in `schemas/`.
pub fn file_name(name: &str) -> String {
    format!("{}.json", name.replace('/', "."))
}

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .with_transform(schemars::transform::RecursiveTransform(
            instants_are_date_times,
        ))
        .into_generator()
}

/// The naming convention, published: a string property named `at` or `*_at` is an RFC 3339
/// instant (`format: date-time`, which the validation test has its validator check on
/// every real output). Applied by name so no field can be left out; a field so named that
/// is not a string keeps its type, and the convention test refuses it.
fn instants_are_date_times(schema: &mut schemars::Schema) {
    let Some(Value::Object(props)) = schema.get_mut("properties") else {
        return;
    };
    for (name, prop) in props.iter_mut() {
        if !(name == "at" || name.ends_with("_at")) {
            continue;
        }
        let Value::Object(p) = prop else { continue };
        let string = match p.get("type") {
            Some(Value::String(t)) => t == "string",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
            _ => false,
        };
        if string {
            p.entry("format").or_insert_with(|| json!("date-time"));
        }
    }
}

/// The part of an [`Entry`] that is a record of type `T`.
pub fn part<T: Document>(g: &mut SchemaGenerator) -> (schemars::Schema, Option<&'static str>) {
    (g.subschema_for::<T>(), T::TYPE)
}

/// The schema of the one-record output `T` (as an MCP tool's `outputSchema`).
pub fn of<T: Document>() -> Value {
    Entry {
        name: T::SCHEMA,
        title: "",
        parts: &[part::<T>],
    }
    .schema()
}
