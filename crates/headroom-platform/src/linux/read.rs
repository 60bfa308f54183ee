//! The read helpers every Linux `/proc` reader shares: a whole procfs file into a reused
//! buffer, "the process is gone" told from a real failure, pid directory names.

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

/// A `/proc` entry name that is a pid.
pub(super) fn parse_pid(name: &OsStr) -> Option<i32> {
    let s = name.to_str()?;
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}
