//! The rules over persisted state, as functions over data: which readings stay in the
//! trend window, which stored CPU entries can be true now, and which state directory may be
//! trusted. The files themselves are `store::state`'s.

use std::path::Path;

use crate::liveness::CpuEntry;
use crate::reading::{Sample, TREND_WINDOW_MS};

/// Add `sample` to the reading history `samples`, keeping the window it closes: samples from
/// its future (a clock set back) or older than the trend window are dropped, oldest first.
pub fn in_window(samples: &mut Vec<Sample>, sample: Sample) {
    samples.retain(|s| s.at_ms <= sample.at_ms && s.at_ms >= sample.at_ms - TREND_WINDOW_MS);
    samples.push(sample);
    samples.sort_by_key(|s| s.at_ms);
}

/// Whether a stored entry can be true of this boot at awake-clock `now_ms`: no negative
/// times, the last activity not after the reading, the reading not in the future. An
/// inconsistent entry would hand the tracker an idle time it never measured.
pub fn consistent(e: &CpuEntry, now_ms: i64) -> bool {
    e.read_at_ms >= 0
        && e.last_active_ms >= 0
        && e.last_active_ms <= e.read_at_ms
        && e.read_at_ms <= now_ms
}

/// The rule for a state directory whose history may decide about signals: owned by the user
/// and not writable by group or others (anyone else who can write it can fake "idle for
/// hours"). `Err` is the one-line reason, naming the path and the rule.
pub fn dir_rule(dir: &Path, uid: u32, owner: u32, mode: u32) -> Result<(), String> {
    let broken = if owner != uid {
        format!("is owned by uid {owner}, not uid {uid}")
    } else if mode & 0o022 != 0 {
        format!(
            "has mode {:04o}: group or others can write it",
            mode & 0o7777
        )
    } else {
        return Ok(());
    };
    Err(format!(
        "state directory `{}` {broken}; headroom trusts state only from a directory owned by \
         the user and not writable by group or others (chmod go-w, or set HEADROOM_HOME)",
        dir.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_dir_rule_wants_the_users_own_and_not_group_or_other_writable() {
        let p = Path::new("/s/headroom");
        assert_eq!(dir_rule(p, 501, 501, 0o40700), Ok(()), "control");
        assert_eq!(dir_rule(p, 501, 501, 0o40755), Ok(()), "readable is fine");
        for (owner, mode, says) in [
            (0, 0o40700, "owned by uid 0, not uid 501"),
            (501, 0o40770, "mode 0770: group or others can write"),
            (501, 0o40702, "mode 0702"),
            (501, 0o40720, "mode 0720"),
        ] {
            let e = dir_rule(p, 501, owner, mode).unwrap_err();
            assert!(e.contains("`/s/headroom`") && e.contains(says), "{e}");
            assert!(e.contains("not writable by group or others"), "{e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}
