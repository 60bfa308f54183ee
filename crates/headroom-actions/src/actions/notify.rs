//! User notifications, best effort: a failure is reported to the caller (who logs it) and
//! never changes what headroom does. Never called on a polling path.
//!
//! - macOS: `osascript` `display notification` (reference notes §1g). The notification is
//!   attributed to Script Editor, has no icon, and clicking it opens Script Editor; macOS
//!   files it silently when Script Editor has not been allowed to notify (System Settings ▸
//!   Notifications), so the text carries everything the user needs. The title and message
//!   are passed as `argv` to a fixed script, never spliced into AppleScript source.
//! - Linux: `notify-send` when it is on `PATH`.
//!
//!
//! Nothing is posted when free slots are at or below 1 %: starting the helper needs the very
//! fork that is failing. `watch` posts through `Notifier`, which starts the helper without
//! waiting and collects its exit on a later round, so the loop never blocks and no helper is
//! left a zombie.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::actions::exec;

const TIMEOUT: Duration = Duration::from_secs(5);

/// The command line that shows a notification on this OS, or why there is none.
pub fn command(title: &str, message: &str) -> Result<Vec<String>, String> {
    let title = clean(title);
    let message = clean(message);
    if cfg!(target_os = "macos") {
        Ok(vec![
            "/usr/bin/osascript".into(),
            "-e".into(),
            "on run argv".into(),
            "-e".into(),
            "display notification (item 2 of argv) with title (item 1 of argv)".into(),
            "-e".into(),
            "end run".into(),
            title,
            message,
        ])
    } else if cfg!(target_os = "linux") {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let bin = find_in(std::env::split_paths(&path), "notify-send")
            .ok_or("`notify-send` is not installed")?;
        Ok(vec![
            bin.to_string_lossy().into_owned(),
            "--app-name=headroom".into(),
            title,
            message,
        ])
    } else {
        Err(format!(
            "notifications are unsupported on {}",
            std::env::consts::OS
        ))
    }
}

/// Show a notification; `Err` says why it was not shown.
pub fn send(title: &str, message: &str) -> Result<(), String> {
    let argv = command(title, message)?;
    let out = exec::run(&argv, TIMEOUT)?;
    if out.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed: {}", argv[0], out.describe()))
    }
}

/// No notification at or below this fraction of free slots.
pub(crate) const MIN_FREE_FRACTION: f64 = 0.01;

/// Whether posting is allowed at this usage.
pub fn allowed(free_slots: Option<u64>, limit: Option<u64>) -> bool {
    match (free_slots, limit) {
        (Some(free), Some(limit)) if limit > 0 => free as f64 / limit as f64 > MIN_FREE_FRACTION,
        // An unknown limit is no evidence of pressure; a notification is harmless to try.
        _ => true,
    }
}

/// Posts without waiting, and collects the helpers' exits later.
#[derive(Debug, Default)]
pub struct Notifier {
    pending: Vec<Child>,
}

impl Notifier {
    /// Start the helper; `Err` says why nothing was posted.
    pub fn post(&mut self, title: &str, message: &str) -> Result<(), String> {
        self.collect();
        let argv = command(title, message)?;
        let (prog, args) = argv.split_first().ok_or("empty notifier command")?;
        let child = Command::new(prog)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start `{prog}`: {e}"))?;
        self.pending.push(child);
        Ok(())
    }

    /// The helpers still running (or not yet collected).
    pub(crate) fn pids(&self) -> Vec<i32> {
        self.pending.iter().map(|c| c.id() as i32).collect()
    }

    /// Drop the handle of `pid`, reaped by someone else (`run`'s `waitpid(-1)`): its pid
    /// may be reused and must not be taken for a helper's. Nothing is signalled or waited.
    pub(crate) fn forget(&mut self, pid: i32) {
        self.pending.retain(|c| c.id() as i32 != pid);
    }

    /// Reap helpers that have finished (non-blocking).
    pub fn collect(&mut self) {
        self.pending
            .retain_mut(|c| matches!(c.try_wait(), Ok(None)));
    }

    /// Wait for the helpers still running (at exit).
    pub fn finish(&mut self) {
        for mut c in self.pending.drain(..) {
            let _ = c.wait();
        }
    }
}

fn find_in(dirs: impl Iterator<Item = PathBuf>, name: &str) -> Option<PathBuf> {
    dirs.map(|d| d.join(name)).find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

/// Control characters out (app names come from other programs), length bounded.
fn clean(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(400)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_passed_as_arguments_never_as_script_source() {
        match command("headroom", "Editor \"quoted\" \u{7}bell") {
            Ok(argv) => {
                let n = argv.len();
                assert_eq!(argv[n - 2], "headroom");
                assert_eq!(argv[n - 1], "Editor \"quoted\"  bell");
                assert!(argv[..n - 2].iter().all(|a| !a.contains("Editor")));
            }
            // No notify-send on this machine: that is a reason, not a panic.
            Err(e) => assert!(
                e.contains("notify-send") || e.contains("unsupported"),
                "{e}"
            ),
        }
    }

    #[test]
    fn never_at_or_below_one_percent_free() {
        assert!(!allowed(Some(0), Some(2666)));
        assert!(!allowed(Some(26), Some(2666)), "0.98 %");
        assert!(allowed(Some(27), Some(2666)));
        assert!(allowed(None, None));
    }

    #[test]
    fn notifier_is_found_only_when_executable() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("notify-send");
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        assert!(find_in(std::iter::once(d.path().to_path_buf()), "notify-send").is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert_eq!(
                find_in(std::iter::once(d.path().to_path_buf()), "notify-send"),
                Some(p)
            );
        }
    }
}
