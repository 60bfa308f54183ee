//! The layer rules of ARCHITECTURE.md, read from its table ("Layer rules"). Each row is a
//! crate (`cli` and `cli_help` are one row), so the rules are kept twice: on the manifests, where each crate's `[dependencies]` may name only the
//! headroom crates its rows may use (by package, renamed or quoted keys included) and no
//! system-call crate but the platform's
//! (`every_row_of_the_layer_table_is_a_crate_boundary`: what the compiler then refuses);
//! and on the text of every crate: every `crate::…`, `super::…`, `self::…`, workspace
//! crate's (`headroom_schema::schema::…`) and, in `lib.rs`, a top module's path anywhere in
//! a file that is not a test, `use` trees expanded, string attributes (`serialize_with =
//! "crate::…"`) included; comments left out. Each file belongs to the row of its top
//! module; an edge to another row must be one its row may use. No file may be in an import circle (an edge to a
//! module's own descendants, as `mod.rs` calling or re-exporting its children, is not
//! counted). The core crate's own rules (no file I/O, no clock, no system-call crate) are
//! checked on its text and its manifest. What the manifests cannot refuse, a `pub use`
//! handing on another crate's item to crates that may not name it, is `reexports.rs`'s, on
//! every file of every crate, crate roots included.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod reexports;

type Graph = BTreeMap<String, BTreeSet<String>>;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One row of the table: the layer's modules, what it may use, what it may never.
#[derive(Debug)]
struct Row {
    modules: Vec<String>,
    may: Vec<String>,
    never: Vec<String>,
}

/// The names in backticks in `cell`.
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The rows of the table under "Layer rules" in `doc`.
fn table(doc: &str) -> Vec<Row> {
    let start = doc
        .find("### Layer rules")
        .expect("ARCHITECTURE.md has its layer rules");
    doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // the header and its rule
        .map(|l| {
            let cells: Vec<&str> = l.split('|').collect();
            Row {
                modules: ticked(cells[1]),
                may: ticked(cells[2]),
                never: ticked(cells[3]),
            }
        })
        .collect()
}

fn rows() -> Vec<Row> {
    table(&std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap())
}

/// The row (its first module's name) of a module path.
fn layer_of<'a>(rows: &'a [Row], module: &str) -> Option<&'a Row> {
    let top = module.split("::").next().unwrap_or(module);
    rows.iter().find(|r| r.modules.iter().any(|m| m == top))
}

/// Files compiled only for tests, and what they declare below themselves.
fn is_test_file(f: &Path, tests: &BTreeSet<PathBuf>) -> bool {
    tests
        .iter()
        .any(|t| f == t || f.starts_with(t.with_extension("")))
}

/// A file's text without comments and without what only tests compile: each item under
/// `#[cfg(test)]` (or the core's `#[cfg(any(test, feature = "fixtures"))]`), a `mod x;`
/// line or a braced block, wherever it is in the file.
fn code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if t == "#[cfg(test)]" || t == "#[cfg(any(test, feature = \"fixtures\"))]" {
            let mut j = i + 1;
            while j < lines.len() && lines[j].trim().starts_with("#[") {
                j += 1;
            }
            let (mut depth, mut opened) = (0i32, false);
            while j < lines.len() {
                for c in lines[j].chars() {
                    match c {
                        '{' => {
                            depth += 1;
                            opened = true;
                        }
                        '}' => depth -= 1,
                        _ => {}
                    }
                }
                j += 1;
                let ended = if opened {
                    depth <= 0
                } else {
                    lines[j - 1].trim_end().ends_with(';')
                };
                if ended {
                    break;
                }
            }
            i = j;
            continue;
        }
        if !t.starts_with("//") {
            out.push(lines[i]);
        }
        i += 1;
    }
    out.join("\n")
}

/// Every non-test `.rs` file of every crate by module path, as the main crate names it:
/// `lib` for the root; the core's below `core` (`core::snapshot`, its `lib.rs` as `core`),
/// the platform's below `platform`, the store's below `store` (`store::state`); the named
/// crates' modules by the names they have in every crate (`output::queue`, `schema`,
/// `commands::probe`). Their `lib.rs` declares their modules and names the crates below:
/// it is not read (`named_crate_roots_only_declare`). `main.rs` is the binary, outside the
/// library's layers.
fn modules() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (src, prefix) in [
        (root().join("src"), None),
        (root().join("crates/headroom-core/src"), Some("core")),
        (
            root().join("crates/headroom-platform/src"),
            Some("platform"),
        ),
        (root().join("crates/headroom-store/src"), Some("store")),
    ]
    .into_iter()
    .chain(
        NAMED_CRATES
            .iter()
            .map(|c| (root().join(c).join("src"), None)),
    ) {
        let tests = crate::support::test_only_files(&src);
        for f in crate::support::files_under(&src) {
            let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
            let Some(stem) = rel.strip_suffix(".rs") else {
                continue;
            };
            // The named crates' `lib.rs` only declare their modules and name the crates
            // below (`named_crate_roots_only_declare`).
            let crate_root = prefix.is_none() && src != root().join("src");
            if stem == "main" || is_test_file(&f, &tests) || crate_root && stem == "lib" {
                continue;
            }
            let path = stem.strip_suffix("/mod").unwrap_or(stem).replace('/', "::");
            let path = match (prefix, path.as_str()) {
                (Some(p), "lib") => p.to_string(),
                (Some(p), _) => format!("{p}::{path}"),
                (None, _) => path,
            };
            out.insert(path, code(&std::fs::read_to_string(&f).unwrap()));
        }
    }
    out
}

/// The crates but the core, the platform and the store, whose modules keep the names they
/// have everywhere (`crate::schema`, `crate::output`, `crate::exit`, …): a path reads the
/// same in any of them, and their `lib.rs` only declares those modules and names the
/// crates below.
const NAMED_CRATES: &[&str] = &[
    "crates/headroom-schema",
    "crates/headroom-output",
    "crates/headroom-cli",
    "crates/headroom-exit",
    "crates/headroom-config",
    "crates/headroom-actions",
    "crates/headroom-commands",
    "crates/headroom-mcp",
];

/// The use trees of `text` as whole paths: `use a::{b, c::{d}};` → `a::b`, `a::c::d`.
fn use_paths(text: &str) -> Vec<String> {
    fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
        let tree = tree.trim();
        match tree.find('{') {
            None => out.push(format!(
                "{prefix}{}",
                tree.split(" as ").next().unwrap_or("").trim()
            )),
            Some(open) => {
                let head = &tree[..open];
                let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
                let mut depth = 0;
                let mut start = 0;
                for (i, c) in inner.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            expand(&format!("{prefix}{head}"), &inner[start..i], out);
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
                expand(&format!("{prefix}{head}"), &inner[start..], out);
            }
        }
    }
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("use ") {
        let before = &rest[..i];
        let line_start = before.rfind('\n').map_or(0, |n| n + 1);
        let is_stmt = before[line_start..]
            .trim()
            .trim_start_matches("pub(crate)")
            .trim_start_matches("pub(super)")
            .trim_start_matches("pub")
            .trim()
            .is_empty();
        let Some(end) = rest[i..].find(';') else {
            break;
        };
        if is_stmt {
            expand("", &rest[i + 4..i + end], &mut out);
        }
        rest = &rest[i + end + 1..];
    }
    out.retain(|p| !p.is_empty());
    out
}

