//! Pure logic: no syscalls about processes. Everything here is tested against snapshots.

pub mod alerts;
pub mod calibrate;
pub mod chart;
pub mod doctor;
pub mod doctor_notify;
pub mod emergency;
pub mod evidence;
pub mod hang_store;
pub mod hangs;
pub mod idle;
pub mod limits;
pub mod liveness;
pub mod memory;
pub mod memory_guard;
pub mod memory_warn;
pub mod observations;
pub mod parking;
pub mod patterns;
pub mod policy;
pub mod proc_tree;
pub mod reading;
pub mod session_log;
pub mod snapshot;
pub mod state;
pub mod top;
pub mod tree_select;
