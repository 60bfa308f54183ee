//! Tool results. A report is returned three ways at once: `structuredContent` (the
//! command's `--json` object), the same JSON as the first text block (the spec's SHOULD,
//! for clients that hand the model only `content`), and a one-line summary as the second.
//! (`tools::report` makes a command's report into one.) A failure is a result with
//! `isError`, the message `exit::report` makes for the command line, and `_meta.headroom` naming its kind, rule and exit code. Bad argument values are
//! such results too (kind `usage`); only an unknown tool or a malformed request is a
//! JSON-RPC error.

use serde_json::{Value, json};

use crate::exit::{ErrorKind, ExitStatus};

/// The result for a report: JSON text, summary, structured content.
pub(crate) fn with_report(report: Value, summary: String, is_error: bool) -> Value {
    json!({
        "content": [
            {"type": "text", "text": report.to_string()},
            {"type": "text", "text": summary},
        ],
        "structuredContent": report,
        "isError": is_error,
    })
}

/// A command's error as a tool result (`exit::report`: the message the command line says).
pub(crate) fn error(e: &anyhow::Error) -> Value {
    let r = crate::exit::report(e);
    failure(r.kind.as_str(), r.reason, &r.message, r.status)
}

/// A bad argument value: a tool error the model can read and correct.
pub(crate) fn usage(message: &str) -> Value {
    failure(ErrorKind::Usage.as_str(), None, message, ExitStatus::Usage)
}

/// A failure result: `kind` (`refused`, `usage`, `failed`, `internal`), the rule's name.
pub(crate) fn failure(
    kind: &str,
    reason: Option<&str>,
    message: &str,
    status: ExitStatus,
) -> Value {
    let head = match reason {
        Some(r) => format!("{kind} ({r})"),
        None => kind.to_string(),
    };
    json!({
        "content": [{"type": "text", "text": format!("{head}: {message}")}],
        "isError": true,
        "_meta": {"headroom": {"error": kind, "reason": reason, "exit_code": status.code()}},
    })
}

/// The text of a result's first block (a failure's message).
pub(crate) fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("(no text)")
        .to_string()
}
