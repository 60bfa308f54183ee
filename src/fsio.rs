//! Small file helpers: atomic replace (write a temporary file, then rename, so a reader never
//! sees half a file) and an advisory lock for read-modify-write of shared state files.

#![allow(unsafe_code)]

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Replace `path` with `bytes` atomically and durably (fsync before the rename): for files
/// the user asked for (snapshots, Prometheus text, the LaunchAgent, the systemd unit).
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    write_replace(path, bytes, true)
}

/// Replace `path` with `bytes` atomically, without waiting for the disk: for state that is
/// rewritten every poll (reading history, CPU history, watch state), where an fsync per round
/// would be most of `watch`'s CPU cost and a power cut loses at most the last readings.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    write_replace(path, bytes, false)
}

fn write_replace(path: &Path, bytes: &[u8], durable: bool) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp.{}", std::process::id()));
    let res = (|| -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
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
    Ok(())
}

/// An exclusive advisory lock on `<path>.lock`, released on drop.
#[derive(Debug)]
pub struct Lock {
    _file: File,
    path: PathBuf,
}

impl Lock {
    pub fn acquire(path: &Path) -> Result<Self> {
        let mut lock_path = path.as_os_str().to_owned();
        lock_path.push(".lock");
        let lock_path = PathBuf::from(lock_path);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("cannot open lock file `{}`", lock_path.display()))?;
        #[cfg(unix)]
        {
            use std::os::fd::AsRawFd;
            loop {
                // SAFETY: the fd is open for the lifetime of `file`.
                let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
                if rc == 0 {
                    break;
                }
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(e)
                        .with_context(|| format!("cannot lock `{}`", lock_path.display()));
                }
            }
        }
        Ok(Self {
            _file: file,
            path: lock_path,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
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
    fn lock_file_is_created_beside() {
        let d = tempfile::tempdir().unwrap();
        let l = Lock::acquire(&d.path().join("state.json")).unwrap();
        assert!(l.path().ends_with("state.json.lock"));
    }
}
