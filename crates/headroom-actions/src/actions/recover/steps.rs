//! The steps of a recovery sequence (`recover.rs`), as planned (`--dry-run`,
//! `--observations`: every `result` is `None`) or as performed, in the order taken. They
//! are what `hangs` reports, in JSON and, through `describe`, for people.

use std::time::Duration;

use serde::Serialize;

/// One step of a sequence: planned (every `result` is null) or performed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[schemars(rename = "Step")]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum RecoveryStep {
    Signal {
        signal: String,
        pid: i32,
        condition: Option<String>,
        result: Option<String>,
    },
    WaitExit {
        pid: i32,
        up_to_ms: u64,
        result: Option<String>,
    },
    Exec {
        argv: Vec<String>,
        condition: Option<String>,
        result: Option<String>,
    },
    WaitReplacement {
        executable_under: String,
        up_to_ms: u64,
        result: Option<String>,
    },
}

impl RecoveryStep {
    /// One line for people.
    pub fn describe(&self) -> String {
        let (text, cond, result) = match self {
            Self::Signal {
                signal,
                pid,
                condition,
                result,
            } => (format!("{signal} pid {pid}"), condition, result),
            Self::WaitExit {
                pid,
                up_to_ms,
                result,
            } => (
                format!("wait up to {} for pid {pid} to exit", secs(*up_to_ms)),
                &None,
                result,
            ),
            Self::Exec {
                argv,
                condition,
                result,
            } => (argv.join(" "), condition, result),
            Self::WaitReplacement {
                executable_under,
                up_to_ms,
                result,
            } => (
                format!(
                    "wait up to {} for a replacement pid under {executable_under}",
                    secs(*up_to_ms)
                ),
                &None,
                result,
            ),
        };
        let mut s = text;
        if let Some(c) = cond {
            s = format!("{s} ({c})");
        }
        if let Some(r) = result {
            s = format!("{s}: {r}");
        }
        s
    }
}

pub(crate) fn secs(ms: u64) -> String {
    if ms % 1000 == 0 {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

pub(crate) fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
