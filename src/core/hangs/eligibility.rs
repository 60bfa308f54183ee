//! Which apps the hang monitor may act on, and how (all OSes, pure).
//!
//! Eligible: GUI apps with a regular activation policy whose bundle is an absolute,
//! normalised `.app` path; bundle ids starting `com.apple.` and bundles under system paths
//! are excluded unless `[hangs] allow` names them. Plus exactly one service,
//! `com.apple.TextInputUI.xpc.CursorUIViewService`, and only when its bundle id, its
//! activation policy (`prohibited`) and its system XPC path all match. `[hangs] deny` wins
//! over everything, the service included. pid 0 and 1 are never eligible.
//!
//! Bundle paths are compared as APFS compares them, case-insensitively, after resolving
//! `.`/`..` and, where the path exists, symlinks (`deny = ["/applications/precious.app"]`
//! protects `/Applications/Precious.app`). Apple's apps are recognised by their resolved path
//! as well as by their bundle id: a symlink into `/System/Applications/`, or Safari (which
//! lives in `/Applications`) reported without a bundle id, is not a third-party app. This
//! file reads no file system: the symlinks are resolved by the caller's [`Resolve`]
//! (`MonitorConfig::resolve_path`; `hangs` and `watch` pass `platform::canonical_path`),
//! so the decisions stay here, where replays and tests reach them with a table for a disk.

use crate::core::hangs::{
    AppObservation, CURSOR_SERVICE_ID, CURSOR_SERVICE_PATH, Kind, MAX_IDENTITY_LEN, MonitorConfig,
    Policy,
};

/// Bundles under these directories belong to the system (compared case-insensitively:
/// the default APFS volume is case-insensitive).
const SYSTEM_PREFIXES: &[&str] = &["/System/", "/Library/Apple/", "/usr/", "/bin/", "/sbin/"];
/// Apple's apps installed outside the system paths (Safari, and the App Store apps
/// Apple publishes): excluded by path too, in case LaunchServices gives no bundle id.
const APPLE_APPS: &[&str] = &[
    "/Applications/Safari.app",
    "/Applications/Xcode.app",
    "/Applications/Pages.app",
    "/Applications/Numbers.app",
    "/Applications/Keynote.app",
    "/Applications/iMovie.app",
    "/Applications/GarageBand.app",
    "/Applications/Final Cut Pro.app",
    "/Applications/Logic Pro.app",
    "/Applications/TestFlight.app",
];

/// `path` with `.` and `..` resolved lexically (`..` at the root stays at the root) and no
/// trailing or doubled slashes.
fn lexical(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

/// How the caller resolves an absolute path's symlinks: `Some(target)` when the path
/// exists (`fs::canonicalize`), `None` when it does not or cannot be read. A function
/// pointer, so that `MonitorConfig` stays `Clone + Debug` and the core holds no file system.
pub type Resolve = fn(&str) -> Option<String>;

/// The [`Resolve`] that reads nothing: every path is taken as not existing, so only `.`/`..`
/// are resolved (`MonitorConfig::default()`; the commands pass the real one).
pub fn lexical_only(_path: &str) -> Option<String> {
    None
}

/// The path an absolute bundle path names: symlinks resolved by `resolve` where it exists,
/// else `.`/`..` resolved lexically. A relative path is returned as it is (it is never
/// eligible), and so is a resolution that is not absolute or still holds `..`.
pub fn resolved(path: &str, resolve: Resolve) -> String {
    if !path.starts_with('/') {
        return path.to_string();
    }
    match resolve(path) {
        Some(p) if p.starts_with('/') && p.split('/').all(|c| c != "..") => lexical(&p),
        _ => lexical(path),
    }
}

/// How two bundle paths are compared: resolved, then case-folded (APFS by default).
fn comparable(path: &str, resolve: Resolve) -> String {
    resolved(path, resolve).to_lowercase()
}

/// Why an app is never acted on. The kebab-case names (`as_str`) are stable, like reap's
/// `SkipReason`; `Display` is the sentence a person reads, the `reason` of the round report
/// and of the events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ineligible {
    /// pid 0 or 1.
    ReservedPid(i32),
    IdentityTooLong,
    Denied,
    /// The cursor service's bundle id, without its policy and path.
    ServiceMismatch {
        policy: Policy,
        path: String,
    },
    NotRegular(Policy),
    NotAppBundle(String),
    AppleBundleId,
    SystemPath {
        prefix: &'static str,
        path: String,
    },
    AppleApp(String),
    /// Several eligible processes share the identity (`open -n`): they cannot be told apart.
    SharedIdentity(usize),
    /// More unresponsive apps than the monitor tracks.
    TooMany,
}

