//! JSON-RPC 2.0 as MCP uses it over stdio: one message per line, requests (with an id),
//! notifications (without) and the error codes headroom answers with.

use serde_json::{Map, Value, json};

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// 2026-07-28: the request's `_meta` names a protocol version this server does not speak.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// An error answered in place of a result.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub(crate) fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub(crate) fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(INVALID_PARAMS, message)
    }
}

/// One incoming message.
#[derive(Debug, PartialEq)]
pub(crate) enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Map<String, Value>,
    },
    Notification {
        method: String,
        params: Map<String, Value>,
    },
    /// A response to a request of ours: headroom sends none, so it is ignored.
    Response,
}

/// Parse one line. An error carries the id when one could be read (else null).
pub(crate) fn parse(line: &[u8]) -> Result<Incoming, (Value, RpcError)> {
    let v: Value = serde_json::from_slice(line).map_err(|e| {
        (
            Value::Null,
            RpcError::new(PARSE_ERROR, format!("not JSON: {e}")),
        )
    })?;
    parse_value(v)
}

/// One message already read as JSON (a line, or one element of a batch).
pub(crate) fn parse_value(v: Value) -> Result<Incoming, (Value, RpcError)> {
    let Value::Object(mut obj) = v else {
        return Err((
            Value::Null,
            RpcError::new(INVALID_REQUEST, "not a JSON-RPC object"),
        ));
    };
    let id = obj.remove("id");
    let bad = |id: &Option<Value>, msg: &str| {
        (
            id.clone().unwrap_or(Value::Null),
            RpcError::new(INVALID_REQUEST, msg),
        )
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(bad(&id, "`jsonrpc` must be \"2.0\""));
    }
    if id
        .as_ref()
        .is_some_and(|i| !(i.is_string() || i.is_i64() || i.is_u64()))
    {
        return Err(bad(&None, "`id` must be a string or an integer"));
    }
    let method = match obj.remove("method") {
        Some(Value::String(m)) => m,
        Some(_) => return Err(bad(&id, "`method` must be a string")),
        None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
            return Ok(Incoming::Response);
        }
        None => return Err(bad(&id, "no `method`")),
    };
    let params = match obj.remove("params") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(p)) => p,
        Some(_) => {
            return Err((
                id.unwrap_or(Value::Null),
                RpcError::invalid_params("`params` must be an object"),
            ));
        }
    };
    Ok(match id {
        Some(id) => Incoming::Request { id, method, params },
        None => Incoming::Notification { method, params },
    })
}

/// The top-level `id` of a message of which only the start was kept (it was too long to
/// read whole), when that start holds it: a string or an integer, at depth one, outside
/// any string. Null otherwise.
pub(crate) fn id_in_prefix(prefix: &[u8]) -> Value {
    let mut depth = 0usize;
    let mut i = 0;
    // Whether the string that just ended was a key at depth one named `id`.
    let mut key_is_id = false;
    while i < prefix.len() {
        match prefix[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < prefix.len() && prefix[j] != b'"' {
                    j += if prefix[j] == b'\\' { 2 } else { 1 };
                }
                if j >= prefix.len() {
                    return Value::Null;
                }
                key_is_id = depth == 1 && &prefix[start..j] == b"id";
                i = j + 1;
                continue;
            }
            b':' if key_is_id => {
                let rest = &prefix[i + 1..];
                let end = rest
                    .iter()
                    .position(|b| matches!(b, b',' | b'}'))
                    .unwrap_or(rest.len());
                return match serde_json::from_slice::<Value>(&rest[..end]) {
                    Ok(v) if v.is_string() || v.is_i64() || v.is_u64() => v,
                    _ => Value::Null,
                };
            }
            b' ' | b'\t' | b'\r' | b'\n' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        key_is_id = false;
        i += 1;
    }
    Value::Null
}

pub(crate) fn result(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

pub(crate) fn error(id: Value, e: RpcError) -> Value {
    let mut err = json!({"code": e.code, "message": e.message});
    if let Some(d) = e.data {
        err["data"] = d;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": err})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(line: &str) -> (Value, i64) {
        let (id, e) = parse(line.as_bytes()).unwrap_err();
        (id, e.code)
    }

    #[test]
    fn requests_notifications_and_responses() {
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).unwrap(),
            Incoming::Request {
                id: json!(7),
                method: "ping".into(),
                params: Map::new()
            }
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).unwrap(),
            Incoming::Notification {
                method: "notifications/initialized".into(),
                params: Map::new()
            }
        );
        assert_eq!(
            parse(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap(),
            Incoming::Response
        );
    }

    #[test]
    fn malformed_messages_get_the_code_json_rpc_names() {
        assert_eq!(code("{not json"), (Value::Null, PARSE_ERROR));
        assert_eq!(code("42"), (Value::Null, INVALID_REQUEST));
        assert_eq!(
            code(r#"{"id":1,"method":"ping"}"#),
            (json!(1), INVALID_REQUEST)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#),
            (Value::Null, INVALID_REQUEST)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":2,"method":5}"#),
            (json!(2), INVALID_REQUEST)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}"#),
            (json!(3), INVALID_PARAMS)
        );
    }

    #[test]
    fn the_id_of_a_message_too_long_to_read_is_found_in_its_start() {
        let long = |head: &str| format!("{head}{}", "x".repeat(100));
        let id = |s: &str| id_in_prefix(s.as_bytes());
        assert_eq!(
            id(&long(
                r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"a":""#
            )),
            json!(8)
        );
        assert_eq!(
            id(&long(r#"{"id" : "req-1", "method":"x","#)),
            json!("req-1")
        );
        // An `id` deeper down, or inside a string, is not the message's.
        assert_eq!(id(&long(r#"{"params":{"id":5},"x":""#)), Value::Null);
        assert_eq!(id(&long(r#"{"method":"\"id\":7","#)), Value::Null);
        // Control: nothing readable gives null.
        assert_eq!(
            id(&long(r#"{"method":"tools/call","params":{"deny":[""#)),
            Value::Null
        );
    }
}