/// Every path written out in `text` that starts at `crate`, `super`, `self`, `headroom` or
/// a workspace crate (`headroom_output::…`), and, where `roots` are given, at one of those
/// names: the crate root's own modules.
fn full_paths(text: &str, roots: &[&str]) -> Vec<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let bytes: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < bytes.len() {
        let starts = (i == 0 || !(ident(bytes[i - 1]) || bytes[i - 1] == ':')) && ident(bytes[i]);
        if !starts {
            i += 1;
            continue;
        }
        let mut j = i;
        loop {
            while j < bytes.len() && ident(bytes[j]) {
                j += 1;
            }
            let more = bytes.get(j) == Some(&':')
                && bytes.get(j + 1) == Some(&':')
                && bytes.get(j + 2).is_some_and(|c| ident(*c));
            if more {
                j += 2;
                continue;
            }
            break;
        }
        let path: String = bytes[i..j].iter().collect();
        let first = path.split("::").next().unwrap_or("");
        let known_start = ["crate", "super", "self", "headroom"].contains(&first)
            || crate_path_start(first).is_some()
            || roots.contains(&first);
        if path.contains("::") && known_start {
            out.push(path);
        }
        i = j.max(i + 1);
    }
    out
}

/// Names the crate root re-exports from elsewhere (`pub use exit::said_once;` makes
/// `crate::said_once` the `exit` module's), from `lib.rs`.
fn root_aliases() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let libs = std::iter::once(root().join("src/lib.rs")).chain(
        NAMED_CRATES
            .iter()
            .map(|c| root().join(c).join("src/lib.rs")),
    );
    for lib in libs {
        let lib = std::fs::read_to_string(lib).unwrap();
        for p in use_paths(&code(&lib)) {
            // `use headroom_output::output;`: the named crates' modules keep their names.
            let mut p = p.replace("headroom_core", "core");
            for c in NAMED_CRATES {
                let name = c.trim_start_matches("crates/").replace('-', "_");
                p = p.replace(&format!("{name}::"), "");
            }
            let p = p.strip_prefix("crate::").unwrap_or(&p);
            if let Some((_, name)) = p.rsplit_once("::") {
                out.insert(name.to_string(), p.to_string());
            }
        }
    }
    out.insert("core".into(), "core".into());
    out
}

/// Where a path that names a workspace crate by its own name starts, as the main crate
/// names its modules: the core's, the platform's and the store's root is their row
/// (`headroom_core::snapshot` is `core::snapshot`); the named crates' modules keep their
/// names below the root (`headroom_schema::schema` is `schema`), as
/// their `lib.rs` aliases write them. `None` for a name that is no workspace crate.
fn crate_path_start(first: &str) -> Option<Vec<String>> {
    match first {
        "headroom_core" => Some(vec!["core".into()]),
        "headroom_platform" => Some(vec!["platform".into()]),
        "headroom_store" => Some(vec!["store".into()]),
        c => NAMED_CRATES
            .iter()
            .any(|d| d.trim_start_matches("crates/").replace('-', "_") == c)
            .then(Vec::new),
    }
}

/// The module a path in `module`'s file names: the longest known module prefix.
fn target(
    module: &str,
    path: &str,
    known: &BTreeMap<String, String>,
    aliases: &BTreeMap<String, String>,
) -> Option<String> {
    let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
    let in_core = module == "core" || module.starts_with("core::");
    let in_platform = module == "platform" || module.starts_with("platform::");
    let in_store = module == "store" || module.starts_with("store::");
    let mut base: Vec<String> = match parts.first().copied() {
        // The core crate's `crate` is the main crate's `core`, the platform's its
        // `platform`, the store's its `store`.
        Some("crate") if in_core => vec!["core".into()],
        Some("crate") if in_platform => vec!["platform".into()],
        Some("crate") if in_store => vec!["store".into()],
        Some("crate") | Some("headroom") => Vec::new(),
        Some(c) if crate_path_start(c).is_some() => crate_path_start(c).unwrap_or_default(),
        Some("super") | Some("self") => {
            // `super` is the parent module (of `a/b.rs` and of `a/b/mod.rs` alike: `a`);
            // `self` is the module itself.
            let mut b: Vec<String> = match module {
                "lib" => Vec::new(),
                m => m.split("::").map(str::to_string).collect(),
            };
            if parts[0] == "super" {
                b.pop();
            }
            b
        }
        // In `lib.rs`, a top module's path.
        Some(_) if module == "lib" => {
            vec![]
        }
        _ => return None,
    };
    let skip = usize::from(
        module != "lib"
            || ["crate", "self", "headroom"].contains(&parts[0])
            || crate_path_start(parts[0]).is_some(),
    );
    for p in &parts[skip..] {
        match *p {
            "super" => {
                base.pop();
            }
            "self" => {}
            // The platform's and the store's `crate::core` is the core crate (`use
            // headroom_core as core;`), the store's `crate::platform` the platform crate.
            "core" if in_platform && base == ["platform"] => base = vec!["core".into()],
            "core" if in_store && base == ["store"] => base = vec!["core".into()],
            "platform" if in_store && base == ["store"] => base = vec!["platform".into()],
            p if base.is_empty() && !in_core => match aliases.get(p) {
                Some(to) => base.extend(to.split("::").map(str::to_string)),
                None => base.push(p.to_string()),
            },
            p => base.push(p.to_string()),
        }
    }
    while !base.is_empty() {
        let m = base.join("::");
        if known.contains_key(&m) {
            return Some(m);
        }
        base.pop();
    }
    // `crate::run`, `crate::usage_line`: the crate root itself (the core's own `crate::`
    // names its root; `headroom::` is the main crate's from anywhere).
    (!in_core || parts[0] == "headroom").then(|| "lib".to_string())
}

/// The edges of `known`'s files: each file to the modules its paths name, leaving out
/// itself and its own descendants.
fn edges_of(known: &BTreeMap<String, String>) -> Graph {
    let aliases = root_aliases();
    let tops: Vec<&str> = known
        .keys()
        .map(|k| k.split("::").next().unwrap_or(k))
        .collect();
    let mut edges = Graph::new();
    for (m, text) in known {
        let set = edges.entry(m.clone()).or_default();
        let roots: &[&str] = if m == "lib" { &tops } else { &[] };
        let mut paths = use_paths(text);
        paths.extend(full_paths(text, roots));
        for p in paths {
            if let Some(t) = target(m, &p, known, &aliases) {
                let own = m == "lib" && t == "lib" || t == *m || t.starts_with(&format!("{m}::"));
                if !own {
                    set.insert(t);
                }
            }
        }
    }
    edges
}

fn graph() -> Graph {
    edges_of(&modules())
}

