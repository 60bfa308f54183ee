//! The report of the MCP tool `run_limited` (`headroom run --limit` under a wall-clock
//! timeout, `mcp::run_limited`): a report like every command's, so the list of published
//! schemas (`commands::schema::ALL`) names it without importing the front end.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

#[cfg(unix)]
use crate::actions::watchdog::{RunEvent, RunSummary};

/// The `headroom.run-limited/1` report.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunLimitedReport {
    pub command: Vec<String>,
    pub cwd: String,
    pub limit_bytes: u64,
    pub timeout_ms: u64,
    /// `run`'s exit code: the command's own, 143/137 when headroom ended the tree, 125 to
    /// 127 when it could not start it; null if `run` itself was killed.
    pub exit_code: Option<i32>,
    /// headroom ended the tree for being over its limit.
    pub capped: bool,
    /// The timeout passed and the tree was ended.
    pub timed_out: bool,
    /// `run` did not end within two graces of the SIGTERM the server sent it (past its
    /// timeout) and was killed.
    pub killed_after_timeout: bool,
    pub peak_footprint_bytes: Option<u64>,
    pub duration_ms: u64,
    pub stdout_tail: String,
    pub stdout_bytes: u64,
    /// The command's stderr, byte for byte (`run`'s records come on a pipe of their own).
    pub stderr_tail: String,
    pub stderr_bytes: u64,
    /// `run`'s final `headroom.run/1` record, as it wrote it; null when it could not start
    /// the command.
    #[cfg_attr(unix, schemars(with = "Option<SummaryRecord>"))]
    pub summary: Option<Value>,
}

/// The schema of `summary`: `run`'s summary line is passed on whole, so it carries the
/// `schema` and `type` the printer stamped on it (`schema::to_line`), not only `RunSummary`'s
/// fields. Passed on rather than stripped: a client may hand it to whatever reads
/// `headroom.run/1`, and removing printed fields would bump this schema's version.
#[cfg(unix)]
pub(crate) struct SummaryRecord;

/// The tag `run --json` prints on its summary line (`RunEvent::Summary`, snake_case).
#[cfg(unix)]
const SUMMARY_TYPE: &str = "summary";

#[cfg(unix)]
impl JsonSchema for SummaryRecord {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RunSummaryRecord".into()
    }

    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let summary = g.subschema_for::<RunSummary>();
        let mut s = schemars::json_schema!({
            "description": "`run`'s summary record as `run --json` printed it: `Summary`'s fields after its `schema` and `type`.",
            "type": "object",
            "properties": {
                "schema": {"type": "string", "const": <RunEvent as crate::schema::Document>::SCHEMA},
                "type": {"type": "string", "const": SUMMARY_TYPE},
            },
            "required": ["schema", "type"],
        });
        match summary.get("$ref") {
            Some(r) => s.insert("$ref".into(), r.clone()),
            None => s.insert("allOf".into(), serde_json::json!([summary])),
        };
        s
    }
}

impl crate::schema::Document for RunLimitedReport {
    const SCHEMA: &'static str = "headroom.run-limited/1";
    const TYPE: Option<&'static str> = Some("run-limited");
}
