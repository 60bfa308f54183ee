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
    println!("cargo::rerun-if-env-changed=RUSTC_LINKER");
    test_gates();
    link_unwinder();
}

/// The tools tests run, each gated on `hr_tool_NAME` (`-` read as `_`).
const TOOLS: &[&str] = &[
    "bash",
    "faketime",
    "fish",
    "groff",
    "jq",
    "mandoc",
    "prlimit",
    "rsvg-convert",
    "ruby",
    "script",
    "setpriv",
    "strace",
    "systemd-analyze",
    "tmux",
    "unshare",
    "zsh",
];

/// Emit `hr_root`, `hr_tool_*`, `hr_mcp_python`, `hr_psi` and `hr_pidfd_info` for what this
/// machine has. With `HEADROOM_REQUIRE_TOOLS` set (`.ci/run`) every gate is open: the tests
/// are compiled to run, and a missing requirement fails its test (`tests/integration/
/// support.rs`'s `require_*`) instead of being ignored.
fn test_gates() {
    let names: Vec<String> = TOOLS.iter().map(|t| gate_name(t)).collect();
    println!(
        "cargo::rustc-check-cfg=cfg(hr_root, hr_mcp_python, hr_psi, hr_pidfd_info, {})",
        names.join(", ")
    );
    // What the answers depend on. A change of user is not an environment change cargo sees
    // when HOME and USER stay (`setpriv`); the tests check at run time and fail, saying to
    // rebuild, where the build's answer no longer holds.
    for v in [
        "HEADROOM_REQUIRE_TOOLS",
        "HEADROOM_MCP_PYTHON",
        "PATH",
        "USER",
        "LOGNAME",
        "HOME",
        "SUDO_UID",
    ] {
        println!("cargo::rerun-if-env-changed={v}");
    }
    let path = env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<_> = env::split_paths(&path).collect();
    // A tool installed or removed changes its directory's mtime.
    for d in &dirs {
        if d.is_dir() {
            println!("cargo::rerun-if-changed={}", d.display());
        }
    }
    let all = env::var_os("HEADROOM_REQUIRE_TOOLS").is_some();
    let on = |gate: &str, have: bool| {
        if all || have {
            println!("cargo::rustc-cfg={gate}");
        }
    };
    on("hr_root", is_root());
    for (tool, gate) in TOOLS.iter().zip(&names) {
        on(gate, dirs.iter().any(|d| is_executable(&d.join(tool))));
    }
    let mcp = env::var_os("HEADROOM_MCP_PYTHON");
    on("hr_mcp_python", mcp.is_some_and(|p| Path::new(&p).exists()));
    on("hr_psi", Path::new("/proc/pressure/memory").exists());
    on("hr_pidfd_info", kernel_at_least(6, 13));
}

fn gate_name(tool: &str) -> String {
    format!("hr_tool_{}", tool.replace('-', "_"))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether the build runs as root (the tests run as the same user: `cargo test`). `id -u`,
/// since a build script has no libc of its own here.
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Linux's release, as `/proc/sys/kernel/osrelease` says it, is at least `major.minor`.
fn kernel_at_least(major: u32, minor: u32) -> bool {
    let Ok(text) = std::fs::read_to_string("/proc/sys/kernel/osrelease") else {
        return false;
    };
    let mut parts = text
        .trim()
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let have = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    have >= (major, minor)
}

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
