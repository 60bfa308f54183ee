//! The `headroom` binary: everything lives in the library.

fn main() -> std::process::ExitCode {
    headroom::run(std::env::args_os())
}
