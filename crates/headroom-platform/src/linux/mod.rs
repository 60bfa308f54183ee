//! Linux backend: reads `/proc` and `/sys/fs/cgroup` directly (no `ps`, no fork). The roots
//! are injectable (`--proc-root`, `--sys-root`) so tests can point it at a fake tree.

// `procfs` (pure parsers) and `Roots` are compiled everywhere for their tests; only the
// Linux backend calls them.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

pub(crate) mod procfs;

#[cfg(target_os = "linux")]
pub mod cgroup;

#[cfg(target_os = "linux")]
mod ceilings;
#[cfg(target_os = "linux")]
mod hidepid;
#[cfg(target_os = "linux")]
mod kept_ceilings;
#[cfg(target_os = "linux")]
mod listing;
#[cfg(target_os = "linux")]
mod live;
#[cfg(target_os = "linux")]
mod one_shot;
#[cfg(target_os = "linux")]
mod pidfd_info;
#[cfg(target_os = "linux")]
mod read;
#[cfg(target_os = "linux")]
mod records;
#[cfg(target_os = "linux")]
pub(crate) mod slots;
#[cfg(target_os = "linux")]
mod tree;
#[cfg(target_os = "linux")]
pub(crate) mod wait_set;

#[cfg(target_os = "linux")]
pub use live::LinuxSource;

use std::path::PathBuf;

/// Where `/proc` and `/sys` are mounted.
#[derive(Debug, Clone)]
pub struct Roots {
    pub proc: PathBuf,
    pub sys: PathBuf,
}

impl Default for Roots {
    fn default() -> Self {
        Self {
            proc: PathBuf::from("/proc"),
            sys: PathBuf::from("/sys"),
        }
    }
}
