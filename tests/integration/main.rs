//! Integration tests: the real binary, real processes (Linux), recorded snapshots.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unsafe_code,
    unreachable_pub
)]

mod cli;
mod doctor;
mod evidence;
mod evidence_chart;
mod faults;
mod generated;
mod guardrails;
mod hangs;
mod interface;
mod limits;
#[cfg(target_os = "linux")]
mod liveness;
mod log_probe;
#[cfg(target_os = "linux")]
mod mcp;
#[cfg(target_os = "linux")]
mod park;
#[cfg(target_os = "linux")]
mod pressure;
mod probe;
#[cfg(target_os = "linux")]
mod reap;
#[cfg(target_os = "linux")]
mod reap_safety;
#[cfg(target_os = "linux")]
mod run;
#[cfg(target_os = "linux")]
mod run_kernel;
#[cfg(target_os = "linux")]
mod run_warn;
mod schema;
#[cfg(target_os = "linux")]
mod snapshot;
mod support;
#[cfg(target_os = "linux")]
mod top;
mod watch;
