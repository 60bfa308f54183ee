//! macOS backend: `sysctl(KERN_PROC_ALL)` for the table, libproc for CPU, footprint and
//! paths, `KERN_PROCARGS2` for argv; for `hangs`, the running GUI apps from LaunchServices
//! and their responsiveness from the WindowServer (private calls resolved at run time, see
//! `apps_ffi.rs`). The layouts, symbol tables and parsers are plain data and are compiled
//! (and tested) on every OS; only the calls are gated to macOS, and
//! `../shared/tools/check-macos` type-checks them on Linux.

// `unsafe` here: the macOS backend is FFI (libproc, sysctl, Mach, CoreFoundation) with no
// safe crate.
#![allow(unsafe_code)]
// The data and parsers below are compiled everywhere for their tests; only the macOS
// backend calls them.
#![cfg_attr(not(target_os = "macos"), allow(dead_code))]

pub(crate) mod apps_ffi;
pub(crate) mod boot;
pub(crate) mod kinfo;
// `.ci/macos-layout.c`'s generator, run by its test only (scripts/generate.sh blesses it).
#[cfg_attr(not(test), allow(dead_code, reason = "the generator runs in its test"))]
pub(crate) mod layout;
pub(crate) mod libproc;
pub(crate) mod procargs;
pub(crate) mod vnode;

#[cfg(target_os = "macos")]
pub(crate) mod apps;
#[cfg(target_os = "macos")]
mod cf;
#[cfg(target_os = "macos")]
mod kernel_reads;
#[cfg(target_os = "macos")]
mod live;
#[cfg(target_os = "macos")]
pub(crate) mod pressure;

#[cfg(target_os = "macos")]
pub(crate) use live::MacSource;
