//! Start `headroom watch` at login: a LaunchAgent on macOS, a systemd user unit on Linux, a
//! crontab line where neither exists. Status is read back from the service manager — an
//! autostart that is asserted rather than read back is one reboot from gone.
//!
//! `launchctl` and `systemctl` are run through `Exec` so the exact sequences are tested with
//! a fake; they run only here, never on a polling path.

mod launchd;
mod systemd;

use std::path::PathBuf;
use std::process::Output;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Serialize;

pub use launchd::Launchd;
#[cfg(test)]
use launchd::{check_plist, launch_agent};
#[cfg(test)]
use systemd::systemd_unit;
pub use systemd::{Systemd, crontab_line};

/// The path that runs headroom again after an upgrade (`core::program_path`): what a
/// service definition registers and what the menu-bar figure's actions run.
pub fn lasting_program() -> Result<crate::core::program_path::Choice> {
    use crate::core::program_path::{ProgramFacts, choose, opt_candidates};
    use crate::platform::own_program;
    let real = own_program::real().context("cannot find headroom's own executable")?;
    let invoked = own_program::invoked();
    let invoked_to = invoked.as_deref().and_then(|p| p.canonicalize().ok());
    let prefix = std::env::var_os("HOMEBREW_PREFIX")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    let opt_links: Vec<(PathBuf, Option<PathBuf>)> = opt_candidates(&real, prefix.as_deref())
        .into_iter()
        .map(|o| {
            let to = o.canonicalize().ok();
            (o, to)
        })
        .collect();
    Ok(choose(&ProgramFacts {
        invoked: invoked.as_deref().map(|i| (i, invoked_to.as_deref())),
        real: &real,
        opt_links: &opt_links,
    }))
}

/// The LaunchAgent label (macOS).
pub(crate) const LABEL: &str = "dev.headroom.watch";
/// What `brew services` names it on macOS; two watchers must not run at once.
pub const BREW_LABEL: &str = "homebrew.mxcl.headroom";
/// What `brew services` names it on Linux (Homebrew's `service.rb`: `homebrew.<formula>`).
pub const BREW_UNIT: &str = "homebrew.headroom.service";
/// The systemd user unit (Linux).
pub(crate) const UNIT: &str = "headroom-watch.service";
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
pub(crate) const BOOTOUT_WAIT: Duration = Duration::from_secs(10);

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

/// Remove `path`: whether there was something to remove.
fn remove_if_present(path: &std::path::Path) -> Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).with_context(|| format!("cannot remove `{}`", path.display())),
    }
}

#[cfg(test)]
mod systemd_tests;
#[cfg(test)]
mod tests;
