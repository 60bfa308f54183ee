//! The backend for operating systems headroom does not know: every call says so plainly.

// The backend of the other OSes, compiled everywhere so that it keeps compiling.
#![cfg_attr(any(target_os = "linux", target_os = "macos"), allow(dead_code))]

use crate::core::snapshot::{Detail, Identity, MemoryTotals, ProcessRecord, Snapshot};
use crate::{Delivery, PlatformError, ProcessControl, ProcessSource, Signal};

#[derive(Debug, Clone, Copy)]
pub(crate) struct Unsupported;

fn err(what: &str) -> PlatformError {
    PlatformError::Unsupported {
        os: std::env::consts::OS,
        what: what.to_string(),
    }
}

impl ProcessSource for Unsupported {
    fn os(&self) -> &str {
        std::env::consts::OS
    }
    fn snapshot(&self, _detail: Detail) -> Result<Snapshot, PlatformError> {
        Err(err("reading the process table"))
    }
    fn process(&self, _pid: i32) -> Result<Option<ProcessRecord>, PlatformError> {
        Err(err("reading a process"))
    }
    fn argv(&self, _pid: i32) -> Result<Vec<String>, PlatformError> {
        Err(err("reading arguments"))
    }
    fn memory(&self) -> Result<MemoryTotals, PlatformError> {
        Err(err("reading memory totals"))
    }
}

impl ProcessControl for Unsupported {
    fn signal(&self, _target: &Identity, _sig: Signal) -> Result<Delivery, PlatformError> {
        Err(err("sending signals"))
    }
    fn alive(&self, _target: &Identity) -> Result<bool, PlatformError> {
        Err(err("checking a process"))
    }
}
