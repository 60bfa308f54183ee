//! The layer rules of ARCHITECTURE.md that a reader of `use` lines can check: no import
//! circles between the files split so far (a file's `use crate::…` and `use super::…`
//! edges, test modules left out, a module's re-exports of its own children not counted),
//! the core importing nothing from the store or the layers above it, the store nothing from
//! the layers that act or report, and the core's text holding no file I/O or clock read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Files whose imports must not form a circle with anything. Grows as files are split.
const NO_CIRCLES: &[&str] = &[
    "platform::fd",
    "platform::path_lookup",
    "platform::signal_handlers",
    "platform::spawn",
    "platform::stop_flag",
    "platform::supervise",
    "platform::tty",
    "platform::linux::ceilings",
    "platform::linux::live",
    "platform::linux::read",
    "platform::linux::records",
    "platform::linux::tree",
    "commands::reap",
    "commands::reap_report",
    "commands::reap_verify",
    "core::tree_select",
    "store::evidence",
    "store::fsio",
    "store::hang_events",
    "store::observations",
    "store::paths",
    "store::state",
];

/// Every `.rs` file below `src/` by module path (`store::state`; `mod.rs` is its directory),
/// and the core crate's below `core` (`core::snapshot`, its `lib.rs` as `core`), as the main
/// crate names them.
fn modules(src: &Path) -> BTreeMap<String, String> {
    let mut out = crate_modules(src, None);
    let core = src.join("../crates/headroom-core/src");
    out.extend(crate_modules(&core, Some("core")));
    out
}

/// The files of one crate's `src`, their module paths under `prefix`.
fn crate_modules(src: &Path, prefix: Option<&str>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for f in crate::support::files_under(src) {
        let rel = f.strip_prefix(src).unwrap().to_string_lossy().into_owned();
        let Some(stem) = rel.strip_suffix(".rs") else {
            continue;
        };
        let path = stem.strip_suffix("/mod").unwrap_or(stem).replace('/', "::");
        if path == "main" || path.ends_with("tests") {
            continue;
        }
        let path = match (prefix, path.as_str()) {
            (None, "lib") => continue,
            (Some(p), "lib") => p.to_string(),
            (Some(p), _) => format!("{p}::{path}"),
            (None, _) => path,
        };
        let text = std::fs::read_to_string(&f).unwrap();
        // Test modules import what they test from anywhere.
        let text = match text.find("#[cfg(test)]\nmod ") {
            Some(i) => text[..i].to_string(),
            None => text,
        };
        out.insert(path, text);
    }
    out
}

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
        let at_line_start = i == 0 || rest[..i].ends_with(' ') || rest[..i].ends_with('\n');
        let before = &rest[..i];
        let line_start = before.rfind('\n').map_or(0, |n| n + 1);
        let is_stmt = at_line_start
            && before[line_start..]
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

