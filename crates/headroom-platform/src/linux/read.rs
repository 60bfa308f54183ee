//! The read helpers every Linux `/proc` reader shares: a whole procfs file into a reused
//! buffer, "the process is gone" told from a real failure, a shortage of descriptors or
//! memory told from both, pid directory names and the listing of `/proc` by path.

use std::ffi::OsStr;
use std::fs;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::PlatformError;

/// Read a whole `/proc` file into `buf`; `Ok(None)` when the process is gone (ENOENT, ESRCH).
///
/// Three system calls per file (open, read, close) instead of the six `read_to_string`
/// makes (it also sizes the file and checks the position).
pub(super) fn read_into(path: &Path, buf: &mut String) -> Result<Option<()>, PlatformError> {
    match fs::File::open(path).and_then(|f| read_whole(&f, buf)) {
        Ok(_) => Ok(Some(())),
        Err(e) if gone(&e) => Ok(None),
        Err(e) => Err(PlatformError::io(
            format!("cannot read `{}`", path.display()),
            e,
        )),
    }
}

/// Read `f` from offset 0 into `buf`, reusing its allocation; the number of bytes read.
/// procfs files are generated whole on the first read, so a read that returns less than the
/// space offered is the end. Reading at an offset lets a kept descriptor be read again.
pub(super) fn read_whole(f: &fs::File, buf: &mut String) -> std::io::Result<usize> {
    buf.clear();
    let mut bytes = std::mem::take(buf).into_bytes();
    bytes.resize(bytes.capacity().max(4096), 0);
    let mut len = 0;
    loop {
        let n = f.read_at(&mut bytes[len..], len as u64)?;
        len += n;
        if n == 0 || len < bytes.len() {
            break;
        }
        bytes.resize(bytes.len() * 2, 0);
    }
    bytes.truncate(len);
    *buf = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
    Ok(len)
}

/// Whether an error reading a process's files means the process is gone.
pub(super) fn gone(e: &std::io::Error) -> bool {
    e.kind() == ErrorKind::NotFound || e.raw_os_error() == Some(libc::ESRCH)
}

/// Whether an error is this process (EMFILE), the machine (ENFILE) or the kernel (ENOMEM)
/// lacking what the read needed: the process may well be there, so it is never "gone"; a
/// reader that can free what it holds tries again once.
pub(super) fn out_of_resources(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOMEM)
    )
}

/// Whether a reader's error is a shortage (`out_of_resources`), which freeing what is held
/// may cure.
pub(super) fn short_of_resources(e: &PlatformError) -> bool {
    matches!(e, PlatformError::Io { cause, .. } if out_of_resources(cause))
}

/// Whether a reader's error is a refusal to read a process that is there (EACCES, EPERM:
/// another uid's process under `hidepid=1`, a setuid member).
pub(super) fn refused(e: &PlatformError) -> bool {
    matches!(e, PlatformError::Io { cause, .. }
        if matches!(cause.raw_os_error(), Some(libc::EACCES | libc::EPERM)))
}

/// The pids among a listing's entry names. An entry that could not be read (getdents failed
/// part way) fails the whole listing: a short list would leave live processes out of the
/// count with nothing to say so.
pub(super) fn listed_pids(
    dir: &Path,
    entries: impl Iterator<Item = std::io::Result<std::ffi::OsString>>,
) -> Result<Vec<i32>, PlatformError> {
    let mut pids = Vec::new();
    for name in entries {
        let name =
            name.map_err(|e| PlatformError::io(format!("cannot list `{}`", dir.display()), e))?;
        if let Some(pid) = parse_pid(&name) {
            pids.push(pid);
        }
    }
    Ok(pids)
}

/// A `/proc` entry name that is a pid.
pub(super) fn parse_pid(name: &OsStr) -> Option<i32> {
    let s = name.to_str()?;
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsString;
    use std::io;

    /// A listing that fails part way is an error naming the directory and the OS error,
    /// never the pids before the failure; names that are not pids are left out.
    #[test]
    fn a_listing_that_fails_part_way_fails_whole() {
        let dir = Path::new("/proc");
        let names = |fail: bool| {
            let mut v: Vec<io::Result<OsString>> =
                vec![Ok("1".into()), Ok("self".into()), Ok("42".into())];
            if fail {
                v.push(Err(io::Error::from_raw_os_error(libc::ENOMEM)));
            }
            v.push(Ok("77".into()));
            v.into_iter()
        };
        assert_eq!(listed_pids(dir, names(false)).unwrap(), vec![1, 42, 77]);
        let e = listed_pids(dir, names(true)).unwrap_err().to_string();
        assert!(e.contains("cannot list `/proc`"), "{e}");
        assert!(e.contains("os error 12"), "{e}");
    }

    /// Only ENOENT and ESRCH are "gone"; a shortage is neither gone nor final.
    #[test]
    fn a_shortage_of_descriptors_or_memory_is_not_a_process_gone() {
        for errno in [libc::EMFILE, libc::ENFILE, libc::ENOMEM] {
            let e = io::Error::from_raw_os_error(errno);
            assert!(!gone(&e) && out_of_resources(&e), "errno {errno}");
        }
        for errno in [libc::ENOENT, libc::ESRCH] {
            let e = io::Error::from_raw_os_error(errno);
            assert!(gone(&e) && !out_of_resources(&e), "errno {errno}");
        }
        let eacces = io::Error::from_raw_os_error(libc::EACCES);
        assert!(!gone(&eacces) && !out_of_resources(&eacces));
    }
}