/// The edges that break a row: to a module whose row is not among the ones it may use.
fn violations(edges: &Graph, rows: &[Row]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (m, to) in edges {
        let Some(from) = layer_of(rows, m) else {
            out.push((m.clone(), "(no row of the table)".into()));
            continue;
        };
        for t in to {
            let Some(row) = layer_of(rows, t) else {
                out.push((m.clone(), t.clone()));
                continue;
            };
            let same = std::ptr::eq(row, from);
            if !same && !row.modules.iter().any(|r| from.may.contains(r)) {
                out.push((m.clone(), t.clone()));
            }
        }
    }
    out
}

/// The files reachable from `from`.
fn reach(edges: &Graph, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![from.to_string()];
    while let Some(m) = stack.pop() {
        for t in edges.get(&m).into_iter().flatten() {
            if seen.insert(t.clone()) {
                stack.push(t.clone());
            }
        }
    }
    seen
}

/// Each file that can reach itself, with the files of its circle.
fn circles(edges: &Graph) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for m in edges.keys() {
        let back: Vec<String> = reach(edges, m)
            .into_iter()
            .filter(|t| reach(edges, t).contains(m))
            .collect();
        if !back.is_empty() {
            out.push((m.clone(), back));
        }
    }
    out
}

#[test]
fn every_row_of_the_layer_table_holds() {
    let rows = rows();
    let edges = graph();
    assert_eq!(
        violations(&edges, &rows),
        Vec::<(String, String)>::new(),
        "files using a layer their row of ARCHITECTURE.md's table does not allow"
    );
    // Controls: the real graph holds the edges it must.
    for (from, to) in [
        ("platform::linux::live", "platform::linux::records"),
        ("commands::reap", "actions::cleanup"),
        ("actions::cleanup", "actions::reap_report"),
        ("store::state", "store::fsio"),
        ("store::state", "core::state_rules"),
        ("store::fsio", "platform::files"),
        ("store::evidence", "core::evidence_csv"),
        ("actions::cleanup", "store::evidence"),
        ("output", "schema"),
        ("output::queue", "platform::stdio"),
        ("output::snapshot_file", "core::snapshot"),
        ("commands::probe", "output::snapshot_file"),
        ("actions::cleanup", "output"),
        ("core::liveness", "core::session_log"),
        ("lib", "commands"),
        ("lib", "mcp"),
        ("config", "core::sanitize"),
        ("core::policy", "core::serialize"),
    ] {
        assert!(edges[from].contains(to), "{from} → {to} is not seen");
    }
    assert!(!edges["actions::reap_report"].contains("actions::cleanup"));
}

#[test]
fn the_layer_table_decides_every_pair_and_names_every_module() {
    let rows = rows();
    assert!(rows.len() >= 10, "the table was read: {rows:?}");
    let layers: BTreeSet<&String> = rows.iter().map(|r| &r.modules[0]).collect();
    for r in &rows {
        let named: BTreeSet<&String> = r
            .may
            .iter()
            .chain(&r.never)
            .chain(std::iter::once(&r.modules[0]))
            .collect();
        assert_eq!(
            named, layers,
            "{:?} decides every other row once",
            r.modules
        );
        assert!(
            r.may.iter().all(|m| !r.never.contains(m)),
            "{:?} both allows and forbids",
            r.modules
        );
    }
    for m in modules().keys() {
        assert!(layer_of(&rows, m).is_some(), "{m} has no row in the table");
    }
}

/// How a file outside `layer`'s crate names it by the crate's own name: `headroom_core`,
/// `headroom_schema::schema`, `headroom_cli::cli`; the main crate's root is `headroom`.
fn crate_path(layer: &str) -> String {
    let dir = crate_of(layer);
    if dir.is_empty() {
        return "headroom".into();
    }
    let krate = package_of(dir).replace('-', "_");
    if ["core", "platform", "store"].contains(&layer) {
        krate
    } else {
        format!("{krate}::{layer}")
    }
}

