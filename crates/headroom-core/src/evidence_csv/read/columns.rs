//! The columns the reader knows, found by name in each header (old names too), and the
//! whole-number kinds of the cells, read straight from their bytes.

/// The columns the reader knows, under every name a layout gave them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Col {
    At,
    Uid,
    Processes,
    Tasks,
    Zombies,
    Used,
    Limit,
    LimitSource,
    UsagePct,
    FreeSlots,
    Level,
    Growth,
    Eta,
    TrendSamples,
    Partial,
    TopPid,
    TopName,
    TopZombies,
    Signal,
    Action,
    Result,
    Override,
}

const KNOWN: usize = 22;

/// Each column's names: its own, then the one an older layout gave it.
const NAMES: [(Col, &str, Option<&str>); KNOWN] = [
    (Col::At, "at", Some("timestamp")),
    (Col::Uid, "uid", None),
    (Col::Processes, "processes", Some("total_procs")),
    (Col::Tasks, "tasks", None),
    (Col::Zombies, "zombies", None),
    (Col::Used, "used", None),
    (Col::Limit, "limit", None),
    (Col::LimitSource, "limit_source", None),
    (Col::UsagePct, "usage_pct", None),
    (Col::FreeSlots, "free_slots", None),
    (Col::Level, "level", None),
    (Col::Growth, "growth_per_min", None),
    (Col::Eta, "eta_seconds", None),
    (Col::TrendSamples, "trend_samples", None),
    (Col::Partial, "partial", None),
    (Col::TopPid, "top_parent_pid", None),
    (Col::TopName, "top_parent_name", None),
    (Col::TopZombies, "top_parent_zombies", None),
    (Col::Signal, "session_signal", None),
    (Col::Action, "action", None),
    (Col::Result, "result", None),
    (Col::Override, "override", None),
];

/// How a whole-number column must read; a cell that does not is an unreadable row.
#[derive(Debug, Clone, Copy)]
pub(super) enum Whole {
    U64,
    U32,
    I32,
    Usize,
}

pub(super) const WHOLE: [(Col, Whole); 10] = [
    (Col::Uid, Whole::U32),
    (Col::Processes, Whole::U64),
    (Col::Tasks, Whole::U64),
    (Col::Zombies, Whole::U64),
    (Col::Used, Whole::U64),
    (Col::Limit, Whole::U64),
    (Col::FreeSlots, Whole::U64),
    (Col::TrendSamples, Whole::Usize),
    (Col::TopPid, Whole::I32),
    (Col::TopZombies, Whole::U64),
];

/// Where each known column sits in one header.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    at: [Option<usize>; KNOWN],
    pub(super) width: usize,
    /// The header's own names, for messages.
    pub(super) names: Vec<String>,
}

impl Layout {
    pub(super) fn new(header: &csv::ByteRecord) -> Self {
        let names: Vec<String> = header
            .iter()
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        let mut at = [None; KNOWN];
        for (i, (_, new, old)) in NAMES.iter().enumerate() {
            at[i] = names
                .iter()
                .position(|n| n == new)
                .or_else(|| old.and_then(|o| names.iter().position(|n| n == o)));
        }
        Self {
            at,
            width: names.len(),
            names,
        }
    }

    pub(super) fn index(&self, c: Col) -> Option<usize> {
        self.at[c as usize]
    }
}

/// A whole number without a sign (`+` allowed), as `str::parse::<u64>` reads it, straight
/// from the cell's bytes: a million rows × ten columns must not each pay for a UTF-8
/// check and a `str` parse.
pub(super) fn unsigned(b: &[u8]) -> Option<u64> {
    let d = b.strip_prefix(b"+").unwrap_or(b);
    if d.is_empty() {
        return None;
    }
    d.iter().try_fold(0u64, |acc, &c| {
        if c.is_ascii_digit() {
            acc.checked_mul(10)?.checked_add(u64::from(c - b'0'))
        } else {
            None
        }
    })
}

/// A whole number with an optional sign, as `str::parse::<i64>` reads it.
pub(super) fn signed(b: &[u8]) -> Option<i64> {
    match b.first() {
        Some(b'-') => {
            let v = unsigned(&b[1..]).filter(|_| b.get(1) != Some(&b'+'))?;
            0i64.checked_sub_unsigned(v)
        }
        _ => i64::try_from(unsigned(b)?).ok(),
    }
}

/// The cell is a whole number of the column's kind.
pub(super) fn is_whole(b: &[u8], kind: Whole) -> bool {
    match kind {
        Whole::U64 => unsigned(b).is_some(),
        Whole::U32 => unsigned(b).is_some_and(|v| u32::try_from(v).is_ok()),
        Whole::Usize => unsigned(b).is_some_and(|v| usize::try_from(v).is_ok()),
        Whole::I32 => signed(b).is_some_and(|v| i32::try_from(v).is_ok()),
    }
}

#[cfg(test)]
mod whole_tests {
    use super::*;

    #[test]
    fn whole_numbers_read_from_bytes_as_str_parse_reads_them() {
        let cases = [
            "0",
            "7",
            "+7",
            "-7",
            "-0",
            "+",
            "-",
            "-+7",
            "+-7",
            "++7",
            "07",
            "1e3",
            "2.5",
            "NaN",
            "inf",
            "0x10",
            " 7",
            "7 ",
            "4294967295",
            "4294967296",
            "2147483647",
            "2147483648",
            "-2147483648",
            "-2147483649",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999",
            "-9223372036854775808",
            "١٢",
            "7\u{0}",
        ];
        for c in cases {
            let b = c.as_bytes();
            assert_eq!(unsigned(b), c.parse::<u64>().ok(), "u64 `{c}`");
            assert_eq!(signed(b), c.parse::<i64>().ok(), "i64 `{c}`");
            assert_eq!(
                is_whole(b, Whole::U32),
                c.parse::<u32>().is_ok(),
                "u32 `{c}`"
            );
            assert_eq!(
                is_whole(b, Whole::I32),
                c.parse::<i32>().is_ok(),
                "i32 `{c}`"
            );
            assert_eq!(
                is_whole(b, Whole::Usize),
                c.parse::<usize>().is_ok(),
                "usize `{c}`"
            );
        }
    }
}
