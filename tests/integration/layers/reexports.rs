//! What a crate hands on: a `pub use` in crate Y of an item of crate X lets every crate that
//! may name Y name that item through it, so it is allowed only if every row that may use Y
//! may also use X (re-exporting the core's items is fine everywhere). `pub(crate)`,
//! `pub(super)` and `pub(in …)` re-exports cannot leave their crate and are not counted. And
//! no crate root, of the twelve crates, hands on a crate or a crate's top module (`pub use
//! headroom_platform as platform;`): the compiler would let a crate above reach a crate its
//! own manifest does not name, and the text checks would read that path as the root's crate.
//! The root package's re-exports (`pub use exit::ExitStatus;`, `pub mod testing`'s items for
//! the integration tests and the examples) are items, and no row may use the root package
//! (`lib` is in every row's "never"): nothing checked by the table can name them.

use std::collections::{BTreeMap, BTreeSet};

use super::{Row, allowed_crates, code, crate_of, is_test_file, package_of, root, rows};

/// One `use` leaf: whether the statement is a bare `pub` one, the path it names and the name
/// it binds (`*` for a glob).
#[derive(Debug, Clone)]
struct UseItem {
    public: bool,
    path: String,
    name: String,
}

/// The `use` statements of `text` (already without comments and test code), trees
/// expanded, `as` and `self` leaves kept as the names they bind.
fn use_items(text: &str) -> Vec<UseItem> {
    fn expand(public: bool, prefix: &str, tree: &str, out: &mut Vec<UseItem>) {
        let tree = tree.trim();
        match tree.find('{') {
            None => {
                let (path, alias) = match tree.split_once(" as ") {
                    Some((p, a)) => (p.trim(), Some(a.trim())),
                    None => (tree, None),
                };
                if path.is_empty() {
                    return;
                }
                let full = if path == "self" {
                    prefix.trim_end_matches("::").to_string()
                } else {
                    format!("{prefix}{path}")
                };
                let last = full.rsplit("::").next().unwrap_or(&full).to_string();
                let name = alias.map_or(last, str::to_string);
                out.push(UseItem {
                    public,
                    path: full,
                    name,
                });
            }
            Some(open) => {
                let head = format!("{prefix}{}", tree[..open].trim());
                let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
                let (mut depth, mut start) = (0, 0);
                for (i, c) in inner.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            expand(public, &head, &inner[start..i], out);
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
                expand(public, &head, &inner[start..], out);
            }
        }
    }
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("use ") {
        let before = &rest[..i];
        let line_start = before.rfind('\n').map_or(0, |n| n + 1);
        let mut vis = before[line_start..].trim();
        // Attributes on the same line (`#[doc(hidden)] pub use …`).
        while let Some(end) = vis.strip_prefix("#[").and_then(|v| v.find(']')) {
            vis = vis[end + 3..].trim_start();
        }
        let is_stmt = vis.is_empty() || vis == "pub" || vis.starts_with("pub(");
        let word_start = before.chars().next_back().is_none_or(char::is_whitespace);
        let Some(end) = rest[i..].find(';') else {
            break;
        };
        if is_stmt && word_start {
            expand(vis == "pub", "", &rest[i + 4..i + end], &mut out);
        }
        rest = &rest[i + end + 1..];
    }
    out
}

/// The crate identifier (`headroom_cli`) of a workspace crate's directory.
fn ident_of(dir: &str) -> String {
    package_of(dir).replace('-', "_")
}

/// The package a crate identifier names, if it is a workspace crate's.
fn package_named(ident: &str, dirs: &[&str]) -> Option<String> {
    dirs.iter()
        .map(|d| package_of(d))
        .find(|p| p.replace('-', "_") == ident)
}

/// Where a file is: its crate's identifier, the names its crate root binds, the names the
/// file itself binds, and how deep below the root it is (`lib.rs` 0, `a.rs` and `a/mod.rs`
/// 1, …).
struct Place<'a> {
    own: String,
    root: &'a BTreeMap<String, String>,
    file: &'a BTreeMap<String, String>,
    depth: usize,
}