/// The control per rule: a file of each row that names, by a full path in its code or a
/// `use` line, each layer its row forbids is caught, whether the path starts at the crate
/// (`crate::`, `headroom::`) or names the layer's crate (`headroom_schema::schema::`); the
/// same file naming a layer it may use is not.
#[test]
fn a_file_breaking_any_row_is_caught() {
    let rows = rows();
    let mut known: BTreeMap<String, String> = BTreeMap::new();
    for r in &rows {
        known.insert(r.modules[0].clone(), String::new());
    }
    let mut checked = 0;
    for r in &rows {
        let from = format!("{}::probe_file", r.modules[0]);
        for n in r.never.iter().chain(&r.may) {
            // The core's, the platform's and the store's `crate` is their own crate: a path
            // into the main crate from there starts at `headroom`.
            let start = if ["core", "platform", "store"].contains(&r.modules[0].as_str()) {
                "headroom"
            } else {
                "crate"
            };
            let by_crate = crate_path(n);
            for text in [
                format!("fn f() {{ {start}::{n}::x(); }}\n"),
                format!("fn f() {{ {by_crate}::x(); }}\n"),
                format!("use {by_crate}::x;\n"),
            ] {
                let mut files = known.clone();
                files.insert(from.clone(), text.clone());
                let found = violations(&edges_of(&files), &rows);
                let caught = found.iter().any(|(a, b)| *a == from && b == n);
                assert_eq!(
                    caught,
                    r.never.contains(n),
                    "{from} naming `{n}` as {text:?}: {found:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 150, "{checked}");
    // A path through a crate the row may use to a layer it may not: `cli` naming `schema`
    // through the output crate is caught (the compiler refuses it too: no crate root
    // re-exports a crate below, `named_crate_roots_only_declare`); the output crate's own
    // module is not.
    let case = |from: &str, text: &str| {
        let mut files = known.clone();
        files.insert(from.to_string(), text.to_string());
        violations(&edges_of(&files), &rows)
    };
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        case(
            "cli::probe_file",
            "use headroom_output::schema::Document;\n"
        ),
        [pair("cli::probe_file", "schema")]
    );
    assert_eq!(
        case("cli::probe_file", "use headroom_output::output::Printer;\n"),
        []
    );
}

#[test]
fn no_file_is_in_an_import_circle() {
    let edges = graph();
    assert!(edges.len() > 130, "every file was read ({})", edges.len());
    assert_eq!(
        circles(&edges),
        Vec::<(String, Vec<String>)>::new(),
        "files in an import circle"
    );
}

/// The modules that name every command, and that every command may name: the dispatch
/// table (`commands/mod.rs`: `command` runs each one, and `Ctx` is what each one takes) and
/// the schema registry (`commands/schema.rs`: `ALL` names every command's report, for
/// `headroom schema` and `generate schemas`).
const EVERY_COMMAND: &[&str] = &["commands", "commands::schema"];

/// The commands `commands/mod.rs` dispatches to: each `NAME::run(` in its text.
fn dispatched(mod_rs: &str) -> BTreeSet<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = BTreeSet::new();
    let mut rest = mod_rs;
    while let Some(i) = rest.find("::run(") {
        let name: String = rest[..i]
            .chars()
            .rev()
            .take_while(|c| ident(*c))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if !name.is_empty() {
            out.insert(name);
        }
        rest = &rest[i + 6..];
    }
    out
}

/// The command a module of `commands` belongs to: the longest dispatched name that its file
/// (or folder) is, or starts with before a `_` (`doctor_child` is `doctor`'s, `log_probe` is
/// its own command, not `probe`'s). `None` for a file no command owns.
fn command_of(module: &str, commands: &BTreeSet<String>) -> Option<String> {
    let top = module.strip_prefix("commands::")?.split("::").next()?;
    commands
        .iter()
        .filter(|c| top == c.as_str() || top.starts_with(&format!("{c}_")))
        .max_by_key(|c| c.len())
        .cloned()
}

/// The edges from one command's files to another's, and the files of `commands` that belong
/// to no command (what two commands share goes to a layer below them).
fn sibling_imports(edges: &Graph, commands: &BTreeSet<String>) -> Vec<(String, String)> {
    let registry = |m: &str| EVERY_COMMAND.contains(&m);
    let mut out = Vec::new();
    for (m, to) in edges {
        if !m.starts_with("commands::") || registry(m) {
            continue;
        }
        let Some(own) = command_of(m, commands) else {
            out.push((m.clone(), "(no command)".into()));
            continue;
        };
        for t in to {
            let other = t.starts_with("commands::")
                && !registry(t)
                && command_of(t, commands).as_ref() != Some(&own);
            if other {
                out.push((m.clone(), t.clone()));
            }
        }
    }
    out
}

#[test]
fn no_command_imports_another_command() {
    let commands = dispatched(
        &std::fs::read_to_string(root().join("crates/headroom-commands/src/commands/mod.rs"))
            .unwrap(),
    );
    // Control: the table was read, and names are owned as intended.
    for c in [
        "probe",
        "log_probe",
        "reap",
        "watch",
        "run",
        "evidence",
        "schema",
    ] {
        assert!(commands.contains(c), "{c} is dispatched: {commands:?}");
    }
    let owner = |m| command_of(m, &commands);
    assert_eq!(owner("commands::doctor_child").as_deref(), Some("doctor"));
    assert_eq!(
        owner("commands::run_limited_report").as_deref(),
        Some("run")
    );
    assert_eq!(owner("commands::log_probe").as_deref(), Some("log_probe"));
    assert_eq!(owner("commands::watch::cleanup").as_deref(), Some("watch"));
    assert_eq!(owner("commands::runner"), None);
    let edges = graph();
    assert_eq!(
        sibling_imports(&edges, &commands),
        Vec::<(String, String)>::new(),
        "a command's files naming another command's (or a file no command owns)"
    );
    // What two commands share is a layer below both: `watch` runs `hangs`' round from
    // `actions` (the edges were read: an empty answer above is not an empty graph).
    assert!(edges["commands::watch"].contains("actions::hang_round"));
    assert!(edges["commands::hangs"].contains("actions::hang_round"));
    // Controls: a command's own parts and the registries are edges the rule allows; a
    // sibling command, by `use` or by a full path, and a file no command owns are caught.
    assert!(edges["commands::evidence_svg"].contains("commands::evidence_time"));
    let files: BTreeMap<String, String> = [
        ("commands", ""),
        (
            "commands::reap",
            "use crate::commands::reap_verify::verify;\n",
        ),
        ("commands::reap_verify", ""),
        (
            "commands::schema",
            "use crate::commands::watch::events::Event;\n",
        ),
        (
            "commands::generate",
            "fn f() { crate::commands::schema::write_all(d); }\n",
        ),
        ("commands::watch", "use crate::commands::Ctx;\n"),
        ("commands::watch::events", ""),
        (
            "commands::watch::cleanup",
            "use crate::commands::reap::Cleanup;\n",
        ),
        (
            "commands::limits",
            "fn f() { crate::commands::watch::events::x(); }\n",
        ),
        ("commands::shared", ""),
    ]
    .iter()
    .map(|(m, t)| (m.to_string(), code(t)))
    .collect();
    let commands: BTreeSet<String> = ["reap", "schema", "generate", "watch", "limits"]
        .map(String::from)
        .into();
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        sibling_imports(&edges_of(&files), &commands),
        [
            pair("commands::limits", "commands::watch::events"),
            pair("commands::shared", "(no command)"),
            pair("commands::watch::cleanup", "commands::reap"),
        ]
    );
}

/// Controls for the reader: a circle is seen, on `use` lines or on paths in code alike; a
/// path in a string attribute counts, one in a comment or a test module does not; a
/// module's use of its own children is not an edge.
#[test]
fn the_checker_sees_circles_and_full_paths() {
    let known = |files: &[(&str, &str)]| -> BTreeMap<String, String> {
        files
            .iter()
            .map(|(m, t)| (m.to_string(), code(t)))
            .collect()
    };
    let by_use = known(&[
        ("platform::linux", ""),
        ("platform::linux::live", "use super::tree::OpenProc;\n"),
        (
            "platform::linux::tree",
            "use super::live::{LinuxSource, gone};\n",
        ),
    ]);
    assert_eq!(circles(&edges_of(&by_use)).len(), 2);
    let by_path = known(&[
        (
            "output",
            "fn f() { crate::commands::watch::output::Output::stderr(); }\n",
        ),
        ("commands", "pub mod watch;\n"),
        ("commands::watch", "pub mod output;\n"),
        (
            "commands::watch::output",
            "fn g() { crate::output::plural(1, \"x\"); }\n",
        ),
    ]);
    let e = edges_of(&by_path);
    assert!(e["output"].contains("commands::watch::output"), "{e:?}");
    assert_eq!(circles(&e).len(), 2);
    let attr = known(&[
        ("core", ""),
        ("core::serialize", ""),
        (
            "core::policy",
            "#[serde(serialize_with = \"crate::serialize::seconds\")]\n",
        ),
        ("schema", ""),
        (
            "store",
            "// crate::schema::x in a comment\nfn f() {}\n#[cfg(test)]\nmod tests {\n    \
             use crate::schema::y;\n}\n",
        ),
        ("commands", "fn f() { probe::run(); self::probe::x(); }\n"),
        ("commands::probe", ""),
        (
            "actions",
            "#[cfg(test)]\nmod one_tests;\nfn g() { crate::schema::x(); }\n#[cfg(test)]\n\
             fn helper() {\n    crate::commands::y();\n}\nfn h() {}\n",
        ),
    ]);
    let e = edges_of(&attr);
    assert!(e["core::policy"].contains("core::serialize"), "{e:?}");
    assert!(e["store"].is_empty(), "{e:?}");
    assert!(e["commands"].is_empty(), "{e:?}");
    // Code after a test item is read; the test item is not.
    assert_eq!(e["actions"], BTreeSet::from(["schema".to_string()]));
    // A root re-export names the module it comes from (`crate::sanitize` is the core's).
    let e = edges_of(&known(&[
        ("core", ""),
        ("core::sanitize", ""),
        ("config", "fn f() { crate::sanitize::sanitize(x); }\n"),
    ]));
    assert_eq!(e["config"], BTreeSet::from(["core::sanitize".to_string()]));
}

/// What core code may not say: file I/O, the store's writer, or a clock read (the core takes
/// `now` as an argument). Written out in full paths and imports alike (a `use std::fs;`
/// shows as `std::fs`).
const IMPURE: &[&str] = &[
    "std::fs",
    "File::",
    "fsio",
    "crate::store",
    "now_ms(",
    "Instant::now",
    "SystemTime::now",
];

/// The `IMPURE` tokens of `text` (its non-test part), one per token found.
fn impure_tokens(text: &str) -> Vec<&'static str> {
    let text = code(text);
    IMPURE
        .iter()
        .copied()
        .filter(|t| text.contains(t))
        .collect()
}

