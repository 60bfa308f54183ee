//! The boot's identity on macOS: `kern.bootsessionuuid`, a UUID the kernel draws once per
//! boot (xnu `IOPMrootDomain::initializeBootSessionUUID`: `uuid_generate`, then
//! `uuid_unparse_upper` into a `uuid_string_t`, 36 characters and a NUL; `kern_sysctl.c`
//! serves it read-only as `SYSCTL_STRING`). Not `kern.boottime`: xnu moves the boot time
//! with every clock step (`clock_set_calendar_microtime` adjusts `clock_boottime` by the
//! delta), so a clock set by hand or by NTP read as a reboot and threw the CPU history away.
//!
//! The parser is plain data, compiled and tested on every OS; only the sysctl is macOS's.

/// The UUID in a `kern.bootsessionuuid` read: the bytes up to the first NUL, which must be
/// a UUID in its text form (8-4-4-4-12 hex digits). Anything else is no boot identity: an
/// empty string (a kernel that has not set it) or garbage must not be compared as one.
pub(crate) fn parse_session_uuid(bytes: &[u8]) -> Result<String, String> {
    let text = bytes.split(|b| *b == 0).next().unwrap_or_default();
    let s = std::str::from_utf8(text)
        .map_err(|_| "kern.bootsessionuuid is not text".to_string())?
        .trim();
    let groups: Vec<&str> = s.split('-').collect();
    let shape = [8, 4, 4, 4, 12];
    let ok = groups.len() == shape.len()
        && groups
            .iter()
            .zip(shape)
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()));
    if ok {
        Ok(s.to_ascii_uppercase())
    } else {
        Err(format!("kern.bootsessionuuid is not a UUID: `{s}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A read as `sysctlbyname` fills a 37-byte `uuid_string_t`: 36 characters and a NUL.
    const READ: &[u8] = b"3F9A1C2E-7B4D-4E8F-9A0B-1C2D3E4F5A6B\0";

    #[test]
    fn a_recorded_read_is_the_boot_and_a_clock_step_does_not_change_it() {
        let id = parse_session_uuid(READ).unwrap();
        assert_eq!(id, "3F9A1C2E-7B4D-4E8F-9A0B-1C2D3E4F5A6B");
        // The same boot read after `date -s` (kern.boottime moved by the step; this did
        // not): the same identity, so the CPU history is kept.
        assert_eq!(parse_session_uuid(READ).unwrap(), id);
        // Another boot: another identity, so it is dropped.
        let next = parse_session_uuid(b"0C1D2E3F-4A5B-4C6D-8E7F-9A0B1C2D3E4F\0").unwrap();
        assert_ne!(next, id);
        // A buffer with room to spare, or no NUL at all, reads the same.
        let mut big = READ.to_vec();
        big.extend_from_slice(&[0; 27]);
        assert_eq!(parse_session_uuid(&big).unwrap(), id);
        assert_eq!(parse_session_uuid(&READ[..36]).unwrap(), id);
    }

    #[test]
    fn an_unset_or_malformed_value_is_no_boot_identity() {
        for bad in [
            &b"\0"[..],
            b"",
            b"1764650000.123456\0",
            b"3F9A1C2E-7B4D-4E8F-9A0B\0",
            b"3F9A1C2E-7B4D-4E8F-9A0B-1C2D3E4F5A6G\0",
            b"\xff\xfe\0",
        ] {
            assert!(parse_session_uuid(bad).is_err(), "{bad:?}");
        }
    }
}
