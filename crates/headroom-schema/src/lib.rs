//! headroom's documents: `schema` (each printed document's `schema` and `type`, the JSON
//! Schema generator).
//!
//! A crate of its own (`crates/headroom-schema`): it depends on `headroom-core` and on no
//! other part of headroom, nor on any system-call crate, so the compiler refuses an import
//! of the platform, the output or anything above from here (ARCHITECTURE.md). Its module
//! keeps the name the other crates give it (`crate::schema`).

// No system call and no `unsafe`: the schemas are generated from types, not read from the OS.
#![forbid(unsafe_code)]

/// The pure rules (`crates/headroom-core`): `crate::core::…` paths are that crate's.
use headroom_core as core;

pub mod schema;