#[test]
fn the_core_does_no_file_io_and_reads_no_clock() {
    let src = root().join("crates/headroom-core/src");
    let tests = crate::support::test_only_files(&src);
    assert!(
        tests.contains(&src.join("policy/props.rs"))
            && tests.contains(&src.join("session_log/proptests.rs"))
            && tests.contains(&src.join("evidence_csv/fixture.rs")),
        "control: test-only files are found ({tests:?})"
    );
    let mut found: Vec<(String, &str)> = Vec::new();
    let mut seen = 0;
    for f in crate::support::files_under(&src) {
        if f.extension().is_none_or(|e| e != "rs") || is_test_file(&f, &tests) {
            continue;
        }
        seen += 1;
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&f).unwrap();
        for t in impure_tokens(&text) {
            found.push((rel.clone(), t));
        }
    }
    assert!(seen > 20, "control: the core's files were read ({seen})");
    assert_eq!(
        found,
        Vec::<(String, &str)>::new(),
        "file I/O or a clock read in the core"
    );
}

/// The control for the checker: each way of saying it is seen, a test module is not.
#[test]
fn the_purity_checker_sees_io_and_clock_reads_outside_tests() {
    let bad = "use std::fs;\nfn f() { let t = crate::platform::now_ms(); \
               let i = std::time::Instant::now(); let _ = File::open(p); \
               crate::store::fsio::replace(p, b); SystemTime::now(); }\n";
    assert_eq!(impure_tokens(bad), IMPURE.to_vec());
    let clean = "fn f(now_ms: i64) -> i64 { now_ms + 1 }\n\
                 #[cfg(test)]\nmod tests {\n    fn t() { std::fs::read(\"x\"); }\n}\n";
    assert!(
        impure_tokens(clean).is_empty(),
        "{:?}",
        impure_tokens(clean)
    );
}

/// Crates that make system calls (or wrap them): only the platform crate may depend on
/// them (the core on none, nor on any headroom crate).
const SYSTEM_CRATES: &[&str] = &[
    "libc",
    "mach2",
    "rustix",
    "errno",
    "nix",
    "windows-sys",
    "winapi",
    "signal-hook",
    "headroom",
];

/// One dependency as a manifest writes it: its key, the `package = "…"` it names if any,
/// and whether it is inherited from the workspace (`x = { workspace = true }`).
struct Entry {
    key: String,
    package: Option<String>,
    inherited: bool,
}

/// The table a manifest header opens: `Some(true)` for the workspace's
/// `[workspace.dependencies]`, `Some(false)` for one of the package's own (its
/// `[dependencies]`, `[build-dependencies]` and both of a target's), `None` for any other
/// (the dev-dependencies are the tests'); and the dependency a `[dependencies.x]` header is
/// the table of.
fn dependency_table(header: &str) -> (Option<bool>, Option<&str>) {
    if header == "workspace.dependencies" {
        return (Some(true), None);
    }
    if let Some(n) = header.strip_prefix("workspace.dependencies.") {
        return (Some(true), Some(n));
    }
    let tables = ["dependencies", "build-dependencies"];
    if tables.contains(&header)
        || header.starts_with("target.")
            && tables.iter().any(|t| header.ends_with(&format!(".{t}")))
    {
        return (Some(false), None);
    }
    // After a target's `'cfg(…)'`, whose quotes may hold dots of their own.
    let tail = header.rsplit('\'').next().unwrap_or(header);
    for t in tables {
        let own = header
            .strip_prefix(&format!("{t}."))
            .or_else(|| tail.split_once(&format!(".{t}.")).map(|(_, n)| n));
        if let Some(n) = own.filter(|_| header.starts_with(t) || header.starts_with("target.")) {
            return (Some(false), Some(n));
        }
    }
    (None, None)
}

/// The package's dependencies and the workspace's (`[workspace.dependencies]`) of a
/// manifest's text, as written.
fn entries(manifest: &str) -> (Vec<Entry>, Vec<Entry>) {
    let (mut own, mut workspace) = (Vec::new(), Vec::new());
    // Which list the lines below belong to, and whether they are one dependency's table.
    let mut table: Option<bool> = None;
    let mut own_table = false;
    for line in manifest.lines() {
        let l = line.trim();
        if let Some(header) = l.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
            let (kind, name) = dependency_table(header.trim());
            table = kind;
            own_table = name.is_some();
            if let (Some(ws), Some(n)) = (kind, name) {
                let list = if ws { &mut workspace } else { &mut own };
                list.push(Entry {
                    key: unquoted(n.trim()).to_string(),
                    package: None,
                    inherited: false,
                });
            }
            continue;
        }
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let Some(ws) = table else {
            continue;
        };
        let list = if ws { &mut workspace } else { &mut own };
        let inherited = inherits(l);
        if own_table {
            if let Some(e) = list.last_mut() {
                if let Some(p) = package_value(l) {
                    e.package = Some(p);
                }
                e.inherited |= l.replace(' ', "") == "workspace=true";
            }
            continue;
        }
        let key = match l.strip_prefix('"') {
            Some(rest) => rest.split('"').next().unwrap_or(""),
            None => l.split(['=', ' ', '.']).next().unwrap_or(""),
        };
        if !key.is_empty() {
            list.push(Entry {
                key: key.to_string(),
                package: package_value(l),
                inherited,
            });
        }
    }
    (own, workspace)
}

/// Whether a dependency's line inherits it from the workspace: `x = { workspace = true }`
/// or `x.workspace = true`.
fn inherits(line: &str) -> bool {
    let l = line.replace(' ', "");
    l.contains("{workspace=true") || l.contains(",workspace=true") || l.contains(".workspace=true")
}

/// The packages in the dependency tables of a manifest's text: `[dependencies]`,
/// `[build-dependencies]` and a target's (`[target.'cfg(…)'.dependencies]`), not the
/// dev-dependencies (the tests'), and the dependencies that are a table of their own
/// (`[dependencies.libc]`). A key is the package's name unless it says another (`x = {
/// package = "headroom-mcp" }`, or a `package = "…"` line in its own table); quoted keys
/// are read unquoted. One inherited from the workspace (`x = { workspace = true }`) is the
/// package the workspace's `[workspace.dependencies]` entry `x` names: the manifest's own
/// (the root's) or the repository's root manifest's.
fn dependencies(manifest: &str) -> Vec<String> {
    let root_manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    dependencies_in(manifest, &root_manifest)
}

