//! The allow/deny policy of `reap`: plain case-insensitive substrings, never regex (a
//! malformed regex silently matching everything would be catastrophic for something that
//! sends SIGKILL), and fail-closed.
//!
//! - An allow pattern without `/` names a program: it matches the process name or the
//!   executable's file name, never a directory (`/Users/x/agency-tools/mytool` is not an
//!   `agency`).
//! - An allow pattern with `/` is a path fragment matched against the full executable path.
//! - A deny pattern matches anywhere in the name or the full path, and always wins.
//! - An empty allowlist matches nothing; a non-empty denylist refuses a process whose path
//!   is unknown.

use serde::Serialize;

/// A cleaned list of patterns (lowercased, trimmed, empty ones dropped).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Patterns(Vec<String>);

impl Patterns {
    pub fn new<S: AsRef<str>>(raw: impl IntoIterator<Item = S>) -> Self {
        Self(
            raw.into_iter()
                .map(|p| p.as_ref().trim().to_lowercase())
                .filter(|p| !p.is_empty())
                .collect(),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn as_slice(&self) -> &[String] {
        &self.0
    }

    /// The first allow pattern that would match almost everything: one character, or only
    /// `/` (which every path contains), with the rule it breaks.
    pub fn too_broad(&self) -> Option<(&str, &'static str)> {
        self.0.iter().find_map(|p| {
            if p.chars().all(|c| c == '/') {
                Some((p.as_str(), "a pattern of only `/` matches every path"))
            } else if p.chars().count() == 1 {
                Some((
                    p.as_str(),
                    "a one-character pattern matches almost every process",
                ))
            } else {
                None
            }
        })
    }
}

/// The allow and deny lists together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct AllowDeny {
    pub allow: Patterns,
    pub deny: Patterns,
}

impl AllowDeny {
    /// Whether a process with this name and (maybe unknown) executable path may be targeted.
    pub fn permits(&self, name: &str, exe: Option<&str>) -> bool {
        let name = name.to_lowercase();
        let path = exe.map(str::to_lowercase);
        if !self.deny.is_empty() {
            let Some(path) = &path else { return false };
            if self
                .deny
                .0
                .iter()
                .any(|d| name.contains(d.as_str()) || path.contains(d.as_str()))
            {
                return false;
            }
        }
        let file = path.as_deref().map(|p| p.rsplit('/').next().unwrap_or(p));
        self.allow.0.iter().any(|a| {
            if a.contains('/') {
                path.as_deref().is_some_and(|p| p.contains(a.as_str()))
            } else {
                name.contains(a.as_str()) || file.is_some_and(|f| f.contains(a.as_str()))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ad(allow: &[&str], deny: &[&str]) -> AllowDeny {
        AllowDeny {
            allow: Patterns::new(allow),
            deny: Patterns::new(deny),
        }
    }

    const WRAPPER: &str = "/Users/x/.config/agency/CurrentVersion/agency";

    #[test]
    fn default_agency_matches_name_or_file_name() {
        let p = ad(&["agency"], &[]);
        assert!(p.permits("agency", Some(WRAPPER)));
        assert!(p.permits("node", Some("/Users/x/bin/agency-wrapper")));
        assert!(p.permits("AGENCY", None));
        assert!(!p.permits(
            "Xcode",
            Some("/Applications/Xcode.app/Contents/MacOS/Xcode")
        ));
    }

    #[test]
    fn plain_pattern_never_matches_a_directory() {
        let p = ad(&["agency"], &[]);
        assert!(!p.permits("mytool", Some("/Users/x/agency-tools/mytool")));
    }

    #[test]
    fn slash_pattern_matches_the_full_path_only() {
        let p = ad(&[".config/AGENCY"], &[]);
        assert!(p.permits("whatever", Some(WRAPPER)));
        assert!(!p.permits("agency", Some("/opt/agency")));
        assert!(
            !p.permits("agency", None),
            "unknown path cannot match a path pattern"
        );
    }

    #[test]
    fn deny_wins_and_looks_at_name_and_path() {
        assert!(!ad(&["agency"], &["CurrentVersion"]).permits("agency", Some(WRAPPER)));
        assert!(!ad(&["agency"], &["agency"]).permits("agency", Some("/opt/x")));
        assert!(ad(&["agency"], &["/Applications/Foo.app"]).permits("agency", Some(WRAPPER)));
    }

    #[test]
    fn unknown_path_with_a_denylist_is_refused_without_one_allowlist_decides() {
        assert!(!ad(&["agency"], &["/Applications/Foo.app"]).permits("agency", None));
        assert!(ad(&["agency"], &[]).permits("agency", None));
    }

    #[test]
    fn empty_allowlist_matches_nothing() {
        let p = ad(&[], &[]);
        assert!(!p.permits("agency", Some(WRAPPER)));
        let blank = ad(&["", "  "], &[]);
        assert!(blank.allow.is_empty());
        assert!(!blank.permits("agency", Some(WRAPPER)));
    }

    #[test]
    fn patterns_are_trimmed_lowercased_and_blank_ones_dropped() {
        assert_eq!(
            Patterns::new([" Agency ", "", "Foo"]).as_slice(),
            ["agency", "foo"]
        );
    }

    #[test]
    fn allow_patterns_that_match_almost_everything_are_named() {
        for (raw, bad) in [
            (vec!["agency", "a"], Some("a")),
            (vec!["/"], Some("/")),
            (vec!["//"], Some("//")),
            (vec![" x "], Some("x")),
        ] {
            assert_eq!(Patterns::new(raw).too_broad().map(|(p, _)| p), bad);
        }
        // Controls: two characters, a path fragment, the default, nothing.
        for ok in [vec!["ab"], vec!["/.config/agency/"], vec!["agency"], vec![]] {
            assert_eq!(Patterns::new(ok.clone()).too_broad(), None, "{ok:?}");
        }
        let (_, why) = Patterns::new(["/"]).too_broad().unwrap_or(("", ""));
        assert!(why.contains("every path"));
    }
}
