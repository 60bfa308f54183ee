//! Resources an agent can read and subscribe to: the current reading (`probe`), the
//! evidence log over the last day, the hang events, the effective config. Each is the
//! `--json` report of the command that makes it, read the same typed way as a tool's.
//! While a client is subscribed to the reading or the hang events, a thread looks every
//! `WATCH_EVERY` and sends `notifications/resources/updated` when the slot level or the
//! hang events change.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::calls::Outbox;
use super::rpc::RpcError;
use super::tools::Tools;
use crate::config::ToolGroup;

/// Between two looks of the watcher.
const WATCH_EVERY: Duration = Duration::from_secs(2);

pub(crate) const READING: &str = "headroom://reading";
pub(crate) const EVIDENCE: &str = "headroom://evidence/recent";
pub(crate) const HANGS: &str = "headroom://hangs/events";
pub(crate) const CONFIG: &str = "headroom://config";

/// (uri, name, description, the command line that makes it)
const ALL: &[(&str, &str, &str, &[&str])] = &[
    (
        READING,
        "Process slots now",
        "The current process-slot reading (probe, not recorded in the history): level, \
used, limit and which ceiling binds, zombie parents. Updated when the level changes.",
        &["probe", "--no-history"],
    ),
    (
        EVIDENCE,
        "Evidence log, last 24 h",
        "The evidence log's summary over the last 24 hours: peak usage, lowest free slots, \
shortest ETA, cleanups.",
        &["evidence", "--since=24h"],
    ),
    (
        HANGS,
        "GUI hang events",
        "The history of apps macOS marked not responding. Updated when a hang is recorded.",
        &["hangs", "--events"],
    ),
    (
        CONFIG,
        "Effective config",
        "Every setting headroom runs with and where it came from (default, file).",
        &["config"],
    ),
];

/// The resources of one session, and the watcher of the subscribed ones.
pub(crate) struct Resources {
    tools: Arc<Tools>,
    out: Arc<Outbox>,
    subscribed: Arc<Mutex<HashSet<String>>>,
    watching: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl std::fmt::Debug for Resources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resources").finish_non_exhaustive()
    }
}

impl Resources {
    pub(crate) fn new(tools: Arc<Tools>, out: Arc<Outbox>) -> Self {
        Self {
            tools,
            out,
            subscribed: Arc::default(),
            watching: Arc::default(),
            stop: Arc::default(),
            thread: Mutex::new(None),
        }
    }

    /// Resources are read-only views: offered with the read tools.
    fn offered(&self) -> bool {
        self.tools.selection.has(ToolGroup::Read)
    }

    pub(crate) fn list(&self) -> Value {
        let list: Vec<Value> = ALL
            .iter()
            .filter(|_| self.offered())
            .map(|(uri, name, description, _)| {
                json!({"uri": uri, "name": name, "description": description, "mimeType": "application/json"})
            })
            .collect();
        json!({ "resources": list })
    }

    fn find(
        &self,
        params: &Map<String, Value>,
    ) -> Result<
        &'static (
            &'static str,
            &'static str,
            &'static str,
            &'static [&'static str],
        ),
        RpcError,
    > {
        let uri = params
            .get("uri")
            .and_then(Value::as_str)
            .ok_or_else(|| RpcError::invalid_params("`uri` (a string) is required"))?;
        ALL.iter()
            .filter(|_| self.offered())
            .find(|r| r.0 == uri)
            .ok_or_else(|| {
                let mut e = RpcError::new(-32002, format!("resource `{uri}` not found"));
                e.data = Some(json!({"uri": uri}));
                e
            })
    }

    pub(crate) fn read(&self, params: &Map<String, Value>) -> Result<Value, RpcError> {
        let (uri, _, _, argv) = self.find(params)?;
        let text = match self.tools.report_value(argv) {
            Ok(v) => v.to_string(),
            Err(e) => json!({"error": e}).to_string(),
        };
        Ok(json!({"contents": [{"uri": uri, "mimeType": "application/json", "text": text}]}))
    }

    pub(crate) fn subscribe(
        &self,
        params: &Map<String, Value>,
        on: bool,
    ) -> Result<Value, RpcError> {
        let (uri, ..) = self.find(params)?;
        {
            let mut s = self
                .subscribed
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if on {
                s.insert(uri.to_string());
            } else {
                s.remove(*uri);
            }
        }
        if on && !self.watching.swap(true, Ordering::SeqCst) {
            self.start_watcher();
        }
        Ok(json!({}))
    }

    fn start_watcher(&self) {
        let (tools, out, subscribed, stop) = (
            Arc::clone(&self.tools),
            Arc::clone(&self.out),
            Arc::clone(&self.subscribed),
            Arc::clone(&self.stop),
        );
        let h = std::thread::Builder::new()
            .name("mcp-resources".into())
            .spawn(move || watch(&tools, &out, &subscribed, &stop));
        if let Ok(h) = h {
            *self.thread.lock().unwrap_or_else(PoisonError::into_inner) = Some(h);
        }
    }

    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
        let h = self
            .thread
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(h) = h {
            let _ = h.join();
        }
    }
}

/// What a subscriber is told about: the reading's level, the number of hang events.
fn state_of(tools: &Tools, uri: &str) -> Option<String> {
    let (_, _, _, argv) = ALL.iter().find(|r| r.0 == uri)?;
    let v = tools.report_value(argv).ok()?;
    Some(match uri {
        READING => v.get("level").map(Value::to_string).unwrap_or_default(),
        HANGS => v
            .get("events")
            .and_then(Value::as_array)
            .map_or(0, Vec::len)
            .to_string(),
        _ => return None,
    })
}

fn watch(tools: &Tools, out: &Outbox, subscribed: &Mutex<HashSet<String>>, stop: &AtomicBool) {
    let mut last: std::collections::HashMap<String, String> = Default::default();
    while !stop.load(Ordering::SeqCst) {
        let uris: Vec<String> = subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|u| *u == READING || *u == HANGS)
            .cloned()
            .collect();
        for uri in uris {
            let Some(now) = state_of(tools, &uri) else {
                continue;
            };
            let before = last.insert(uri.clone(), now.clone());
            if before.is_some_and(|b| b != now) {
                out.send(&json!({
                    "jsonrpc": "2.0",
                    "method": "notifications/resources/updated",
                    "params": {"uri": uri},
                }));
            }
        }
        // A short nap at a time, so the end of the session is not held up.
        for _ in 0..(WATCH_EVERY.as_millis() / 100) {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