impl Ineligible {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::ReservedPid(_) => "reserved-pid",
            Self::IdentityTooLong => "identity-too-long",
            Self::Denied => "denied",
            Self::ServiceMismatch { .. } => "service-mismatch",
            Self::NotRegular(_) => "not-regular",
            Self::NotAppBundle(_) => "not-app-bundle",
            Self::AppleBundleId => "apple-bundle-id",
            Self::SystemPath { .. } => "system-path",
            Self::AppleApp(_) => "apple-app",
            Self::SharedIdentity(_) => "shared-identity",
            Self::TooMany => "too-many",
        }
    }
}

impl std::fmt::Display for Ineligible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ReservedPid(pid) => write!(f, "pid `{pid}` is never signalled"),
            Self::IdentityTooLong => write!(
                f,
                "identity longer than {MAX_IDENTITY_LEN} bytes is not tracked"
            ),
            Self::Denied => f.write_str("denied by the config (`[hangs] deny`)"),
            Self::ServiceMismatch { policy, path } => write!(
                f,
                "`{CURSOR_SERVICE_ID}` is allowlisted only with policy `prohibited` at \
                 `{CURSOR_SERVICE_PATH}` (saw policy `{}` at `{path}`)",
                policy.as_str()
            ),
            Self::NotRegular(policy) => write!(
                f,
                "activation policy `{}`: only regular apps are restarted",
                policy.as_str()
            ),
            Self::NotAppBundle(path) => write!(
                f,
                "bundle path `{path}` is not an absolute, normalised `.app` path"
            ),
            Self::AppleBundleId => {
                f.write_str("Apple app (`com.apple.` bundle id) excluded by default")
            }
            Self::SystemPath { prefix, path } => {
                write!(f, "bundle under the system path `{prefix}` (`{path}`)")
            }
            Self::AppleApp(path) => write!(f, "Apple app (`{path}`) excluded by default"),
            Self::SharedIdentity(n) => write!(f, "{n} running instances share this identity"),
            Self::TooMany => write!(
                f,
                "more than {} unresponsive apps: not tracked",
                crate::core::hangs::MAX_TRACKED
            ),
        }
    }
}

/// Whether an app may be acted on, and how; `Err` says why it may not.
pub fn eligibility(app: &AppObservation, cfg: &MonitorConfig) -> Result<Kind, Ineligible> {
    let id = app.identity();
    if app.pid <= 1 {
        return Err(Ineligible::ReservedPid(app.pid));
    }
    if id.len() > MAX_IDENTITY_LEN {
        return Err(Ineligible::IdentityTooLong);
    }
    if listed(&cfg.deny, app, cfg.resolve_path) {
        return Err(Ineligible::Denied);
    }
    if app.bundle_id.as_deref() == Some(CURSOR_SERVICE_ID) {
        // The one service: identity, activation policy and system XPC path must all match.
        return if app.policy == Policy::Prohibited && app.bundle_path == CURSOR_SERVICE_PATH {
            Ok(Kind::Service)
        } else {
            Err(Ineligible::ServiceMismatch {
                policy: app.policy,
                path: app.bundle_path.clone(),
            })
        };
    }
    if app.policy != Policy::Regular {
        return Err(Ineligible::NotRegular(app.policy));
    }
    if !is_app_bundle_path(&app.bundle_path) {
        return Err(Ineligible::NotAppBundle(app.bundle_path.clone()));
    }
    if !listed(&cfg.allow, app, cfg.resolve_path) {
        if app
            .bundle_id
            .as_deref()
            .is_some_and(|b| starts_with_ignore_case(b, "com.apple."))
        {
            return Err(Ineligible::AppleBundleId);
        }
        let real = resolved(&app.bundle_path, cfg.resolve_path);
        for path in [app.bundle_path.as_str(), real.as_str()] {
            if let Some(prefix) = SYSTEM_PREFIXES
                .iter()
                .find(|p| starts_with_ignore_case(path, p))
            {
                return Err(Ineligible::SystemPath {
                    prefix,
                    path: path.to_string(),
                });
            }
            let lower = lexical(path).to_lowercase();
            if APPLE_APPS.iter().any(|a| a.to_lowercase() == lower) {
                return Err(Ineligible::AppleApp(path.to_string()));
            }
        }
    }
    Ok(Kind::App)
}

