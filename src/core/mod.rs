//! Pure logic: no syscalls about processes. Everything here is tested against snapshots.

pub mod calibrate;
pub mod idle;
pub mod limits;
pub mod memory;
pub mod parking;
pub mod reading;
pub mod snapshot;
pub mod state;
pub mod top;
