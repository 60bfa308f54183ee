//! Where `evidence --svg PATH` writes, decided by what PATH is — never by renaming over
//! whatever is there (as root that once turned `/dev/null` into a 0600 regular file):
//!
//! - `-`, or a path that is this process's standard output (`/dev/stdout`, `/dev/fd/1`, the
//!   file stdout is redirected to): the SVG goes to stdout, alone.
//! - missing, or a regular file: written to a temporary beside it and renamed over it (a
//!   reader never sees half a picture; the replaced file's permission bits are kept).
//! - anything else that is not a directory (a character device, a FIFO, a terminal, a pipe
//!   of `--svg >(rsvg-convert …)`): opened and written, so it stays what it is.
//! - a symbolic link: followed (and the rules above applied to what it leads to) only when
//!   it belongs to the user headroom runs as, or to root; another user's link is refused.
//!   Root writing through a link someone planted in `/tmp` would write wherever they chose.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Where the SVG goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SvgDestination {
    Stdout,
    /// Atomically replaced (or created) at this path.
    Replace(PathBuf),
    /// Opened and written (a device, a FIFO, a pipe).
    Open(PathBuf),
}

/// The most links followed (as the kernel's own limit).
const MAX_LINKS: usize = 40;

/// Where `--svg path` writes, for a process of real uid `uid`.
pub(crate) fn target(path: &Path, uid: u32) -> Result<SvgDestination> {
    if path.as_os_str() == "-" {
        return Ok(SvgDestination::Stdout);
    }
    let followed = std::fs::metadata(path);
    if let Ok(m) = &followed {
        if is_stdout(m) {
            return Ok(SvgDestination::Stdout);
        }
    }
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return match followed {
                    // A kernel link (`/proc/self/fd/N` → `pipe:[…]`): open the path itself.
                    Ok(m) if !m.is_dir() => Ok(SvgDestination::Open(path.to_path_buf())),
                    Ok(_) => bail!("`{}` is a directory", path.display()),
                    Err(_) => Ok(SvgDestination::Replace(p)),
                };
            }
            Err(e) => return Err(e).with_context(|| format!("cannot write `{}`", p.display())),
        };
        if meta.file_type().is_symlink() {
            let owner = owner(&meta);
            if owner != uid && owner != 0 {
                return Err(crate::exit::RefusedError(format!(
                    "`{}` is a symbolic link owned by uid {owner}; headroom writes through a \
                     link only when it is yours or root's: give the path it leads to",
                    p.display()
                ))
                .into());
            }
            let to = std::fs::read_link(&p)
                .with_context(|| format!("cannot read the link `{}`", p.display()))?;
            p = match p.parent() {
                Some(dir) if to.is_relative() => dir.join(to),
                _ => to,
            };
            continue;
        }
        return if meta.is_file() {
            Ok(SvgDestination::Replace(p))
        } else if meta.is_dir() {
            bail!("`{}` is a directory", path.display())
        } else {
            Ok(SvgDestination::Open(p))
        };
    }
    bail!("`{}`: too many levels of symbolic links", path.display())
}

#[cfg(unix)]
fn owner(m: &std::fs::Metadata) -> u32 {
    std::os::unix::fs::MetadataExt::uid(m)
}

#[cfg(not(unix))]
fn owner(_: &std::fs::Metadata) -> u32 {
    0
}

/// Whether `m` is the file this process's standard output is.
#[cfg(unix)]
fn is_stdout(m: &std::fs::Metadata) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() else {
        return false;
    };
    let Ok(out) = std::fs::File::from(fd).metadata() else {
        return false;
    };
    (out.dev(), out.ino()) == (m.dev(), m.ino())
}

#[cfg(not(unix))]
fn is_stdout(_: &std::fs::Metadata) -> bool {
    false
}

/// Write `bytes` to a `Replace` or `Open` target (stdout is the printer's).
pub(crate) fn write(t: &SvgDestination, bytes: &[u8]) -> Result<()> {
    match t {
        SvgDestination::Stdout => Ok(()),
        SvgDestination::Replace(p) => {
            let mode = std::fs::metadata(p).ok().map(|m| m.permissions());
            crate::store::fsio::atomic_write(p, bytes)?;
            if let Some(perm) = mode {
                // The picture replaces the file, not who may read it.
                let _ = std::fs::set_permissions(p, perm);
            }
            Ok(())
        }
        SvgDestination::Open(p) => {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .open(p)
                .with_context(|| format!("cannot open `{}`", p.display()))?;
            // A regular file reached through a kernel link is written from its start.
            if f.metadata().is_ok_and(|m| m.is_file()) {
                f.set_len(0)
                    .with_context(|| format!("cannot write `{}`", p.display()))?;
            }
            f.write_all(bytes)
                .and_then(|()| f.flush())
                .with_context(|| format!("cannot write `{}`", p.display()))
        }
    }
}
