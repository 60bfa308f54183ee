//! Instants as RFC 3339 text and back: the one formatter and parser of timestamps in
//! reports, state files, the evidence log, recorded rounds and `log-probe --at`, on the
//! proleptic Gregorian calendar for any instant (before 1970 too: an mtime or a
//! hand-written file can say anything, and humantime's formatter panics there while its
//! parser refuses it). The session-log reader's line scanner (`session_log::line`) keeps
//! its own stricter shape rules (`Z` only, as both writers emit; documented there) on this
//! module's calendar.

/// Why a text is not an instant (`log-probe --at` words its usage error by it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadTime {
    /// Not `YYYY-MM-DDTHH:MM:SS[.fraction]` and a zone.
    Shape,
    /// A field out of range (month 13, February 30, hour 24, minute 60, second 61).
    Range,
    /// No zone: neither `Z` nor `±HH:MM`.
    NoOffset,
    /// An offset beyond ±23:59.
    OffsetRange,
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`, for any value: years outside 0–9999 carry a
/// sign (`+10000-…`, `-0001-…`), so the text always says which instant it was.
pub fn format_secs(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (rem / 3600, rem % 3600 / 60, rem % 60);
    if (0..=9999).contains(&y) {
        format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
    } else {
        format!("{y:+}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}Z")
    }
}

/// Milliseconds since the epoch as RFC 3339 in UTC, to the second (rounded down: 1 ms
/// before 1970 is `1969-12-31T23:59:59Z`).
pub fn format_ms(ms: i64) -> String {
    format_secs(ms.div_euclid(1000))
}

/// Milliseconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`. The fraction
/// may have any number of digits (kept to the millisecond, rounded down); `Z` may be lower
/// case; a leap second (`:60`) reads as `:59`; the day is checked against its month.
pub fn parse_ms(s: &str) -> Result<i64, BadTime> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return Err(BadTime::Shape);
    }
    let at = |i: usize, c: u8| b[i] == c;
    if !(at(4, b'-') && at(7, b'-') && at(10, b'T') && at(13, b':') && at(16, b':')) {
        return Err(BadTime::Shape);
    }
    let num = |r: std::ops::Range<usize>| digits(&b[r]).ok_or(BadTime::Shape);
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return Err(BadTime::Range);
    }
    if hour > 23 || minute > 59 || second > 60 {
        return Err(BadTime::Range);
    }
    let mut i = 19;
    let mut frac_ms = 0;
    if b.get(i) == Some(&b'.') {
        let n = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return Err(BadTime::Shape);
        }
        let ms: Vec<u8> = b[i + 1..i + 1 + n.min(3)].to_vec();
        frac_ms = num_padded(&ms);
        i += 1 + n;
    }
    let offset = match &b[i..] {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let h = digits(&[*h1, *h2]).ok_or(BadTime::Shape)?;
            let m = digits(&[*m1, *m2]).ok_or(BadTime::Shape)?;
            if h > 23 || m > 59 {
                return Err(BadTime::OffsetRange);
            }
            let secs = h * 3600 + m * 60;
            if *sign == b'-' { -secs } else { secs }
        }
        [] => return Err(BadTime::NoOffset),
        _ => return Err(BadTime::Shape),
    };
    let local =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second.min(59);
    // Local time is UTC plus the offset, so UTC is local time minus it.
    Ok((local - offset) * 1000 + frac_ms)
}

/// [`parse_ms`] in whole seconds (rounded down).
pub fn parse_secs(s: &str) -> Result<i64, BadTime> {
    parse_ms(s).map(|ms| ms.div_euclid(1000))
}

/// ASCII digits as a number; `None` if any byte is not a digit.
pub(crate) fn digits(b: &[u8]) -> Option<i64> {
    b.iter().try_fold(0i64, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + i64::from(c - b'0'))
    })
}

/// Up to three fraction digits as milliseconds (`5` → 500, `49` → 490).
fn num_padded(d: &[u8]) -> i64 {
    let mut v = digits(d).unwrap_or(0);
    for _ in d.len()..3 {
        v *= 10;
    }
    v
}

