//! `watch` as a service: who started it, one guard per user, and its own program replaced.
//!
//! Every service definition headroom writes or ships (the LaunchAgent, the systemd unit, the
//! formula's service block) sets `HEADROOM_SERVICE` to its label, and every one restarts the
//! guard when it exits non-zero or dies by a signal, never when it exits 0 (launchd
//! `KeepAlive = {SuccessfulExit = false}`, systemd `Restart=on-failure`). So:
//!
//! - **Another guard holds `watch.lock`.** Started by hand, this one refuses (exit 3, as
//!   any refusal). Under a service, when the holder is another service's long-running
//!   guard (both `brew services` and the login item registered), this one says which and
//!   exits 0: its manager leaves it stopped, instead of respawning it every 10 s forever.
//!   When the holder is a `--once`, a guard started by hand or one that does not say (an
//!   older headroom), it waits and guards the moment that one lets go, since exiting 0
//!   would leave nobody guarding once the holder stops.
//! - **Its program is replaced** (`brew upgrade` moves the `opt` link and deletes the old
//!   keg; the running guard keeps running the old code, and would write an older evidence
//!   layout beside the new CLI's). Each round stats the path it was started by; when that
//!   is another file, it says so once. Under a service it then exits 75 after the round, so
//!   its manager starts the new program; by hand it keeps guarding with the old one and
//!   says how to restart.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;

use crate::actions::login_item::SERVICE_ENV;
use crate::commands::Ctx;
use crate::exit::RefusedError;
use crate::platform::own_program::{self, FileId};
use crate::store::fsio::Lock;
use crate::store::guard::{self, LockHolder, Taken};

/// The label this process was started under (`HEADROOM_SERVICE`), when it is one: a
/// launchd label or a systemd unit name (letters, digits, `.`, `-`, `_`, `@`, `:`; at most
/// 255). Anything else is not a label, and the guard acts as one started by hand.
pub(crate) fn own_label() -> Option<String> {
    label_from(std::env::var_os(SERVICE_ENV).as_deref())
}

fn label_from(v: Option<&std::ffi::OsStr>) -> Option<String> {
    let v = v?.to_str()?;
    let ok = !v.is_empty()
        && v.len() <= 255
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-_@:".contains(c));
    ok.then(|| v.to_string())
}

/// What a guard does when another holds the lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum WhenBusy {
    /// Started by hand: refuse (exit 3) with this message.
    Refuse(String),
    /// Under a service, another service's guard runs: say this and exit 0.
    Leave(String),
    /// Under a service, the holder may stop any time: say this and wait for the lock.
    Wait(String),
}

/// The rule above, over who this guard is (`own`, its label) and who holds `lock`.
pub(crate) fn when_busy(own: Option<&str>, holder: Option<&LockHolder>, lock: &Path) -> WhenBusy {
    let who = holder.map_or_else(
        || "another `headroom watch` (one that does not say who it is)".to_string(),
        LockHolder::describe,
    );
    match (own, holder) {
        (None, _) => WhenBusy::Refuse(format!(
            "another `headroom watch` is running for this user: {who} holds `{}`; one guard \
             at a time: stop it, or run `headroom probe`/`reap` for a one-off",
            lock.display()
        )),
        (Some(me), Some(h)) if h.label.is_some() && !h.once => WhenBusy::Leave(format!(
            "{who} already guards this user; `{me}` leaves it to that one and exits 0, so \
             that its service manager does not start it again. Two services run headroom: \
             keep one (`headroom doctor` lists them)"
        )),
        (Some(me), _) => WhenBusy::Wait(format!(
            "{who} holds `{}`; `{me}` waits, and guards as soon as it stops",
            lock.display()
        )),
    }
}

/// The outcome of taking the guard lock.
#[derive(Debug)]
pub(crate) enum Single {
    /// This process guards; the lock (when the state directory could be used) is held
    /// for as long as the value lives.
    Guard(Option<Lock>),
    /// Leave (exit 0): another service's guard runs.
    Leave,
    /// A signal asked to stop while waiting for the lock.
    Stopped,
}

/// How often a waiting guard tries the lock again (a non-blocking `flock`, then a sleep on
/// the stop flag's pipe, so SIGTERM ends the wait at once).
const RETRY: Duration = Duration::from_secs(1);

