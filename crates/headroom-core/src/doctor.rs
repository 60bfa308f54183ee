//! `headroom doctor`'s decisions: each check compares what headroom read with what the
//! system's own tool says, and is `ok`, `mismatch` or `skipped (why)`, with both values.
//! Pure: the command gathers the two readings, this decides (and parses the tools' output).

use serde::Serialize;

use crate::limits::{PerUidTrap, per_uid_trap};

/// The verdict of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "Outcome")]
pub enum CheckOutcome {
    Ok,
    Mismatch,
    Skipped,
}

impl CheckOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Mismatch => "mismatch",
            Self::Skipped => "skipped",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Check {
    /// A stable name, e.g. `processes`, `ceiling.per-uid`, `child.cpu`.
    pub name: String,
    pub outcome: CheckOutcome,
    /// What headroom read.
    pub headroom: Option<String>,
    /// What the system's tool said, and which tool.
    pub system: Option<String>,
    /// Why it was skipped, the churn seen, the tolerance allowed.
    pub note: Option<String>,
}

impl Check {
    pub fn new(name: &str, outcome: CheckOutcome, headroom: String, system: String) -> Self {
        Self {
            name: name.to_string(),
            outcome,
            headroom: Some(headroom),
            system: Some(system),
            note: None,
        }
    }

    pub fn skipped(name: &str, why: impl Into<String>) -> Self {
        Self {
            name: name.to_string(),
            outcome: CheckOutcome::Skipped,
            headroom: None,
            system: None,
            note: Some(why.into()),
        }
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

/// What the checks say together; the main crate maps it onto the exit-code table (0 when
/// they agree, 1 on a mismatch).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreement {
    /// Nothing mismatches (skipped checks are not a mismatch).
    Agrees,
    /// At least one check mismatches.
    Mismatch,
}

/// `Mismatch` when any check mismatches, `Agrees` otherwise.
pub fn verdict(checks: &[Check]) -> Agreement {
    if checks.iter().any(|c| c.outcome == CheckOutcome::Mismatch) {
        Agreement::Mismatch
    } else {
        Agreement::Agrees
    }
}

/// Processes and zombies of `uid` in `ps -A -o ruid=,stat=` output, leaving out the one
/// `ps` process itself (it lists itself; headroom's own reading is taken with no `ps`
/// running). Lines that are not `UID STAT` are an error naming the line.
pub fn parse_ps_uid_stat(text: &str, uid: u32) -> Result<(u64, u64), String> {
    let (mut procs, mut zombies) = (0u64, 0u64);
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let mut words = line.split_whitespace();
        let (Some(u), Some(stat)) = (words.next(), words.next()) else {
            return Err(format!("ps printed `{line}`, not `UID STAT`"));
        };
        // procps prints a uid above 2^31 as a negative int: the same 32 bits.
        let u: u32 = u
            .parse()
            .or_else(|_| u.parse::<i32>().map(|v| v as u32))
            .map_err(|_| format!("ps printed `{line}`: `{u}` is not a uid"))?;
        if u == uid {
            procs += 1;
            if stat.starts_with('Z') {
                zombies += 1;
            }
        }
    }
    if procs == 0 {
        return Err(format!(
            "ps listed no process of uid {uid}, not even itself"
        ));
    }
    Ok((procs - 1, zombies))
}

/// A count headroom read between two `ps` readings: it must lie between them. Processes
/// that start or end in between (churn) widen the range; the churn is reported.
pub fn bracketed(name: &str, before: u64, headroom: u64, after: u64) -> Check {
    let (lo, hi) = (before.min(after), before.max(after));
    let outcome = if (lo..=hi).contains(&headroom) {
        CheckOutcome::Ok
    } else {
        CheckOutcome::Mismatch
    };
    let system = if lo == hi {
        format!("{lo} (ps)")
    } else {
        format!("{before} before, {after} after (ps)")
    };
    Check::new(name, outcome, headroom.to_string(), system)
        .with_note(format!("churn between the two ps readings: {}", hi - lo))
}

