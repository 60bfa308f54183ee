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

use crate::hangs::{
    ActivationPolicy, AppObservation, CURSOR_SERVICE_ID, CURSOR_SERVICE_PATH, MAX_IDENTITY_LEN,
    MonitorConfig, RecoveryKind,
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
        policy: ActivationPolicy,
        path: String,
    },
    NotRegular(ActivationPolicy),
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
                crate::hangs::MAX_TRACKED
            ),
        }
    }
}

/// Whether an app may be acted on, and how; `Err` says why it may not.
pub fn eligibility(app: &AppObservation, cfg: &MonitorConfig) -> Result<RecoveryKind, Ineligible> {
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
        return if app.policy == ActivationPolicy::Prohibited
            && app.bundle_path == CURSOR_SERVICE_PATH
        {
            Ok(RecoveryKind::Service)
        } else {
            Err(Ineligible::ServiceMismatch {
                policy: app.policy,
                path: app.bundle_path.clone(),
            })
        };
    }
    if app.policy != ActivationPolicy::Regular {
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
    Ok(RecoveryKind::App)
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
mod tests;
