//! Which path a service definition (the LaunchAgent, the systemd unit) runs headroom by, so
//! that an upgrade does not leave it pointing at a deleted file, and what a registered path
//! says about its future (#27 item 4).
//!
//! Homebrew installs each version in a keg, `<prefix>/Cellar/headroom/<version>/`, and
//! deletes the old keg on `brew upgrade`; `<prefix>/opt/headroom` (a link to the current keg)
//! and `<prefix>/bin/headroom` (a link into it) are what it keeps pointing at the new one.
//! Canonicalising the running binary's path lands in the keg, which is exactly the path
//! that is gone after the next upgrade. Other package managers do the same with a `bin/`
//! link into a versioned store (nix profiles, `~/.local/bin` links): the link is what they
//! maintain, so a program invoked through a link is registered as that link.
//!
//! Pure: the caller reads the links and hands over what each resolves to.

use std::path::{Component, Path, PathBuf};

/// A program inside a Homebrew keg: `<prefix>/Cellar/<formula>/<version>/<rest>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keg {
    pub prefix: PathBuf,
    pub formula: String,
    pub version: String,
    /// The program's path inside the keg (`bin/headroom`).
    pub rest: PathBuf,
}

impl Keg {
    /// `<prefix>/opt/<formula>/<rest>`: the same program through the link Homebrew moves to
    /// each new version.
    pub fn opt_path(&self, prefix: &Path) -> PathBuf {
        prefix.join("opt").join(&self.formula).join(&self.rest)
    }
}

/// The keg `path` lies in, if it is `…/Cellar/<formula>/<version>/<rest…>` (the last
/// `Cellar` component counts, so a prefix that itself contains one still parses).
pub fn keg(path: &Path) -> Option<Keg> {
    let parts: Vec<Component<'_>> = path.components().collect();
    let at = parts
        .iter()
        .rposition(|c| matches!(c, Component::Normal(n) if *n == "Cellar"))?;
    let name = |i: usize| match parts.get(i) {
        Some(Component::Normal(n)) => n.to_str().map(str::to_string),
        _ => None,
    };
    let formula = name(at + 1)?;
    let version = name(at + 2)?;
    let rest: PathBuf = parts.get(at + 3..)?.iter().collect();
    if rest.as_os_str().is_empty() || !path.is_absolute() {
        return None;
    }
    let prefix: PathBuf = parts[..at].iter().collect();
    Some(Keg {
        prefix,
        formula,
        version,
        rest,
    })
}

/// The `opt` links worth asking about for a program at `real`, best first:
/// `$HOMEBREW_PREFIX/opt/…` when that is set, then the keg's own prefix's.
pub fn opt_candidates(real: &Path, homebrew_prefix: Option<&Path>) -> Vec<PathBuf> {
    let Some(k) = keg(real) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(p) = homebrew_prefix.filter(|p| p.is_absolute()) {
        out.push(k.opt_path(p));
    }
    let own = k.opt_path(&k.prefix);
    if !out.contains(&own) {
        out.push(own);
    }
    out
}

/// What the caller read about the running program.
#[derive(Debug, Clone, Copy)]
pub struct ProgramFacts<'a> {
    /// The program as invoked (`argv[0]` made absolute, links not followed) and what it
    /// resolves to now; `None` when it could not be worked out.
    pub invoked: Option<(&'a Path, Option<&'a Path>)>,
    /// The running program's own file, every link resolved.
    pub real: &'a Path,
    /// `opt_candidates(real, …)`, each with what it resolves to now (`None`: missing).
    pub opt_links: &'a [(PathBuf, Option<PathBuf>)],
}

/// Why a path was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// Homebrew's `opt` link for the formula: survives every `brew upgrade`.
    HomebrewOpt,
    /// The link it was invoked by (a package manager's `bin/` link, or the user's own).
    InvokedLink,
    /// The program's own file: it was not invoked through a link, and is no keg.
    Real,
    /// Inside a Homebrew keg with no `opt` link and no link to keep: the next upgrade
    /// deletes it (the caller warns).
    Keg,
}

/// The path to register, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub path: PathBuf,
    pub reason: Reason,
}