/// The full path `path` names from `place`, starting at a crate identifier (`headroom_cli::
/// cli::ToolGroup`), through the aliases of the file and of the crate root (`crate::cli` is
/// what the root's `use headroom_cli::cli;` binds). `None` for a path outside the workspace
/// (std, serde, a name glob-imported from elsewhere).
fn resolve(path: &str, place: &Place, dirs: &[&str], hops: usize) -> Option<Vec<String>> {
    if hops > 8 {
        return None;
    }
    let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
    let first = *parts.first()?;
    let through = |to: &str, rest: &[&str], root_level: bool| {
        let joined = std::iter::once(to)
            .chain(rest.iter().copied())
            .collect::<Vec<_>>()
            .join("::");
        let at = Place {
            own: place.own.clone(),
            root: place.root,
            file: if root_level { place.root } else { place.file },
            depth: if root_level { 0 } else { place.depth },
        };
        resolve(&joined, &at, dirs, hops + 1)
    };
    let own = |rest: &[&str]| {
        Some(
            std::iter::once(place.own.clone())
                .chain(rest.iter().map(|s| s.to_string()))
                .collect(),
        )
    };
    match first {
        "crate" => match parts.get(1).and_then(|n| place.root.get(*n)) {
            Some(to) => through(to, &parts[2..], true),
            None => own(&parts[1..]),
        },
        "self" | "super" => {
            let ups = parts.iter().take_while(|p| **p == "super").count();
            let skip = parts
                .iter()
                .take_while(|p| **p == "super" || **p == "self")
                .count();
            let depth = place.depth.saturating_sub(ups);
            let next = parts.get(skip).copied();
            let bound = if depth == 0 {
                next.and_then(|n| place.root.get(n))
            } else if ups == 0 {
                next.and_then(|n| place.file.get(n))
            } else {
                None
            };
            match bound {
                Some(to) => through(to, &parts[skip + 1..], depth == 0),
                None => own(&parts[skip..]),
            }
        }
        c if package_named(c, dirs).is_some() => {
            Some(parts.iter().map(|s| s.to_string()).collect())
        }
        c => match place.file.get(c) {
            // A name bound by a `use` of the file (`use crate::schema; pub use schema::…`).
            Some(to) if to != path => through(to, &parts[1..], false),
            _ => None,
        },
    }
}

/// One `pub use` of a file naming another workspace crate's item.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Reexport {
    /// The file, from the repository's root.
    pub(super) file: String,
    /// The path as written.
    pub(super) path: String,
    /// The package that holds the item, and the package that re-exports it.
    pub(super) from: String,
    pub(super) by: String,
}

/// The `pub use`s of `text`, a file `rel` of the crate in `dir` (its root `lib.rs` is
/// `root_text`), that name another workspace crate, and whether each hands on a whole crate
/// or a crate's top module.
fn reexports_of(
    dir: &str,
    rel: &str,
    text: &str,
    root_text: &str,
    dirs: &[&str],
    top_modules: &BTreeMap<String, BTreeSet<String>>,
) -> Vec<(Reexport, bool)> {
    // The first binding of a name is the one a path through it means: a later `pub use
    // crate::platform;` hands the alias on, it does not rebind it.
    let bindings = |t: &str| -> BTreeMap<String, String> {
        let mut map = BTreeMap::new();
        for u in use_items(t) {
            let again = [
                u.name.clone(),
                format!("crate::{}", u.name),
                format!("self::{}", u.name),
            ];
            if u.name != "*" && u.path != u.name && !(u.public && again.contains(&u.path)) {
                map.entry(u.name).or_insert(u.path);
            }
        }
        map
    };
    let root_map = bindings(root_text);
    let file_map = bindings(text);
    let stem = rel.strip_suffix(".rs").unwrap_or(rel);
    let stem = stem.strip_suffix("/mod").unwrap_or(stem);
    let depth = if stem == "lib" {
        0
    } else {
        stem.split('/').count()
    };
    let place = Place {
        own: ident_of(dir),
        root: &root_map,
        file: &file_map,
        depth,
    };
    let mut out = Vec::new();
    for u in use_items(text).into_iter().filter(|u| u.public) {
        let Some(full) = resolve(&u.path, &place, dirs, 0) else {
            continue;
        };
        let Some(from) = package_named(&full[0], dirs) else {
            continue;
        };
        let by = package_of(dir);
        if from == by {
            continue;
        }
        let below: Vec<&String> = full[1..].iter().filter(|s| *s != "*").collect();
        let whole = below.is_empty()
            || below.len() == 1 && top_modules.get(&from).is_some_and(|m| m.contains(below[0]));
        let file = if dir.is_empty() {
            format!("src/{rel}")
        } else {
            format!("{dir}/src/{rel}")
        };
        out.push((
            Reexport {
                file,
                path: u.path,
                from,
                by,
            },
            whole && stem == "lib",
        ));
    }
    out
}

/// Each crate's directory, from the table's rows.
fn crate_dirs(rows: &[Row]) -> Vec<&'static str> {
    let set: BTreeSet<&'static str> = rows.iter().map(|r| crate_of(&r.modules[0])).collect();
    set.into_iter().collect()
}

/// The `pub mod`s each crate's `lib.rs` declares, by package.
fn top_modules_of(lib_texts: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    lib_texts
        .iter()
        .map(|(pkg, text)| {
            let mods = text
                .lines()
                .filter_map(|l| l.trim().strip_prefix("pub mod "))
                .filter_map(|m| m.strip_suffix(';'))
                .map(str::to_string)
                .collect();
            (pkg.clone(), mods)
        })
        .collect()
}

