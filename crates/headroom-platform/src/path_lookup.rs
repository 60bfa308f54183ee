//! Finding the program `run` is asked to start the way a shell does, so that headroom's exit
//! code tells "not found" (127) from "not executable" (126) as `sh` would.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// Why no program could be found.
#[derive(Debug)]
pub enum LookupError {
    /// No file of that name (127).
    NotFound(io::Error),
    /// A file of that name, but none executable (126).
    NotExecutable(io::Error),
}

/// `prog` looked up in the process's `$PATH` (`/bin:/usr/bin` when unset).
pub fn resolve(prog: &OsStr) -> Result<PathBuf, LookupError> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/bin:/usr/bin".into());
    resolve_in(prog, &path)
}

/// A name with a `/` is used as is; otherwise the first executable regular file of that name
/// in `path`. Only when there is none, but a file of that name exists, is it "not
/// executable"; when there is no such file, "not found" — even if some directory could not
/// be searched, which `execvp` would report as EACCES. An empty entry is the current
/// directory, as in a shell.
pub(crate) fn resolve_in(prog: &OsStr, path: &OsStr) -> Result<PathBuf, LookupError> {
    if prog.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(prog));
    }
    let not_found = || {
        LookupError::NotFound(io::Error::new(
            io::ErrorKind::NotFound,
            "no such file in $PATH",
        ))
    };
    if prog.is_empty() {
        return Err(not_found());
    }
    let mut not_executable: Option<PathBuf> = None;
    for dir in std::env::split_paths(path) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(prog);
        if !candidate.is_file() {
            continue;
        }
        if rustix::fs::access(&candidate, rustix::fs::Access::EXEC_OK).is_ok() {
            return Ok(candidate);
        }
        not_executable.get_or_insert(candidate);
    }
    match not_executable {
        Some(p) => Err(LookupError::NotExecutable(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("`{}` is not executable", p.display()),
        ))),
        None => Err(not_found()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn file(dir: &std::path::Path, name: &str, mode: u32) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    fn joined(dirs: &[&std::path::Path]) -> std::ffi::OsString {
        std::env::join_paths(dirs).unwrap()
    }

    #[test]
    fn the_first_executable_wins_over_an_earlier_unexecutable_file() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        file(a.path(), "tool", 0o644);
        let good = file(b.path(), "tool", 0o755);
        let path = joined(&[a.path(), b.path()]);
        assert_eq!(resolve_in(OsStr::new("tool"), &path).unwrap(), good);
    }

    #[test]
    fn only_unexecutable_files_are_126_and_no_file_is_127() {
        let a = tempfile::tempdir().unwrap();
        file(a.path(), "tool", 0o644);
        let path = joined(&[a.path()]);
        // access(X_OK) wants at least one x bit even for root: this holds for every user.
        assert!(matches!(
            resolve_in(OsStr::new("tool"), &path),
            Err(LookupError::NotExecutable(_))
        ));
        assert!(matches!(
            resolve_in(OsStr::new("other"), &path),
            Err(LookupError::NotFound(_))
        ));
        assert!(matches!(
            resolve_in(OsStr::new(""), &path),
            Err(LookupError::NotFound(_))
        ));
    }

    #[test]
    fn a_directory_of_that_name_is_not_a_program_and_a_slash_is_taken_as_is() {
        let a = tempfile::tempdir().unwrap();
        std::fs::create_dir(a.path().join("tool")).unwrap();
        let path = joined(&[a.path()]);
        assert!(matches!(
            resolve_in(OsStr::new("tool"), &path),
            Err(LookupError::NotFound(_))
        ));
        assert_eq!(
            resolve_in(OsStr::new("./nowhere/tool"), &path).unwrap(),
            PathBuf::from("./nowhere/tool")
        );
    }
}
