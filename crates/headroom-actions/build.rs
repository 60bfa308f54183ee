//! Say, as `cfg`s, what the actions' unit tests need that this machine has (the login
//! item's unit file is verified by `systemd-analyze` where it is installed), so a test
//! that cannot run here is compiled `#[ignore]`d with the reason. The same gates as the
//! `headroom` package's (its build.rs and CONTRIBUTING.md, "What the tests need"), from the
//! same file.

// Cargo reads its instructions from the build script's stdout.
#![allow(clippy::print_stdout)]

use std::env;
use std::path::Path;
use std::process::Command;

include!("../../build/test_gates.rs");

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=../../build/test_gates.rs");
    test_gates();
}
