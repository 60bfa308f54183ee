//! The `headroom` binary: everything lives in the library.
//!
//! `no_main` on Unix: the C runtime calls `main` below directly, skipping Rust's runtime
//! start-up, which on Linux reads `/proc/self/maps` at every start to guard the main thread's
//! stack — 0.12 ms of a 1.15 ms `log-probe` run (bench/log_probe.sh). What of that start-up
//! headroom relies on (fds 0–2 open, SIGPIPE ignored) is `platform::start`; stdout is
//! flushed here before returning, as std's runtime would.
#![cfg_attr(unix, no_main)]

/// # Safety
///
/// Called by the C runtime only, with its own `argc` and `argv`.
#[cfg(unix)]
#[allow(
    unsafe_code,
    reason = "the C entry point is exported unmangled and reads argv"
)]
#[unsafe(no_mangle)]
unsafe extern "C" fn main(
    argc: std::ffi::c_int,
    argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    use std::io::Write as _;

    use headroom::{args_from_c, prepare};

    if let Err(e) = prepare() {
        // fd 2 is the caller's stderr, /dev/null or closed (the write then fails
        // harmlessly): no file of headroom's can hold it yet. Nothing is done, and the exit
        // status is a safety refusal's (for probe: unknown, not critical).
        let _ = writeln!(
            std::io::stderr(),
            "headroom: error: cannot start safely: {e}"
        );
        return std::ffi::c_int::from(headroom::ExitStatus::Refused.code());
    }
    // SAFETY: the C runtime passes main its own argc and argv.
    let args = unsafe { args_from_c(argc, argv) };
    let status = headroom::run(args);
    let _ = std::io::stdout().flush();
    std::ffi::c_int::from(status.code())
}

#[cfg(not(unix))]
fn main() -> std::process::ExitCode {
    headroom::run(std::env::args_os()).into()
}
