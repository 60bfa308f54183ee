//! Small file helpers: atomic replace (write a temporary file, then rename, so a reader never
//! sees half a file) and an advisory lock for read-modify-write of shared state files.
//!
//! Nothing here follows a symbolic link at the final path component (`O_NOFOLLOW`, and
//! `O_EXCL` for temporary files): a link planted in the state directory, pointing at another
//! user's file, must never be written through, truncated or created. Such a link is an error
//! that names it; the caller still prints its reading.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::platform::files::is_link_refusal;

/// Temporary files left by a writer that died (SIGKILL mid-write) are removed once they are
/// this old even when their pid cannot be checked (or was reused).
const STALE_TMP_MS: u128 = 10 * 60 * 1000;

/// Replace `path` with `bytes` atomically and durably (fsync before the rename): for files
/// the user asked for (snapshots, Prometheus text, the LaunchAgent, the systemd unit).
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_replace(path, bytes, true, false)
}

/// Replace `path` with `bytes` atomically, without waiting for the disk: for state that is
/// rewritten every poll (reading history, CPU history, watch state), where an fsync per round
/// would be most of `watch`'s CPU cost and a power cut loses at most the last readings.
///
/// A state file that is a symbolic link is refused with a message (the rename would only
/// replace the link, never write through it, but a planted link deserves to be seen).
pub(crate) fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    write_replace(path, bytes, false, true)
}

/// Options that refuse a symbolic link at the last path component and create files 0600.
fn private_options() -> OpenOptions {
    let mut o = OpenOptions::new();
    crate::platform::files::refuse_links(&mut o);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o
}

/// The error for a symbolic link found where headroom keeps its own file.
fn link_refused(path: &Path) -> anyhow::Error {
    let target = std::fs::read_link(path)
        .map(|t| format!(" (to `{}`)", t.display()))
        .unwrap_or_default();
    anyhow::anyhow!(
        "`{}` is a symbolic link{target}; headroom does not write through links in its state \
         directory: remove it",
        path.display()
    )
}

/// Fail when `path` is a symbolic link (a missing path is fine).
fn refuse_link(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(link_refused(path)),
        _ => Ok(()),
    }
}

/// Open `path` for appending (created 0600 when missing), never through a symbolic link.
pub(crate) fn open_append(path: &Path) -> Result<File> {
    private_options()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| {
            if is_link_refusal(&e) {
                link_refused(path)
            } else {
                anyhow::Error::new(e).context(format!("cannot open `{}`", path.display()))
            }
        })
}

/// Read `path` whole, never through a symbolic link (a link is an error naming it).
pub(crate) fn read_private(path: &Path) -> std::io::Result<Vec<u8>> {
    let mut f = private_options().read(true).open(path).map_err(|e| {
        if is_link_refusal(&e) {
            std::io::Error::other(format!("{:#}", link_refused(path)))
        } else {
            e
        }
    })?;
    let mut out = Vec::new();
    f.read_to_end(&mut out)?;
    Ok(out)
}

fn write_replace(path: &Path, bytes: &[u8], durable: bool, refuse_links: bool) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if refuse_links {
        refuse_link(path)?;
    }
    let prefix = format!(".{name}.tmp.");
    let tmp = dir.join(format!("{prefix}{}", std::process::id()));
    let res = (|| -> std::io::Result<()> {
        // O_EXCL: never through a link, never into a file someone else prepared. A file of
        // this name is a leftover of a dead writer that had our pid: remove it, once.
        let open = || private_options().write(true).create_new(true).open(&tmp);
        let mut f = match open() {
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                std::fs::remove_file(&tmp)?;
                open()?
            }
            other => other?,
        };
        f.write_all(bytes)?;
        if durable {
            f.sync_all()?;
        }
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = res {
        let _ = std::fs::remove_file(&tmp);
        return Err(e).with_context(|| format!("cannot write `{}`", path.display()));
    }
    remove_stale_temps(dir, &prefix);
    Ok(())
}

/// Remove `<prefix><pid>` files of writers that died mid-write (a SIGKILL between create and
/// rename): their pid is gone, or they are older than any write takes.
fn remove_stale_temps(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let me = std::process::id();
    for e in entries.flatten() {
        let file_name = e.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let old = e
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age.as_millis() > STALE_TMP_MS);
        if old || !pid_exists(pid) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Whether a process `pid` exists, as far as this platform can tell without signalling it.
fn pid_exists(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        // No signal-free check: only the age rule applies.
        true
    }
}

