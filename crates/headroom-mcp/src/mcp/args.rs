//! The tools' argument types (serde checks them; `schemars` derives each `inputSchema`) and
//! the one pass that makes every schema a client sees plain JSON Schema: an optional
//! argument is declared by its type alone (absent when not given, not `["integer","null"]`),
//! and schemars' own `format`s (`uint64`, `int32`, `double`, …), which are not JSON Schema
//! formats, are left out (Ajv-based clients warn about each one).

use std::str::FromStr;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// The formats JSON Schema 2020-12 defines; any other is schemars' own and left out.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Leave out non-standard `format`s everywhere in `schema`; for an input schema also make
/// each property's type plain (`"type": ["integer","null"]` → `"integer"`, `anyOf` of a
/// type and `null` → the type): a client omits an optional argument rather than send null.
pub(crate) fn clean(schema: &mut Value, input: bool) {
    match schema {
        Value::Object(o) => {
            if o.get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
            {
                o.remove("format");
            }
            if input {
                if let Some(Value::Array(types)) = o.get_mut("type") {
                    types.retain(|t| t != "null");
                    if types.len() == 1 {
                        let t = types.remove(0);
                        o.insert("type".into(), t);
                    }
                }
                let single = match o.get_mut("anyOf") {
                    Some(Value::Array(alts)) => {
                        alts.retain(|a| a.get("type").and_then(Value::as_str) != Some("null"));
                        (alts.len() == 1).then(|| alts.remove(0))
                    }
                    _ => None,
                };
                if let Some(Value::Object(only)) = single {
                    o.remove("anyOf");
                    for (k, v) in only {
                        o.entry(k).or_insert(v);
                    }
                }
                // A null default says nothing a client can use.
                if o.get("default") == Some(&Value::Null) {
                    o.remove("default");
                }
            }
            for v in o.values_mut() {
                clean(v, input);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|v| clean(v, input)),
        _ => {}
    }
}

/// A JSON Schema (draft 2020-12) of `T`, cleaned for a client (`clean`).
pub(crate) fn input_schema<T: JsonSchema>() -> Value {
    let mut v = serde_json::to_value(schemars::schema_for!(T))
        .unwrap_or_else(|_| serde_json::json!({"type": "object"}));
    clean(&mut v, true);
    v
}

/// An integer argument: a JSON number, or a string holding one (the MCP Inspector sends
/// every form field as a string). Declared as the integer it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Int<T>(pub T);

impl<'de, T> Deserialize<'de> for Int<T>
where
    T: FromStr + TryFrom<i64> + TryFrom<u64>,
{
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = Value::deserialize(d)?;
        let bad = || D::Error::custom(format!("`{v}` is not a whole number in range"));
        let n = match &v {
            Value::Number(n) => match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => T::try_from(i).ok(),
                (None, Some(u)) => T::try_from(u).ok(),
                _ => None,
            },
            Value::String(s) => s.trim().parse::<T>().ok(),
            _ => None,
        };
        n.map(Int).ok_or_else(bad)
    }
}

impl<T: JsonSchema> JsonSchema for Int<T> {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ProbeArgs")]
pub(crate) struct ProbeToolArgs {
    /// Neither read nor write the reading history (then no trend and no ETA).
    #[serde(default)]
    pub no_history: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "TopArgs")]
pub(crate) struct TopToolArgs {
    /// Only the tree rooted at this pid.
    #[serde(default)]
    pub pid: Option<Int<i32>>,
    /// Footprint (MiB) from which an idle tree is a park candidate [default: 512].
    #[schemars(range(min = 1))]
    #[serde(default)]
    pub park_min_mb: Option<Int<u64>>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SinceArgs {
    /// Only the last DUR, like `90s`, `2h`, `7d`.
    #[serde(default)]
    pub since: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "LogProbeArgs")]
pub(crate) struct LogProbeToolArgs {
    /// The session log directory.
    pub dir: String,
    /// Judge as of this instant (RFC 3339 UTC, like `2026-08-29T09:21:47Z`).
    #[serde(default)]
    pub at: Option<String>,
}

/// Arguments that can only narrow the configured reap policy.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ReapArgs")]
pub(crate) struct ReapToolArgs {
    /// Deny patterns added to the configured ones (plain case-insensitive substrings).
    #[serde(default)]
    pub deny: Vec<String>,
    /// At most this many parents; above the configured value it has no effect.
    #[schemars(range(min = 1))]
    #[serde(default)]
    pub max_targets: Option<Int<u64>>,
    /// At least this many zombies per parent; below the configured value it has no effect.
    #[schemars(range(min = 1))]
    #[serde(default)]
    pub min_zombies: Option<Int<u64>>,
    /// Never relax the session guard, even at the wall.
    #[serde(default)]
    pub no_emergency: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "PidArgs")]
pub(crate) struct PidToolArgs {
    /// The process id (the root, for a tree).
    pub pid: Int<i64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integers_come_as_numbers_or_numeric_strings_and_nothing_else() {
        let a: TopToolArgs =
            serde_json::from_value(json!({"pid": "42", "park_min_mb": 7})).unwrap();
        assert_eq!((a.pid, a.park_min_mb), (Some(Int(42)), Some(Int(7))));
        let a: TopToolArgs = serde_json::from_value(json!({})).unwrap();
        assert_eq!((a.pid, a.park_min_mb), (None, None));
        for bad in [
            json!({"pid": "4x"}),
            json!({"pid": 1.5}),
            json!({"pid": true}),
        ] {
            assert!(
                serde_json::from_value::<TopToolArgs>(bad.clone()).is_err(),
                "{bad}"
            );
        }
        // Out of range for the type is refused, not wrapped.
        assert!(serde_json::from_value::<TopToolArgs>(json!({"pid": 1_u64 << 40})).is_err());
        assert!(serde_json::from_value::<ReapToolArgs>(json!({"max_targets": -1})).is_err());
    }

    #[test]
    fn optional_arguments_are_declared_by_their_plain_type_and_no_format_is_schemars_own() {
        let s = input_schema::<TopToolArgs>();
        assert_eq!(s["properties"]["pid"]["type"], "integer", "{s}");
        assert_eq!(s["properties"]["park_min_mb"]["type"], "integer", "{s}");
        assert_eq!(s["properties"]["park_min_mb"]["minimum"], 1, "{s}");
        assert!(!s.to_string().contains("\"format\""), "{s}");
        assert!(!s.to_string().contains("null"), "{s}");
        // Control: a format JSON Schema defines is kept.
        let mut v = json!({"type": "string", "format": "date-time"});
        clean(&mut v, true);
        assert_eq!(v["format"], "date-time");
        // Output schemas keep null (reports print it), but lose the formats too.
        let mut v = json!({"type": ["integer", "null"], "format": "uint64"});
        clean(&mut v, false);
        assert_eq!(v, json!({"type": ["integer", "null"]}));
    }
}