fn days_in_month(y: i64, m: i64) -> i64 {
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
pub(crate) fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The inverse: (year, month, day) of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: i64 = 1_796_032_800_000;

    #[test]
    fn time_round_trips() {
        assert_eq!(format_ms(T0), "2026-11-30T10:00:00Z");
        assert_eq!(parse_ms("2026-11-30T10:00:00Z"), Ok(T0));
        assert!(parse_ms("yesterday").is_err());
    }

    /// What humantime did for every instant after 1970, the control for the replacement.
    #[test]
    fn after_1970_it_agrees_with_humantime() {
        for ms in [
            0,
            999,
            1000,
            T0,
            T0 + 499,
            951_782_400_000,
            4_102_444_799_999,
        ] {
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms as u64);
            let theirs = humantime::format_rfc3339_seconds(t).to_string();
            assert_eq!(format_ms(ms), theirs, "{ms}");
            let parsed = humantime::parse_rfc3339(&theirs).unwrap();
            let secs = parsed
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_secs();
            assert_eq!(parse_secs(&theirs), Ok(secs as i64), "{theirs}");
            let millis = humantime::format_rfc3339_millis(t).to_string();
            assert_eq!(parse_ms(&millis), Ok(ms), "{millis}");
        }
        assert_eq!(parse_ms("2026-11-30T10:00:00.4999999Z"), Ok(T0 + 499));
        assert_eq!(
            parse_ms("2016-12-31T23:59:60Z"),
            parse_ms("2016-12-31T23:59:59Z")
        );
    }

    #[test]
    fn before_1970_is_negative_and_formats_back() {
        assert_eq!(
            format_ms(-1),
            "1969-12-31T23:59:59Z",
            "rounded down, not clamped"
        );
        assert_eq!(format_ms(-1000), "1969-12-31T23:59:59Z");
        assert_eq!(format_ms(-1001), "1969-12-31T23:59:58Z");
        assert_eq!(parse_ms("1969-12-31T23:59:59Z"), Ok(-1000));
        assert_eq!(parse_ms("1969-12-31T23:59:59.5Z"), Ok(-500));
        assert_eq!(parse_secs("1969-12-31T23:59:59.5Z"), Ok(-1));
        assert_eq!(parse_secs("1969-07-20T20:17:40Z"), Ok(-14_182_940));
        assert_eq!(format_secs(-14_182_940), "1969-07-20T20:17:40Z");
        assert_eq!(parse_secs("0000-03-01T00:00:00Z"), Ok(-62_162_035_200));
        assert_eq!(format_secs(-62_162_035_200), "0000-03-01T00:00:00Z");
        assert!(format_secs(i64::MIN).starts_with('-'));
        assert!(format_secs(i64::MAX).starts_with('+'));
    }

    #[test]
    fn offsets_are_subtracted_to_reach_utc() {
        let utc = parse_secs("2026-08-29T09:21:47Z").unwrap();
        for s in [
            "2026-08-29T11:21:47+02:00",
            "2026-08-29T04:51:47-04:30",
            "2026-08-29T09:21:47+00:00",
            "2026-08-29T09:21:47-00:00",
            "2026-08-29T09:21:47z",
            "2026-08-30T08:20:47+22:59",
        ] {
            assert_eq!(parse_secs(s), Ok(utc), "{s}");
        }
        // Across the epoch: an offset can take a local 1970 to a UTC 1969.
        assert_eq!(parse_secs("1970-01-01T00:30:00+01:00"), Ok(-1800));
        assert_eq!(
            parse_ms("2026-08-29T09:21:47+24:00"),
            Err(BadTime::OffsetRange)
        );
        assert_eq!(
            parse_ms("2026-08-29T09:21:47+02:60"),
            Err(BadTime::OffsetRange)
        );
        assert_eq!(parse_ms("2026-08-29T09:21:47"), Err(BadTime::NoOffset));
    }

    #[test]
    fn malformed_or_out_of_range_text_is_refused() {
        for (s, why) in [
            ("", BadTime::Shape),
            ("yesterday", BadTime::Shape),
            ("2026-08-29 09:21:47Z", BadTime::Shape),
            ("2026-08-29T09:21:47+0200", BadTime::Shape),
            ("2026-08-29T09:21:47.Z", BadTime::Shape),
            ("2026-08-29T09:21:47Zjunk", BadTime::Shape),
            ("+026-08-29T09:21:47Z", BadTime::Shape),
            ("2026-08-29T09:21:47+é:éé", BadTime::Shape),
            ("2026-13-01T00:00:00Z", BadTime::Range),
            ("2026-02-29T00:00:00Z", BadTime::Range),
            ("2026-04-31T00:00:00Z", BadTime::Range),
            ("2026-08-29T24:00:00Z", BadTime::Range),
            ("2026-08-29T09:60:00Z", BadTime::Range),
            ("2026-08-29T09:21:61Z", BadTime::Range),
        ] {
            assert_eq!(parse_ms(s), Err(why), "{s}");
        }
        assert!(
            parse_ms("2028-02-29T00:00:00Z").is_ok(),
            "control: a leap day"
        );
    }
}
