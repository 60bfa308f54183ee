//! Parser for the `sysctl(KERN_PROCARGS2)` buffer (compiled on every OS, tested on Linux).
//!
//! Layout (reference notes §1c, xnu `kern_sysctl.c` sysctl_procargsx): a native-endian
//! `int argc`, the executable path NUL-terminated, NUL padding, then `argc` NUL-terminated
//! arguments, then the environment (ignored: headroom never stores it).

/// The executable path and the arguments.
pub fn parse_procargs2(buf: &[u8]) -> Result<(String, Vec<String>), String> {
    if buf.len() < 4 {
        return Err(format!(
            "KERN_PROCARGS2 buffer too short ({} bytes)",
            buf.len()
        ));
    }
    let argc = i32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]);
    if argc < 0 {
        return Err(format!("KERN_PROCARGS2 argc `{argc}` is negative"));
    }
    let mut rest = &buf[4..];
    let exe_end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let exe = String::from_utf8_lossy(&rest[..exe_end]).into_owned();
    rest = &rest[exe_end..];
    let mut args = Vec::with_capacity(argc as usize);
    for _ in 0..argc {
        let start = rest.iter().position(|&b| b != 0).unwrap_or(rest.len());
        rest = &rest[start..];
        if rest.is_empty() {
            return Err(format!(
                "KERN_PROCARGS2 ends after {} of {argc} arguments",
                args.len()
            ));
        }
        let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
        args.push(String::from_utf8_lossy(&rest[..end]).into_owned());
        rest = &rest[end..];
    }
    Ok((exe, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buf(argc: i32, body: &[u8]) -> Vec<u8> {
        let mut v = argc.to_ne_bytes().to_vec();
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn parses_exe_padding_args_and_ignores_env() {
        let b = buf(
            3,
            b"/opt/copilot\0\0\0\0copilot\0--log-dir\0/Users/x/logs\0HOME=/Users/x\0\0",
        );
        let (exe, args) = parse_procargs2(&b).unwrap();
        assert_eq!(exe, "/opt/copilot");
        assert_eq!(args, vec!["copilot", "--log-dir", "/Users/x/logs"]);
    }

    #[test]
    fn truncated_and_garbage_buffers_are_errors_not_panics() {
        assert!(parse_procargs2(b"").is_err());
        assert!(parse_procargs2(&buf(-1, b"x\0")).is_err());
        assert!(
            parse_procargs2(&buf(5, b"/bin/x\0\0a\0"))
                .unwrap_err()
                .contains("1 of 5")
        );
        assert_eq!(
            parse_procargs2(&buf(0, b"/bin/x")).unwrap(),
            ("/bin/x".into(), vec![])
        );
    }
}
