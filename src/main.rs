//! The `headroom` binary: everything lives in the library.
//!
//! `no_main` on glibc Linux and macOS: the C runtime calls `main` below directly, skipping
//! Rust's runtime start-up, which on Linux reads `/proc/self/maps` at every start to guard
//! the main thread's stack — 0.12 ms of a 1.15 ms `log-probe` run (bench/log_probe.sh). What
//! of that start-up headroom relies on (fds 0–2 open, SIGPIPE ignored) is `platform::start`;
//! stdout is flushed here before returning, as std's runtime would. The arguments are
//! `std::env::args_os`, which on these two std fills without its runtime (glibc hands
//! `argv` to std's `.init_array` hook; macOS has `_NSGetArgv`), so nothing here reads the
//! C `argv` by pointer. Elsewhere (musl, the BSDs, Windows) std's own `main` runs.
#![cfg_attr(
    any(all(target_os = "linux", target_env = "gnu"), target_os = "macos"),
    no_main
)]

/// The C entry point. Its arguments are the C runtime's `argc` and `argv`, left unread:
/// std has them already (see the top of this file).
#[cfg(any(all(target_os = "linux", target_env = "gnu"), target_os = "macos"))]
#[allow(
    unsafe_code,
    reason = "the C entry point is exported unmangled, which `unsafe_code` flags"
)]
#[unsafe(no_mangle)]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    use std::io::Write as _;

    if let Err(e) = headroom::prepare() {
        // fd 2 is the caller's stderr, /dev/null or closed (the write then fails
        // harmlessly): no file of headroom's can hold it yet. Nothing is done, and the exit
        // status is a safety refusal's (for probe: unknown, not critical).
        let _ = writeln!(
            std::io::stderr(),
            "headroom: error: cannot start safely: {e}"
        );
        return std::ffi::c_int::from(headroom::ExitStatus::Refused.code());
    }
    let status = headroom::run(std::env::args_os());
    let _ = std::io::stdout().flush();
    std::ffi::c_int::from(status.code())
}

/// std's runtime has made fds 0–2 safe and ignored SIGPIPE already; `prepare` still notes
/// the parent at start (`run --die-with-parent`).
#[cfg(all(
    unix,
    not(any(all(target_os = "linux", target_env = "gnu"), target_os = "macos"))
))]
fn main() -> std::process::ExitCode {
    if let Err(e) = headroom::prepare() {
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "headroom: error: cannot start safely: {e}"
        );
        return std::process::ExitCode::from(headroom::ExitStatus::Refused.code());
    }
    headroom::run(std::env::args_os()).into()
}

#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    headroom::run(std::env::args_os()).into()
}
