//! Linux: the systemd user unit (written, checked, enabled and read back with
//! `systemctl --user` through `Exec`), and the crontab line where no user manager runs.

use std::path::{Path, PathBuf};
use std::process::Output;

use anyhow::{Context, Result};

use super::launchd::program_problem;
use super::{BREW_UNIT, Backend, Exec, SERVICE_ENV, Status, UNIT, out_text, remove_if_present};

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
pub(crate) fn systemd_unit(program: &Path) -> String {
    format!(
        "[Unit]\nDescription=headroom watch: process-slot, memory and hung-app guard\n\
         Documentation=man:headroom-watch(1)\n\n[Service]\nExecStart={} watch\n\
         Environment={SERVICE_ENV}={UNIT}\nRestart=on-failure\nRestartSec=10\n\n\
         [Install]\nWantedBy=default.target\n",
        quote_exec(program)
    )
}

/// The program of a unit's `ExecStart=PROGRAM watch` line, unquoted as `quote_exec` quotes.
pub(super) fn unit_program(unit: &str) -> Option<String> {
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
pub(super) fn unit_problem(path: &Path, text: &str) -> Option<String> {
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
