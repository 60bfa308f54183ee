//! What headroom prints and how: `output` (the Printer, the only writer of stdout and
//! stderr; formatting; the queued writer; the spinner and countdown) and `schema` (each
//! printed document's `schema` and `type`, the JSON Schema generator).
//!
//! A crate of its own (`crates/headroom-output`): it depends on `headroom-core` and
//! `headroom-platform` and on no other part of headroom, nor on any system-call crate, so
//! the compiler refuses an import of `exit`, the commands or the actions from here
//! (ARCHITECTURE.md). Its two modules keep the names the main crate gives them
//! (`crate::output`, `crate::schema`), so a path reads the same inside and outside.

// Every system call is the platform's: the output has no `unsafe` of its own.
#![forbid(unsafe_code)]

/// The pure rules (`crates/headroom-core`): `crate::core::…` paths are that crate's.
use headroom_core as core;
/// The system calls (`crates/headroom-platform`): `crate::platform::…` paths are that
/// crate's public items.
use headroom_platform as platform;

pub mod output;
pub mod schema;
