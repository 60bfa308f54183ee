//! The store: everything headroom keeps in files (uv's `uv-state`/`uv-fs`). Where the files
//! are (`paths`), how they are written (`fsio`: atomic replace, locks, no link followed),
//! and each state file's reading and writing; and the agents' session logs the liveness
//! guard judges (`log_files`). The rules applied to what is stored stay in
//! `core`, which does no file I/O; the store may use `core`'s types and `platform`'s
//! clocks and uid, never `actions`, `commands`, `mcp`, `output` or `cli`.
//!
//! A crate of its own (`crates/headroom-store`): it depends on `headroom-core` and
//! `headroom-platform` and on no other part of headroom, nor on any system-call crate, so
//! the compiler refuses an upward import from here and a system call of its own
//! (ARCHITECTURE.md). `headroom` names it `crate::store`.

// Every system call is the platform's: the store has no `unsafe` of its own.
#![forbid(unsafe_code)]

/// The pure rules (`crates/headroom-core`): `crate::core::…` paths are that crate's.
use headroom_core as core;
/// The system calls (`crates/headroom-platform`): `crate::platform::…` paths are that
/// crate's public items.
use headroom_platform as platform;

pub mod config_file;
pub mod evidence;
pub mod fsio;
pub mod guard;
pub mod hang_events;
pub mod log_files;
pub mod observations;
pub mod parked;
pub mod paths;
pub mod state;