/// `dependencies`, with `workspace` as the root manifest a member inherits from.
fn dependencies_in(manifest: &str, workspace: &str) -> Vec<String> {
    let (own, mut declared) = entries(manifest);
    declared.extend(entries(workspace).1);
    let name = |e: &Entry| e.package.clone().unwrap_or_else(|| e.key.clone());
    own.iter()
        .map(|e| match (&e.package, e.inherited) {
            (None, true) => declared
                .iter()
                .find(|w| w.key == e.key)
                .map_or_else(|| e.key.clone(), name),
            _ => name(e),
        })
        .collect()
}

/// `name` without the quotes TOML may write around a key.
fn unquoted(name: &str) -> &str {
    name.strip_prefix('"')
        .and_then(|n| n.strip_suffix('"'))
        .unwrap_or(name)
}

/// The value of a `package = "…"` key in a manifest line, inline table or dotted key alike.
fn package_value(line: &str) -> Option<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut rest = line;
    while let Some(i) = rest.find("package") {
        let before_ok = rest[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !ident(c) && c != '"');
        let after = rest[i + "package".len()..].trim_start();
        let quoted = after
            .strip_prefix('=')
            .map(str::trim_start)
            .and_then(|v| v.strip_prefix('"'));
        if let Some(value) = quoted.filter(|_| before_ok) {
            return value.split('"').next().map(str::to_string);
        }
        rest = &rest[i + "package".len()..];
    }
    None
}

/// The `SYSTEM_CRATES` among the `[dependencies]` of a manifest's text.
fn system_dependencies(manifest: &str) -> Vec<String> {
    let mut out = dependencies(manifest);
    out.retain(|d| SYSTEM_CRATES.contains(&d.as_str()));
    out
}

/// headroom's own crates among the `[dependencies]` of a manifest's text.
fn headroom_dependencies(manifest: &str) -> Vec<String> {
    let mut out = dependencies(manifest);
    out.retain(|d| d == "headroom" || d.starts_with("headroom-"));
    out
}

/// `headroom_dependencies`, with `workspace` as the root manifest a member inherits from.
fn headroom_dependencies_in(manifest: &str, workspace: &str) -> Vec<String> {
    let mut out = dependencies_in(manifest, workspace);
    out.retain(|d| d == "headroom" || d.starts_with("headroom-"));
    out
}

fn manifest(dir: &str) -> String {
    let path = root().join(dir).join("Cargo.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("\n[dependencies]\n"),
        "control: {} was read",
        path.display()
    );
    text
}

#[test]
fn the_core_crate_depends_on_no_system_call_crate() {
    let core = manifest("crates/headroom-core");
    assert_eq!(system_dependencies(&core), Vec::<String>::new());
    assert_eq!(headroom_dependencies(&core), Vec::<String>::new());
    // Control: a system crate is seen, in any table of dependencies; a dev-dependency of
    // the tests is not the library's.
    let bad = "[dependencies]\nserde = \"1\"\nlibc = \"0.2\"\n\
               [target.'cfg(unix)'.dependencies]\nrustix = { version = \"1\" }\n\
               [dev-dependencies]\nnix = \"0.29\"\n\
               [dependencies.mach2]\nversion = \"0.7\"\n[dev-dependencies.errno]\n";
    assert_eq!(system_dependencies(bad), ["libc", "rustix", "mach2"]);
}

/// A dependency is its package, however the manifest writes its key: a renamed one (`x =
/// { package = "…" }`, a `[dependencies.x]` table holding `package = "…"`, a dotted
/// `x.package = "…"`) or a quoted key, so the crate-boundary checks see it.
#[test]
fn renamed_and_quoted_dependencies_are_their_package() {
    let bad = "[dependencies]\n\
               anything = { package = \"headroom-mcp\", path = \"../headroom-mcp\" }\n\
               \"headroom-commands\" = { path = \"../headroom-commands\" }\n\
               other.package = \"headroom-actions\"\n\
               [target.'cfg(unix)'.dependencies]\n\
               sys = { version = \"0.2\", package = \"libc\" }\n\
               [dependencies.elsewhere]\npath = \"../headroom-config\"\n\
               package = \"headroom-config\"\n\
               [dependencies.\"headroom-exit\"]\npath = \"../headroom-exit\"\n\
               [dev-dependencies]\ntests = { package = \"headroom\", path = \"../..\" }\n";
    assert_eq!(
        headroom_dependencies(bad),
        [
            "headroom-mcp",
            "headroom-commands",
            "headroom-actions",
            "headroom-config",
            "headroom-exit"
        ]
    );
    assert_eq!(system_dependencies(bad), ["libc"]);
    // Control: a key that only mentions a package elsewhere (a feature, a comment) is its
    // own name.
    let good = "[dependencies]\nclap = { version = \"4\", features = [\"package\"] }\n\
                # package = \"headroom-mcp\"\nserde = \"1\"\n";
    assert_eq!(dependencies(good), ["clap", "serde"]);
    // A manifest renaming a crate its row may never use is caught by the boundary check.
    let rows = rows();
    let allowed = allowed_crates(&rows, "crates/headroom-cli");
    let renamed = "[dependencies]\nout = { package = \"headroom-output\", path = \"..\" }\n\
                   cmds = { package = \"headroom-commands\", path = \"..\" }\n";
    assert_eq!(forbidden_crates(renamed, &allowed), ["headroom-commands"]);
}

/// A dependency inherited from the workspace is the package the workspace names for its key
/// (`x = { workspace = true }` over `[workspace.dependencies] x = { package = "headroom-mcp"
/// }`), and the build's dependencies and a target's are read with the rest: the crate
/// boundary sees each.
#[test]
fn inherited_and_build_dependencies_are_their_package() {
    let workspace = "[workspace]\nmembers = [\"crates/*\"]\n\
                     [workspace.dependencies]\n\
                     x = { package = \"headroom-mcp\", path = \"crates/headroom-mcp\" }\n\
                     headroom-commands = { path = \"crates/headroom-commands\" }\n\
                     sys = { version = \"0.2\", package = \"libc\" }\n\
                     [workspace.dependencies.y]\npackage = \"headroom-config\"\n";
    let member = "[dependencies]\nx = { workspace = true }\n\
                  headroom-commands.workspace = true\n\
                  serde = { workspace = true, features = [\"derive\"] }\n\
                  [dependencies.y]\nworkspace = true\n\
                  [build-dependencies]\nsys = { workspace = true }\n\
                  [target.'cfg(unix)'.build-dependencies]\nheadroom-actions = { path = \"..\" }\n\
                  [build-dependencies.exit]\npackage = \"headroom-exit\"\n\
                  [target.'cfg(unix)'.dependencies]\nheadroom-store = { path = \"..\" }\n\
                  [dev-dependencies]\nz = { workspace = true }\n";
    assert_eq!(
        dependencies_in(member, workspace),
        [
            "headroom-mcp",
            "headroom-commands",
            "serde",
            "headroom-config",
            "libc",
            "headroom-actions",
            "headroom-exit",
            "headroom-store"
        ]
    );
    // The workspace's own table declares, it does not depend: the root manifest holding it
    // depends only on what its `[dependencies]` name (inherited ones resolved there too).
    let root_like =
        format!("{workspace}[dependencies]\nx = {{ workspace = true }}\nanyhow = \"1\"\n");
    assert_eq!(dependencies_in(&root_like, ""), ["headroom-mcp", "anyhow"]);
    // Caught by the boundary check: the cli's manifest inheriting the mcp under another
    // name, or building with the commands; a system crate in a build table.
    let allowed = allowed_crates(&rows(), "crates/headroom-cli");
    let mut out = headroom_dependencies_in(member, workspace);
    out.retain(|d| !allowed.contains(d));
    assert!(out.contains(&"headroom-mcp".to_string()), "{out:?}");
    assert!(out.contains(&"headroom-actions".to_string()), "{out:?}");
    let build = "[build-dependencies]\nlibc = \"0.2\"\n";
    assert_eq!(system_dependencies(build), ["libc"]);
    // Control: an inherited key the workspace does not rename is its own name.
    assert_eq!(
        dependencies_in("[dependencies]\nclap = { workspace = true }\n", ""),
        ["clap"]
    );
}