fn starts_with_ignore_case(s: &str, prefix: &str) -> bool {
    s.len() >= prefix.len() && s.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// An allow/deny entry names a bundle id (case-insensitive, as LaunchServices compares
/// them) or an absolute bundle path (compared resolved and case-insensitively, as APFS
/// compares it; trailing slash ignored).
fn listed(entries: &[String], app: &AppObservation, resolve: Resolve) -> bool {
    let mut path: Option<String> = None;
    entries.iter().any(|e| {
        if e.starts_with('/') {
            let p = path.get_or_insert_with(|| comparable(&app.bundle_path, resolve));
            comparable(e, resolve) == *p
        } else {
            app.bundle_id
                .as_deref()
                .is_some_and(|b| b.eq_ignore_ascii_case(e))
        }
    })
}

/// Absolute, no `.`/`..`/empty components, ending in `.app`: what `open -g` may be given.
pub fn is_app_bundle_path(path: &str) -> bool {
    let p = path.strip_suffix('/').unwrap_or(path);
    let Some(rest) = p.strip_prefix('/') else {
        return false;
    };
    let normal = rest
        .split('/')
        .all(|c| !c.is_empty() && c != "." && c != "..");
    normal && p.len() > ".app".len() + 1 && p.to_ascii_lowercase().ends_with(".app")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ED: &str = "com.example.Editor";

    fn app(id: &str, pid: i32, responsive: bool) -> AppObservation {
        let short = id.rsplit('.').next().unwrap_or(id).to_string();
        AppObservation {
            pid,
            start_time: Some(1000),
            uid: Some(501),
            bundle_id: Some(id.to_string()),
            bundle_path: format!("/Applications/{short}.app"),
            name: short,
            policy: Policy::Regular,
            responsive,
        }
    }

    fn service(pid: i32, responsive: bool) -> AppObservation {
        AppObservation {
            pid,
            start_time: Some(7),
            uid: Some(501),
            bundle_id: Some(CURSOR_SERVICE_ID.into()),
            bundle_path: CURSOR_SERVICE_PATH.into(),
            name: "CursorUIViewService".into(),
            policy: Policy::Prohibited,
            responsive,
        }
    }

    #[test]
    fn b03_keeps_third_party_apps_with_a_regular_activation_policy() {
        let cfg = MonitorConfig::default();
        assert_eq!(eligibility(&app(ED, 501, false), &cfg), Ok(Kind::App));
        for policy in [Policy::Accessory, Policy::Prohibited] {
            let mut a = app(ED, 501, false);
            a.policy = policy;
            let e = eligibility(&a, &cfg).unwrap_err().to_string();
            assert!(e.contains(policy.as_str()), "{e}");
        }
    }

    #[test]
    fn b04_excludes_apple_bundle_ids_and_bundles_under_system_paths_by_default() {
        let cfg = MonitorConfig::default();
        let mut safari = app("com.apple.Safari", 501, false);
        safari.bundle_path = "/Applications/Safari.app".into();
        assert!(
            eligibility(&safari, &cfg)
                .unwrap_err()
                .to_string()
                .contains("Apple")
        );
        let mut upper = safari.clone();
        upper.bundle_id = Some("COM.APPLE.Safari".into());
        assert!(eligibility(&upper, &cfg).is_err());
        for path in [
            "/System/Applications/Notes.app",
            "/system/applications/Notes.app",
            "/Library/Apple/System/Foo.app",
            "/usr/libexec/Thing.app",
        ] {
            let mut a = app("org.example.Thing", 501, false);
            a.bundle_path = path.into();
            assert!(
                eligibility(&a, &cfg)
                    .unwrap_err()
                    .to_string()
                    .contains("system path"),
                "{path}"
            );
        }
    }

    #[test]
    fn config_allow_lifts_the_default_exclusion_and_deny_always_wins() {
        let mut safari = app("com.apple.Safari", 501, false);
        safari.bundle_path = "/Applications/Safari.app".into();
        let cfg = MonitorConfig {
            allow: vec!["com.apple.safari".into()],
            ..MonitorConfig::default()
        };
        assert_eq!(eligibility(&safari, &cfg), Ok(Kind::App));
        // Allow never makes a non-regular app eligible.
        let mut menu = safari.clone();
        menu.policy = Policy::Accessory;
        assert!(eligibility(&menu, &cfg).is_err());
        let cfg = MonitorConfig {
            deny: vec!["/Applications/Editor.app/".into()],
            ..MonitorConfig::default()
        };
        assert!(
            eligibility(&app(ED, 501, false), &cfg)
                .unwrap_err()
                .to_string()
                .contains("deny")
        );
        let cfg = MonitorConfig {
            deny: vec![CURSOR_SERVICE_ID.into()],
            ..MonitorConfig::default()
        };
        assert!(eligibility(&service(700, false), &cfg).is_err());
    }

    #[test]
    fn only_absolute_normalised_app_bundles_are_eligible() {
        let cfg = MonitorConfig::default();
        for path in [
            "Applications/Editor.app",
            "/Applications/../System/Applications/Notes.app",
            "/Applications/./Editor.app",
            "/Applications//Editor.app",
            "/Applications/editor",
            "/.app",
            "",
        ] {
            let mut a = app(ED, 501, false);
            a.bundle_path = path.into();
            assert!(eligibility(&a, &cfg).is_err(), "{path:?}");
        }
        assert!(is_app_bundle_path("/Applications/Editor.app/"));
        assert!(is_app_bundle_path("/Users/me/Apps/Editor.APP"));
    }

    /// A disk, as `fs::canonicalize` would see it: `Link.app` a symlink to `Real.app`,
    /// `Notes.app` a symlink to `/usr/bin`, `Real.app` and `Tool.app` real bundles.
    fn disk(path: &str) -> Option<String> {
        match path {
            "/Users/me/Link.app" | "/Users/me/Real.app" => Some("/Users/me/Real.app".into()),
            "/Users/me/Notes.app" => Some("/usr/bin".into()),
            "/Users/me/Tool.app" => Some(path.into()),
            _ => None,
        }
    }

    #[test]
    fn deny_by_path_is_case_insensitive_and_resolves_dots_and_symlinks() {
        let mut precious = app("com.example.Precious", 501, false);
        precious.bundle_path = "/Applications/Precious.app".into();
        let deny = |entry: &str| MonitorConfig {
            deny: vec![entry.into()],
            resolve_path: disk,
            ..MonitorConfig::default()
        };
        for entry in [
            "/applications/precious.app",
            "/APPLICATIONS/Precious.app/",
            "/Applications/Stuff/../Precious.app",
            "/Applications/./Precious.app",
        ] {
            let e = eligibility(&precious, &deny(entry));
            assert!(
                e.as_ref().unwrap_err().to_string().contains("deny"),
                "{entry}: {e:?}"
            );
        }
        // A symlink to the bundle, named in deny, protects the bundle (and the reverse).
        let (real, link) = ("/Users/me/Real.app", "/Users/me/Link.app");
        let mut linked = app("org.example.Real", 501, false);
        linked.bundle_path = real.into();
        assert!(
            eligibility(&linked, &deny(link))
                .unwrap_err()
                .to_string()
                .contains("deny")
        );
        // Control: the symlink is seen through the caller's resolver, not by the core.
        let unresolved = MonitorConfig {
            resolve_path: lexical_only,
            ..deny(link)
        };
        assert_eq!(eligibility(&linked, &unresolved), Ok(Kind::App));
        linked.bundle_path = link.into();
        assert!(
            eligibility(&linked, &deny(real))
                .unwrap_err()
                .to_string()
                .contains("deny")
        );
        // Control: another bundle is still eligible under the same deny list.
        assert_eq!(
            eligibility(&app(ED, 501, false), &deny("/applications/precious.app")),
            Ok(Kind::App)
        );
    }

    #[test]
    fn apple_apps_are_recognised_by_resolved_path_without_a_bundle_id() {
        let cfg = MonitorConfig {
            resolve_path: disk,
            ..MonitorConfig::default()
        };
        let mut safari = app("x", 501, false);
        safari.bundle_id = None;
        safari.bundle_path = "/Applications/Safari.app".into();
        assert!(
            eligibility(&safari, &cfg)
                .unwrap_err()
                .to_string()
                .contains("Apple app")
        );
        safari.bundle_path = "/applications/SAFARI.app".into();
        assert!(eligibility(&safari, &cfg).is_err());
        // A symlink whose target is under a system path (`/usr/` is one).
        let mut notes = app("x", 501, false);
        notes.bundle_id = None;
        notes.bundle_path = "/Users/me/Notes.app".into();
        let e = eligibility(&notes, &cfg).unwrap_err().to_string();
        assert!(e.contains("system path `/usr/`"), "{e}");
        // Control: a real third-party bundle without an id is still an app.
        notes.bundle_path = "/Users/me/Tool.app".into();
        assert_eq!(eligibility(&notes, &cfg), Ok(Kind::App));
        assert_eq!(resolved("/a/b/../c/./d.app", disk), "/a/c/d.app");
        assert_eq!(resolved("/../x.app", disk), "/x.app");
        // A resolution that is relative or keeps `..` is not trusted: the path is lexical.
        fn odd(p: &str) -> Option<String> {
            Some(
                if p.ends_with("r.app") {
                    "rel"
                } else {
                    "/a/../b"
                }
                .into(),
            )
        }
        assert_eq!(resolved("/x/../r.app", odd), "/r.app");
        assert_eq!(resolved("/x/./d.app", odd), "/x/d.app");
    }

    #[test]
    fn pid_0_and_1_are_never_eligible() {
        for pid in [-1, 0, 1] {
            let a = app(ED, pid, false);
            assert!(eligibility(&a, &MonitorConfig::default()).is_err());
        }
    }

    #[test]
    fn b05_cursor_service_is_accepted_only_when_identity_policy_and_path_all_match() {
        let cfg = MonitorConfig::default();
        assert_eq!(eligibility(&service(700, false), &cfg), Ok(Kind::Service));
        let mut wrong_policy = service(700, false);
        wrong_policy.policy = Policy::Regular;
        let mut wrong_path = service(700, false);
        wrong_path.bundle_path = "/Applications/CursorUIViewService.xpc".into();
        let mut lookalike_path = service(700, false);
        lookalike_path.bundle_path = format!("{CURSOR_SERVICE_PATH}/");
        let mut wrong_id = service(700, false);
        wrong_id.bundle_id = Some("com.apple.TextInputUI.xpc.cursoruiviewservice".into());
        let mut no_id = service(700, false);
        no_id.bundle_id = None;
        for (what, a) in [
            ("policy", wrong_policy),
            ("path", wrong_path),
            ("path with slash", lookalike_path),
            ("identity case", wrong_id),
            ("no identity", no_id),
        ] {
            assert!(eligibility(&a, &cfg).is_err(), "{what}: {a:?}");
        }
    }

    #[test]
    fn other_apple_services_with_the_same_policy_and_path_shape_are_excluded() {
        let mut other = service(700, false);
        other.bundle_id = Some("com.apple.TextInputUI.xpc.OtherService".into());
        assert!(eligibility(&other, &MonitorConfig::default()).is_err());
    }

    #[test]
    fn ineligible_reasons_have_distinct_stable_names_and_say_why() {
        let all = [
            Ineligible::ReservedPid(1),
            Ineligible::IdentityTooLong,
            Ineligible::Denied,
            Ineligible::ServiceMismatch {
                policy: Policy::Regular,
                path: "/x".into(),
            },
            Ineligible::NotRegular(Policy::Accessory),
            Ineligible::NotAppBundle("x".into()),
            Ineligible::AppleBundleId,
            Ineligible::SystemPath {
                prefix: "/usr/",
                path: "/usr/x".into(),
            },
            Ineligible::AppleApp("/Applications/Safari.app".into()),
            Ineligible::SharedIdentity(2),
            Ineligible::TooMany,
        ];
        let names: std::collections::BTreeSet<&str> = all.iter().map(Ineligible::as_str).collect();
        assert_eq!(names.len(), all.len(), "{names:?}");
        assert!(
            names
                .iter()
                .all(|n| n.chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        );
        // The sentence is what a round's `reason` and the events carry.
        assert_eq!(all[0].to_string(), "pid `1` is never signalled");
        assert_eq!(
            all[9].to_string(),
            "2 running instances share this identity"
        );
        assert_eq!(
            all[10].to_string(),
            "more than 256 unresponsive apps: not tracked"
        );
    }
}
