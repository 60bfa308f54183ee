//! Times and durations as both evidence drawings write them: in UTC or the local clock
//! (`--tz local`, with its offset named wherever times are), tick labels as long as their
//! step needs ("22:42:30" for seconds, "14:00" for hours, "08-30 00:00" where the day
//! changes, "08-29" for days, "2026-08" for months), and durations said in full — a 31-day
//! gap is "31 days 4 h", never "over 2 days".

use crate::cli::ChartZone;
use crate::core::chart::Chart;
use crate::core::chart::ticks::{Tick, TickStep, Unit, step_for, ticks};

/// The clock of a chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Zone {
    local: bool,
}

/// How much of a time to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeFormat {
    /// `2026-08-29 22:42`
    Full,
    /// `08-29 22:42`
    Day,
    /// `22:42`
    Time,
    /// `22:42:30`
    Seconds,
    /// `08-29`
    Date,
    /// `2026-08-29`
    YearDate,
    /// `2026-08`
    Month,
    /// `2026`
    Year,
}

impl Zone {
    #[cfg(test)]
    pub(crate) const UTC: Zone = Zone { local: false };

    pub(crate) fn new(z: ChartZone) -> Self {
        Self {
            local: z == ChartZone::Local,
        }
    }

    /// Seconds east of UTC at `t`.
    pub(crate) fn offset(&self, t: i64) -> i32 {
        if self.local {
            crate::platform::utc_offset_secs(t).unwrap_or(0)
        } else {
            0
        }
    }

    /// `t` in this clock, as `YYYY-MM-DDTHH:MM:SS`.
    fn text(&self, t: i64) -> String {
        let s = crate::core::time::format_secs(t.saturating_add(i64::from(self.offset(t))));
        // Years outside 0–9999 carry a sign: keep the text whole then.
        s.trim_end_matches('Z').to_string()
    }

    /// `t` in `style`.
    pub(crate) fn clock(&self, t: i64, style: TimeFormat) -> String {
        let s = self.text(t);
        if s.len() != 19 {
            return s;
        }
        match style {
            TimeFormat::Full => format!("{} {}", &s[..10], &s[11..16]),
            TimeFormat::Day => format!("{} {}", &s[5..10], &s[11..16]),
            TimeFormat::Time => s[11..16].to_string(),
            TimeFormat::Seconds => s[11..19].to_string(),
            TimeFormat::Date => s[5..10].to_string(),
            TimeFormat::YearDate => s[..10].to_string(),
            TimeFormat::Month => s[..7].to_string(),
            TimeFormat::Year => s[..4].to_string(),
        }
    }

    /// The name of the clock over `c`'s axis: `UTC`, `UTC+02:00`, or both offsets where a
    /// daylight-saving change falls inside (`UTC+01:00/+02:00`).
    pub(crate) fn name(&self, c: &Chart) -> String {
        if !self.local {
            return "UTC".into();
        }
        let (a, b) = (self.offset(c.axis.start), self.offset(c.axis.end));
        if a == b {
            format!("UTC{}", offset_text(a))
        } else {
            format!("UTC{}/{}", offset_text(a), offset_text(b))
        }
    }

    /// The day of `t` in this clock (days since the epoch).
    fn day(&self, t: i64) -> i64 {
        t.saturating_add(i64::from(self.offset(t)))
            .div_euclid(86_400)
    }

    /// The style for single times on `c`'s axis: the time of day when it stays in one day.
    pub(crate) fn axis_style(&self, c: &Chart) -> TimeFormat {
        if self.day(c.axis.start) == self.day(c.axis.end) {
            TimeFormat::Time
        } else {
            TimeFormat::Day
        }
    }

    /// `start → end ZONE` with the date written once.
    pub(crate) fn span(&self, c: &Chart, arrow: &str) -> String {
        format!(
            "{} {arrow} {} {}",
            self.clock(c.axis.start, TimeFormat::Full),
            self.clock(c.axis.end, self.axis_style(c)),
            self.name(c)
        )
    }

    /// Round ticks at least `spacing` (a share of the axis) apart, with their labels.
    pub(crate) fn ticks(&self, c: &Chart, spacing: f64) -> Vec<(Tick, String)> {
        let step = step_for(&c.axis, spacing);
        let offset = |t: i64| self.offset(t);
        let all = ticks(&c.axis, step, spacing, &offset);
        let years = self.text(c.axis.start).get(..4) != self.text(c.axis.end).get(..4);
        let mut prev_day = None;
        all.into_iter()
            .map(|t| {
                let day = self.day(t.at);
                let label = self.tick_label(t.at, step, years, prev_day.is_some_and(|d| d != day));
                prev_day = Some(day);
                (t, label)
            })
            .collect()
    }

    fn tick_label(&self, t: i64, step: TickStep, years: bool, new_day: bool) -> String {
        match step.unit {
            Unit::Second => self.clock(t, TimeFormat::Seconds),
            Unit::Minute | Unit::Hour if new_day => self.clock(t, TimeFormat::Day),
            Unit::Minute | Unit::Hour => self.clock(t, TimeFormat::Time),
            Unit::Day if years => self.clock(t, TimeFormat::YearDate),
            Unit::Day => self.clock(t, TimeFormat::Date),
            Unit::Month => self.clock(t, TimeFormat::Month),
            Unit::Year => self.clock(t, TimeFormat::Year),
        }
    }
}

/// `+02:00`, `-05:30`, `+00:00`.
fn offset_text(secs: i32) -> String {
    let sign = if secs < 0 { '-' } else { '+' };
    let m = secs.unsigned_abs() / 60;
    format!("{sign}{:02}:{:02}", m / 60, m % 60)
}

/// A duration in full: "45 s", "13 min", "2 h 14 min", "31 days 4 h".
pub(crate) fn span(secs: i64) -> String {
    let s = secs.max(0);
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => format!("{} min", s / 60),
        3600..=172_799 => {
            let (h, m) = (s / 3600, s % 3600 / 60);
            if m == 0 {
                format!("{h} h")
            } else {
                format!("{h} h {m} min")
            }
        }
        _ => {
            let (d, h) = (s / 86_400, s % 86_400 / 3600);
            let d = crate::output::thousands(d as u64);
            if h == 0 {
                format!("{d} days")
            } else {
                format!("{d} days {h} h")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_said_in_full() {
        assert_eq!(span(31 * 86_400 + 4 * 3600 + 59), "31 days 4 h");
        assert_eq!(span(2 * 86_400), "2 days");
        assert_eq!(span(2 * 3600 + 14 * 60), "2 h 14 min");
        assert_eq!(span(47 * 3600), "47 h");
        assert_eq!(span(45), "45 s");
        assert_eq!(span(-5), "0 s");
        assert_eq!(span(1246 * 86_400 + 16 * 3600), "1,246 days 16 h");
    }

    #[test]
    fn offsets_and_styles() {
        assert_eq!(offset_text(7200), "+02:00");
        assert_eq!(offset_text(-19_800), "-05:30");
        let t = 1_788_043_361; // 2026-08-29T22:42:41Z
        let z = Zone::UTC;
        assert_eq!(z.clock(t, TimeFormat::Full), "2026-08-29 22:42");
        assert_eq!(z.clock(t, TimeFormat::Day), "08-29 22:42");
        assert_eq!(z.clock(t, TimeFormat::Time), "22:42");
        assert_eq!(z.clock(t, TimeFormat::Seconds), "22:42:41");
        assert_eq!(z.clock(t, TimeFormat::Month), "2026-08");
    }
}