/// `watch.lock`, held for the life of the guard, with who holds it written in; a refusal,
/// a leave or a wait (`when_busy`) when another guard has it. A state directory that
/// cannot be made is no reason not to guard: that is reported by the first round, and the
/// guard runs unlocked.
pub(crate) fn single(ctx: &Ctx<'_>, once: bool, label: Option<&str>) -> Result<Single> {
    let Ok(dir) = crate::store::paths::ensure_state_dir() else {
        return Ok(Single::Guard(None));
    };
    let program = own_program::invoked().map(|p| p.display().to_string());
    let mut told = false;
    loop {
        let me = LockHolder {
            pid: std::process::id(),
            label: label.map(str::to_string),
            once,
            locked_at: crate::core::time::format_ms(crate::platform::now_ms()),
            version: env!("CARGO_PKG_VERSION").to_string(),
            program: program.clone(),
        };
        match guard::try_take(&dir, &me) {
            Ok(Taken::Held(l)) => {
                if told {
                    ctx.printer.stderr_line(&format!(
                        "headroom: `{}` took over: the other guard stopped",
                        label.unwrap_or("watch")
                    ));
                }
                return Ok(Single::Guard(Some(l)));
            }
            Ok(Taken::Busy(holder)) => {
                match when_busy(label, holder.as_ref(), &guard::lock_path(&dir)) {
                    WhenBusy::Refuse(m) => return Err(RefusedError(m).into()),
                    WhenBusy::Leave(m) => {
                        ctx.printer.stderr_line(&format!("headroom: {m}"));
                        return Ok(Single::Leave);
                    }
                    WhenBusy::Wait(m) => {
                        if !told {
                            ctx.printer.stderr_line(&format!("headroom: {m}"));
                            told = true;
                        }
                    }
                }
            }
            Err(_) => return Ok(Single::Guard(None)),
        }
        crate::platform::stop_flag::sleep(RETRY);
        if crate::platform::stop_flag::requested().is_some() {
            return Ok(Single::Stopped);
        }
    }
}

/// What became of the program this guard was started by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ProgramChange {
    /// The path now names another file: an upgrade, or a rebuild.
    Replaced(PathBuf),
    /// Nothing is there any more (uninstalled).
    Gone(PathBuf),
}

/// How often, at most, the program on disk is looked at: an upgrade is noticed within this
/// (within a round when rounds are further apart, as at the default 60 s), and a quiet round
/// at 1 s, otherwise three system calls and its wait, makes the `statx` (a walk of the
/// whole path) one round in five.
pub(crate) const PROGRAM_EVERY: Duration = Duration::from_secs(5);

/// The path this guard was started by and the file it named then, looked at after a round
/// at most every `PROGRAM_EVERY`.
#[derive(Debug)]
pub(crate) struct ProgramWatch {
    path: PathBuf,
    at_start: FileId,
    told: bool,
    /// When it was last looked at (monotonic); `None` before the first round.
    looked: Option<Instant>,
}

impl ProgramWatch {
    /// The invoked path and its file now; `None` when either cannot be read (nothing to
    /// compare against later).
    pub(crate) fn at_start() -> Option<Self> {
        let path = own_program::invoked()?;
        let at_start = own_program::file_id(&path).ok()?;
        Some(Self {
            path,
            at_start,
            told: false,
            looked: None,
        })
    }

    /// A change, the first time one is seen (one `stat` of the path, unless the last was
    /// less than `PROGRAM_EVERY` before `now`); `None` after that, so it is said once. A read
    /// that fails for another reason than a missing file says nothing: an unreadable path is
    /// no sign of an upgrade.
    pub(crate) fn check(&mut self, now: Instant) -> Option<ProgramChange> {
        if self.told
            || self
                .looked
                .is_some_and(|at| now.saturating_duration_since(at) < PROGRAM_EVERY)
        {
            return None;
        }
        self.looked = Some(now);
        let change = match own_program::file_id(&self.path) {
            Ok(now) if now == self.at_start => return None,
            Ok(_) => ProgramChange::Replaced(self.path.clone()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                ProgramChange::Gone(self.path.clone())
            }
            Err(_) => return None,
        };
        self.told = true;
        Some(change)
    }
}

