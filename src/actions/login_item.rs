//! Start `headroom watch` at login: a LaunchAgent on macOS, a systemd user unit on Linux, a
//! crontab line where neither exists. Status is read back from the service manager — an
//! autostart that is asserted rather than read back is one reboot from gone.
//!
//! `launchctl` and `systemctl` are run through `Exec` so the exact sequences are tested with
//! a fake; they run only here, never on a polling path.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

/// The LaunchAgent label (macOS).
pub const LABEL: &str = "dev.headroom.watch";
/// What `brew services` names it on macOS; two watchers must not run at once.
pub const BREW_LABEL: &str = "homebrew.mxcl.headroom";
/// What `brew services` names it on Linux (Homebrew's `service.rb`: `homebrew.<formula>`).
pub const BREW_UNIT: &str = "homebrew.headroom.service";
/// The systemd user unit (Linux).
pub const UNIT: &str = "headroom-watch.service";
/// The environment variable every service definition headroom writes or ships (this
/// LaunchAgent and unit, the formula's service block) sets to its own label: how `watch`
/// knows a service manager started it, and under which name (`commands::watch::single`).
pub const SERVICE_ENV: &str = "HEADROOM_SERVICE";

/// Runs a helper program; faked in tests.
pub trait Exec {
    fn run(&self, program: &str, args: &[&str]) -> std::io::Result<Output>;
    /// Waits between two attempts (a fake advances a virtual clock instead).
    fn pause(&self, d: Duration) {
        std::thread::sleep(d);
    }
}

/// How long `register` gives an earlier copy of the agent to leave: `launchctl bootout`
/// returns before launchd has removed the job, and a `bootstrap` in that window exits 5
/// ("Input/output error") for up to a few seconds.
pub const BOOTOUT_WAIT: Duration = Duration::from_secs(10);

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

impl std::fmt::Debug for dyn Exec + '_ {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Exec")
    }
}

/// Real process execution (off the polling path by construction: only `login-item` uses it).
#[derive(Debug, Clone, Copy, Default)]
pub struct RealExec;

impl Exec for RealExec {
    fn run(&self, program: &str, args: &[&str]) -> std::io::Result<Output> {
        std::process::Command::new(program)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    Launchd,
    Systemd,
    /// Neither: a crontab line is printed for the user to install.
    Cron,
}

fn empty_as_null<S: serde::Serializer>(v: &str, s: S) -> Result<S::Ok, S::Error> {
    if v.is_empty() {
        s.serialize_none()
    } else {
        s.serialize_str(v)
    }
}

/// The state read back from the service manager.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Status {
    pub backend: Backend,
    pub name: String,
    /// The agent/unit file; `null` in JSON when there is none (the crontab fallback).
    #[serde(serialize_with = "empty_as_null")]
    #[schemars(with = "Option<String>")]
    pub path: String,
    /// The agent/unit file exists.
    pub registered: bool,
    /// The file parses and runs `headroom watch` from an existing binary.
    pub valid: bool,
    pub problem: Option<String>,
    /// The service manager knows the job.
    pub loaded: bool,
    pub running_pid: Option<i32>,
    /// It will start at the next login (and is loaded now).
    pub effective: bool,
    /// The raw state, beside the wording.
    pub raw: String,
    /// For `cron`: the line to install.
    pub crontab: Option<String>,
}

fn out_text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

