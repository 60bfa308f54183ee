//! Link the unwinder statically on Linux with glibc; and say, as `cfg`s, what the tests
//! need that this machine has (root, tools, kernel features), so a test that cannot run here
//! is compiled `#[ignore]`d with the reason and `cargo test` ends with an honest "N ignored"
//! (`test_gates`; CONTRIBUTING.md, "What the tests need").
//!
//! Rust's standard library links the unwinder as `libgcc_s.so.1` on this target. Loading that
//! one library, whose constructor probes the CPU (slow in a virtual machine), cost 0.1 ms of a
//! 1.25 ms `headroom log-probe` run (bench/log_probe.sh). The same unwinder exists as a static
//! archive, `libgcc_eh.a`, which is what std itself uses when linking fully statically.
//! Linked in whole, it defines every `_Unwind_*` symbol before the linker reaches
//! `-lgcc_s`, which `--as-needed` then leaves out. Panics, backtraces and the test
//! harness's unwinding work as before. One consequence: the archive of a current GCC calls
//! glibc's `_dl_find_object`, so the binary needs the glibc it was built against or newer
//! (2.35 with GCC 12) where it needed 2.34 — moot for a tool built where it runs
//! (`cargo install`, Homebrew), worth knowing for a binary copied elsewhere.
//!
//! Anything unusual — another OS or libc, a static build (std already links `libgcc_eh`
//! then), a cross build, or a toolchain without the archive — leaves the default link alone.

// Cargo reads its instructions from the build script's stdout.
#![allow(clippy::print_stdout)]

use std::env;
use std::path::Path;
use std::process::Command;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=build/test_gates.rs");
    println!("cargo::rerun-if-env-changed=RUSTC_LINKER");
    test_gates();
    link_unwinder();
}

// The test gates: `test_gates` and the tool list, in a file of their own that
// crates/headroom-platform/build.rs includes too.
include!("build/test_gates.rs");

fn link_unwinder() {
    let var = |name: &str| env::var(name).unwrap_or_default();
    let static_crt = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if var("CARGO_CFG_TARGET_OS") != "linux"
        || var("CARGO_CFG_TARGET_ENV") != "gnu"
        || static_crt
        || var("HOST") != var("TARGET")
    {
        return;
    }
    let linker = env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".to_string());
    if archive_found(&linker) {
        println!("cargo::rustc-link-lib=static:-bundle,+whole-archive=gcc_eh");
    } else {
        println!(
            "cargo::warning=libgcc_eh.a not found by `{linker}`: linking the shared unwinder \
             (libgcc_s), which costs start-up time but nothing else"
        );
    }
}

/// Whether the C toolchain that links the binary can find `libgcc_eh.a`: it prints the
/// archive's full path if so, and the bare name otherwise.
fn archive_found(linker: &str) -> bool {
    let Ok(out) = Command::new(linker)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
    else {
        return false;
    };
    let printed = String::from_utf8_lossy(&out.stdout);
    let path = Path::new(printed.trim());
    out.status.success() && path.is_absolute() && path.is_file()
}
