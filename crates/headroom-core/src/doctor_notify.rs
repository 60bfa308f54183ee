//! `doctor`'s `notifications` check: could a notification be posted here? Judged without
//! posting one (a diagnostic must not put a test banner on the user's screen), from what a
//! notification needs: the helper `actions::notify` would start, and on Linux a session bus
//! that answers with a notification service on it, on macOS a GUI (Aqua) login session.
//! `ok` needs positive evidence of each; `skipped (why)` says what is missing or could not
//! be known. Pure: `commands::doctor_tools` gathers the facts.

use std::path::PathBuf;

use super::doctor::{Check, CheckOutcome};

const NAME: &str = "notifications";
/// The freedesktop notification service `notify-send` talks to.
pub const SERVICE: &str = "org.freedesktop.Notifications";

/// One address of a D-Bus address string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BusAddr {
    /// `unix:path=…`: a socket file.
    Path(PathBuf),
    /// `unix:abstract=…`: Linux's abstract socket namespace (no file to look at).
    Abstract(Vec<u8>),
    /// Any other transport (`tcp:`, `unix:dir=`, `launchd:`, …), as written.
    Other(String),
}

/// The addresses in a D-Bus address string: `;`-separated `transport:key=value,…`, values
/// `%`-escaped (the D-Bus specification, "Server Addresses").
pub fn parse_bus_address(s: &str) -> Vec<BusAddr> {
    s.split(';')
        .filter(|a| !a.trim().is_empty())
        .map(|a| {
            let Some(("unix", kvs)) = a.split_once(':') else {
                return BusAddr::Other(a.to_string());
            };
            for kv in kvs.split(',') {
                match kv.split_once('=') {
                    Some(("path", v)) => {
                        return BusAddr::Path(PathBuf::from(
                            String::from_utf8_lossy(&unescape(v)).into_owned(),
                        ));
                    }
                    Some(("abstract", v)) => return BusAddr::Abstract(unescape(v)),
                    _ => {}
                }
            }
            BusAddr::Other(a.to_string())
        })
        .collect()
}

fn unescape(v: &str) -> Vec<u8> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], hex) {
            (b'%', Some(x)) => {
                out.push(x);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// `dbus-send --print-reply` of `NameHasOwner`: `boolean true` / `boolean false`.
pub fn parse_has_owner(reply: &str) -> Option<bool> {
    reply
        .lines()
        .find_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            ["boolean", "true"] => Some(true),
            ["boolean", "false"] => Some(false),
            _ => None,
        })
}

/// `dbus-send --print-reply` of `ListActivatableNames`: whether `name` is among the
/// `string "…"` lines.
pub fn lists_name(reply: &str, name: &str) -> bool {
    let quoted = format!("\"{name}\"");
    reply
        .lines()
        .any(|l| l.trim().strip_prefix("string ") == Some(quoted.as_str()))
}

/// Whether the notification service is on the bus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Service {
    Owned,
    /// Not running, but the bus starts it on the first message.
    Activatable,
    Absent,
    /// It could not be asked; why.
    Unknown(String),
}

/// What doctor found on Linux.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinuxFacts {
    /// The helper (`notify-send`) `actions::notify` would run, or why there is none.
    pub helper: Result<String, String>,
    /// The session bus address that accepted a connection, or why none did.
    pub bus: Result<String, String>,
    pub service: Service,
}

pub fn linux(f: &LinuxFacts) -> Check {
    let helper = match &f.helper {
        Ok(h) => h,
        Err(why) => return cannot(why),
    };
    let bus = match &f.bus {
        Ok(b) => b,
        Err(why) => {
            return cannot(&format!(
                "no session bus answers ({why}): a notification needs a desktop session's bus"
            ));
        }
    };
    let (outcome, service, note) = match &f.service {
        Service::Owned => (CheckOutcome::Ok, format!("{SERVICE} running"), None),
        Service::Activatable => (
            CheckOutcome::Ok,
            format!("{SERVICE} activatable (started on the first notification)"),
            None,
        ),
        Service::Absent => (
            CheckOutcome::Skipped,
            format!("no {SERVICE} on it"),
            Some(format!(
                "cannot be posted: the session bus has no notification service ({SERVICE} is \
                 neither running nor activatable)"
            )),
        ),
        Service::Unknown(why) => (
            CheckOutcome::Ok,
            format!("{SERVICE} not asked"),
            Some(format!(
                "helper and bus are there; whether a notification service runs was not asked: \
                 {why}"
            )),
        ),
    };
    Check {
        name: NAME.into(),
        outcome,
        headroom: Some(format!("would post through {helper}")),
        system: Some(format!("session bus {bus} answers; {service}")),
        note,
    }
}

/// What doctor found on macOS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacFacts {
    /// `/usr/bin/osascript`, or why it is not there.
    pub helper: Result<String, String>,
    /// `launchctl managername`: `Aqua` in a GUI login session; `Background`, `System`,
    /// `LoginWindow` or `StandardIO` elsewhere (ssh, launchd jobs, CI without a login).
    pub manager: Result<String, String>,
}

