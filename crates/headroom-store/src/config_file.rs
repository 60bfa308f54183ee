//! Reading the config file, with what `core::state_rules::config_rule` needs to judge it:
//! the owner and mode of the file as opened and of every directory on the way to it.
//!
//! The file is opened once and judged by that descriptor (`fstat`), so what is judged is
//! what is read. The directories are those of the path as given (each prefix `stat`ed, so a
//! linked directory counts as the one it leads to: that is where the next name is looked
//! up) and those of the file's real path (a config that is a link into a dotfiles checkout
//! is judged where it really lives too), each once.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::core::state_rules::PathOwner;

/// The file's text and, when the rule refuses it, why (one line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigText {
    pub text: String,
    pub untrusted: Option<String>,
}

/// Read `path`; the error is the open's or the read's, for the caller to name.
pub fn read(path: &Path) -> std::io::Result<ConfigText> {
    let mut f = std::fs::File::open(path)?;
    let meta = f.metadata()?;
    let mut text = String::new();
    f.read_to_string(&mut text)?;
    let untrusted = judge(path, &meta).err();
    Ok(ConfigText { text, untrusted })
}

#[cfg(unix)]
fn judge(path: &Path, opened: &std::fs::Metadata) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let uid = crate::platform::current_uid();
    let given = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut chain = vec![PathOwner {
        path: path.to_path_buf(),
        owner: opened.uid(),
        mode: opened.mode(),
        is_dir: false,
    }];
    let mut seen = vec![(opened.dev(), opened.ino())];
    let real = std::fs::canonicalize(path).ok();
    let dirs = given
        .ancestors()
        .skip(1)
        .chain(real.iter().flat_map(|r| r.ancestors().skip(1)));
    for dir in dirs.filter(|d| !d.as_os_str().is_empty()) {
        let m = std::fs::metadata(dir).map_err(|e| {
            format!(
                "config file `{}` is not trusted: `{}` cannot be inspected ({e})",
                path.display(),
                dir.display()
            )
        })?;
        if seen.contains(&(m.dev(), m.ino())) {
            continue;
        }
        seen.push((m.dev(), m.ino()));
        chain.push(PathOwner {
            path: PathBuf::from(dir),
            owner: m.uid(),
            mode: m.mode(),
            is_dir: m.is_dir(),
        });
    }
    crate::core::state_rules::config_rule(path, &chain, uid)
}

#[cfg(not(unix))]
fn judge(_path: &Path, _opened: &std::fs::Metadata) -> Result<(), String> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn the_file_and_the_directories_on_disk_are_judged() {
        let chmod = |p: &Path, mode: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
        };
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("headroom");
        std::fs::create_dir(&dir).unwrap();
        chmod(&dir, 0o700);
        let file = dir.join("config.toml");
        std::fs::write(&file, "[probe]\n").unwrap();
        chmod(&file, 0o644);
        // Control: the user's own file in the user's own directory.
        let c = read(&file).unwrap();
        assert_eq!((c.text.as_str(), c.untrusted), ("[probe]\n", None));
        chmod(&file, 0o664);
        let why = read(&file).unwrap().untrusted.unwrap();
        assert!(why.contains("it has mode 0664"), "{why}");
        chmod(&file, 0o644);
        chmod(&dir, 0o777);
        let why = read(&file).unwrap().untrusted.unwrap();
        assert!(
            why.contains(&format!("`{}` has mode 0777", dir.display())),
            "{why}"
        );
        // A sticky directory others can write is not a hole.
        chmod(&dir, 0o1777);
        assert_eq!(read(&file).unwrap().untrusted, None);
        chmod(&dir, 0o700);
        // A link: judged where it is and where it leads.
        let other = t.path().join("dotfiles");
        std::fs::create_dir(&other).unwrap();
        let real = other.join("headroom.toml");
        std::fs::write(&real, "").unwrap();
        let link = dir.join("linked.toml");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert_eq!(read(&link).unwrap().untrusted, None);
        chmod(&other, 0o757);
        let why = read(&link).unwrap().untrusted.unwrap();
        assert!(
            why.contains(&format!("`{}` has mode 0757", other.display())),
            "{why}"
        );
        chmod(&other, 0o755);
        chmod(&dir, 0o770);
        let why = read(&link).unwrap().untrusted.unwrap();
        assert!(
            why.contains(&format!("`{}` has mode 0770", dir.display())),
            "{why}"
        );
        assert!(read(&t.path().join("missing")).is_err());
    }
}
