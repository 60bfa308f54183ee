//! One interpretable row, read in place: cells parsed by column when asked for, and the
//! whole `ReadRow` made only for the rows a report keeps.

use std::borrow::Cow;

use super::ReadRow;
use super::columns::{Col, Layout, WHOLE, is_whole, unsigned};
use crate::reading::Level;
use crate::slot_reading::RecordedReading;
use crate::time::parse_secs;

/// One interpretable row, read in place: its cells are parsed when asked for, and a whole
/// [`ReadRow`] is made only for the rows a report keeps.
#[derive(Debug, Clone, Copy)]
pub struct RowView<'a> {
    pub(super) layout: &'a Layout,
    pub(super) rec: &'a csv::ByteRecord,
    pub(super) line: u64,
    /// `at` in Unix seconds, parsed once: the summary, the chart and `--since` all ask.
    pub(super) at: Option<i64>,
}

impl<'a> RowView<'a> {
    fn cell(&self, c: Col) -> Option<&'a [u8]> {
        let f = self.rec.get(self.layout.index(c)?)?;
        (!f.is_empty()).then_some(f)
    }

    fn text(&self, c: Col) -> Option<Cow<'a, str>> {
        self.cell(c).map(String::from_utf8_lossy)
    }

    fn parsed<T: std::str::FromStr>(&self, c: Col) -> Option<T> {
        std::str::from_utf8(self.cell(c)?).ok()?.parse().ok()
    }

    fn count(&self, c: Col) -> Option<u64> {
        unsigned(self.cell(c)?)
    }

    /// Rust reads `inf`, `NaN` and `1e400` as floats; no row of ours holds one, and JSON
    /// has none (it would print null, yet win `peak_usage`): not a value.
    fn float(&self, c: Col) -> Option<f64> {
        let s = std::str::from_utf8(self.cell(c)?).ok()?;
        let v: f64 = if s.contains(',') {
            s.replace(',', ".").parse().ok()?
        } else {
            s.parse().ok()?
        };
        v.is_finite().then_some(v)
    }

    /// 1-based line of the row in its file.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Unix seconds of `at`; None when it does not parse (a time that does not parse is no
    /// time: null, as the schema's `date-time` allows).
    pub fn at_secs(&self) -> Option<i64> {
        self.at
    }

    pub(super) fn parse_at(layout: &Layout, rec: &csv::ByteRecord) -> Option<i64> {
        let f = rec.get(layout.index(Col::At)?)?;
        parse_secs(std::str::from_utf8(f).ok()?).ok()
    }

    /// `at` as logged, when it parses.
    pub fn to_row_at(&self) -> Option<String> {
        self.at_secs()?;
        self.text(Col::At).map(Cow::into_owned)
    }

    /// The slots compared with the limit; a row written before the `used` column has only
    /// its process count.
    pub fn used(&self) -> Option<u64> {
        self.count(Col::Used).or_else(|| self.count(Col::Processes))
    }

    pub fn zombies(&self) -> Option<u64> {
        self.count(Col::Zombies)
    }

    pub fn limit(&self) -> Option<u64> {
        self.count(Col::Limit)
    }

    pub fn limit_source(&self) -> Option<Cow<'a, str>> {
        self.text(Col::LimitSource)
    }

    pub fn usage_pct(&self) -> Option<f64> {
        self.float(Col::UsagePct)
    }

    pub fn free_slots(&self) -> Option<u64> {
        self.count(Col::FreeSlots)
    }

    pub fn growth_per_min(&self) -> Option<f64> {
        self.float(Col::Growth)
    }

    /// Whole seconds (older layouts wrote a fraction).
    #[allow(clippy::cast_possible_truncation)]
    pub fn eta_seconds(&self) -> Option<i64> {
        self.float(Col::Eta).map(|v| v.round() as i64)
    }

    pub fn action(&self) -> Cow<'a, str> {
        self.text(Col::Action).unwrap_or_default()
    }

    /// The row records a cleanup ([`super::is_cleanup`], on the cell's bytes).
    pub fn is_cleanup(&self) -> bool {
        self.cell(Col::Action)
            .is_some_and(|a| a.starts_with(b"kill:") || a == b"cleanup")
    }

    pub fn result(&self) -> Cow<'a, str> {
        self.text(Col::Result).unwrap_or_default()
    }

    /// The `override=emergency` column: the session guard was relaxed at the wall.
    pub fn is_emergency(&self) -> bool {
        self.cell(Col::Override) == Some(b"emergency")
    }

    /// The top zombie parent: the one terminated, on a cleanup row.
    pub fn top_parent(&self) -> (Option<i32>, Option<Cow<'a, str>>, Option<u64>) {
        (
            self.parsed(Col::TopPid),
            self.text(Col::TopName),
            self.parsed(Col::TopZombies),
        )
    }

    /// The whole row, as `evidence --json` prints it.
    pub fn to_row(&self) -> ReadRow {
        let own = |c: Col| self.text(c).map(Cow::into_owned);
        let at_secs = self.at_secs();
        let action = self.action().into_owned();
        let result = self.result().into_owned();
        // Before the `partial` column a partial table's poll row said so in `result`.
        let partial = self
            .parsed::<bool>(Col::Partial)
            .or_else(|| (action == "poll" && result == "partial").then_some(true));
        ReadRow {
            at_secs,
            reading: RecordedReading {
                at: own(Col::At).filter(|_| at_secs.is_some()),
                uid: self.parsed(Col::Uid),
                processes: self.parsed(Col::Processes),
                tasks: self.parsed(Col::Tasks),
                zombies: self.zombies(),
                used: self.parsed(Col::Used),
                limit: self.limit(),
                limit_source: own(Col::LimitSource),
                usage_pct: self.usage_pct(),
                free_slots: self.free_slots(),
                level: self.text(Col::Level).and_then(|s| Level::parse(&s)),
                growth_per_min: self.growth_per_min(),
                eta_seconds: self.eta_seconds(),
                trend_samples: self.parsed(Col::TrendSamples),
                partial,
            },
            top_parent_pid: self.parsed(Col::TopPid),
            top_parent_name: own(Col::TopName),
            top_parent_zombies: self.parsed(Col::TopZombies),
            session_signal: own(Col::Signal),
            action,
            result,
            override_: own(Col::Override),
        }
    }

    /// The first whole-number column whose cell is not one, with its name in this header;
    /// or, for a reading, the count it lacks (every layout with a count column writes it).
    pub(super) fn unreadable(&self) -> Option<String> {
        let name = |c: Col| self.layout.index(c).map(|i| self.layout.names[i].clone());
        if !self.is_cleanup()
            && self.cell(Col::Used).is_none()
            && self.cell(Col::Processes).is_none()
        {
            if let Some(n) = name(Col::Used).or_else(|| name(Col::Processes)) {
                return Some(n);
            }
        }
        WHOLE.iter().find_map(|&(c, kind)| {
            let ok = is_whole(self.cell(c)?, kind);
            (!ok).then(|| self.layout.names[self.layout.index(c).unwrap_or(0)].clone())
        })
    }
}
