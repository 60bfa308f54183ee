//! headroom's command line: `cli` (the clap types and the value parsers) and `cli_help`
//! (each subcommand's examples, the help's last section).
//!
//! A crate of its own (`crates/headroom-cli`): it depends on `headroom-output` (the colour
//! choice) and on no other part of headroom, nor on any system-call crate, so the compiler
//! refuses an import of the platform, the store, the schema (the output crate does not
//! re-export it), `exit`, the settings, the actions, the commands or the front ends from
//! here (ARCHITECTURE.md). Its two modules keep the names the other crates give them
//! (`crate::cli`, `crate::cli_help`), so a path reads the same inside and outside.

// No system call and no `unsafe`: the command line is parsed, not acted on.
#![forbid(unsafe_code)]

/// The Printer's crate (`crates/headroom-output`): `crate::output::…` paths are its
/// `output` module.
use headroom_output::output;

pub mod cli;
pub mod cli_help;
