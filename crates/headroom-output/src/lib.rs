//! What headroom prints and how: `output` (the Printer, the only writer of stdout and
//! stderr; formatting; the queued writer; the spinner and countdown).
//!
//! A crate of its own (`crates/headroom-output`): it depends on `headroom-core`,
//! `headroom-platform` and `headroom-schema` and on no other part of headroom, nor on any
//! system-call crate, so the compiler refuses an import of `exit`, the commands or the
//! actions from here (ARCHITECTURE.md). Its module keeps the name the other crates give it
//! (`crate::output`), so a path reads the same inside and outside.

// Every system call is the platform's: the output has no `unsafe` of its own.
#![forbid(unsafe_code)]

/// The pure rules (`crates/headroom-core`): `crate::core::…` paths are that crate's.
use headroom_core as core;
/// The system calls (`crates/headroom-platform`): `crate::platform::…` paths are that
/// crate's public items.
use headroom_platform as platform;
/// The documents' schemas (`crates/headroom-schema`): `crate::schema::…` paths are its
/// `schema` module.
use headroom_schema::schema;

pub mod output;
