//! `doctor`'s account of what the guard does on its own (#27 item 9): `brew services start
//! headroom` and `login-item register` start an acting guard, and a user should be able to
//! read, before and after, what it will signal without being asked and how to turn each
//! part off. Read from the effective config (the file the guard reads when it starts) and
//! the guard lock's record of who runs (`store::guard`); no process is signalled or started.

use std::fmt::Write as _;
use std::time::Duration;

use serde::Serialize;

use crate::config::Settings;
use crate::store::guard::LockHolder;

/// One thing the guard does unasked.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct GuardAct {
    /// `auto-reap`, `hangs`, `memory-guards`, `notifications`.
    pub name: &'static str,
    /// Whether the effective config turns it on (on this OS).
    pub on: bool,
    /// What it does, with the configured values.
    pub what: String,
    /// The one change that turns it off (or on).
    pub switch: String,
}

/// What the guard does on its own, and which guard runs.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[schemars(rename = "GuardReport")]
pub struct GuardStatus {
    /// The guard holding `watch.lock` as it recorded itself, when one runs (its pid still
    /// runs headroom).
    pub running: Option<LockHolder>,
    /// The config file the effective settings came from (`null`: defaults only).
    pub config: Option<String>,
    pub acts: Vec<GuardAct>,
}

fn secs(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

/// The acts, from `s` (`macos`: whether the hang monitor exists here).
pub(crate) fn acts(s: &Settings, macos: bool) -> Vec<GuardAct> {
    let config = s
        .file
        .clone()
        .or_else(|| crate::store::paths::config_file().ok())
        .map_or_else(
            || "the config file".to_string(),
            |p| format!("`{}`", p.display()),
        );
    let r = &s.reap;
    let auto_reap = GuardAct {
        name: "auto-reap",
        on: s.watch.auto_reap.value,
        what: format!(
            "when the slot level stays critical for two readings ({} apart), runs `reap`: \
             SIGTERM, then SIGKILL after {}, to at most {} zombie-leaking parents matching \
             {:?} with {} or more zombies{}; again at most every {}",
            secs(s.watch.interval.value),
            secs(r.grace.value),
            r.max_targets.value,
            r.allow.value,
            r.min_zombies.value,
            if r.spare_active_sessions.value {
                ", sparing active sessions"
            } else {
                ""
            },
            secs(s.watch.reap_cooldown.value)
        ),
        switch: format!("`auto_reap = false` under `[watch]` in {config}"),
    };
    let hangs = GuardAct {
        name: "hangs",
        on: s.watch.hangs.value && macos,
        what: if macos {
            format!(
                "kills and relaunches a third-party app that macOS marks not responding in \
                 two rounds a minute apart (SIGTERM, then SIGKILL after {}; an app that cannot \
                 save on SIGTERM loses its unsaved work), at most once every {} per app",
                secs(s.hangs.grace.value),
                secs(s.hangs.cooldown.value)
            )
        } else {
            "nothing here: the hang monitor is macOS's (WindowServer)".to_string()
        },
        switch: format!(
            "`hangs = false` under `[watch]` in {config} (one app: its bundle id in `[hangs] deny`)"
        ),
    };
    let rules = &s.memory.guard.value;
    let memory = GuardAct {
        name: "memory-guards",
        on: !rules.is_empty(),
        what: if rules.is_empty() {
            "none configured".to_string()
        } else {
            let names: Vec<String> = rules
                .iter()
                .map(|g| {
                    format!(
                        "`{}` over {}",
                        g.pattern,
                        crate::output::human_bytes(g.limit_bytes)
                    )
                })
                .collect();
            format!(
                "stops (SIGSTOP) a tree over its limit, and ends it (SIGTERM, SIGKILL after {}) \
                 if it stays over: {}",
                secs(s.memory.grace.value),
                names.join(", ")
            )
        },
        switch: format!("remove the `[[memory.guard]]` entries from {config}"),
    };
    let notify = GuardAct {
        name: "notifications",
        on: s.notifications.enabled.value,
        what: "posts a notification when the slot level crosses a threshold".to_string(),
        switch: format!("`enabled = false` under `[notifications]` in {config}"),
    };
    vec![auto_reap, hangs, memory, notify]
}

/// The report's human lines.
pub(crate) fn human(g: &GuardStatus, out: &mut String) {
    let running = g.running.as_ref().map_or_else(
        || "no guard runs now".to_string(),
        |h| {
            format!(
                "the running guard is {}, headroom {}, since {}",
                h.describe(),
                h.version,
                h.locked_at
            )
        },
    );
    let _ = writeln!(out, "What the guard does on its own ({running}):");
    for a in &g.acts {
        let state = if a.on { "on " } else { "off" };
        let _ = writeln!(out, "  {:<14} {state}  {}", a.name, a.what);
        if a.on {
            let _ = writeln!(out, "  {:<14}      turn off: {}", "", a.switch);
        }
    }
    let _ = writeln!(
        out,
        "A running guard read its config when it started: restart it after a change \
         (`brew services restart headroom`, or `headroom login-item register`)."
    );
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn the_defaults_reap_and_notify_and_on_macos_restart_hung_apps() {
        let s = Settings::parse("", Path::new("/c/config.toml")).unwrap();
        let mac = acts(&s, true);
        let on: Vec<(&str, bool)> = mac.iter().map(|a| (a.name, a.on)).collect();
        assert_eq!(
            on,
            [
                ("auto-reap", true),
                ("hangs", true),
                ("memory-guards", false),
                ("notifications", true)
            ]
        );
        assert!(
            mac[0].what.contains("[\"agency\"]") && mac[0].what.contains("SIGKILL after 2s"),
            "{}",
            mac[0].what
        );
        assert!(
            mac[1].what.contains("loses its unsaved work"),
            "{}",
            mac[1].what
        );
        assert_eq!(
            mac[0].switch,
            "`auto_reap = false` under `[watch]` in `/c/config.toml`"
        );
        // Control: no hang monitor on Linux, whatever the config says.
        assert!(!acts(&s, false)[1].on);
    }

    #[test]
    fn the_config_turns_each_off_and_a_memory_guard_is_named() {
        let s = Settings::parse(
            "[watch]\nauto_reap = false\nhangs = false\n[notifications]\nenabled = false\n\
             [[memory.guard]]\npattern = \"cargo\"\nlimit = \"8G\"\n",
            Path::new("c.toml"),
        )
        .unwrap();
        let a = acts(&s, true);
        let on: Vec<bool> = a.iter().map(|a| a.on).collect();
        assert_eq!(on, [false, false, true, false]);
        assert!(a[2].what.contains("`cargo` over 8"), "{}", a[2].what);
    }
}