/// Why a re-export is refused, if it is: it hands on a crate from a crate root, or a crate
/// that may use its crate may not use the item's.
pub(super) fn refused(r: &Reexport, whole_crate: bool, rows: &[Row]) -> Option<String> {
    if whole_crate {
        return Some("a crate root hands on a crate".into());
    }
    let dirs = crate_dirs(rows);
    let dir_of = |pkg: &str| dirs.iter().copied().find(|d| package_of(d) == pkg);
    let by_dir = dir_of(&r.by)?;
    let by_rows: Vec<&String> = rows
        .iter()
        .filter(|row| crate_of(&row.modules[0]) == by_dir)
        .flat_map(|row| &row.modules)
        .collect();
    let users: BTreeSet<&str> = rows
        .iter()
        .filter(|row| row.may.iter().any(|m| by_rows.contains(&m)))
        .map(|row| crate_of(&row.modules[0]))
        .collect();
    let barred: Vec<&str> = users
        .into_iter()
        .filter(|u| package_of(u) != r.from && !allowed_crates(rows, u).contains(&r.from))
        .collect();
    (!barred.is_empty()).then(|| format!("{barred:?} may use {} but not {}", r.by, r.from))
}

/// Every cross-crate `pub use` of every non-test file of every crate, with whether it hands
/// on a whole crate from a crate root.
fn all_reexports(rows: &[Row]) -> Vec<(Reexport, bool)> {
    let dirs = crate_dirs(rows);
    let src_of = |d: &str| root().join(d).join("src");
    let libs: BTreeMap<String, String> = dirs
        .iter()
        .map(|d| {
            let text = std::fs::read_to_string(src_of(d).join("lib.rs")).unwrap();
            (package_of(d), code(&text))
        })
        .collect();
    let tops = top_modules_of(&libs);
    let mut out = Vec::new();
    for d in &dirs {
        let src = src_of(d);
        let tests = crate::support::test_only_files(&src);
        for f in crate::support::files_under(&src) {
            let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            // `main.rs` is the binary: nothing links against it.
            if !rel.ends_with(".rs") || rel == "main.rs" || is_test_file(&f, &tests) {
                continue;
            }
            let text = code(&std::fs::read_to_string(&f).unwrap());
            out.extend(reexports_of(
                d,
                &rel,
                &text,
                &libs[&package_of(d)],
                &dirs,
                &tops,
            ));
        }
    }
    out
}

/// A made-up file `rel` of the crate in `dir` with its root's text, read as the real ones.
fn case(rows: &[Row], dir: &str, rel: &str, text: &str, root_text: &str) -> Vec<Option<String>> {
    let dirs = crate_dirs(rows);
    let libs: BTreeMap<String, String> = dirs
        .iter()
        .map(|d| {
            let text = std::fs::read_to_string(root().join(d).join("src/lib.rs")).unwrap();
            (package_of(d), code(&text))
        })
        .collect();
    let tops = top_modules_of(&libs);
    let root_text = if rel == "lib.rs" { text } else { root_text };
    reexports_of(dir, rel, &code(text), &code(root_text), &dirs, &tops)
        .iter()
        .map(|(r, whole)| refused(r, *whole, rows))
        .collect()
}

#[test]
fn no_crate_hands_on_what_its_users_may_not_name() {
    let rows = rows();
    let found = all_reexports(&rows);
    let refusals: Vec<(String, String, String)> = found
        .iter()
        .filter_map(|(r, whole)| {
            refused(r, *whole, &rows).map(|why| (r.file.clone(), r.path.clone(), why))
        })
        .collect();
    assert_eq!(
        refusals,
        Vec::<(String, String, String)>::new(),
        "re-exports a user of their crate may not name"
    );
    // Control: the re-exports there are today were all read (each a core item but
    // config's `ToolGroup`, which every user of config may name: commands, mcp, the root).
    let seen: BTreeSet<(String, String)> = found
        .iter()
        .filter(|(r, _)| !r.file.starts_with("src/"))
        .map(|(r, _)| (r.file.clone(), r.from.clone()))
        .collect();
    let pair = |f: &str, p: &str| (f.to_string(), p.to_string());
    assert_eq!(
        seen,
        BTreeSet::from([
            pair(
                "crates/headroom-config/src/config/sections.rs",
                "headroom-cli"
            ),
            pair("crates/headroom-platform/src/lib.rs", "headroom-core"),
            pair("crates/headroom-schema/src/schema.rs", "headroom-core"),
            pair("crates/headroom-store/src/evidence.rs", "headroom-core"),
            pair("crates/headroom-store/src/hang_events.rs", "headroom-core"),
        ]),
        "{found:#?}"
    );
    let root_items = found.iter().filter(|(r, _)| r.file == "src/lib.rs").count();
    assert!(
        root_items >= 10,
        "control: the root's re-exports were read ({root_items})"
    );
}

