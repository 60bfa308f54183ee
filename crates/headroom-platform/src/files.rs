//! The store's file system calls that std does not name: opens that refuse a symbolic link
//! or do not wait for a FIFO's writer, and the advisory lock around a state file
//! (`store::fsio`, `store::evidence`, `store::log_files`; `pressure`'s PSI trigger opens
//! non-blocking too). Elsewhere than Unix they are plain opens and no lock, as std gives.

use std::fs::{File, OpenOptions};
use std::io;

/// Refuse a symbolic link at the last path component (`O_NOFOLLOW`): the open fails with
/// what `is_link_refusal` recognises.
pub fn refuse_links(o: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    return with_flags(o, libc::O_NOFOLLOW);
    #[cfg(not(unix))]
    o
}

/// Refuse a symbolic link (`refuse_links`) and do not block in the open (`O_NONBLOCK`: a
/// FIFO planted where a file was expected would wait for a writer).
pub fn refuse_links_nonblocking(o: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    return with_flags(o, libc::O_NOFOLLOW | libc::O_NONBLOCK);
    #[cfg(not(unix))]
    o
}

/// Do not block in the open (`O_NONBLOCK`), following links.
pub fn nonblocking(o: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    return with_flags(o, libc::O_NONBLOCK);
    #[cfg(not(unix))]
    o
}

#[cfg(unix)]
fn with_flags(o: &mut OpenOptions, flags: i32) -> &mut OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    o.custom_flags(flags)
}

/// Whether `e` is what a `refuse_links` open returns for a symbolic link (`ELOOP`).
pub fn is_link_refusal(e: &io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// Take `file`'s exclusive advisory lock (`flock(2)`), waiting for it when `wait`. `false`:
/// another holder has it and `wait` is off. An interrupted wait is resumed.
pub fn lock_exclusive(file: &File, wait: bool) -> io::Result<bool> {
    #[cfg(unix)]
    {
        use rustix::fs::FlockOperation;
        let op = if wait {
            FlockOperation::LockExclusive
        } else {
            FlockOperation::NonBlockingLockExclusive
        };
        while let Err(e) = rustix::fs::flock(file, op) {
            let e = io::Error::from(e);
            if e.kind() == io::ErrorKind::WouldBlock && !wait {
                return Ok(false);
            }
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        Ok(true)
    }
    #[cfg(not(unix))]
    {
        let _ = (file, wait);
        Ok(true)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn a_link_is_refused_and_recognised_a_file_is_opened() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("state.json");
        std::fs::write(&file, b"{}").unwrap();
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        let e = refuse_links(OpenOptions::new().read(true))
            .open(&link)
            .unwrap_err();
        assert!(is_link_refusal(&e), "{e}");
        let e = refuse_links_nonblocking(OpenOptions::new().read(true))
            .open(&link)
            .unwrap_err();
        assert!(is_link_refusal(&e), "{e}");
        // Controls: the file itself opens; following the link, `nonblocking` opens it; another
        // error is not a link refusal.
        assert!(
            refuse_links(OpenOptions::new().read(true))
                .open(&file)
                .is_ok()
        );
        assert!(
            nonblocking(OpenOptions::new().read(true))
                .open(&link)
                .is_ok()
        );
        let missing = refuse_links(OpenOptions::new().read(true))
            .open(d.path().join("missing"))
            .unwrap_err();
        assert!(!is_link_refusal(&missing), "{missing}");
    }

    #[test]
    fn a_held_lock_is_reported_without_waiting_and_taken_once_released() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("lock");
        let open = || {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .unwrap()
        };
        let (a, b) = (open(), open());
        assert!(lock_exclusive(&a, false).unwrap());
        // Another open file description: flock locks conflict between them.
        assert!(!lock_exclusive(&b, false).unwrap());
        drop(a);
        assert!(lock_exclusive(&b, false).unwrap());
    }
}
