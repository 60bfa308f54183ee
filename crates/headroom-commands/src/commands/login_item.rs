//! `headroom login-item register|status|unregister`: run `headroom watch` at login and read
//! back, from launchd or systemd, whether it really will.

use std::path::PathBuf;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::actions::login_item::{
    Backend, Launchd, RealExec, Status, Systemd, crontab_line, lasting_program,
};
use crate::cli::{LoginItemAction, LoginItemArgs};
use crate::commands::Ctx;
use crate::exit::{ExitStatus, RefusedError};

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub(crate) struct LoginItemReport {
    pub action: LoginItemAction,
    #[serde(flatten)]
    pub status: Status,
    pub message: String,
}

impl crate::schema::Document for LoginItemReport {
    const SCHEMA: &'static str = "headroom.login-item/1";
    const TYPE: Option<&'static str> = Some("login-item");
}

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .context("HOME is not set")
}

/// The path to register, with a warning when no lasting one exists (a bare Homebrew keg
/// path).
fn program(ctx: &Ctx<'_>) -> Result<PathBuf> {
    use crate::core::program_path::Reason;
    let choice = lasting_program()?;
    if choice.reason == Reason::Keg {
        ctx.printer.warn(&format!(
            "`{}` is inside a Homebrew keg, which the next `brew upgrade` deletes, and no \
             `opt/headroom` link leads to it: registered anyway; run `headroom login-item \
             register` again after the upgrade",
            choice.path.display()
        ));
    }
    Ok(choice.path)
}

fn log_path() -> Result<PathBuf> {
    Ok(crate::store::paths::ensure_state_dir()?.join("watch.log"))
}

fn wording(s: &Status) -> String {
    if !s.registered {
        return "not registered".into();
    }
    let mut parts = vec!["registered".to_string()];
    if let Some(p) = &s.problem {
        parts.push(format!("but {p}"));
    }
    parts.push(if s.loaded {
        "loaded".into()
    } else {
        "not loaded".into()
    });
    if let Some(pid) = s.running_pid {
        parts.push(format!("running (pid {pid})"));
    }
    parts.push(format!(
        "effective: {}",
        if s.effective { "yes" } else { "no" }
    ));
    parts.join(", ")
}

pub(crate) fn run(ctx: &Ctx<'_>, args: &LoginItemArgs) -> Result<ExitStatus> {
    let action = args.action;
    let exec = RealExec;
    let (status, message) = if cfg!(target_os = "macos") {
        let l = Launchd {
            exec: &exec,
            uid: crate::platform::current_uid(),
            agents_dir: home()?.join("Library/LaunchAgents"),
        };
        match args.action {
            LoginItemAction::Register => {
                if l.brew_service() {
                    return Err(RefusedError(
                        "`brew services` already runs headroom (homebrew.mxcl.headroom); a second watcher would double every \
                         cleanup. Keep that one, or `brew services stop headroom` first."
                            .into(),
                    )
                    .into());
                }
                l.register(&program(ctx)?, &log_path()?)?;
                (l.status(), "registered".to_string())
            }
            LoginItemAction::Unregister => {
                let removed = l.unregister()?;
                (
                    l.status(),
                    if removed {
                        "unregistered".into()
                    } else {
                        "nothing was registered".into()
                    },
                )
            }
            LoginItemAction::Status => (l.status(), String::new()),
        }
    } else if cfg!(target_os = "linux") {
        let units = match std::env::var_os("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
            Some(d) => PathBuf::from(d).join("systemd/user"),
            None => home()?.join(".config/systemd/user"),
        };
        let s = Systemd {
            exec: &exec,
            units_dir: units,
        };
        if !s.available() && !s.unit_path().exists() {
            let line = crontab_line(&program(ctx)?, &log_path()?);
            let status = Status {
                backend: Backend::Cron,
                name: "crontab".into(),
                path: String::new(),
                registered: false,
                valid: false,
                problem: None,
                loaded: false,
                running_pid: None,
                effective: false,
                raw: "systemctl --user: no user manager".into(),
                crontab: Some(line.clone()),
            };
            let what = match args.action {
                LoginItemAction::Register => "nothing was registered",
                LoginItemAction::Unregister => "nothing was removed",
                LoginItemAction::Status => "headroom is not registered with it",
            };
            let msg = format!(
                "no systemd user manager here, so {what}; to start the guard at boot, add this line with `crontab -e`:\n  {line}"
            );
            return finish(ctx, action, status, msg);
        }
        match args.action {
            LoginItemAction::Register => {
                if s.brew_service() {
                    return Err(RefusedError(format!(
                        "`brew services` already runs headroom ({}); a second watcher would \
                         double every cleanup. Keep that one, or `brew services stop headroom` \
                         first.",
                        crate::actions::login_item::BREW_UNIT
                    ))
                    .into());
                }
                s.register(&program(ctx)?)?;
                (s.status(), "registered".to_string())
            }
            LoginItemAction::Unregister => {
                let removed = s.unregister()?;
                (
                    s.status(),
                    if removed {
                        "unregistered".into()
                    } else {
                        "nothing was registered".into()
                    },
                )
            }
            LoginItemAction::Status => (s.status(), String::new()),
        }
    } else {
        anyhow::bail!("login-item: unsupported on {}", std::env::consts::OS);
    };
    finish(ctx, action, status, message)
}

fn finish(
    ctx: &Ctx<'_>,
    action: LoginItemAction,
    status: Status,
    message: String,
) -> Result<ExitStatus> {
    let code = match action {
        LoginItemAction::Unregister => ExitStatus::Ok,
        _ if status.effective => ExitStatus::Ok,
        _ => ExitStatus::Unhappy,
    };
    let report = LoginItemReport {
        action,
        message,
        status,
    };
    if ctx.printer.is_json() {
        ctx.printer.json_value(&report)?;
    } else {
        let s = &report.status;
        let mut text = String::new();
        if !report.message.is_empty() {
            text.push_str(&report.message);
            text.push('\n');
        }
        if s.backend != Backend::Cron {
            text.push_str(&format!(
                "login item {}: {} [{}] — {}\n",
                s.name,
                wording(s),
                s.raw,
                s.path
            ));
        }
        ctx.printer.text(&text)?;
    }
    Ok(code)
}