/// The main package makes no system call of its own: every one is a platform function, so
/// the compiler refuses a `libc::`/`rustix::` call anywhere in the actions, the commands or
/// the front ends (and `#![forbid(unsafe_code)]` refuses an `unsafe` block there). Its tests
/// may still use libc (a dev-dependency).
#[test]
fn the_main_package_depends_on_no_system_call_crate() {
    let main = manifest("");
    assert_eq!(system_dependencies(&main), Vec::<String>::new());
    assert!(
        main.contains("\n[dev-dependencies]\n"),
        "control: the dev-dependencies are a table of their own"
    );
    // Control: the platform crate's manifest, read the same way, names its system crates.
    let platform = manifest("crates/headroom-platform");
    let found = system_dependencies(&platform);
    for c in ["libc", "rustix", "errno", "mach2"] {
        assert!(found.iter().any(|f| f == c), "{c} not seen in {found:?}");
    }
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    assert!(
        lib.lines().any(|l| l == "#![forbid(unsafe_code)]"),
        "src/lib.rs forbids unsafe code"
    );
}

/// The platform crate depends on the core and on no other headroom crate: an import of the
/// store, the actions or the commands from the platform does not compile.
#[test]
fn the_platform_crate_depends_on_no_headroom_crate_but_the_core() {
    let platform = manifest("crates/headroom-platform");
    assert_eq!(headroom_dependencies(&platform), ["headroom-core"]);
    // Control: the main package's manifest, read the same way, names the crates below it;
    // a platform manifest naming the main package is seen.
    let main = manifest("");
    assert_eq!(
        headroom_dependencies(&main),
        [
            "headroom-actions",
            "headroom-cli",
            "headroom-commands",
            "headroom-exit",
            "headroom-mcp",
            "headroom-output",
            "headroom-platform",
            "headroom-schema",
            "headroom-store"
        ]
    );
    let bad = "[dependencies]\nheadroom-core = { path = \"../headroom-core\" }\n\
               [target.'cfg(unix)'.dependencies]\nheadroom = { path = \"../..\" }\n";
    assert_eq!(headroom_dependencies(bad), ["headroom-core", "headroom"]);
}

/// The store crate depends on the core and the platform and on no other headroom crate: an
/// import of the actions, the commands, `output`, `exit` or a front end from the store does
/// not compile.
#[test]
fn the_store_crate_depends_on_no_headroom_crate_but_the_core_and_the_platform() {
    let store = manifest("crates/headroom-store");
    assert_eq!(
        headroom_dependencies(&store),
        ["headroom-core", "headroom-platform"]
    );
    // Control: a store manifest naming the main package, in any table of dependencies, is
    // seen; its dev-dependencies are the tests'.
    let bad = "[dependencies]\nheadroom-core = { path = \"../headroom-core\" }\n\
               headroom-platform = { path = \"../headroom-platform\" }\n\
               [target.'cfg(unix)'.dependencies]\nheadroom = { path = \"../..\" }\n\
               [dev-dependencies]\nheadroom-output = { path = \"../headroom-output\" }\n";
    assert_eq!(
        headroom_dependencies(bad),
        ["headroom-core", "headroom-platform", "headroom"]
    );
}

/// The store makes no system call of its own: every one it needs (the opens that follow no
/// link, the locks, the clocks, the uid) is a platform function, and `#![forbid(unsafe_code)]`
/// refuses an `unsafe` block there.
#[test]
fn the_store_crate_depends_on_no_system_call_crate() {
    let store = manifest("crates/headroom-store");
    assert_eq!(system_dependencies(&store), Vec::<String>::new());
    // Control: the store's own manifest was read as a list of dependencies (its libraries
    // are seen, its tests' tempfile is not); a system crate in any of its tables is seen.
    let deps = dependencies(&store);
    for d in ["headroom-platform", "anyhow", "serde_json"] {
        assert!(deps.iter().any(|f| f == d), "{d} not seen in {deps:?}");
    }
    assert!(!deps.iter().any(|f| f == "tempfile"), "{deps:?}");
    let bad = "[dependencies]\nanyhow = \"1\"\nnix = \"0.29\"\n\
               [target.'cfg(unix)'.dependencies]\nrustix = { version = \"1\" }\nerrno = \"0.3\"\n\
               [target.'cfg(target_os = \"macos\")'.dependencies]\nmach2 = \"0.7\"\n\
               [target.'cfg(target_os = \"linux\")'.dependencies.libc]\nversion = \"0.2\"\n";
    assert_eq!(
        system_dependencies(bad),
        ["nix", "rustix", "errno", "mach2", "libc"]
    );
    let lib = std::fs::read_to_string(root().join("crates/headroom-store/src/lib.rs")).unwrap();
    assert!(
        lib.lines().any(|l| l == "#![forbid(unsafe_code)]"),
        "crates/headroom-store/src/lib.rs forbids unsafe code"
    );
}

/// The named crates' `lib.rs`, which `modules` leaves out, only declare their modules and
/// name the crates below (`use headroom_x as x;`, `use headroom_x::module;`): every path
/// into another crate is in a file that is read. None re-exports a crate below (`pub use
/// headroom_x::…`), so a crate reaches only the crates its own manifest names: the cli
/// crate, which depends on the output crate, cannot name `schema` through it. The roots of
/// the core, the platform, the store and the root package hold code: their re-exports are
/// checked with every other file's (`reexports::no_crate_hands_on_what_its_users_may_not_name`).
#[test]
fn named_crate_roots_only_declare() {
    let allowed = |l: &str| {
        l.strip_prefix("pub ")
            .unwrap_or(l)
            .strip_prefix("mod ")
            .is_some_and(|m| m.ends_with(';'))
            || l.starts_with("use headroom_")
                && l.ends_with(';')
                && !l.contains('{')
                && !l.contains('*')
    };
    let m = modules();
    let mut read = 0;
    for c in NAMED_CRATES {
        let lib = std::fs::read_to_string(root().join(c).join("src/lib.rs")).unwrap();
        let text = code(&lib);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("#!["))
            .collect();
        assert!(!lines.is_empty(), "control: {c}'s lib.rs was read");
        read += lines.len();
        let other: Vec<&&str> = lines.iter().filter(|l| !allowed(l)).collect();
        assert_eq!(other, Vec::<&&str>::new(), "{c}/src/lib.rs");
        // Control: the modules it declares were read from that crate.
        for l in &lines {
            if let Some(name) = l.strip_prefix("pub mod ").and_then(|n| n.strip_suffix(';')) {
                assert!(m.contains_key(name), "{c}: {name} not read");
            }
        }
    }
    assert!(read >= NAMED_CRATES.len() * 2, "control: {read} lines");
    // Controls: a function or a glob re-export in a crate root is refused; a declaration or
    // an alias is not.
    for bad in [
        "fn f() {}",
        "pub use headroom_exit::*;",
        "use headroom_core::{a, b};",
        "pub use headroom_schema::schema;",
        "pub use headroom_core as core;",
    ] {
        assert!(!allowed(bad), "{bad}");
    }
    for good in [
        "pub mod cli;",
        "use headroom_output::output;",
        "use headroom_core as core;",
    ] {
        assert!(allowed(good), "{good}");
    }
}

