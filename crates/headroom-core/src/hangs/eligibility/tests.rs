use super::*;
use crate::hangs::tests::{ED, app, service};

#[test]
fn b03_keeps_third_party_apps_with_a_regular_activation_policy() {
    let cfg = MonitorConfig::default();
    assert_eq!(
        eligibility(&app(ED, 501, false), &cfg),
        Ok(RecoveryKind::App)
    );
    for policy in [ActivationPolicy::Accessory, ActivationPolicy::Prohibited] {
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
    assert_eq!(eligibility(&safari, &cfg), Ok(RecoveryKind::App));
    // Allow never makes a non-regular app eligible.
    let mut menu = safari.clone();
    menu.policy = ActivationPolicy::Accessory;
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
    assert_eq!(eligibility(&linked, &unresolved), Ok(RecoveryKind::App));
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
        Ok(RecoveryKind::App)
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
    assert_eq!(eligibility(&notes, &cfg), Ok(RecoveryKind::App));
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
    assert_eq!(
        eligibility(&service(700, false), &cfg),
        Ok(RecoveryKind::Service)
    );
    let mut wrong_policy = service(700, false);
    wrong_policy.policy = ActivationPolicy::Regular;
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
            policy: ActivationPolicy::Regular,
            path: "/x".into(),
        },
        Ineligible::NotRegular(ActivationPolicy::Accessory),
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
