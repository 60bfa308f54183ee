//! macOS: the LaunchAgent — the plist written and checked, and `launchctl` bootstrapping,
//! booting out and printing it through `Exec` (a bootstrap racing an earlier bootout is
//! retried with a backoff).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use super::{
    BOOTOUT_WAIT, BREW_LABEL, Backend, Exec, LABEL, SERVICE_ENV, Status, out_text,
    remove_if_present,
};

/// `launchctl print` of a service the domain does not hold (reference notes §1f).
const LAUNCHCTL_NOT_FOUND: i32 = 113;
/// `launchctl bootstrap` while the label is still (or already) loaded.
const LAUNCHCTL_EIO: i32 = 5;

/// Doubling pauses, 50 ms up to 1 s each, within one overall budget.
#[derive(Debug)]
struct Backoff {
    waited: Duration,
    step: Duration,
    budget: Duration,
}

impl Backoff {
    fn new(budget: Duration) -> Self {
        Self {
            waited: Duration::ZERO,
            step: Duration::from_millis(50),
            budget,
        }
    }

    /// Pause once through `exec`; false when the budget is spent.
    fn pause(&mut self, exec: &dyn Exec) -> bool {
        if self.waited >= self.budget {
            return false;
        }
        let d = self.step.min(self.budget - self.waited);
        exec.pause(d);
        self.waited += d;
        self.step = (self.step * 2).min(Duration::from_secs(1));
        true
    }
}

/// The LaunchAgent: absolute binary path (one that survives an upgrade:
/// `core::program_path`), `watch`, RunAtLoad, logs under the state directory, and:
///
/// - `KeepAlive = {SuccessfulExit = false}`: restarted whenever it exits non-zero or dies by
///   a signal, not when it exits 0. `watch` exits 0 when it was stopped (SIGTERM) or when
///   another service's guard already holds the lock, so two registered guards do not
///   respawn each other every 10 s forever; it exits 75 to be restarted (SIGHUP, its
///   program replaced by an upgrade). `KeepAlive = true` restarted even the refused one.
/// - `ProcessType = Interactive`: launchd.plist(5) gives Background jobs the lowest CPU and
///   I/O tier and leaves `Standard` (the default) "light resource limits … throttling its
///   CPU usage and I/O bandwidth"; the guard has to act exactly when a runaway build
///   saturates the machine, and it costs about 12 ms of CPU a minute (README), so it runs
///   with "the same resource limitations as apps, that is to say, none".
/// - `EnvironmentVariables = {HEADROOM_SERVICE = dev.headroom.watch}` (`SERVICE_ENV`).
pub(crate) fn launch_agent(program: &Path, log: &Path) -> plist::Value {
    let mut d = plist::Dictionary::new();
    d.insert("Label".into(), LABEL.into());
    d.insert(
        "ProgramArguments".into(),
        plist::Value::Array(vec![program.display().to_string().into(), "watch".into()]),
    );
    d.insert("RunAtLoad".into(), true.into());
    let mut keep_alive = plist::Dictionary::new();
    keep_alive.insert("SuccessfulExit".into(), false.into());
    d.insert("KeepAlive".into(), keep_alive.into());
    d.insert("ProcessType".into(), "Interactive".into());
    let mut env = plist::Dictionary::new();
    env.insert(SERVICE_ENV.into(), LABEL.into());
    d.insert("EnvironmentVariables".into(), env.into());
    d.insert("StandardOutPath".into(), log.display().to_string().into());
    d.insert("StandardErrorPath".into(), log.display().to_string().into());
    plist::Value::Dictionary(d)
}

/// What is wrong with a registered `program` that exists, or `None`: one inside a Homebrew
/// keg dies with the next `brew upgrade` (agents registered before #27 item 4 point there).
pub(super) fn program_problem(program: &str) -> Option<String> {
    if !Path::new(program).is_file() {
        return Some(format!(
            "the registered program `{program}` is gone: run `headroom login-item register` again"
        ));
    }
    crate::core::program_path::keg(Path::new(program)).map(|k| {
        format!(
            "the registered program `{program}` is inside Homebrew's keg for {} {}, which the \
             next `brew upgrade` deletes: run `headroom login-item register` again",
            k.formula, k.version
        )
    })
}

/// Check a plist on disk is a LaunchAgent headroom can vouch for.
pub(crate) fn check_plist(path: &Path) -> Result<(), String> {
    let v = plist::Value::from_file(path)
        .map_err(|e| format!("`{}` is not a valid plist: {e}", path.display()))?;
    let d = v
        .as_dictionary()
        .ok_or_else(|| format!("`{}` is not a plist dictionary", path.display()))?;
    if d.get("Label").and_then(|l| l.as_string()) != Some(LABEL) {
        return Err(format!(
            "`{}` does not carry the label `{LABEL}`",
            path.display()
        ));
    }
    let args: Vec<&str> = d
        .get("ProgramArguments")
        .and_then(|a| a.as_array())
        .map(|a| a.iter().filter_map(|x| x.as_string()).collect())
        .unwrap_or_default();
    let program = match args.as_slice() {
        [program, "watch"] => *program,
        _ => {
            return Err(format!(
                "`{}` does not run `headroom watch`",
                path.display()
            ));
        }
    };
    if let Some(p) = program_problem(program) {
        return Err(p);
    }
    // What this headroom would write for the same program and log: an agent written by an
    // older one (KeepAlive = true, ProcessType = Background) is worth replacing.
    let log = d
        .get("StandardOutPath")
        .and_then(|l| l.as_string())
        .unwrap_or_default();
    let want = launch_agent(Path::new(program), Path::new(log));
    let differ: Vec<&str> = want
        .as_dictionary()
        .into_iter()
        .flat_map(|w| w.iter())
        .filter(|(k, v)| d.get(k) != Some(*v))
        .map(|(k, _)| k.as_str())
        .chain(
            d.keys()
                .map(String::as_str)
                .filter(|k| want.as_dictionary().is_some_and(|w| !w.contains_key(k))),
        )
        .collect();
    if differ.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "it differs from what this headroom writes (`{}`): run `headroom login-item register` again",
            differ.join("`, `")
        ))
    }
}