/// Seconds in a `ps -o time=` value (`[[DD-]HH:]MM:SS[.cc]`) and its resolution: Linux
/// prints whole seconds, macOS hundredths.
pub fn parse_ps_time(s: &str) -> Option<(f64, f64)> {
    let s = s.trim();
    let (days, rest) = match s.split_once('-') {
        Some((d, r)) => (d.parse::<u64>().ok()?, r),
        None => (0, s),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let (whole, resolution) = match parts.last()?.split_once('.') {
        Some((_, frac)) if !frac.is_empty() && frac.bytes().all(|b| b.is_ascii_digit()) => (
            parts.last()?.parse::<f64>().ok()?,
            10f64.powi(-(frac.len() as i32)),
        ),
        Some(_) => return None,
        None => (f64::from(parts.last()?.parse::<u32>().ok()?), 1.0),
    };
    let mut secs = whole;
    let mut unit = 60.0;
    for p in parts.iter().rev().skip(1) {
        secs += f64::from(p.parse::<u32>().ok()?) * unit;
        unit *= 60.0;
    }
    Some((secs + days as f64 * 86_400.0, resolution))
}

/// headroom's CPU time of the child against `ps -o time=`. `ps` truncates to its
/// resolution, so headroom's value must lie in `[ps, ps + resolution]`, with 50 ms of slack
/// for rounding. A wrong tick conversion (41.67× on Apple Silicon) is far outside.
pub fn cpu(headroom_ns: Option<u64>, ps_time: &str) -> Check {
    const NAME: &str = "child.cpu";
    let Some((ps, res)) = parse_ps_time(ps_time) else {
        return Check::skipped(NAME, format!("ps printed `{}`, not a time", ps_time.trim()));
    };
    let system = format!("{} s (ps -o time= `{}`)", fmt_secs(ps), ps_time.trim());
    let Some(ns) = headroom_ns else {
        return Check::new(NAME, CheckOutcome::Mismatch, "unread".into(), system);
    };
    let h = ns as f64 / 1e9;
    let ok = h >= ps - 0.05 && h <= ps + res + 0.05;
    Check::new(
        NAME,
        if ok {
            CheckOutcome::Ok
        } else {
            CheckOutcome::Mismatch
        },
        format!("{} s", fmt_secs(h)),
        system,
    )
    .with_note(format!(
        "allowed: {} s to {} s",
        fmt_secs(ps - 0.05),
        fmt_secs(ps + res + 0.05)
    ))
}

fn fmt_secs(s: f64) -> String {
    format!("{:.2}", s.max(0.0))
}

/// headroom's footprint of the child against `ps -o rss=` (KiB). They measure different
/// things (private memory vs resident pages, reference notes §1b), so they agree only
/// within a factor of `FOOTPRINT_FACTOR`; a wrong field or unit (pages for bytes, KiB for
/// bytes) is off by 1000× or more.
pub fn footprint(headroom_bytes: Option<u64>, ps_rss_kib: &str) -> Check {
    const NAME: &str = "child.footprint";
    let Ok(kib) = ps_rss_kib.trim().parse::<u64>() else {
        return Check::skipped(
            NAME,
            format!("ps printed `{}`, not a size", ps_rss_kib.trim()),
        );
    };
    let rss = kib * 1024;
    let system = format!("rss {} KiB (ps -o rss=)", kib);
    let Some(fp) = headroom_bytes else {
        return Check::new(NAME, CheckOutcome::Mismatch, "unread".into(), system);
    };
    let ok = rss > 0
        && fp.saturating_mul(FOOTPRINT_FACTOR) >= rss
        && fp <= rss.saturating_mul(FOOTPRINT_FACTOR);
    Check::new(
        NAME,
        if ok {
            CheckOutcome::Ok
        } else {
            CheckOutcome::Mismatch
        },
        format!("footprint {} KiB", fp / 1024),
        system,
    )
    .with_note(format!(
        "footprint and rss differ by design; allowed within {FOOTPRINT_FACTOR}x of each other"
    ))
}

pub const FOOTPRINT_FACTOR: u64 = 4;

/// A limit as a tool prints it: a number or `unlimited`/`max`/`infinity`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Value(i64),
    Unlimited,
}

