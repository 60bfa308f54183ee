//! The rules over persisted state, as functions over data: which readings stay in the
//! trend window, which stored CPU entries can be true now, which state directory may be
//! trusted, and which config file may steer a command that signals. The files themselves
//! are the store's (`store::state`, `store::config_file`).

use std::path::Path;

use crate::liveness::CpuEntry;
use crate::reading::{HistorySample, TREND_WINDOW_MS};

/// Add `sample` to the reading history `samples`, keeping the window it closes: samples from
/// its future (a clock set back) or older than the trend window are dropped, oldest first.
pub fn in_window(samples: &mut Vec<HistorySample>, sample: HistorySample) {
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

/// One path on the way to the config file, as the store read it (`stat`, symbolic links
/// followed): the file itself first, then each directory above it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathOwner {
    pub path: std::path::PathBuf,
    pub owner: u32,
    pub mode: u32,
    pub is_dir: bool,
}

/// `S_ISVTX`: in a directory with it, only an entry's owner (or the directory's, or root)
/// may rename or remove that entry, so others writing it (`/tmp`) cannot swap what we read.
const STICKY: u32 = 0o1000;

/// The rule for a config file that may steer signals (ssh's StrictModes, git's
/// `safe.directory`): the file and every directory on the way to it are owned by the user
/// or by root, and none is writable by group or others, except a sticky directory (`/tmp`),
/// where others may add entries but not swap ours. Root counts as trusted because root can
/// already act as the user: a file only root and the user can change gives no one else a
/// say (and `/`, `/home`, `/etc` are root's). Anyone else who can write the file, or
/// replace it or a directory above it, could write a `[[memory.guard]]` that ends the
/// user's processes. `Err` is one line naming the file, the path that breaks the rule, and
/// the rule.
pub fn config_rule(file: &Path, chain: &[PathOwner], uid: u32) -> Result<(), String> {
    for p in chain {
        let broken = if p.owner != uid && p.owner != 0 {
            format!(
                "is owned by uid {}, not by you (uid {uid}) or root",
                p.owner
            )
        } else if p.mode & 0o022 != 0 && !(p.is_dir && p.mode & STICKY != 0) {
            format!(
                "has mode {:04o}: group or others can write it",
                p.mode & 0o7777
            )
        } else {
            continue;
        };
        let which = if p.path == file {
            "it".to_string()
        } else {
            format!("`{}`", p.path.display())
        };
        return Err(format!(
            "config file `{}` is not trusted: {which} {broken}; headroom acts on settings \
             only from a file that it and every directory above it are owned by you or root \
             and not writable by group or others (chmod go-w, or --config a file of your own)",
            file.display()
        ));
    }
    Ok(())
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

    fn owner(path: &str, owner: u32, mode: u32) -> PathOwner {
        PathOwner {
            path: path.into(),
            owner,
            mode,
            is_dir: mode & 0o40000 != 0,
        }
    }

    /// `/home/u/.config/headroom/config.toml` of uid 501, every path as trusted as it can be.
    fn chain() -> Vec<PathOwner> {
        vec![
            owner("/home/u/.config/headroom/config.toml", 501, 0o100644),
            owner("/home/u/.config/headroom", 501, 0o40700),
            owner("/home/u/.config", 501, 0o40755),
            owner("/home/u", 501, 0o40750),
            owner("/home", 0, 0o40755),
            owner("/", 0, 0o40755),
        ]
    }

    const FILE: &str = "/home/u/.config/headroom/config.toml";

    #[test]
    fn the_config_rule_wants_every_path_the_users_or_roots_and_not_writable_by_others() {
        let file = Path::new(FILE);
        assert_eq!(config_rule(file, &chain(), 501), Ok(()), "control");
        // Root's file, root's directories: trusted (root can act as the user anyway).
        let mut rooted = chain();
        rooted[0].owner = 0;
        rooted[1].owner = 0;
        assert_eq!(config_rule(file, &rooted, 501), Ok(()));
        // A sticky directory others can write (`/tmp`) cannot have our entry swapped.
        let mut tmp = chain();
        tmp[4] = owner("/home", 0, 0o41777);
        assert_eq!(config_rule(file, &tmp, 501), Ok(()));
        for (i, who, mode, says) in [
            (
                0,
                502,
                0o100644,
                "it is owned by uid 502, not by you (uid 501) or root",
            ),
            (
                0,
                501,
                0o100664,
                "it has mode 0664: group or others can write it",
            ),
            (0, 501, 0o100646, "it has mode 0646"),
            (
                1,
                502,
                0o40755,
                "`/home/u/.config/headroom` is owned by uid 502",
            ),
            (1, 501, 0o40770, "`/home/u/.config/headroom` has mode 0770"),
            (3, 501, 0o40777, "`/home/u` has mode 0777"),
            (5, 0, 0o40757, "`/` has mode 0757"),
            // The sticky bit excuses a directory, never the file.
            (0, 501, 0o101666, "it has mode 1666"),
        ] {
            let mut c = chain();
            c[i].owner = who;
            c[i].mode = mode;
            let e = config_rule(file, &c, 501).unwrap_err();
            assert!(
                e.starts_with(&format!("config file `{FILE}` is not trusted: {says}")),
                "{e}"
            );
            assert!(e.contains("owned by you or root and not writable by group or others"));
            assert!(!e.contains('\n'), "one line: {e}");
        }
        // Root running headroom trusts only root's.
        assert!(config_rule(file, &chain(), 0).is_err());
        assert_eq!(config_rule(file, &rooted[..2], 0), Ok(()));
    }
}
