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

    /// The first pattern the one rule refuses (`check`), as given, with the rule.
    pub fn refused(&self) -> Option<(&str, &'static str)> {
        self.0
            .iter()
            .find_map(|p| check(p).err().map(|why| (p.as_str(), why)))
    }
}

/// Characters of globs and regular expressions. Patterns are plain substrings, so these
/// match only themselves: `cargo*` would match nothing, and as a deny pattern it would
/// deny nothing while the user believes it denies everything that starts with `cargo`.
const GLOB_OR_REGEX: &[char] = &['*', '?', '[', ']', '|', '^', '$', '\\'];

/// The one rule every pattern list is held to, wherever it comes from (reap's allow and
/// deny lists, `[[memory.guard]]` patterns, `[hangs]` entries; from the config file, a
/// flag or an MCP argument): `Err` is the rule broken. A blank pattern is not this rule's
/// business (each list says what a blank entry means).
///
/// - only `/` matches every path; one character matches almost every process;
/// - a pattern needs a letter or a digit (`..`, `-_` match by accident);
/// - no glob or regular-expression characters (`* ? [ ] | ^ $ \`): they match only
///   themselves, so the pattern would silently match nothing.
pub fn check(raw: &str) -> Result<(), &'static str> {
    let p = raw.trim();
    if p.is_empty() {
        return Ok(());
    }
    if p.chars().all(|c| c == '/') {
        return Err("a pattern of only `/` matches every path");
    }
    if p.chars().count() == 1 {
        return Err("a one-character pattern matches almost every process");
    }
    if p.contains(GLOB_OR_REGEX) {
        return Err(
            "patterns are plain substrings, not globs or regular expressions: \
             `* ? [ ] | ^ $ \\` match only themselves",
        );
    }
    if !p.chars().any(char::is_alphanumeric) {
        return Err("a pattern needs a letter or a digit");
    }
    Ok(())
}

/// `check` over a list as given: the first pattern refused, named with the rule
/// ("pattern `/` is refused: …"), for the caller to prefix with where it came from.
pub fn check_all<S: AsRef<str>>(raw: &[S]) -> Result<(), String> {
    for p in raw {
        if let Err(why) = check(p.as_ref()) {
            return Err(format!(
                "pattern `{}` is refused: {why}",
                crate::sanitize::sanitize(p.as_ref().trim())
            ));
        }
    }
    Ok(())
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
    fn the_one_rule_refuses_what_matches_everything_by_accident_or_nothing_by_mistake() {
        for (raw, says) in [
            ("/", "only `/`"),
            ("//", "only `/`"),
            (" / ", "only `/`"),
            ("a", "one-character"),
            ("*", "one-character"),
            (".", "one-character"),
            ("..", "letter or a digit"),
            ("./", "letter or a digit"),
            ("-_", "letter or a digit"),
            ("cargo*", "not globs"),
            ("*cargo", "not globs"),
            ("car?o", "not globs"),
            (".*", "not globs"),
            ("^cargo$", "not globs"),
            ("cargo|node", "not globs"),
            ("[c]argo", "not globs"),
            ("a\\b", "not globs"),
        ] {
            let why = check(raw).unwrap_err();
            assert!(why.contains(says), "{raw:?}: {why}");
        }
        // Controls: real patterns, a path fragment, two characters, a name with a dot or a
        // dash, a non-ASCII name, and blank (each list says what blank means).
        for ok in [
            "cargo",
            "/.config/agency/",
            "ab",
            "node.js",
            "hog-guard",
            "python3.11",
            "é2",
            "",
            "  ",
        ] {
            assert_eq!(check(ok), Ok(()), "{ok:?}");
        }
    }

    #[test]
    fn a_list_names_its_first_refused_pattern_and_the_rule() {
        assert_eq!(check_all(&["agency", "node"]), Ok(()));
        let e = check_all(&["agency", " / ", "a"]).unwrap_err();
        assert!(
            e.starts_with("pattern `/` is refused: a pattern of only `/`"),
            "{e}"
        );
        let p = Patterns::new(["agency", "A"]);
        assert_eq!(p.refused().map(|(p, _)| p), Some("a"));
        assert_eq!(Patterns::new(["agency"]).refused(), None);
        // A refused pattern would otherwise match: the rule is not a matching rule.
        assert!(ad(&["/"], &[]).permits("anything", Some("/usr/bin/anything")));
    }
}