/// The crate (its directory, "" for the root package) that holds a row of the layer table,
/// by the row's first module.
fn crate_of(layer: &str) -> &'static str {
    match layer {
        "core" => "crates/headroom-core",
        "platform" => "crates/headroom-platform",
        "store" => "crates/headroom-store",
        "schema" => "crates/headroom-schema",
        "output" => "crates/headroom-output",
        "cli" | "cli_help" => "crates/headroom-cli",
        "exit" => "crates/headroom-exit",
        "config" => "crates/headroom-config",
        "actions" => "crates/headroom-actions",
        "commands" => "crates/headroom-commands",
        "mcp" => "crates/headroom-mcp",
        "lib" => "",
        other => panic!("`{other}` has no crate: name it in crate_of"),
    }
}

/// A crate's package name, as its dependents' manifests write it.
fn package_of(dir: &str) -> String {
    match dir.strip_prefix("crates/") {
        Some(name) => name.to_string(),
        None => "headroom".to_string(),
    }
}

/// The headroom crates the rows held by `dir` may use, the crate itself left out.
fn allowed_crates(rows: &[Row], dir: &str) -> BTreeSet<String> {
    rows.iter()
        .filter(|r| crate_of(&r.modules[0]) == dir)
        .flat_map(|r| r.may.iter().map(|m| package_of(crate_of(m))))
        .filter(|p| *p != package_of(dir))
        .collect()
}

/// The headroom crates among a manifest's `[dependencies]` that `allowed` does not hold.
fn forbidden_crates(manifest: &str, allowed: &BTreeSet<String>) -> Vec<String> {
    let mut out = headroom_dependencies(manifest);
    out.retain(|d| !allowed.contains(d));
    out
}

/// Every row of the table is a crate boundary: each crate's `[dependencies]` name only the
/// headroom crates its rows may use (so `cargo build` refuses an upward import), and no
/// system-call crate but in the platform crate; each crate but the platform forbids
/// `unsafe`. No two rows share a crate, so every rule of the table is one the compiler
/// keeps; the text checks above hold each once more.
#[test]
fn every_row_of_the_layer_table_is_a_crate_boundary() {
    let rows = rows();
    let dirs: BTreeSet<&str> = rows.iter().map(|r| crate_of(&r.modules[0])).collect();
    assert_eq!(dirs.len(), 12, "control: every crate has its row: {dirs:?}");
    assert_eq!(dirs.len(), rows.len(), "each row is a crate of its own");
    for dir in &dirs {
        let text = manifest(dir);
        let allowed = allowed_crates(&rows, dir);
        assert_eq!(
            forbidden_crates(&text, &allowed),
            Vec::<String>::new(),
            "{dir}/Cargo.toml depends on a crate its rows may not use ({allowed:?})"
        );
        if *dir != "crates/headroom-platform" {
            assert_eq!(system_dependencies(&text), Vec::<String>::new(), "{dir}");
            let lib = std::fs::read_to_string(root().join(dir).join("src/lib.rs")).unwrap();
            assert!(
                lib.lines().any(|l| l == "#![forbid(unsafe_code)]"),
                "{dir}/src/lib.rs forbids unsafe code"
            );
        }
    }
    // Controls: the manifests were read (each crate above the core names a crate below);
    // and for each row, a manifest naming the crate of a layer the row may never use is
    // caught, one naming a crate the row may use is not.
    for (dir, below) in [
        ("crates/headroom-schema", "headroom-core"),
        ("crates/headroom-output", "headroom-schema"),
        ("crates/headroom-cli", "headroom-output"),
        ("crates/headroom-exit", "headroom-platform"),
        ("crates/headroom-config", "headroom-store"),
        ("crates/headroom-actions", "headroom-exit"),
        ("crates/headroom-commands", "headroom-actions"),
        ("crates/headroom-mcp", "headroom-commands"),
        ("", "headroom-mcp"),
    ] {
        let deps = headroom_dependencies(&manifest(dir));
        assert!(deps.iter().any(|d| d == below), "{dir}: {deps:?}");
    }
    // Controls that do not come from the table's cells: pairs the table must forbid and
    // pairs it must allow, written here, so a table that lost a "never" (or a parse that
    // read every cell as allowed) fails.
    for (dir, other, may) in [
        ("crates/headroom-core", "headroom-platform", false),
        ("crates/headroom-core", "headroom-schema", false),
        ("crates/headroom-cli", "headroom-schema", false),
        ("crates/headroom-cli", "headroom-platform", false),
        ("crates/headroom-config", "headroom-platform", false),
        ("crates/headroom-config", "headroom-output", false),
        ("crates/headroom-mcp", "headroom-store", false),
        ("crates/headroom-platform", "headroom-store", false),
        ("crates/headroom-cli", "headroom-output", true),
        ("crates/headroom-store", "headroom-platform", true),
        ("crates/headroom-config", "headroom-cli", true),
        ("", "headroom-mcp", true),
    ] {
        let bad = format!("[dependencies]\nd = {{ package = \"{other}\", path = \"..\" }}\n");
        let caught = !forbidden_crates(&bad, &allowed_crates(&rows, dir)).is_empty();
        assert_eq!(caught, !may, "{dir:?} naming {other}");
    }
    assert_eq!(
        allowed_crates(&rows, "crates/headroom-cli"),
        BTreeSet::from(["headroom-core".to_string(), "headroom-output".to_string()])
    );
    assert!(allowed_crates(&rows, "crates/headroom-core").is_empty());
    let mut checked = 0;
    for r in &rows {
        let allowed = allowed_crates(&rows, crate_of(&r.modules[0]));
        for n in r.never.iter().chain(&r.may) {
            let other = package_of(crate_of(n));
            let bad = format!("[dependencies]\n{other} = {{ path = \"../{other}\" }}\n");
            let caught = !forbidden_crates(&bad, &allowed).is_empty();
            assert_eq!(
                caught,
                r.never.contains(n),
                "{:?} naming {other}",
                r.modules
            );
            checked += 1;
        }
    }
    assert_eq!(
        checked,
        rows.len() * (rows.len() - 1),
        "every pair was decided"
    );
}