/// The controls: per kind of re-export, one the rule refuses is caught and one it allows is
/// not.
#[test]
fn a_reexport_a_user_may_not_name_is_caught() {
    let rows = rows();
    let store_root =
        "use headroom_core as core;\nuse headroom_platform as platform;\npub mod fsio;\n";
    let output_root = "use headroom_core as core;\nuse headroom_schema::schema;\npub mod output;\n";
    let refused = |v: Vec<Option<String>>| v.iter().filter(|r| r.is_some()).count();
    let allowed = |v: Vec<Option<String>>| v.len() - refused(v.clone());
    // A crate root handing on a crate: the store's platform (config may use the store, never
    // the platform), and the core (which every row may use) all the same.
    let r = |dir: &str, rel: &str, text: &str, root: &str| case(&rows, dir, rel, text, root);
    let store = "crates/headroom-store";
    let output = "crates/headroom-output";
    let config = "crates/headroom-config";
    assert_eq!(
        refused(r(
            store,
            "lib.rs",
            &format!("{store_root}pub use headroom_platform as platform;\n"),
            ""
        )),
        1
    );
    assert_eq!(
        refused(r(
            store,
            "lib.rs",
            &format!("{store_root}pub use crate::platform;\n"),
            ""
        )),
        1
    );
    assert_eq!(
        refused(r(
            output,
            "lib.rs",
            &format!("{output_root}pub use headroom_schema::schema;\n"),
            ""
        )),
        1
    );
    // …while an item of the core from a root is allowed (the platform's `TreeQuery`).
    assert_eq!(
        allowed(r(
            store,
            "lib.rs",
            &format!("{store_root}pub use crate::core::snapshot::Snapshot;\n"),
            ""
        )),
        1
    );
    // In a module: `cli` may use the output crate, never the schema.
    for bad in [
        "pub use crate::schema::Document;\n",
        "pub use headroom_schema::schema::{Document, to_line};\n",
        "use crate::schema;\npub use schema::Document;\n",
        "use crate::schema;\npub use self::schema::*;\n",
        "#[doc(hidden)] pub use crate::schema::Document;\n",
    ] {
        let found = r(output, "output/queue.rs", bad, output_root);
        assert!(
            !found.is_empty() && refused(found.clone()) == found.len(),
            "{bad}: {found:?}"
        );
    }
    // `super::` from a top module is the crate root, whose alias names the schema crate.
    let found = r(
        output,
        "output/mod.rs",
        "pub use super::schema::Document;\n",
        output_root,
    );
    assert_eq!(refused(found.clone()), 1, "{found:?}");
    for good in [
        "pub use crate::core::snapshot::Snapshot;\n",
        "pub(crate) use crate::schema::Document;\n",
        "pub(super) use crate::schema::Document;\n",
        "use crate::schema::Document;\n",
        "pub use super::plural;\n",
        "pub use std::fmt::Write;\n",
    ] {
        let found = r(output, "output/queue.rs", good, output_root);
        assert_eq!(refused(found.clone()), 0, "{good}: {found:?}");
    }
    assert_eq!(
        allowed(r(
            output,
            "output/queue.rs",
            "pub use crate::core::x::Y;\n",
            output_root
        )),
        1
    );
    // Config's `ToolGroup`: every crate that may use config may use cli; the store naming
    // the cli would not do for config's users (mcp may not use the store).
    let config_root = "use headroom_cli::cli;\nuse headroom_store as store;\npub mod config;\n";
    assert_eq!(
        allowed(r(
            config,
            "config/sections.rs",
            "pub use crate::cli::ToolGroup;\n",
            config_root
        )),
        1
    );
    assert_eq!(
        refused(r(
            "crates/headroom-commands",
            "commands/x.rs",
            "pub use crate::store::evidence::Row;\n",
            "use headroom_store as store;\npub mod commands;\n"
        )),
        1,
        "mcp may use the commands but not the store"
    );
    // The root package: nothing may use it, so an item it re-exports for the tests is not
    // refused; handing on a whole crate from its root still is.
    let root_lib =
        "use headroom_schema::schema;\npub mod testing {\n    pub use crate::schema::to_line;\n}\n";
    assert_eq!(allowed(r("", "lib.rs", root_lib, "")), 1);
    assert_eq!(
        refused(r(
            "",
            "lib.rs",
            "use headroom_schema::schema;\npub use schema;\n",
            ""
        )),
        1
    );
}