#[derive(Debug)]
pub struct Launchd<'a> {
    pub exec: &'a dyn Exec,
    pub uid: u32,
    pub agents_dir: PathBuf,
}

impl Launchd<'_> {
    pub(crate) fn plist_path(&self) -> PathBuf {
        self.agents_dir.join(format!("{LABEL}.plist"))
    }

    fn domain(&self) -> String {
        format!("gui/{}", self.uid)
    }

    /// The agent as launchctl addresses it: `gui/UID/LABEL`.
    fn target(&self) -> String {
        format!("{}/{LABEL}", self.domain())
    }

    /// Whether `brew services` already runs headroom.
    pub fn brew_service(&self) -> bool {
        if self.agents_dir.join(format!("{BREW_LABEL}.plist")).exists() {
            return true;
        }
        let target = format!("{}/{BREW_LABEL}", self.domain());
        self.exec
            .run("launchctl", &["print", &target])
            .is_ok_and(|o| o.status.success())
    }

    pub fn register(&self, program: &Path, log: &Path) -> Result<()> {
        std::fs::create_dir_all(&self.agents_dir)
            .with_context(|| format!("cannot create `{}`", self.agents_dir.display()))?;
        let mut bytes = Vec::new();
        launch_agent(program, log)
            .to_writer_xml(&mut bytes)
            .context("cannot encode the LaunchAgent plist")?;
        crate::store::fsio::atomic_write(&self.plist_path(), &bytes)?;
        // Idempotent: unload a previous copy (not loaded is fine: exit 3), then load this
        // one. bootout finishes asynchronously: wait until `print` no longer finds the job,
        // and retry a bootstrap that still meets it (exit 5), both within BOOTOUT_WAIT.
        let target = self.target();
        let mut backoff = Backoff::new(BOOTOUT_WAIT);
        let was_loaded = self
            .exec
            .run("launchctl", &["bootout", &target])
            .is_ok_and(|o| o.status.success());
        if was_loaded {
            loop {
                let gone = self
                    .exec
                    .run("launchctl", &["print", &target])
                    .map_or(true, |o| o.status.code() == Some(LAUNCHCTL_NOT_FOUND));
                if gone || !backoff.pause(self.exec) {
                    break;
                }
            }
        }
        let plist = self.plist_path().display().to_string();
        loop {
            let o = self
                .exec
                .run("launchctl", &["bootstrap", &self.domain(), &plist])
                .context("cannot run launchctl")?;
            if o.status.success() {
                return Ok(());
            }
            if o.status.code() == Some(LAUNCHCTL_EIO) && backoff.pause(self.exec) {
                continue;
            }
            anyhow::bail!(
                "launchctl bootstrap {} {plist} failed (exit {}{}): {}",
                self.domain(),
                o.status.code().unwrap_or(-1),
                if o.status.code() == Some(LAUNCHCTL_EIO) {
                    format!(
                        ", still after {} s of waiting for the previous copy to leave",
                        BOOTOUT_WAIT.as_secs()
                    )
                } else {
                    String::new()
                },
                out_text(&o).trim()
            );
        }
    }

    pub fn unregister(&self) -> Result<bool> {
        let target = self.target();
        let _ = self.exec.run("launchctl", &["bootout", &target]);
        remove_if_present(&self.plist_path())
    }

    pub fn status(&self) -> Status {
        let path = self.plist_path();
        let registered = path.exists();
        let problem = if registered {
            check_plist(&path).err()
        } else {
            None
        };
        let target = self.target();
        let (loaded, running_pid, raw) = match self.exec.run("launchctl", &["print", &target]) {
            Ok(o) => {
                let text = out_text(&o);
                let field = |k: &str| {
                    text.lines()
                        .find_map(|l| l.trim().strip_prefix(k).map(|v| v.trim().to_string()))
                };
                let state = field("state = ").unwrap_or_else(|| "-".into());
                let pid = field("pid = ").and_then(|p| p.parse().ok());
                (
                    o.status.success(),
                    pid,
                    format!(
                        "launchctl print exit={} state={state}",
                        o.status.code().unwrap_or(-1)
                    ),
                )
            }
            Err(e) => (false, None, format!("launchctl unavailable: {e}")),
        };
        Status {
            backend: Backend::Launchd,
            name: LABEL.into(),
            path: path.display().to_string(),
            registered,
            valid: registered && problem.is_none(),
            effective: registered && problem.is_none() && loaded,
            problem,
            loaded,
            running_pid,
            raw,
            crontab: None,
        }
    }
}