/// The module file a path in `module`'s file names: the longest known module prefix.
fn target(module: &str, path: &str, known: &BTreeMap<String, String>) -> Option<String> {
    let parts: Vec<&str> = path.split("::").filter(|p| !p.is_empty()).collect();
    let mut base: Vec<String> = match parts.first().copied() {
        // The core crate's `crate` is the main crate's `core`.
        Some("crate") if module == "core" || module.starts_with("core::") => vec!["core".into()],
        Some("crate") => Vec::new(),
        Some("super") | Some("self") => {
            // `super` is the parent module (of `a/b.rs` and of `a/b/mod.rs` alike: `a`);
            // `self` is the module itself.
            let mut b: Vec<String> = module.split("::").map(str::to_string).collect();
            if parts[0] == "super" {
                b.pop();
            }
            b
        }
        _ => return None, // std, an external crate
    };
    for p in &parts[1..] {
        match *p {
            "super" => {
                base.pop();
            }
            "self" => {}
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
    None
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let known = modules(&src);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, text) in &known {
        let set = edges.entry(m.clone()).or_default();
        for p in use_paths(text) {
            if let Some(t) = target(m, &p, &known) {
                // Itself, or a module re-exporting its own children.
                if t != *m && !t.starts_with(&format!("{m}::")) {
                    set.insert(t);
                }
            }
        }
    }
    edges
}

/// The files reachable from `from`.
fn reach(edges: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
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

#[test]
fn the_split_files_import_in_one_direction_only() {
    let edges = graph();
    for m in NO_CIRCLES {
        assert!(edges.contains_key(*m), "{m} is not a file under src/");
        let back: Vec<String> = reach(&edges, m)
            .into_iter()
            .filter(|t| reach(&edges, t).contains(*m))
            .collect();
        assert!(back.is_empty(), "{m} is in an import circle with {back:?}");
    }
}

/// What the core still imports from above, to be moved out (issue 17: the core returns
/// numbers, `commands` formats them). The store is above the core too: the core reads and
/// writes no file (`store` does), so it imports nothing from it. The list must shrink, never grow: a new
/// import from above fails here, and so does one that is gone but still listed.
const CORE_IMPORTS_FROM_ABOVE: &[(&str, &str)] = &[];

#[test]
fn the_core_imports_nothing_from_the_layers_above_it_but_the_listed() {
    let edges = graph();
    let mut up: Vec<(String, String)> = Vec::new();
    for (m, to) in edges.iter().filter(|(m, _)| m.starts_with("core::")) {
        for t in to {
            let above = [
                "store", "platform", "actions", "commands", "mcp", "output", "cli",
            ]
            .iter()
            .any(|l| t == l || t.starts_with(&format!("{l}::")));
            if above {
                up.push((m.clone(), t.clone()));
            }
        }
    }
    let listed: Vec<(String, String)> = CORE_IMPORTS_FROM_ABOVE
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(up, listed, "core files importing from the layers above");
}

/// The control: the checker sees a circle where there is one (the two files before the
/// split, as text), and the edges of a known import.
#[test]
fn the_checker_sees_a_circle_and_a_plain_edge() {
    let mut known = BTreeMap::new();
    known.insert(
        "platform::linux::live".to_string(),
        "use super::tree::OpenProc;\n".to_string(),
    );
    known.insert(
        "platform::linux::tree".to_string(),
        "use super::live::{LinuxSource, gone};\n".to_string(),
    );
    known.insert("platform::linux".to_string(), String::new());
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (m, text) in &known {
        for p in use_paths(text) {
            if let Some(t) = target(m, &p, &known) {
                edges.entry(m.clone()).or_default().insert(t);
            }
        }
    }
    assert!(reach(&edges, "platform::linux::live").contains("platform::linux::live"));
    let real = graph();
    assert!(real["platform::linux::live"].contains("platform::linux::records"));
    assert!(real["commands::reap"].contains("commands::reap_report"));
    assert!(!real["commands::reap_report"].contains("commands::reap"));
}

/// The store keeps files for the layers above it and decides nothing: it may use `core`'s
/// types and `platform`'s clocks and uid, never what acts or reports.
#[test]
fn the_store_imports_nothing_from_the_layers_that_act_or_report() {
    let edges = graph();
    assert!(
        edges.contains_key("store::state"),
        "the store is where it was"
    );
    let mut up: Vec<(String, String)> = Vec::new();
    for (m, to) in edges.iter().filter(|(m, _)| m.starts_with("store::")) {
        for t in to {
            let above = ["actions", "commands", "mcp", "output", "cli"]
                .iter()
                .any(|l| t == l || t.starts_with(&format!("{l}::")));
            if above {
                up.push((m.clone(), t.clone()));
            }
        }
    }
    assert_eq!(
        up,
        Vec::<(String, String)>::new(),
        "store files importing from above"
    );
    // The control: the store's known edges are seen.
    assert!(edges["store::state"].contains("store::fsio"));
    assert!(edges["store::state"].contains("core::state_rules"));
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

/// The core files allowed one of [`IMPURE`], and why (ARCHITECTURE.md, "Departures"): none
/// since the session-log reader's files are the caller's (`store::log_files`).
const IMPURE_ALLOWED: &[(&str, &str)] = &[];

/// The `IMPURE` tokens of `text` (its non-test part), one per token found.
fn impure_tokens(text: &str) -> Vec<&'static str> {
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(i) => &text[..i],
        None => text,
    };
    IMPURE
        .iter()
        .copied()
        .filter(|t| text.contains(t))
        .collect()
}

#[test]
fn the_core_does_no_file_io_and_reads_no_clock() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/headroom-core/src");
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
        if f.extension().is_none_or(|e| e != "rs") || tests.contains(&f) {
            continue;
        }
        seen += 1;
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&f).unwrap();
        for t in impure_tokens(&text) {
            let allowed = IMPURE_ALLOWED
                .iter()
                .any(|(file, tok)| rel.ends_with(file) && *tok == t);
            if !allowed {
                found.push((rel.clone(), t));
            }
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