impl Limit {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "unlimited" | "max" | "infinity" => Some(Self::Unlimited),
            v => v.parse().ok().map(Self::Value),
        }
    }

    fn show(self) -> String {
        match self {
            Self::Value(v) => v.to_string(),
            Self::Unlimited => "unlimited".into(),
        }
    }
}

/// headroom's reading of a ceiling (`None` unread) against the tool's answer.
pub fn ceiling(
    name: &str,
    headroom: Option<Limit>,
    system: Result<Limit, String>,
    tool: &str,
) -> Check {
    let system = match system {
        Ok(s) => s,
        Err(why) => return Check::skipped(name, format!("{tool}: {why}")),
    };
    let shown = headroom.map_or_else(|| "unread".to_string(), Limit::show);
    let outcome = if headroom == Some(system) {
        CheckOutcome::Ok
    } else {
        CheckOutcome::Mismatch
    };
    Check::new(name, outcome, shown, format!("{} ({tool})", system.show()))
}

/// The macOS trap: `kern.maxprocperuid` above the RLIMIT_NPROC this session inherited, so
/// raising the sysctl raises nothing. headroom's `limits` either says so or not; the
/// system's answer decides whether it should.
pub fn rlimit_trap(headroom_says: bool, per_uid: Option<Limit>, rlimit: Option<Limit>) -> Check {
    const NAME: &str = "trap.inherited-rlimit";
    let (Some(Limit::Value(p)), Some(r)) = (per_uid, rlimit) else {
        return Check::skipped(NAME, "kern.maxprocperuid or ulimit -u not read");
    };
    let applies =
        matches!(r, Limit::Value(r) if per_uid_trap(p, r) == Some(PerUidTrap::InheritedRlimit));
    let say = |b: bool| if b { "applies" } else { "does not apply" };
    Check::new(
        NAME,
        if applies == headroom_says {
            CheckOutcome::Ok
        } else {
            CheckOutcome::Mismatch
        },
        say(headroom_says).into(),
        format!(
            "{} (kern.maxprocperuid {p}, ulimit -u {})",
            say(applies),
            r.show()
        ),
    )
}

/// The soft value of `launchctl limit maxproc` (`\tmaxproc  SOFT  HARD`).
pub fn parse_launchctl_maxproc(text: &str) -> Result<Limit, String> {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some("maxproc"))
        .ok_or_else(|| format!("no `maxproc` line in `{}`", text.trim()))?;
    line.split_whitespace()
        .nth(1)
        .and_then(Limit::parse)
        .ok_or_else(|| format!("cannot read the soft limit in `{}`", line.trim()))
}