/// What to say about a change, and whether to exit to be restarted (only a replaced
/// program under a service: restarting a gone one would fail to start, again and again).
pub(crate) fn on_change(change: &ProgramChange, label: Option<&str>) -> (String, bool) {
    match (change, label) {
        (ProgramChange::Replaced(p), Some(l)) => (
            format!(
                "headroom's program `{}` was replaced (an upgrade?) since this guard started: \
                 stopping after this round with exit 75, so that `{l}` starts the new one",
                p.display()
            ),
            true,
        ),
        (ProgramChange::Replaced(p), None) => (
            format!(
                "headroom's program `{}` was replaced (an upgrade?) since this guard started; \
                 it goes on running the old one: stop it and start `headroom watch` again to \
                 run the new one",
                p.display()
            ),
            false,
        ),
        (ProgramChange::Gone(p), _) => (
            format!(
                "headroom's program `{}` is gone (uninstalled?); this guard goes on running \
                 until it is stopped",
                p.display()
            ),
            false,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(label: Option<&str>, once: bool) -> LockHolder {
        LockHolder {
            pid: 812,
            label: label.map(str::to_string),
            once,
            locked_at: "2026-12-02T10:00:00Z".into(),
            version: "0.1.0".into(),
            program: None,
        }
    }

    #[test]
    fn only_a_label_made_of_label_characters_counts() {
        use std::ffi::OsStr;
        assert_eq!(
            label_from(Some(OsStr::new("homebrew.mxcl.headroom"))).as_deref(),
            Some("homebrew.mxcl.headroom")
        );
        assert_eq!(
            label_from(Some(OsStr::new("headroom-watch.service"))).as_deref(),
            Some("headroom-watch.service")
        );
        for bad in ["", "two words", "a\u{1b}[31m", &"x".repeat(256)] {
            assert_eq!(label_from(Some(OsStr::new(bad))), None, "{bad:?}");
        }
        assert_eq!(label_from(None), None);
    }

    #[test]
    fn a_service_guard_leaves_another_services_guard_but_waits_for_anything_shorter_lived() {
        let lock = Path::new("/s/watch.lock");
        let me = Some("dev.headroom.watch");
        // The breaking input of #27 item 7: both services registered. Leave, naming it.
        let brew = holder(Some("homebrew.mxcl.headroom"), false);
        match when_busy(me, Some(&brew), lock) {
            WhenBusy::Leave(m) => assert!(
                m.contains("`homebrew.mxcl.headroom` (pid 812) already guards")
                    && m.contains("exits 0"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
        // Controls: a holder that lets go soon, or may — wait rather than leave nobody.
        for h in [
            Some(holder(Some("homebrew.mxcl.headroom"), true)),
            Some(holder(None, false)),
            None,
        ] {
            assert!(
                matches!(when_busy(me, h.as_ref(), lock), WhenBusy::Wait(_)),
                "{h:?}"
            );
        }
        // By hand: refuse, whoever holds it, saying who.
        match when_busy(None, Some(&brew), lock) {
            WhenBusy::Refuse(m) => assert!(
                m.contains("`homebrew.mxcl.headroom` (pid 812)") && m.contains("watch.lock"),
                "{m}"
            ),
            other => panic!("{other:?}"),
        }
        assert!(matches!(when_busy(None, None, lock), WhenBusy::Refuse(_)));
    }

    #[test]
    fn only_a_replaced_program_under_a_service_exits_to_be_restarted() {
        let p = PathBuf::from("/opt/homebrew/opt/headroom/bin/headroom");
        let replaced = ProgramChange::Replaced(p.clone());
        let (m, exit) = on_change(&replaced, Some("homebrew.mxcl.headroom"));
        assert!(exit && m.contains("exit 75"), "{m}");
        assert!(!on_change(&replaced, None).1);
        assert!(!on_change(&ProgramChange::Gone(p), Some("x")).1);
    }

    #[test]
    fn a_program_replaced_by_rename_is_seen_once_and_an_unchanged_one_never() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("headroom");
        std::fs::write(&path, b"old").unwrap();
        let t = Instant::now();
        let mut w = watching(&path);
        assert_eq!(w.check(t), None, "unchanged");
        let new = d.path().join("headroom.new");
        std::fs::write(&new, b"new").unwrap();
        std::fs::rename(&new, &path).unwrap();
        let later = t + PROGRAM_EVERY;
        assert_eq!(w.check(later), Some(ProgramChange::Replaced(path.clone())));
        assert_eq!(w.check(later + PROGRAM_EVERY), None, "said once");
        let mut gone = watching(&path);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(gone.check(t), Some(ProgramChange::Gone(path)));
    }

    fn watching(path: &Path) -> ProgramWatch {
        ProgramWatch {
            at_start: own_program::file_id(path).unwrap(),
            path: path.to_path_buf(),
            told: false,
            looked: None,
        }
    }

    /// The program is looked at no more often than `PROGRAM_EVERY`: a replacement just
    /// after a look waits for the next (breaking input), and is seen once that much time
    /// has passed (control).
    #[test]
    fn the_program_is_looked_at_once_every_program_every() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("headroom");
        std::fs::write(&path, b"old").unwrap();
        let t = Instant::now();
        let mut w = watching(&path);
        assert_eq!(w.check(t), None, "the first round looks: unchanged");
        std::fs::remove_file(&path).unwrap();
        let soon = t + PROGRAM_EVERY - Duration::from_millis(1);
        assert_eq!(w.check(soon), None, "not looked at again yet");
        assert_eq!(
            w.check(t + PROGRAM_EVERY),
            Some(ProgramChange::Gone(path)),
            "looked at again"
        );
    }
}