/// An exclusive advisory lock on `<path>.lock`, released on drop.
#[derive(Debug)]
pub struct Lock {
    _file: File,
    path: PathBuf,
}

impl Lock {
    /// Wait for the lock.
    pub fn acquire(path: &Path) -> Result<Self> {
        match Self::take(path, true)? {
            Some(l) => Ok(l),
            None => bail!("cannot lock `{}.lock`", path.display()),
        }
    }

    /// Take the lock if nobody holds it; `None` when another process does.
    pub fn try_acquire(path: &Path) -> Result<Option<Self>> {
        Self::take(path, false)
    }

    fn take(path: &Path, wait: bool) -> Result<Option<Self>> {
        let mut lock_path = path.as_os_str().to_owned();
        lock_path.push(".lock");
        let lock_path = PathBuf::from(lock_path);
        let file = private_options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| {
                if is_link_refusal(&e) {
                    link_refused(&lock_path)
                } else {
                    anyhow::Error::new(e)
                        .context(format!("cannot open lock file `{}`", lock_path.display()))
                }
            })?;
        let locked = crate::platform::files::lock_exclusive(&file, wait)
            .with_context(|| format!("cannot lock `{}`", lock_path.display()))?;
        if !locked {
            return Ok(None);
        }
        Ok(Some(Self {
            _file: file,
            path: lock_path,
        }))
    }

    #[cfg(test)]
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Replace the lock file's contents with `bytes` while it is held: who holds it, for
    /// whoever finds it taken (`store::guard`). Not atomic: a reader may see it half
    /// written, and must treat what it cannot parse as unknown.
    pub(crate) fn record(&self, bytes: &[u8]) -> Result<()> {
        use std::io::{Seek, SeekFrom};
        let mut f = &self._file;
        f.set_len(0)
            .and_then(|()| f.seek(SeekFrom::Start(0)))
            .and_then(|_| f.write_all(bytes))
            .with_context(|| format!("cannot write `{}`", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.json");
        atomic_write(&p, b"one").unwrap();
        atomic_write(&p, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        let err = atomic_write(&d.path().join("missing/x"), b"z").unwrap_err();
        assert!(format!("{err:#}").contains("missing/x"));
    }

    #[test]
    #[cfg(unix)]
    fn no_write_follows_a_planted_link() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        for name in ["state.json", "log.csv"] {
            std::os::unix::fs::symlink(&victim, d.path().join(name)).unwrap();
        }
        let e = replace(&d.path().join("state.json"), b"x").unwrap_err();
        assert!(format!("{e:#}").contains("symbolic link"), "{e:#}");
        let e = open_append(&d.path().join("log.csv")).unwrap_err();
        assert!(format!("{e:#}").contains("symbolic link"), "{e:#}");
        let e = read_private(&d.path().join("log.csv")).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        std::os::unix::fs::symlink(&victim, d.path().join("l.lock")).unwrap();
        assert!(Lock::acquire(&d.path().join("l")).is_err());
        // A temporary file planted under the name the next write will use is not followed.
        let tmp = d.path().join(format!(".t.tmp.{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        replace(&d.path().join("t"), b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        // The control: a plain file is written.
        assert_eq!(std::fs::read_to_string(d.path().join("t")).unwrap(), "new");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn temporaries_of_dead_writers_are_removed() {
        let d = tempfile::tempdir().unwrap();
        // Pid 0 is never a process (no /proc/0); pid 1 always is.
        let dead = d.path().join(".s.tmp.0");
        let live = d.path().join(".s.tmp.1");
        std::fs::write(&dead, "half").unwrap();
        std::fs::write(&live, "in progress").unwrap();
        let other = d.path().join(".other.tmp.0");
        std::fs::write(&other, "x").unwrap();
        replace(&d.path().join("s"), b"whole").unwrap();
        assert!(!dead.exists());
        assert!(live.exists(), "a live writer's temporary is left alone");
        assert!(
            other.exists(),
            "another file's temporaries are left to its writer"
        );
    }

    #[test]
    fn try_acquire_sees_a_held_lock() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("w");
        let held = Lock::try_acquire(&p).unwrap().unwrap();
        assert!(Lock::try_acquire(&p).unwrap().is_none());
        drop(held);
        assert!(Lock::try_acquire(&p).unwrap().is_some());
    }

    #[test]
    fn lock_file_is_created_beside() {
        let d = tempfile::tempdir().unwrap();
        let l = Lock::acquire(&d.path().join("state.json")).unwrap();
        assert!(l.path().ends_with("state.json.lock"));
    }
}
