//! The store: everything headroom keeps in files (uv's `uv-state`/`uv-fs`). Where the files
//! are (`paths`), how they are written (`fsio`: atomic replace, locks, no link followed),
//! and each state file's reading and writing; and the agents' session logs the liveness
//! guard judges (`log_files`). The rules applied to what is stored stay in
//! `core`, which does no file I/O; the store may use `core`'s types and `platform`'s
//! clocks and uid, never `actions`, `commands`, `mcp`, `output` or `cli`.

pub(crate) mod config_file;
pub(crate) mod evidence;
pub(crate) mod fsio;
pub(crate) mod guard;
pub(crate) mod hang_events;
pub(crate) mod log_files;
pub(crate) mod observations;
pub(crate) mod parked;
pub(crate) mod paths;
pub(crate) mod state;
