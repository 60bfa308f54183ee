//! User notifications, best effort and never on the polling path: they are posted only on a
//! threshold crossing or after a cleanup, by a helper process that is started and not waited
//! for (its exit is collected on a later round, so it never becomes a zombie of ours).
//!
//! - macOS: `osascript -e 'display notification …'`. Caveats (reference notes 1g): it is
//!   attributed to Script Editor, carries no icon, may be filed silently until Script Editor
//!   is allowed to notify in System Settings ▸ Notifications, and clicking it opens Script
//!   Editor. The actionable command is therefore in the body text.
//! - Linux: `notify-send` when it is on the PATH; otherwise nothing (the evidence log and the
//!   JSON Lines stream still carry the event).
//!
//! Nothing is posted when free slots are at or below 1 %: starting the helper needs the very
//! fork that is failing.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// No notification at or below this fraction of free slots.
pub const MIN_FREE_FRACTION: f64 = 0.01;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    pub title: String,
    pub body: String,
}

/// Whether posting is allowed at this usage.
pub fn allowed(free_slots: Option<u64>, limit: Option<u64>) -> bool {
    match (free_slots, limit) {
        (Some(free), Some(limit)) if limit > 0 => free as f64 / limit as f64 > MIN_FREE_FRACTION,
        // Unknown limit: there is no evidence of pressure, and no evidence of room either;
        // a notification is harmless enough to try.
        _ => true,
    }
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// AppleScript string literal.
fn applescript_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The command that would post `n` on this OS, if any.
pub fn command(n: &Notification) -> Option<(PathBuf, Vec<String>)> {
    if cfg!(target_os = "macos") {
        let script = format!(
            "display notification {} with title {}",
            applescript_quote(&n.body),
            applescript_quote(&n.title)
        );
        Some((
            PathBuf::from("/usr/bin/osascript"),
            vec!["-e".into(), script],
        ))
    } else {
        let prog = on_path("notify-send")?;
        Some((
            prog,
            vec![
                "--app-name=headroom".into(),
                n.title.clone(),
                n.body.clone(),
            ],
        ))
    }
}

/// Posts notifications and collects the helpers' exits.
#[derive(Debug, Default)]
pub struct Notifier {
    pending: Vec<Child>,
}

impl Notifier {
    /// Start the helper; returns why nothing was posted, if so.
    pub fn post(&mut self, n: &Notification) -> Result<(), String> {
        self.collect();
        let Some((prog, args)) = command(n) else {
            return Err("no notifier on this system (notify-send not found)".into());
        };
        let child = Command::new(&prog)
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", prog.display()))?;
        self.pending.push(child);
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_at_or_below_one_percent_free() {
        assert!(!allowed(Some(0), Some(2666)));
        assert!(!allowed(Some(26), Some(2666)), "0.98 %");
        assert!(allowed(Some(27), Some(2666)));
        assert!(allowed(None, None));
    }

    #[test]
    fn applescript_strings_are_escaped() {
        assert_eq!(applescript_quote(r#"a "b" \c"#), r#""a \"b\" \\c""#);
    }
}
