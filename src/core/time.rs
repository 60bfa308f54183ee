//! Instants as RFC 3339 text and back: the one formatter and parser of timestamps in
//! reports, state files and the evidence log.

/// RFC 3339 in UTC, to the second.
pub fn format_time(ms: i64) -> String {
    let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms.max(0) as u64);
    humantime::format_rfc3339_seconds(t).to_string()
}

/// Milliseconds since the epoch of an RFC 3339 UTC time (`2026-11-30T10:00:00Z`).
pub fn parse_time(s: &str) -> Option<i64> {
    let t = humantime::parse_rfc3339(s).ok()?;
    let d = t.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(d.as_millis()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_796_032_800_000;

    #[test]
    fn time_round_trips() {
        assert_eq!(format_time(T0), "2026-11-30T10:00:00Z");
        assert_eq!(parse_time("2026-11-30T10:00:00Z"), Some(T0));
        assert_eq!(parse_time("yesterday"), None);
    }
}
