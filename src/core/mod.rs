//! Pure logic: no syscalls about processes. Everything here is tested against snapshots.

pub mod limits;
pub mod reading;
pub mod session_log;
pub mod snapshot;
pub mod state;
