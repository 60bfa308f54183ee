//! headroom's exit: `exit` (the exit-code table, the error types the commands return, and
//! how an error is reported: its message said once, its `headroom.error/1` document).
//!
//! A crate of its own (`crates/headroom-exit`): it depends on `headroom-core`,
//! `headroom-platform` (the stop signal), `headroom-schema` (the error document) and
//! `headroom-output` (the clipped message) and on no other part of headroom, nor on any
//! system-call crate, so the compiler refuses an import of the store, the command line,
//! the settings, the actions, the commands or the front ends from here (ARCHITECTURE.md).
//! Its module keeps the name the other crates give it (`crate::exit`).

// Every system call is the platform's: `exit` has no `unsafe` of its own.
#![forbid(unsafe_code)]

/// The pure rules (`crates/headroom-core`): `crate::core::…` paths are that crate's.
use headroom_core as core;
/// The Printer's crate (`crates/headroom-output`): `crate::output::…` paths are its
/// `output` module.
use headroom_output::output;
/// The system calls (`crates/headroom-platform`): `crate::platform::…` paths are that
/// crate's public items.
use headroom_platform as platform;
/// The documents' schemas (`crates/headroom-schema`): `crate::schema::…` paths are its
/// `schema` module.
use headroom_schema::schema;

pub mod exit;
