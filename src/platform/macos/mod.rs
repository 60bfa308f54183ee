//! macOS backend: `sysctl(KERN_PROC_ALL)` for the table, libproc for CPU, footprint and
//! paths, `KERN_PROCARGS2` for argv. The layout and the argv parser are plain data and are
//! compiled (and tested) on every OS; only the calls are gated to macOS, and
//! `../shared/tools/check-macos` type-checks them on Linux.

pub mod kinfo;
pub mod procargs;

#[cfg(target_os = "macos")]
mod live;

#[cfg(target_os = "macos")]
pub use live::MacSource;
