//! headroom's second front end: `mcp` (`headroom mcp`, the Model Context Protocol server
//! that runs the commands as tools, resources and prompts over stdio).
//!
//! A crate of its own (`crates/headroom-mcp`): it depends on the headroom crates below it
//! (`headroom-core`, `-platform`, `-schema`, `-output`, `-cli`, `-exit`, `-config`, `-actions`,
//! `-commands`) and on none above, nor on any system-call crate, so the compiler refuses an
//! import of the package's `run` from here, and a system call of its own (ARCHITECTURE.md).
//! Its module keeps the name the package gives it (`crate::mcp`).

// Every system call is the platform's: the front end has no `unsafe` of its own.
#![forbid(unsafe_code)]

/// The actions (`crates/headroom-actions`).
use headroom_actions::actions;
/// The command line (`crates/headroom-cli`): its clap types and value parsers.
use headroom_cli::cli;
/// The commands (`crates/headroom-commands`), run as tools.
use headroom_commands::commands;
/// The settings (`crates/headroom-config`).
use headroom_config::config;
/// The pure rules (`crates/headroom-core`): `crate::core::…` paths are that crate's.
use headroom_core as core;
/// The exit-code table and the error types (`crates/headroom-exit`).
use headroom_exit::exit;
/// The Printer (`crates/headroom-output`): `crate::output::…` paths are its `output`
/// module.
use headroom_output::output;
/// The system calls (`crates/headroom-platform`).
use headroom_platform as platform;
/// The documents' schemas (`crates/headroom-schema`): `crate::schema::…` paths are its
/// `schema` module.
use headroom_schema::schema;

pub mod mcp;
