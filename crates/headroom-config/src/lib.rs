//! headroom's settings: `config` (the config file's sections read into `Settings`, and each
//! command's plan from its flags and the file).
//!
//! A crate of its own (`crates/headroom-config`): it depends on `headroom-core`,
//! `headroom-store` (where the file is), `headroom-cli` (the value parsers) and
//! `headroom-exit` (the usage error) and on no other part of headroom, nor on any
//! system-call crate, so the compiler refuses an import of the platform, the output, the
//! actions, the commands or the front ends from here (ARCHITECTURE.md). Its module keeps
//! the name the other crates give it (`crate::config`).

// No system call and no `unsafe`: the settings are read through the store.
#![forbid(unsafe_code)]

/// The command line (`crates/headroom-cli`): `crate::cli::…` paths are its module.
use headroom_cli::cli;
/// The pure rules (`crates/headroom-core`): `crate::core::…` paths are that crate's.
use headroom_core as core;
/// The sanitizer, where the main crate's root re-exports it.
use headroom_core::sanitize;
/// The exit-code table and the error types (`crates/headroom-exit`).
use headroom_exit::exit;
/// The files headroom keeps (`crates/headroom-store`).
use headroom_store as store;

pub mod config;