pub fn macos(f: &MacFacts) -> Check {
    let helper = match &f.helper {
        Ok(h) => h,
        Err(why) => return cannot(why),
    };
    match f.manager.as_deref().map(str::trim) {
        Ok("Aqua") => Check {
            name: NAME.into(),
            outcome: CheckOutcome::Ok,
            headroom: Some(format!("would post through {helper}")),
            system: Some("launchctl managername: Aqua (a GUI login session)".into()),
            note: Some(
                "macOS shows it only if Script Editor may notify (System Settings > \
                 Notifications), which cannot be read without posting one"
                    .into(),
            ),
        },
        Ok(other) => cannot(&format!(
            "not a GUI login session (launchctl managername: {other}); notifications appear \
             only in an Aqua session"
        )),
        Err(why) => Check::skipped(
            NAME,
            format!("cannot tell whether this is a GUI login session: {why}"),
        ),
    }
}

fn cannot(why: &str) -> Check {
    Check::skipped(NAME, format!("cannot be posted: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_addresses_as_the_specification_writes_them() {
        assert_eq!(
            parse_bus_address("unix:path=/run/user/1000/bus"),
            [BusAddr::Path("/run/user/1000/bus".into())]
        );
        assert_eq!(
            parse_bus_address(
                "unix:abstract=/tmp/dbus-Xy%2c1,guid=ab;unix:guid=1,path=/a%20b;tcp:host=h,port=1"
            ),
            [
                BusAddr::Abstract(b"/tmp/dbus-Xy,1".to_vec()),
                BusAddr::Path("/a b".into()),
                BusAddr::Other("tcp:host=h,port=1".into()),
            ]
        );
        // A broken escape is kept as written, not dropped.
        assert_eq!(
            parse_bus_address("unix:path=/x%zz"),
            [BusAddr::Path("/x%zz".into())]
        );
        assert_eq!(
            parse_bus_address("unix:dir=/tmp"),
            [BusAddr::Other("unix:dir=/tmp".into())]
        );
        assert!(parse_bus_address("").is_empty());
    }

    #[test]
    fn dbus_send_replies() {
        let owner = "method return time=1.0 sender=org.freedesktop.DBus -> destination=:1.9 serial=3 reply_serial=2\n   boolean true\n";
        assert_eq!(parse_has_owner(owner), Some(true));
        assert_eq!(parse_has_owner("   boolean false\n"), Some(false));
        assert_eq!(parse_has_owner("Error org.freedesktop.DBus.Error"), None);
        let names = "method return …\n   array [\n      string \"org.freedesktop.DBus\"\n      string \"org.freedesktop.Notifications\"\n   ]\n";
        assert!(lists_name(names, SERVICE));
        assert!(!lists_name(names, "org.freedesktop.Notif"));
    }

    fn facts(service: Service) -> LinuxFacts {
        LinuxFacts {
            helper: Ok("/usr/bin/notify-send".into()),
            bus: Ok("unix:path=/run/user/1000/bus".into()),
            service,
        }
    }

    #[test]
    fn linux_is_ok_only_with_helper_bus_and_service() {
        let c = linux(&facts(Service::Owned));
        assert_eq!(c.outcome, CheckOutcome::Ok, "{c:?}");
        assert!(c.system.as_deref().unwrap().contains("answers"), "{c:?}");
        assert_eq!(
            linux(&facts(Service::Activatable)).outcome,
            CheckOutcome::Ok
        );
        let unknown = linux(&facts(Service::Unknown(
            "dbus-send is not installed".into(),
        )));
        assert_eq!(unknown.outcome, CheckOutcome::Ok);
        assert!(unknown.note.unwrap().contains("not asked"));
        let absent = linux(&facts(Service::Absent));
        assert_eq!(absent.outcome, CheckOutcome::Skipped);
        assert!(absent.note.unwrap().starts_with("cannot be posted"));
        let mut no_bus = facts(Service::Owned);
        no_bus.bus = Err("DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR are unset".into());
        let c = linux(&no_bus);
        assert_eq!(c.outcome, CheckOutcome::Skipped);
        assert!(c.note.unwrap().contains("XDG_RUNTIME_DIR"));
        let mut no_helper = facts(Service::Owned);
        no_helper.helper = Err("`notify-send` is not installed".into());
        let c = linux(&no_helper);
        assert_eq!(c.outcome, CheckOutcome::Skipped);
        assert!(c.note.unwrap().contains("notify-send"));
    }

    #[test]
    fn macos_is_ok_only_in_an_aqua_session() {
        let f = |manager: Result<&str, &str>| MacFacts {
            helper: Ok("/usr/bin/osascript".into()),
            manager: manager.map(String::from).map_err(String::from),
        };
        let c = macos(&f(Ok("Aqua\n")));
        assert_eq!(c.outcome, CheckOutcome::Ok, "{c:?}");
        assert!(c.note.unwrap().contains("Script Editor"));
        let c = macos(&f(Ok("Background")));
        assert_eq!(c.outcome, CheckOutcome::Skipped);
        assert!(c.note.unwrap().contains("Background"));
        let c = macos(&f(Err("`launchctl managername` exited 1")));
        assert_eq!(c.outcome, CheckOutcome::Skipped);
        assert!(c.note.unwrap().contains("cannot tell"));
        let mut missing = f(Ok("Aqua"));
        missing.helper = Err("`/usr/bin/osascript` is missing".into());
        assert_eq!(macos(&missing).outcome, CheckOutcome::Skipped);
    }
}