/// The state directory: owned by the user, private (no group or other access), writable.
pub fn state_dir(uid: u32, owner: u32, mode: u32, writable: Result<(), String>) -> Check {
    let mut problems = Vec::new();
    if owner != uid {
        problems.push(format!("owned by uid {owner}"));
    }
    if mode & 0o077 != 0 {
        problems.push(format!("mode {:04o} lets others in", mode & 0o7777));
    }
    if let Err(e) = &writable {
        problems.push(format!("not writable: {e}"));
    }
    Check::new(
        "state-dir",
        if problems.is_empty() {
            CheckOutcome::Ok
        } else {
            CheckOutcome::Mismatch
        },
        format!("expects owner uid {uid}, mode 0700, writable"),
        if problems.is_empty() {
            format!("owner uid {owner}, mode {:04o}, writable", mode & 0o7777)
        } else {
            problems.join(", ")
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ps_counts_leave_ps_itself_out() {
        let text = "  501 Ss\n  501 Z\n    0 S\n  501 R+\n  501 Z+\n";
        assert_eq!(parse_ps_uid_stat(text, 501), Ok((3, 2)));
        assert!(parse_ps_uid_stat("", 501).is_err());
        assert!(parse_ps_uid_stat("x S\n", 501).is_err());
        assert!(parse_ps_uid_stat("501\n", 501).is_err());
        // procps: uid 3000000000 as a signed int.
        assert_eq!(
            parse_ps_uid_stat("-1294967296 Z\n-1294967296 S\n", 3_000_000_000),
            Ok((1, 1))
        );
    }

    #[test]
    fn churn_widens_the_range_but_a_wrong_count_is_a_mismatch() {
        assert_eq!(bracketed("processes", 10, 10, 10).outcome, CheckOutcome::Ok);
        let c = bracketed("processes", 10, 12, 14);
        assert_eq!(c.outcome, CheckOutcome::Ok);
        assert!(c.note.as_deref().is_some_and(|n| n.ends_with(": 4")));
        assert_eq!(bracketed("processes", 14, 11, 10).outcome, CheckOutcome::Ok);
        let bad = bracketed("zombies", 5, 0, 5);
        assert_eq!(bad.outcome, CheckOutcome::Mismatch);
        assert_eq!(bad.headroom.as_deref(), Some("0"));
        assert_eq!(bad.system.as_deref(), Some("5 (ps)"));
        assert_eq!(
            bracketed("zombies", 5, 7, 6).outcome,
            CheckOutcome::Mismatch
        );
    }

    #[test]
    fn ps_times_of_both_systems() {
        assert_eq!(parse_ps_time("00:00:01"), Some((1.0, 1.0)));
        assert_eq!(parse_ps_time("1-02:03:04"), Some((93_784.0, 1.0)));
        let (s, r) = parse_ps_time("0:01.52").unwrap_or_default();
        assert!((s - 1.52).abs() < 1e-9 && (r - 0.01).abs() < 1e-12);
        let (s, _) = parse_ps_time(" 12:34.5 ").unwrap_or_default();
        assert!((s - 754.5).abs() < 1e-9);
        for bad in ["", "x", "1:2:3:4", "0:01.", "a-00:00:01", "0:0x"] {
            assert_eq!(parse_ps_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn cpu_within_the_resolution_is_ok_a_wrong_tick_conversion_is_not() {
        // Linux: ps truncates 1.23 s to 00:00:01.
        assert_eq!(
            cpu(Some(1_230_000_000), "00:00:01").outcome,
            CheckOutcome::Ok
        );
        // macOS hundredths.
        assert_eq!(
            cpu(Some(1_230_000_000), "0:01.23").outcome,
            CheckOutcome::Ok
        );
        // Ticks taken for nanoseconds on Apple Silicon: 41.67x too small / too large.
        assert_eq!(
            cpu(Some(29_500_000), "0:01.23").outcome,
            CheckOutcome::Mismatch
        );
        assert_eq!(
            cpu(Some(51_250_000_000), "00:00:01").outcome,
            CheckOutcome::Mismatch
        );
        assert_eq!(cpu(None, "00:00:01").outcome, CheckOutcome::Mismatch);
        assert_eq!(cpu(Some(1), "soon").outcome, CheckOutcome::Skipped);
    }

    #[test]
    fn footprint_within_a_factor_is_ok_a_wrong_unit_is_not() {
        let mib = 1u64 << 20;
        assert_eq!(footprint(Some(64 * mib), "70000").outcome, CheckOutcome::Ok);
        // Pages or KiB taken for bytes.
        assert_eq!(
            footprint(Some(64 * mib / 4096), "70000").outcome,
            CheckOutcome::Mismatch
        );
        assert_eq!(
            footprint(Some(64 * mib * 1024), "70000").outcome,
            CheckOutcome::Mismatch
        );
        assert_eq!(footprint(None, "70000").outcome, CheckOutcome::Mismatch);
        assert_eq!(footprint(Some(1), "").outcome, CheckOutcome::Skipped);
        assert_eq!(footprint(Some(1), "0").outcome, CheckOutcome::Mismatch);
    }

    #[test]
    fn ceilings_compare_values_and_unlimited() {
        let v = Limit::Value;
        assert_eq!(
            ceiling("c", Some(v(2666)), Ok(v(2666)), "sysctl").outcome,
            CheckOutcome::Ok
        );
        let m = ceiling("c", Some(v(2666)), Ok(v(4000)), "sysctl");
        assert_eq!(m.outcome, CheckOutcome::Mismatch);
        assert_eq!(m.system.as_deref(), Some("4000 (sysctl)"));
        assert_eq!(
            ceiling("c", Some(Limit::Unlimited), Ok(Limit::Unlimited), "sh").outcome,
            CheckOutcome::Ok
        );
        assert_eq!(
            ceiling("c", None, Ok(v(1)), "sh").outcome,
            CheckOutcome::Mismatch
        );
        assert_eq!(
            ceiling("c", None, Err("absent".into()), "sh").outcome,
            CheckOutcome::Skipped
        );
        assert_eq!(Limit::parse(" max\n"), Some(Limit::Unlimited));
        assert_eq!(Limit::parse("12x"), None);
    }

    #[test]
    fn the_trap_check_agrees_with_the_system() {
        let v = |n| Some(Limit::Value(n));
        assert_eq!(
            rlimit_trap(true, v(2666), v(1333)).outcome,
            CheckOutcome::Ok
        );
        assert_eq!(
            rlimit_trap(false, v(2666), v(2666)).outcome,
            CheckOutcome::Ok
        );
        assert_eq!(
            rlimit_trap(false, v(2666), v(1333)).outcome,
            CheckOutcome::Mismatch
        );
        assert_eq!(
            rlimit_trap(true, v(2666), Some(Limit::Unlimited)).outcome,
            CheckOutcome::Mismatch
        );
        assert_eq!(rlimit_trap(true, None, v(1)).outcome, CheckOutcome::Skipped);
    }

    #[test]
    fn launchctl_limit_output() {
        let t = "\tmaxproc     2666           4000           \n";
        assert_eq!(parse_launchctl_maxproc(t), Ok(Limit::Value(2666)));
        assert_eq!(
            parse_launchctl_maxproc("\tmaxproc unlimited unlimited\n"),
            Ok(Limit::Unlimited)
        );
        assert!(parse_launchctl_maxproc("maxfiles 256 unlimited").is_err());
        assert!(parse_launchctl_maxproc("maxproc x y").is_err());
    }

    #[test]
    fn the_state_dir_must_be_the_users_private_and_writable() {
        assert_eq!(
            state_dir(501, 501, 0o40700, Ok(())).outcome,
            CheckOutcome::Ok
        );
        let c = state_dir(501, 0, 0o40755, Err("read-only".into()));
        assert_eq!(c.outcome, CheckOutcome::Mismatch);
        let sys = c.system.unwrap_or_default();
        assert!(sys.contains("uid 0") && sys.contains("0755") && sys.contains("read-only"));
    }

    #[test]
    fn only_a_mismatch_makes_the_checks_disagree() {
        let ok = Check::new("a", CheckOutcome::Ok, "1".into(), "1".into());
        let skip = Check::skipped("b", "no tool");
        assert_eq!(verdict(&[ok.clone(), skip.clone()]), Agreement::Agrees);
        let bad = Check::new("c", CheckOutcome::Mismatch, "1".into(), "2".into());
        assert_eq!(verdict(&[ok, skip, bad]), Agreement::Mismatch);
    }
}
