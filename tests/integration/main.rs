//! Integration tests: the real binary, real processes, recorded snapshots. Modules that need
//! Linux (/proc, cgroups, PSI, a subreaper to catch orphans, setpriv) are gated to it; `park`
//! and `run` run on macOS too (the fixture supervises there without a subreaper, and the
//! helpers read `ps`), except the tests in them that need Linux, each gated where it is.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unsafe_code,
    unreachable_pub
)]

#[cfg(target_os = "linux")]
mod bench_scripts;
#[cfg(target_os = "linux")]
mod cleanup_reporting;
mod cli;
#[cfg(target_os = "linux")]
mod config_trust;
mod contract;
#[cfg(target_os = "linux")]
mod doc_commands;
mod doctor;
mod evidence;
mod evidence_chart;
mod evidence_svg_out;
mod faults;
mod generated;
#[cfg(target_os = "linux")]
mod guard_chain;
mod guardrails;
mod hangs;
mod interface;
#[cfg(target_os = "linux")]
mod json_conventions;
mod json_schemas;
mod layers;
mod limits;
#[cfg(target_os = "linux")]
mod liveness;
mod log_probe;
#[cfg(target_os = "linux")]
mod mcp;
mod narrow;
mod one_liners;
mod park;
#[cfg(target_os = "linux")]
mod pressure;
mod probe;
#[cfg(target_os = "linux")]
mod probe_figure;
mod probe_messages;
mod progress;
#[cfg(target_os = "linux")]
mod reap;
#[cfg(target_os = "linux")]
mod reap_decisions;
#[cfg(target_os = "linux")]
mod reap_safety;
mod run;
#[cfg(target_os = "linux")]
mod run_kernel;
#[cfg(target_os = "linux")]
mod run_lifetime;
#[cfg(target_os = "linux")]
mod run_warn;
mod schema;
#[cfg(target_os = "linux")]
mod screens;
#[cfg(target_os = "linux")]
mod service;
#[cfg(target_os = "linux")]
mod snapshot;
mod support;
#[cfg(target_os = "linux")]
mod top;
#[cfg(target_os = "linux")]
mod unwritable_state;
mod watch;
mod watch_parked;
#[cfg(target_os = "linux")]
mod watch_rounds;
#[cfg(target_os = "linux")]
mod watch_terminal;
#[cfg(unix)]
mod workflows;
