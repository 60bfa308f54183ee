//! Pure logic: no syscalls about processes. Everything here is tested against snapshots.

pub mod alerts;
pub mod emergency;
pub mod evidence;
pub mod limits;
pub mod liveness;
pub mod patterns;
pub mod policy;
pub mod reading;
pub mod session_log;
pub mod snapshot;
pub mod state;
