//! The report for a person: the decision table (always shown), then what was done.

use std::fmt::Write as _;

use super::ReapReport;
use crate::core::policy::ReapVerdict;
use crate::output::{Printer, Style, human_duration, plural, thousands};
use crate::sanitize::sanitize;

impl ReapReport {
    /// The decision table: every parent holding zombies, its verdict and the named reason.
    pub(crate) fn human_table(&self, p: &Printer) -> String {
        let mut s = String::new();
        let u = &self.usage;
        let limit = match (u.limit, u.limit_source, u.usage_pct) {
            (Some(l), Some(src), Some(pct)) => format!("{pct:.1} % of {} ({src})", thousands(l)),
            _ => "limit unknown".to_string(),
        };
        let total: u64 = self.parents.iter().map(|x| x.zombies).sum();
        let _ = writeln!(
            s,
            "{}: {} {} of uid {}; {} used, {limit}{}",
            p.paint("headroom reap", Style::Bold),
            crate::output::plural_verb(self.parents.len() as u64, "parent", "holds", "hold"),
            plural(total, "zombie"),
            self.uid,
            plural(u.used, "slot"),
            if self.pressure {
                " — AT THE WALL (emergency override armed)"
            } else {
                ""
            }
        );
        let width = crate::platform::screen_width();
        if self.parents.is_empty() {
            return match width {
                Some(w) => crate::output::screen::wrap_all(&s, w),
                None => s,
            };
        }
        // Narrow: CPU IDLE and LOG AGE go (the reason says which signal decided) and NAME
        // comes before the reason, which is cut to what is left of the line.
        let narrow = width.is_some_and(|w| w < 100);
        if narrow {
            let _ = writeln!(
                s,
                "  {:>8} {:>8}  {:<8} {:<14} REASON",
                "PID", "ZOMBIES", "VERDICT", "NAME"
            );
        } else {
            let _ = writeln!(
                s,
                "  {:>8} {:>8}  {:<8} {:<28} {:>9} {:>9}  NAME",
                "PID", "ZOMBIES", "VERDICT", "REASON", "CPU IDLE", "LOG AGE"
            );
        }
        let dur = |v: Option<f64>, has: bool| {
            if !has {
                "-".to_string()
            } else {
                v.map_or("unknown".into(), human_duration)
            }
        };
        for x in &self.parents {
            let verdict = match x.verdict {
                ReapVerdict::Target => p.paint("target", Style::Red),
                ReapVerdict::Skipped => "skipped".to_string(),
            };
            let pad = if x.verdict == ReapVerdict::Target {
                8 + verdict.len() - "target".len()
            } else {
                8
            };
            let reason = match (x.reason, x.override_) {
                (Some(r), _) => match x.session_blind.filter(|_| r.is_blind()) {
                    Some(b) => format!("{} ({})", r.as_str(), b.describe()),
                    None => r.as_str().to_string(),
                },
                (None, Some(o)) => format!("override: {o}"),
                (None, None) => String::new(),
            };
            let has = !x.session_children.is_empty();
            if narrow {
                let name: String = sanitize(&x.name).chars().take(14).collect();
                let row = format!(
                    "  {:>8} {:>8}  {verdict:<pad$} {name:<14} {reason}",
                    x.pid,
                    thousands(x.zombies),
                );
                // No reason: the row ends with the name, not its padding (which the cut
                // below would otherwise end with `…`, as if the name had been cut).
                let _ = writeln!(s, "{}", row.trim_end());
                continue;
            }
            let _ = writeln!(
                s,
                "  {:>8} {:>8}  {verdict:<pad$} {reason:<28} {:>9} {:>9}  {}",
                x.pid,
                thousands(x.zombies),
                dur(x.cpu_idle_seconds, has),
                dur(x.log_age_seconds, has),
                sanitize(&x.name)
            );
        }
        match width {
            // The summary above the table is prose, wrapped; the rows are cut.
            Some(w) => s
                .lines()
                .enumerate()
                .map(|(i, l)| match i {
                    0 => crate::output::screen::wrap(l, w, 2).join("\n") + "\n",
                    _ => crate::output::screen::cut(l, w) + "\n",
                })
                .collect(),
            None => s,
        }
    }

    /// What was done, then the one-line summary.
    pub fn human_results(&self) -> String {
        let mut s = String::new();
        for t in &self.targets {
            let signals: Vec<&str> = t.signals.iter().map(|x| x.name()).collect();
            let _ = writeln!(
                s,
                "  {} ({}): {} [{}]; {} of {} reaped{}{}",
                t.pid,
                sanitize(&t.name),
                t.outcome.as_str(),
                if signals.is_empty() {
                    "no signal".to_string()
                } else {
                    signals.join(", ")
                },
                thousands(t.zombies_reaped),
                plural(t.zombies_before, "zombie"),
                match (&t.held_by, t.verified, t.stood_down()) {
                    (_, true, _) => ", verified".to_string(),
                    (_, _, true) => ", not ended: no longer a target at its signal".to_string(),
                    (Some(h), ..) => format!(
                        ", NOT verified: {} held by pid {} ({})",
                        thousands(t.zombies_left),
                        h.pid,
                        sanitize(&h.name)
                    ),
                    (None, ..) => ", NOT verified".to_string(),
                },
                if t.override_.is_some() {
                    " (emergency override)"
                } else {
                    ""
                },
            );
        }
        if self.dry_run {
            let _ = writeln!(s, "dry run: nothing was signalled.");
        }
        let _ = writeln!(s, "{}", self.summary);
        s
    }
}
