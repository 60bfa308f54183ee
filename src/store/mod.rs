//! The store: everything headroom keeps in files (uv's `uv-state`/`uv-fs`). Where the files
//! are (`paths`), how they are written (`fsio`: atomic replace, locks, no link followed),
//! and each state file's reading and writing; and the agents' session logs the liveness
//! guard judges (`log_files`). The rules applied to what is stored stay in
//! `core`, which does no file I/O; the store may use `core`'s types and `platform`'s
//! clocks and uid, never `actions`, `commands`, `mcp`, `output` or `cli`.

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
