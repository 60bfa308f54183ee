//! Parser for the `sysctl(KERN_PROCARGS2)` buffer, and what a failed read means (compiled
//! on every OS, tested on Linux).
//!
//! Layout (reference notes §1c, xnu `kern_sysctl.c` sysctl_procargsx): a native-endian
//! `int argc`, the executable path NUL-terminated, NUL padding, then `argc` NUL-terminated
//! arguments, then the environment. The environment holds tokens and passwords as often as
//! not, and the kernel leaves it out for hardened processes, so the parser reads exactly as
//! psutil does: the path, the NUL padding skipped once, then `argc` strings each ending at the
//! next NUL (an empty argument is an empty string, not a reason to skip ahead), and nothing
//! after the `argc`-th. A buffer that ends early gives the arguments it holds. (The one
//! input this cannot read right is an empty `argv[0]`: it is indistinguishable from the
//! padding, as it is for psutil.)

use crate::PlatformError;

/// The executable path and the arguments (never more than `argc`, never the environment).
pub(crate) fn parse_procargs2(buf: &[u8]) -> Result<(String, Vec<String>), String> {
    let Some((head, mut rest)) = buf.split_first_chunk::<4>() else {
        return Err(format!(
            "KERN_PROCARGS2 buffer too short ({} bytes)",
            buf.len()
        ));
    };
    let argc = i32::from_ne_bytes(*head);
    let Ok(argc) = usize::try_from(argc) else {
        return Err(format!("KERN_PROCARGS2 argc `{argc}` is negative"));
    };
    let (exe, after) = take_string(rest);
    rest = after;
    // The padding between the path and argv[0] (word alignment), skipped once.
    let pad = rest.iter().take_while(|&&b| b == 0).count();
    rest = &rest[pad..];
    // Each argument costs at least its NUL, so the buffer bounds the allocation.
    let mut args = Vec::with_capacity(argc.min(rest.len()));
    while args.len() < argc && !rest.is_empty() {
        let (arg, after) = take_string(rest);
        args.push(arg);
        rest = after;
    }
    Ok((exe, args))
}

/// The string up to the next NUL (or the end of the buffer) and what follows that NUL.
fn take_string(buf: &[u8]) -> (String, &[u8]) {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let text = String::from_utf8_lossy(&buf[..end]).into_owned();
    (text, buf.get(end + 1..).unwrap_or(&[]))
}

/// What `sysctl(KERN_PROCARGS2)` failing with `errno` means for `pid`. xnu answers EINVAL
/// both for a process that is gone (it never says ESRCH there) and for one the caller may
/// not read, and EIO when copying the arguments out failed; `lookup` is the
/// `sysctl(KERN_PROC_PID)` answer read after the failure, which tells them apart: absent or
/// a zombie (no arguments left) is no such process, otherwise permission denied.
pub(crate) fn procargs_error(
    pid: i32,
    errno: i32,
    lookup: impl FnOnce() -> Lookup,
) -> PlatformError {
    match errno {
        libc::EINVAL | libc::EIO => match lookup() {
            Lookup::Absent | Lookup::Zombie => PlatformError::NoSuchProcess { pid },
            Lookup::Alive => PlatformError::PermissionDenied { pid },
            Lookup::Failed(e) => PlatformError::io(
                format!("sysctl(KERN_PROCARGS2, {pid}) failed and so did KERN_PROC_PID"),
                e,
            ),
        },
        libc::EPERM => PlatformError::PermissionDenied { pid },
        libc::ESRCH => PlatformError::NoSuchProcess { pid },
        _ => PlatformError::io(
            format!("sysctl(KERN_PROCARGS2, {pid})"),
            std::io::Error::from_raw_os_error(errno),
        ),
    }
}

/// The pid as `sysctl(KERN_PROC_PID)` found it.
#[derive(Debug)]
pub(crate) enum Lookup {
    Absent,
    Zombie,
    Alive,
    Failed(std::io::Error),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::snapshot::fixture;

    fn buf(argc: i32, body: &[u8]) -> Vec<u8> {
        let mut v = argc.to_ne_bytes().to_vec();
        v.extend_from_slice(body);
        v
    }

    fn args(argc: i32, body: &[u8]) -> Vec<String> {
        parse_procargs2(&buf(argc, body))
            .unwrap_or_else(|e| panic!("{e}"))
            .1
    }

    #[test]
    fn parses_exe_padding_args_and_stops_before_the_environment() {
        let b = buf(
            3,
            b"/opt/copilot\0\0\0\0copilot\0--log-dir\0/Users/x/logs\0HOME=/Users/x\0\0",
        );
        let (exe, args) = parse_procargs2(&b).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(exe, "/opt/copilot");
        assert_eq!(args, vec!["copilot", "--log-dir", "/Users/x/logs"]);
    }

