//! headroom's actions: `actions` (what changes the world, always on a decision the core
//! made and through `platform::ProcessControl`, which re-checks identity before each
//! signal; the only places headroom execs other programs).
//!
//! A crate of its own (`crates/headroom-actions`): it depends on `headroom-core`,
//! `headroom-platform`, `headroom-store`, `headroom-schema`, `headroom-output` and
//! `headroom-exit` and on no other part of headroom, nor on any system-call crate, so the
//! compiler refuses an import of the command line, the settings, the commands or the front
//! ends from here, and a system call of its own (ARCHITECTURE.md). Its module keeps the
//! name the other crates give it (`crate::actions`).

// Every system call is the platform's: the actions have no `unsafe` of their own.
#![forbid(unsafe_code)]

/// The pure rules (`crates/headroom-core`): `crate::core::…` paths are that crate's.
use headroom_core as core;
/// The sanitizer, where the main crate's root re-exports it.
use headroom_core::sanitize;
/// The exit-code table and the error types (`crates/headroom-exit`).
use headroom_exit::exit;
/// An error's causes, each said once (`crate::exit::said_once`).
use headroom_exit::exit::said_once;
/// The Printer (`crates/headroom-output`): `crate::output::…` paths are its `output`
/// module.
use headroom_output::output;
/// The system calls (`crates/headroom-platform`).
use headroom_platform as platform;
/// The documents' schemas (`crates/headroom-schema`): `crate::schema::…` paths are its
/// `schema` module.
use headroom_schema::schema;
/// The files headroom keeps (`crates/headroom-store`).
use headroom_store as store;

pub mod actions;
