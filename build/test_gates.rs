// The test gates (`hr_*` cfgs), shared by the build scripts of `headroom` (build.rs) and
// `headroom-platform` (crates/headroom-platform/build.rs), whose unit tests use the same
// gates: each `include!`s this file, which needs `std::env`, `std::path::Path` and
// `std::process::Command` in scope.

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
