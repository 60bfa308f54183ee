//! headroom's rules as functions over data: what the platform read (a process table, the
//! ceilings, a log's bytes) goes in, a decision comes out. No file system, no clock (`now` is
//! an argument), no system call and no crate that makes one: the compiler keeps it so, since
//! this crate depends on nothing that could (ARCHITECTURE.md). Everything here is tested
//! against recorded snapshots and rounds. The `headroom` crate re-exports it as
//! `headroom::core`.

#![forbid(unsafe_code)]

pub mod alerts;
pub mod calibrate;
pub mod chart;
pub mod doctor;
pub mod doctor_notify;
pub mod emergency;
pub mod evidence_csv;
pub mod hang_event;
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
pub mod pid_map;
pub mod policy;
pub mod proc_tree;
pub mod process_table;
pub mod program_path;
pub mod reading;
pub mod reap_plan;
pub mod round_plan;
pub mod sanitize;
pub mod serialize;
pub mod session_log;
pub mod slot_reading;
pub mod snapshot;
pub mod state_rules;
pub mod time;
pub mod top;
pub mod tree_select;
