//! The recorded-rounds format read by `hangs --observations FILE` (all OSes): replays, bug
//! reports and tests drive the same monitor as the live macOS source.
//!
//! ```json
//! {"rounds": [{"at": "2026-11-30T10:00:00Z", "available": true,
//!   "apps": [{"pid": 501, "bundle_id": "com.example.Editor", "bundle_path":
//!   "/Applications/Editor.app", "name": "Editor", "policy": "regular",
//!   "responsive": false}]}]}
//! ```
//!
//! Required: `rounds`; per round `at` (RFC 3339 UTC), `available`, `apps`; per app `pid`,
//! `bundle_id` (a string or `null`), `bundle_path`, `name`, `policy` (`regular`,
//! `accessory`, `prohibited`), `responsive`. Optional: a round's `reason` (why the
//! interface was unavailable), an app's `start_time`, `uid` and `state` (the process's
//! scheduling state as a snapshot names it: `running`, `sleeping`, `stopped`, `traced`, …;
//! a `stopped` or `traced` app is never recovered). Any other field is ignored.
//! Rounds must be in time order. Every error names the round and app it is about.
//! `store::observations::load` reads the file.

use serde::{Deserialize, Deserializer};

use crate::hangs::{ActivationPolicy, AppObservation, HangRound};
use crate::snapshot::ProcState;
use crate::time::parse_ms;

#[derive(Debug, Deserialize)]
struct RecordedApp {
    pid: i32,
    #[serde(deserialize_with = "required_nullable")]
    bundle_id: Option<String>,
    bundle_path: String,
    name: String,
    policy: ActivationPolicy,
    responsive: bool,
    #[serde(default)]
    start_time: Option<u64>,
    #[serde(default)]
    uid: Option<u32>,
    #[serde(default)]
    state: Option<ProcState>,
}

/// `bundle_id` must be present, but may be `null` (an app without one). Using
/// `deserialize_with` makes serde report a missing field instead of defaulting to `None`.
fn required_nullable<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(d)
}

