//! headroom's own program on disk: the path it was invoked by (what a service manager runs
//! again) and the identity of the file there, so `login-item register` can register a path
//! that survives an upgrade (`core::program_path`) and `watch` can notice that its program
//! was replaced under it.

use std::path::{Path, PathBuf};

/// The program as invoked: `argv[0]` when it names a path, else looked up in `$PATH` as a
/// shell would have; made absolute against the current directory, with `.` components
/// dropped and links not followed. `None` when it cannot be worked out.
pub fn invoked() -> Option<PathBuf> {
    let arg0 = std::env::args_os().next()?;
    #[cfg(unix)]
    let found = super::path_lookup::resolve(&arg0).ok()?;
    #[cfg(not(unix))]
    let found = PathBuf::from(arg0);
    let abs = if found.is_absolute() {
        found
    } else {
        std::env::current_dir().ok()?.join(found)
    };
    Some(abs.components().collect())
}

/// The running program's own file, every link resolved: `current_exe` canonicalised.
pub fn real() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(exe.canonicalize().unwrap_or(exe))
}

/// Which file a path names now (links followed): a replaced file (rename over it, as
/// `brew upgrade`, `cargo install` and package managers do) or a link moved to another file
/// has another identity; a file rewritten in place has another size or modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
}

/// The identity of the file at `path` now.
pub fn file_id(path: &Path) -> std::io::Result<FileId> {
    let m = std::fs::metadata(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Ok(FileId {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        })
    }
    #[cfg(not(unix))]
    {
        let mtime_ns = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX));
        Ok(FileId {
            dev: 0,
            ino: 0,
            size: m.len(),
            mtime_ns,
        })
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_file_replaced_by_rename_or_rewritten_has_another_identity_and_a_link_follows() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("headroom");
        std::fs::write(&f, b"one").unwrap();
        let first = file_id(&f).unwrap();
        assert_eq!(file_id(&f).unwrap(), first, "unchanged: the same identity");
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert_eq!(file_id(&link).unwrap(), first, "a link names its target");
        let new = d.path().join("new");
        std::fs::write(&new, b"one").unwrap();
        std::fs::rename(&new, &f).unwrap();
        assert_ne!(
            file_id(&f).unwrap().ino,
            first.ino,
            "renamed over: another inode"
        );
        assert!(file_id(&d.path().join("gone")).is_err());
    }

    #[test]
    fn the_test_binary_knows_how_it_was_invoked_and_its_real_file() {
        let inv = invoked().unwrap();
        assert!(inv.is_absolute(), "{}", inv.display());
        let real = real().unwrap();
        assert_eq!(inv.canonicalize().unwrap(), real);
    }
}