    #[test]
    fn empty_arguments_are_kept_and_do_not_pull_in_the_environment() {
        // `sh -c ''` with a token in the environment: the old parser skipped the empty
        // argument's NUL and returned the token as argv[2].
        let body = b"/bin/sh\0\0\0sh\0-c\0\0SECRET=hunter2\0PATH=/bin\0\0";
        assert_eq!(args(3, body), vec!["sh", "-c", ""]);
        // Two empty arguments in the middle.
        assert_eq!(
            args(4, b"/bin/x\0\0x\0\0\0y\0SECRET=t\0"),
            vec!["x", "", "", "y"]
        );
    }

    #[test]
    fn no_environment_at_all_is_not_an_error() {
        // A hardened process: the kernel leaves the environment out, the buffer ends after
        // the last argument (with or without its NUL).
        assert_eq!(args(3, b"/bin/sh\0\0\0sh\0-c\0\0"), vec!["sh", "-c", ""]);
        assert_eq!(args(2, b"/bin/sh\0\0sh\0-c"), vec!["sh", "-c"]);
    }

    #[test]
    fn a_truncated_buffer_gives_the_arguments_it_holds() {
        assert_eq!(args(5, b"/bin/x\0\0a\0"), vec!["a"]);
        assert_eq!(args(5, b"/bin/x\0\0a\0bc"), vec!["a", "bc"]);
        assert_eq!(args(2, b"/bin/x"), Vec::<String>::new());
        assert_eq!(
            parse_procargs2(&buf(0, b"/bin/x")).unwrap_or_else(|e| panic!("{e}")),
            ("/bin/x".into(), vec![])
        );
        // A huge argc with a tiny buffer allocates by the buffer, not by argc.
        assert_eq!(args(i32::MAX, b"/x\0\0a\0"), vec!["a"]);
    }

    #[test]
    fn garbage_buffers_are_errors_not_panics() {
        assert!(parse_procargs2(b"").is_err());
        assert!(parse_procargs2(b"\x01\0\0").is_err());
        assert!(
            parse_procargs2(&buf(-1, b"x\0"))
                .unwrap_err()
                .contains("negative")
        );
    }

    #[test]
    fn a_planted_secret_reaches_neither_the_result_nor_a_snapshot() {
        let cases: [(i32, &[u8]); 4] = [
            (3, b"/bin/sh\0\0\0sh\0-c\0\0SECRET=s3\0\0"),
            (2, b"/bin/sh\0\0\0\0\0\0\0sh\0-c\0SECRET=s3\0HOME=/\0"),
            (1, b"/bin/sh\0\0\0\0\0sh\0SECRET=s3\0"),
            (0, b"/bin/sh\0\0\0SECRET=s3\0"),
        ];
        for (argc, body) in cases {
            let (exe, argv) = parse_procargs2(&buf(argc, body)).unwrap_or_else(|e| panic!("{e}"));
            assert!(argv.len() <= argc as usize);
            let mut rec = fixture::proc(42, 1, "sh");
            rec.exe = Some(exe);
            rec.argv = Some(argv.clone());
            let json = serde_json::to_string(&fixture::snapshot("macos", vec![rec]))
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(
                !json.contains("SECRET") && !argv.iter().any(|a| a.contains("SECRET")),
                "argc {argc}: {json}"
            );
        }
        // The control: the same string *as an argument* is kept, so the check above can fail.
        assert_eq!(
            args(2, b"/bin/env\0\0env\0SECRET=s3\0"),
            vec!["env", "SECRET=s3"]
        );
    }

    #[test]
    fn einval_and_eio_are_told_apart_by_looking_the_pid_up() {
        let is_gone = |e: &PlatformError| matches!(e, PlatformError::NoSuchProcess { pid: 7 });
        let is_denied = |e: &PlatformError| matches!(e, PlatformError::PermissionDenied { pid: 7 });
        for errno in [libc::EINVAL, libc::EIO] {
            assert!(is_gone(&procargs_error(7, errno, || Lookup::Absent)));
            assert!(is_gone(&procargs_error(7, errno, || Lookup::Zombie)));
            assert!(is_denied(&procargs_error(7, errno, || Lookup::Alive)));
            let failed = procargs_error(7, errno, || {
                Lookup::Failed(std::io::Error::from_raw_os_error(libc::ENOMEM))
            });
            assert!(matches!(failed, PlatformError::Io { .. }), "{failed}");
        }
        // Other errors never look the pid up.
        let never = || -> Lookup { panic!("looked up") };
        assert!(is_denied(&procargs_error(7, libc::EPERM, never)));
        assert!(is_gone(&procargs_error(7, libc::ESRCH, never)));
        let other = procargs_error(7, libc::ENOMEM, never);
        assert!(other.to_string().contains("KERN_PROCARGS2, 7"), "{other}");
    }
}