/// Parse the text of an observations file. Errors read after the file name.
pub fn parse(text: &str) -> Result<Vec<HangRound>, String> {
    if text.trim().is_empty() {
        return Err("is empty".into());
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("is not valid JSON: {e}"))?;
    let rounds = value
        .get("rounds")
        .and_then(|r| r.as_array())
        .ok_or("has no `rounds` array (see `headroom hangs --help`)")?;
    if rounds.is_empty() {
        return Err("has no rounds".into());
    }
    let mut out: Vec<HangRound> = Vec::with_capacity(rounds.len());
    for (i, r) in rounds.iter().enumerate() {
        let here = format!("rounds[{i}]");
        let obj = r
            .as_object()
            .ok_or_else(|| format!("{here}: expected an object"))?;
        let at = obj
            .get("at")
            .ok_or_else(|| format!("{here}: missing field `at`"))?;
        let at_ms = at.as_str().and_then(|s| parse_ms(s).ok()).ok_or_else(|| {
            format!("{here}.at `{at}` is not an RFC 3339 UTC time like `2026-11-30T10:00:00Z`")
        })?;
        if let Some(prev) = out.last() {
            if at_ms < prev.at_ms {
                return Err(format!(
                    "{here}.at `{at}` is earlier than the round before it: rounds must be in time order"
                ));
            }
        }
        let available = obj
            .get("available")
            .ok_or_else(|| format!("{here}: missing field `available`"))?
            .as_bool()
            .ok_or_else(|| format!("{here}.available: expected true or false"))?;
        let apps = obj
            .get("apps")
            .ok_or_else(|| format!("{here}: missing field `apps`"))?
            .as_array()
            .ok_or_else(|| format!("{here}.apps: expected an array"))?;
        let mut observations = Vec::with_capacity(apps.len());
        for (j, a) in apps.iter().enumerate() {
            let app: RecordedApp =
                serde_json::from_value(a.clone()).map_err(|e| format!("{here}.apps[{j}]: {e}"))?;
            observations.push(AppObservation {
                pid: app.pid,
                start_time: app.start_time,
                uid: app.uid,
                bundle_id: app.bundle_id,
                bundle_path: app.bundle_path,
                name: app.name,
                policy: app.policy,
                responsive: app.responsive,
                state: app.state,
            });
        }
        let reason = obj
            .get("reason")
            .and_then(|v| v.as_str())
            .map(str::to_string);
        out.push(HangRound {
            at_ms,
            boot_ms: None,
            available,
            unavailable_reason: if available {
                None
            } else {
                Some(reason.unwrap_or_else(|| "recorded as unavailable".into()))
            },
            apps: if available { observations } else { Vec::new() },
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ONE: &str = r#"{"rounds": [{"at": "2026-11-30T10:00:00Z", "available": true,
        "note": "extra fields are fine",
        "apps": [{"pid": 501, "bundle_id": "com.example.Editor",
                  "bundle_path": "/Applications/Editor.app", "name": "Editor",
                  "policy": "regular", "responsive": false, "extra": 1},
                 {"pid": 502, "bundle_id": null, "bundle_path": "/Applications/Tool.app",
                  "name": "Tool", "policy": "accessory", "responsive": true,
                  "start_time": 42, "uid": 501}]},
        {"at": "2026-11-30T10:00:15Z", "available": false, "apps": []}]}"#;

    #[test]
    fn the_documented_format_parses_with_extra_fields() {
        let r = parse(ONE).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].at_ms, 1_796_032_800_000);
        assert_eq!(r[0].apps[0].identity(), "com.example.Editor");
        assert_eq!(r[0].apps[1].identity(), "/Applications/Tool.app");
        assert_eq!(r[0].apps[1].policy, ActivationPolicy::Accessory);
        assert_eq!(r[0].apps[1].start_time, Some(42));
        assert!(!r[1].available);
        assert_eq!(
            r[1].unavailable_reason.as_deref(),
            Some("recorded as unavailable")
        );
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err()
    }

    #[test]
    fn bad_input_gets_a_message_naming_the_place() {
        assert_eq!(err("  \n"), "is empty");
        assert!(err(&ONE[..ONE.len() / 2]).contains("is not valid JSON"));
        assert!(err("[]").contains("no `rounds` array"));
        assert_eq!(err(r#"{"rounds": []}"#), "has no rounds");
        assert!(
            err(r#"{"rounds": [{"available": true, "apps": []}]}"#)
                .contains("rounds[0]: missing field `at`")
        );
        assert!(
            err(r#"{"rounds": [{"at": "noon", "available": true, "apps": []}]}"#)
                .contains("rounds[0].at `\"noon\"` is not an RFC 3339")
        );
        assert!(
            err(r#"{"rounds": [{"at": "2026-11-30T10:00:00Z", "apps": []}]}"#)
                .contains("missing field `available`")
        );
        assert!(
            err(r#"{"rounds": [{"at": "2026-11-30T10:00:00Z", "available": true}]}"#)
                .contains("missing field `apps`")
        );
        let later_first = r#"{"rounds": [
            {"at": "2026-11-30T10:00:15Z", "available": true, "apps": []},
            {"at": "2026-11-30T10:00:00Z", "available": true, "apps": []}]}"#;
        assert!(err(later_first).contains("rounds[1].at"));
    }

    #[test]
    fn every_app_field_is_required_and_bundle_id_may_be_null_but_not_missing() {
        let full = serde_json::json!({"pid": 501, "bundle_id": null,
            "bundle_path": "/Applications/Editor.app", "name": "Editor",
            "policy": "regular", "responsive": false});
        for field in [
            "pid",
            "bundle_id",
            "bundle_path",
            "name",
            "policy",
            "responsive",
        ] {
            let mut app = full.clone();
            app.as_object_mut().unwrap().remove(field);
            let text = serde_json::json!({"rounds": [{"at": "2026-11-30T10:00:00Z",
                "available": true, "apps": [app]}]})
            .to_string();
            let e = err(&text);
            assert!(
                e.contains("rounds[0].apps[0]") && e.contains(&format!("`{field}`")),
                "{field}: {e}"
            );
        }
        let mut bad_policy = full.clone();
        bad_policy["policy"] = "foreground".into();
        let text = serde_json::json!({"rounds": [{"at": "2026-11-30T10:00:00Z",
            "available": true, "apps": [bad_policy]}]})
        .to_string();
        assert!(err(&text).contains("foreground"));
    }
}
