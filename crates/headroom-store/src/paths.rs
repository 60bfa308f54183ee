//! Where state, logs and config live. `HEADROOM_HOME` overrides all of them (tests use it):
//! state goes straight into it and the config file is `$HEADROOM_HOME/config.toml`.
//!
//! - macOS state: `~/Library/Application Support/headroom/`
//! - Linux state: `${XDG_STATE_HOME:-~/.local/state}/headroom/`
//! - config: `${XDG_CONFIG_HOME:-~/.config}/headroom/config.toml`

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

fn env_dir(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn home() -> Result<PathBuf> {
    env_dir("HOME").context("cannot locate headroom's files: HOME is not set (set HEADROOM_HOME)")
}

/// The state directory (not created here).
pub fn state_dir() -> Result<PathBuf> {
    if let Some(h) = env_dir("HEADROOM_HOME") {
        return Ok(h);
    }
    if cfg!(target_os = "macos") {
        return Ok(home()?.join("Library/Application Support/headroom"));
    }
    Ok(match env_dir("XDG_STATE_HOME") {
        Some(d) => d.join("headroom"),
        None => home()?.join(".local/state/headroom"),
    })
}

/// The state directory for a reader: `None` when it does not exist yet (nothing recorded),
/// an error when it exists but cannot be used (a file, or unreadable), so that "no evidence
/// yet" is never said of a directory that could not be looked into.
pub fn existing_state_dir() -> Result<Option<PathBuf>> {
    let dir = state_dir()?;
    match std::fs::metadata(&dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e).with_context(|| format!("cannot use state directory `{}`", dir.display())),
        Ok(m) if !m.is_dir() => bail!("state directory `{}` is not a directory", dir.display()),
        Ok(_) => {
            std::fs::read_dir(&dir)
                .with_context(|| format!("cannot read state directory `{}`", dir.display()))?;
            Ok(Some(dir))
        }
    }
}

/// The default config file.
pub fn config_file() -> Result<PathBuf> {
    if let Some(h) = env_dir("HEADROOM_HOME") {
        return Ok(h.join("config.toml"));
    }
    Ok(match env_dir("XDG_CONFIG_HOME") {
        Some(d) => d.join("headroom/config.toml"),
        None => home()?.join(".config/headroom/config.toml"),
    })
}

/// Create the state directory (mode 0700) and return it; the error names the path.
pub fn ensure_state_dir() -> Result<PathBuf> {
    let dir = state_dir()?;
    create_private_dir(&dir)?;
    Ok(dir)
}

pub fn create_private_dir(dir: &std::path::Path) -> Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => return check_linked_dir(dir),
        Ok(m) if m.is_dir() => return Ok(()),
        _ => {}
    }
    // Said in the user's words: `mkdir` on a file fails with "File exists".
    if dir.exists() {
        bail!("state directory `{}` is not a directory", dir.display());
    }
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
        .with_context(|| format!("cannot create state directory `{}`", dir.display()))?;
    if !dir.is_dir() {
        bail!("state directory `{}` is not a directory", dir.display());
    }
    Ok(())
}

/// A state directory that is a symbolic link is used only when it leads to a directory of
/// this user's own: one replaced by a link to another user's directory or file (or to
/// nothing, where creating it would follow the link) is refused, so no write follows it.
fn check_linked_dir(dir: &std::path::Path) -> Result<()> {
    let target = std::fs::read_link(dir)
        .map(|t| t.display().to_string())
        .unwrap_or_else(|_| "?".into());
    let refuse = |why: String| {
        anyhow::anyhow!(
            "state directory `{}` is a symbolic link to `{target}`, {why}: headroom does not \
             write through it (remove the link, or point it at a directory of your own)",
            dir.display()
        )
    };
    let meta = match std::fs::metadata(dir) {
        Ok(m) => m,
        Err(e) => return Err(refuse(format!("which cannot be followed ({e})"))),
    };
    if !meta.is_dir() {
        return Err(refuse("which is not a directory".into()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let me = crate::platform::current_uid();
        if meta.uid() != me {
            return Err(refuse(format!(
                "a directory of uid {}, not yours (uid {me})",
                meta.uid()
            )));
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::create_private_dir;

    #[test]
    fn a_linked_state_dir_is_used_only_when_it_leads_to_a_directory_of_ours() {
        let t = tempfile::tempdir().unwrap();
        let own = t.path().join("own");
        std::fs::create_dir(&own).unwrap();
        let file = t.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let link = |name: &str, to: &std::path::Path| {
            let l = t.path().join(name);
            std::os::unix::fs::symlink(to, &l).unwrap();
            l
        };
        // Control: a link to the user's own directory (dotfiles) is followed.
        create_private_dir(&link("to-own", &own)).unwrap();
        let e = create_private_dir(&link("to-file", &file)).unwrap_err();
        assert!(format!("{e}").contains("not a directory"), "{e}");
        let gone = t.path().join("gone");
        let e = create_private_dir(&link("dangling", &gone)).unwrap_err();
        assert!(format!("{e}").contains("cannot be followed"), "{e}");
        assert!(!gone.exists(), "created through a dangling link");
    }
}
