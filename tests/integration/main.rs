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
mod evidence;
mod generated;
mod guardrails;
mod hangs;
mod limits;
#[cfg(target_os = "linux")]
mod liveness;
mod log_probe;
#[cfg(target_os = "linux")]
mod park;
mod probe;
#[cfg(target_os = "linux")]
mod reap;
#[cfg(target_os = "linux")]
mod reap_safety;
#[cfg(target_os = "linux")]
mod run;
mod schema;
#[cfg(target_os = "linux")]
mod snapshot;
mod support;
#[cfg(target_os = "linux")]
mod top;
mod watch;
