//! Pure logic: no syscalls about processes. Everything here is tested against snapshots.

pub mod hang_eligibility;
pub mod hang_store;
pub mod hangs;
pub mod limits;
pub mod observations;
pub mod reading;
pub mod snapshot;
pub mod state;