/// The path a service definition should run: for a program in a Homebrew keg, an `opt`
/// link that resolves into a keg of the same formula (the first that does); otherwise the
/// link it was invoked by, when that is a link to this very program; otherwise the program
/// itself.
pub fn choose(f: &ProgramFacts<'_>) -> Choice {
    let real_keg = keg(f.real);
    if let Some(k) = &real_keg {
        let same_formula = |p: &Path| keg(p).is_some_and(|o| o.formula == k.formula);
        if let Some((opt, _)) = f
            .opt_links
            .iter()
            .find(|(_, to)| to.as_deref().is_some_and(same_formula))
        {
            return Choice {
                path: opt.clone(),
                reason: Reason::HomebrewOpt,
            };
        }
    }
    if let Some((invoked, Some(to))) = f.invoked {
        if invoked != to && to == f.real && keg(invoked).is_none() {
            return Choice {
                path: invoked.to_path_buf(),
                reason: Reason::InvokedLink,
            };
        }
    }
    Choice {
        path: f.real.to_path_buf(),
        reason: if real_keg.is_some() {
            Reason::Keg
        } else {
            Reason::Real
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEG: &str = "/opt/homebrew/Cellar/headroom/0.2.0/bin/headroom";
    const OPT: &str = "/opt/homebrew/opt/headroom/bin/headroom";

    fn p(s: &str) -> PathBuf {
        PathBuf::from(s)
    }

    #[test]
    fn a_keg_path_parses_into_prefix_formula_version_and_rest() {
        assert_eq!(
            keg(Path::new(KEG)),
            Some(Keg {
                prefix: p("/opt/homebrew"),
                formula: "headroom".into(),
                version: "0.2.0".into(),
                rest: p("bin/headroom"),
            })
        );
        // Linux's prefix, and a prefix with a `Cellar` of its own: the last one counts.
        let k = keg(Path::new(
            "/home/linuxbrew/.linuxbrew/Cellar/headroom/HEAD-c767ce7/bin/headroom",
        ))
        .unwrap();
        assert_eq!(
            (k.prefix, k.version),
            (p("/home/linuxbrew/.linuxbrew"), "HEAD-c767ce7".into())
        );
        assert_eq!(
            keg(Path::new("/x/Cellar/y/Cellar/headroom/1/bin/headroom")).map(|k| k.prefix),
            Some(p("/x/Cellar/y"))
        );
        // Not kegs: no version or no file below it, a relative path, an ordinary install.
        for no in [
            "/opt/homebrew/Cellar/headroom",
            "/opt/homebrew/Cellar/headroom/0.2.0",
            "Cellar/headroom/0.2.0/bin/headroom",
            "/usr/local/bin/headroom",
            "/home/u/.cargo/bin/headroom",
        ] {
            assert_eq!(keg(Path::new(no)), None, "{no}");
        }
    }

    #[test]
    fn the_opt_candidates_put_homebrew_prefix_first_and_never_twice() {
        assert_eq!(
            opt_candidates(Path::new(KEG), Some(Path::new("/usr/local"))),
            vec![p("/usr/local/opt/headroom/bin/headroom"), p(OPT)]
        );
        assert_eq!(
            opt_candidates(Path::new(KEG), Some(Path::new("/opt/homebrew"))),
            vec![p(OPT)]
        );
        assert_eq!(
            opt_candidates(Path::new(KEG), Some(Path::new("relative"))),
            vec![p(OPT)]
        );
        assert!(opt_candidates(Path::new("/usr/bin/headroom"), None).is_empty());
    }

    #[test]
    fn a_keg_program_is_registered_by_its_opt_link_however_it_was_invoked() {
        let opt = [(p(OPT), Some(p(KEG)))];
        for invoked in [
            Some((
                Path::new("/opt/homebrew/bin/headroom"),
                Some(Path::new(KEG)),
            )),
            Some((Path::new(KEG), Some(Path::new(KEG)))),
            Some((Path::new(OPT), Some(Path::new(KEG)))),
            None,
        ] {
            let c = choose(&ProgramFacts {
                invoked,
                real: Path::new(KEG),
                opt_links: &opt,
            });
            assert_eq!(
                c,
                Choice {
                    path: p(OPT),
                    reason: Reason::HomebrewOpt
                },
                "{invoked:?}"
            );
        }
    }

    #[test]
    fn without_an_opt_link_the_bin_link_is_kept_and_a_bare_keg_path_is_flagged() {
        // The breaking input: no opt link (missing, or pointing at another formula).
        for opt in [
            vec![(p(OPT), None)],
            vec![(p(OPT), Some(p("/opt/homebrew/Cellar/other/1/bin/headroom")))],
            vec![],
        ] {
            let via_bin = choose(&ProgramFacts {
                invoked: Some((
                    Path::new("/opt/homebrew/bin/headroom"),
                    Some(Path::new(KEG)),
                )),
                real: Path::new(KEG),
                opt_links: &opt,
            });
            assert_eq!(via_bin.path, p("/opt/homebrew/bin/headroom"));
            assert_eq!(via_bin.reason, Reason::InvokedLink);
            let direct = choose(&ProgramFacts {
                invoked: Some((Path::new(KEG), Some(Path::new(KEG)))),
                real: Path::new(KEG),
                opt_links: &opt,
            });
            assert_eq!(
                direct,
                Choice {
                    path: p(KEG),
                    reason: Reason::Keg
                }
            );
        }
    }

    #[test]
    fn another_package_managers_link_is_kept_and_a_plain_file_is_itself() {
        let store = "/nix/store/abc-headroom-0.2.0/bin/headroom";
        let link = choose(&ProgramFacts {
            invoked: Some((
                Path::new("/home/u/.nix-profile/bin/headroom"),
                Some(Path::new(store)),
            )),
            real: Path::new(store),
            opt_links: &[],
        });
        assert_eq!(
            link,
            Choice {
                path: p("/home/u/.nix-profile/bin/headroom"),
                reason: Reason::InvokedLink
            }
        );
        // Control: a link that resolves elsewhere than the running program (replaced since
        // it started, say) is not trusted; the program's own file is.
        let moved = choose(&ProgramFacts {
            invoked: Some((
                Path::new("/home/u/bin/headroom"),
                Some(Path::new("/elsewhere")),
            )),
            real: Path::new(store),
            opt_links: &[],
        });
        assert_eq!(
            moved,
            Choice {
                path: p(store),
                reason: Reason::Real
            }
        );
        let plain = choose(&ProgramFacts {
            invoked: Some((
                Path::new("/home/u/.cargo/bin/headroom"),
                Some(Path::new("/home/u/.cargo/bin/headroom")),
            )),
            real: Path::new("/home/u/.cargo/bin/headroom"),
            opt_links: &[],
        });
        assert_eq!(plain.reason, Reason::Real);
    }
}
