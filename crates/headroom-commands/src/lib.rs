//! headroom's commands: `commands` (one module per subcommand, the dispatch table, and the
//! registry of the JSON documents' schemas).
//!
//! A crate of its own (`crates/headroom-commands`): it depends on every headroom crate below
//! it (`headroom-core`, `-platform`, `-store`, `-schema`, `-output`, `-cli`, `-exit`, `-config`,
//! `-actions`) and on none above, nor on any system-call crate, so the compiler refuses an
//! import of the MCP front end or of the package's `run` from here, and a system call of
//! its own (ARCHITECTURE.md). Its module keeps the name the other crates give it
//! (`crate::commands`).

// Every system call is the platform's: the commands have no `unsafe` of their own.
#![forbid(unsafe_code)]

/// The actions (`crates/headroom-actions`).
use headroom_actions::actions;
/// The command line (`crates/headroom-cli`): its clap types and value parsers.
use headroom_cli::cli;
/// Each subcommand's examples, beside the clap types.
use headroom_cli::cli_help;
/// The settings (`crates/headroom-config`).
use headroom_config::config;
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

pub mod commands;
