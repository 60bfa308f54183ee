//! Whether `/proc` hides other users' processes (`hidepid=2`, `hidepid=invisible`): their
//! directories are not listed at all, so the table cannot count what it cannot see, nor
//! tell a session child or an ancestor run by another uid from no process.

use std::path::Path;

/// `PROC_SUPER_MAGIC` (linux/magic.h).
const PROC_SUPER_MAGIC: i64 = 0x9fa0;

/// True when `proc` is a procfs on which pid 1 — which every pid namespace has — cannot be
/// seen: this process is not exempt (root, the `gid=` group) from a `hidepid` that hides.
/// A fake tree (`--proc-root`) is not a procfs, and hides nothing.
pub(super) fn others_hidden(proc: &Path) -> bool {
    is_procfs(proc) && std::fs::symlink_metadata(proc.join("1")).is_err()
}

fn is_procfs(path: &Path) -> bool {
    let Ok(fs) = rustix::fs::statfs(path) else {
        return false;
    };
    #[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
    let magic = fs.f_type as i64;
    magic == PROC_SUPER_MAGIC
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_proc_is_a_procfs_and_a_plain_directory_is_not() {
        assert!(is_procfs(Path::new("/proc")));
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join("1")).unwrap();
        assert!(!is_procfs(t.path()));
        assert!(!others_hidden(t.path()));
        // A fake tree without pid 1 hides nothing either: it is not a procfs.
        assert!(!others_hidden(&t.path().join("1")));
    }
}