// ----- macOS: LaunchAgent ---------------------------------------------------------------

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
pub fn launch_agent(program: &Path, log: &Path) -> plist::Value {
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
fn program_problem(program: &str) -> Option<String> {
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
pub fn check_plist(path: &Path) -> Result<(), String> {
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
    pub fn plist_path(&self) -> PathBuf {
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

// ----- Linux: systemd user unit ---------------------------------------------------------

fn quote_exec(p: &Path) -> String {
    let s = p.display().to_string();
    if s.contains(char::is_whitespace) || s.contains('"') {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        s
    }
}

/// The user unit. `Restart=on-failure` (as `brew services` writes on Linux): restarted on
/// a non-zero exit or a death by signal, so the same exits mean the same on both OSes: 0
/// stays stopped (SIGTERM at logout or `systemctl stop`, or another service's guard holds
/// the lock), 75 is restarted (SIGHUP, an upgraded program). `HEADROOM_SERVICE` names the
/// unit to `watch` (`SERVICE_ENV`).
pub fn systemd_unit(program: &Path) -> String {
    format!(
        "[Unit]\nDescription=headroom watch: process-slot, memory and hung-app guard\n\
         Documentation=man:headroom-watch(1)\n\n[Service]\nExecStart={} watch\n\
         Environment={SERVICE_ENV}={UNIT}\nRestart=on-failure\nRestartSec=10\n\n\
         [Install]\nWantedBy=default.target\n",
        quote_exec(program)
    )
}

/// The program of a unit's `ExecStart=PROGRAM watch` line, unquoted as `quote_exec` quotes.
fn unit_program(unit: &str) -> Option<String> {
    let cmd = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))?
        .trim_end()
        .strip_suffix(" watch")?;
    match cmd.strip_prefix('"').and_then(|c| c.strip_suffix('"')) {
        Some(quoted) => {
            let mut out = String::new();
            let mut chars = quoted.chars();
            while let Some(c) = chars.next() {
                out.push(if c == '\\' { chars.next()? } else { c });
            }
            Some(out)
        }
        None => Some(cmd.to_string()),
    }
}

/// What is wrong with a unit file's text, or `None`.
fn unit_problem(path: &Path, text: &str) -> Option<String> {
    let Some(program) = unit_program(text) else {
        return Some(format!(
            "`{}` does not run `headroom watch`",
            path.display()
        ));
    };
    if let Some(p) = program_problem(&program) {
        return Some(p);
    }
    (text != systemd_unit(Path::new(&program))).then(|| {
        "it differs from what this headroom writes: run `headroom login-item register` again"
            .to_string()
    })
}

/// The cron alternative where there is no systemd user manager.
pub fn crontab_line(program: &Path, log: &Path) -> String {
    format!(
        "@reboot {} watch >> {} 2>&1",
        quote_exec(program),
        quote_exec(log)
    )
}

#[derive(Debug)]
pub struct Systemd<'a> {
    pub exec: &'a dyn Exec,
    pub units_dir: PathBuf,
}

impl Systemd<'_> {
    pub fn unit_path(&self) -> PathBuf {
        self.units_dir.join(UNIT)
    }

    /// Whether `brew services` has written its unit for headroom (Linux).
    pub fn brew_service(&self) -> bool {
        self.units_dir.join(BREW_UNIT).exists()
    }

    /// A user manager answers (no `systemctl`, or no user bus, means cron).
    pub fn available(&self) -> bool {
        self.exec
            .run("systemctl", &["--user", "show-environment"])
            .is_ok_and(|o| o.status.success())
    }

    fn systemctl(&self, args: &[&str]) -> Result<Output> {
        let mut full = vec!["--user"];
        full.extend_from_slice(args);
        let o = self
            .exec
            .run("systemctl", &full)
            .context("cannot run systemctl")?;
        if !o.status.success() {
            anyhow::bail!(
                "systemctl {} failed: {}",
                full.join(" "),
                out_text(&o).trim()
            );
        }
        Ok(o)
    }

    pub fn register(&self, program: &Path) -> Result<()> {
        std::fs::create_dir_all(&self.units_dir)
            .with_context(|| format!("cannot create `{}`", self.units_dir.display()))?;
        crate::store::fsio::atomic_write(&self.unit_path(), systemd_unit(program).as_bytes())?;
        self.systemctl(&["daemon-reload"])?;
        self.systemctl(&["enable", "--now", UNIT])?;
        Ok(())
    }

    pub fn unregister(&self) -> Result<bool> {
        let _ = self.systemctl(&["disable", "--now", UNIT]);
        let removed = remove_if_present(&self.unit_path())?;
        let _ = self.systemctl(&["daemon-reload"]);
        Ok(removed)
    }

    pub fn status(&self) -> Status {
        let path = self.unit_path();
        let registered = path.exists();
        let problem = if registered {
            match std::fs::read_to_string(&path) {
                Ok(t) => unit_problem(&path, &t),
                Err(e) => Some(format!("cannot read `{}`: {e}", path.display())),
            }
        } else {
            None
        };
        let props = "--property=LoadState,ActiveState,SubState,MainPID,UnitFileState";
        let (map, raw) = match self.exec.run("systemctl", &["--user", "show", UNIT, props]) {
            Ok(o) => {
                let text = String::from_utf8_lossy(&o.stdout).into_owned();
                let map: std::collections::HashMap<String, String> = text
                    .lines()
                    .filter_map(|l| {
                        l.split_once('=')
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                    })
                    .collect();
                let raw = [
                    "LoadState",
                    "ActiveState",
                    "SubState",
                    "UnitFileState",
                    "MainPID",
                ]
                .iter()
                .map(|k| format!("{k}={}", map.get(*k).map_or("-", String::as_str)))
                .collect::<Vec<_>>()
                .join(" ");
                (map, raw)
            }
            Err(e) => (Default::default(), format!("systemctl unavailable: {e}")),
        };
        let get = |k: &str| map.get(k).map(String::as_str);
        let loaded = get("LoadState") == Some("loaded");
        let active = get("ActiveState") == Some("active");
        let enabled = get("UnitFileState") == Some("enabled");
        Status {
            backend: Backend::Systemd,
            name: UNIT.into(),
            path: path.display().to_string(),
            registered,
            valid: registered && problem.is_none(),
            effective: registered && problem.is_none() && enabled && active,
            problem,
            loaded,
            running_pid: get("MainPID")
                .and_then(|p| p.parse().ok())
                .filter(|&p: &i32| p > 0),
            raw,
            crontab: None,
        }
    }
}

/// Remove `path`: whether there was something to remove.
fn remove_if_present(path: &std::path::Path) -> Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).with_context(|| format!("cannot remove `{}`", path.display())),
    }
}

#[cfg(test)]
mod tests;
