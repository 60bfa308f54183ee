//! Generated artefacts: the committed man pages and completions are current, every page
//! renders and names every subcommand, completions load, the formula parses.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Env, has_tool};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn subcommands() -> Vec<String> {
    use clap::CommandFactory;
    headroom::cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect()
}

#[test]
fn committed_man_pages_are_current() {
    let env = Env::new();
    let dir = env.path("man");
    env.cmd()
        .args(["generate", "man"])
        .arg(&dir)
        .assert()
        .success();
    let mut generated: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    generated.sort();
    let mut committed: Vec<String> = std::fs::read_dir(repo().join("man"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    committed.sort();
    assert_eq!(
        generated, committed,
        "man/ is stale: run `scripts/generate.sh`"
    );
    for f in &generated {
        let a = std::fs::read_to_string(dir.join(f)).unwrap();
        let b = std::fs::read_to_string(repo().join("man").join(f)).unwrap();
        assert!(a == b, "man/{f} is stale: run `scripts/generate.sh`");
    }
    assert_eq!(generated.len(), subcommands().len() + 1);
}

#[test]
fn committed_schemas_are_current() {
    let env = Env::new();
    let dir = env.path("schemas");
    env.cmd()
        .args(["generate", "schemas"])
        .arg(&dir)
        .assert()
        .success();
    let list = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    let generated = list(&dir);
    assert_eq!(
        generated,
        list(&repo().join("schemas")),
        "schemas/ is stale: run `scripts/generate.sh`"
    );
    assert_eq!(generated.len(), headroom::commands::schema::ALL.len());
    for f in &generated {
        let a = std::fs::read_to_string(dir.join(f)).unwrap();
        let b = std::fs::read_to_string(repo().join("schemas").join(f)).unwrap();
        assert!(a == b, "schemas/{f} is stale: run `scripts/generate.sh`");
        // `headroom schema NAME` prints the same file.
        let name = f.trim_end_matches(".json");
        let (thing, version) = name.rsplit_once('.').unwrap();
        let out = env
            .cmd()
            .args(["schema", &format!("{thing}/{version}")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{f}");
        assert!(
            out.stdout == a.as_bytes(),
            "`headroom schema` differs from {f}"
        );
    }
}

#[test]
fn committed_completions_are_current() {
    let env = Env::new();
    for (shell, file) in [
        ("bash", "headroom.bash"),
        ("zsh", "_headroom"),
        ("fish", "headroom.fish"),
    ] {
        let out = env
            .cmd()
            .args(["generate", "completions", shell])
            .output()
            .unwrap();
        assert!(out.status.success());
        let committed = std::fs::read(repo().join("completions").join(file)).unwrap();
        assert!(
            out.stdout == committed,
            "completions/{file} is stale: run `scripts/generate.sh`"
        );
    }
}

fn render(page: &Path) -> String {
    let out = Command::new("groff")
        .args(["-man", "-Tutf8"])
        .arg(page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}: {}",
        page.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    // Strip overstrike (bold/underline) so words can be searched.
    let mut plain = String::new();
    for c in text.chars() {
        if c == '\u{8}' {
            plain.pop();
        } else {
            plain.push(c);
        }
    }
    plain.replace(['\u{2010}', '\u{2212}'], "-")
}

#[test]
fn every_man_page_renders_and_the_main_page_names_every_subcommand() {
    if !has_tool("groff") {
        eprintln!("groff is not installed: .ci/run installs it");
        return;
    }
    let main = render(&repo().join("man/headroom.1"));
    for section in ["EXIT STATUS", "FILES", "EXAMPLES"] {
        assert!(main.contains(section), "headroom.1 lacks {section}");
    }
    for sub in subcommands() {
        assert!(main.contains(&sub), "headroom.1 does not name `{sub}`");
        let page = render(&repo().join("man").join(format!("headroom-{sub}.1")));
        assert!(
            page.contains(&format!("headroom-{sub}")) || page.contains(&sub),
            "{sub}"
        );
    }
}

/// `groff -man -Tutf8 -ww` is silent on every page (no raw non-ASCII, no bad requests) and
/// `mandoc -Tlint` says nothing at all, style notes included (no source line past 80 bytes,
/// the title in capitals).
#[test]
fn every_man_page_is_lint_clean() {
    let pages: Vec<PathBuf> = std::fs::read_dir(repo().join("man"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(pages.len() > 10);
    for (tool, args) in [
        ("groff", &["-man", "-Tutf8", "-ww", "-z"][..]),
        ("mandoc", &["-Tlint"][..]),
    ] {
        if !has_tool(tool) {
            eprintln!("{tool} is not installed: .ci/run installs it");
            continue;
        }
        for page in &pages {
            let out = Command::new(tool).args(args).arg(page).output().unwrap();
            let noise = String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout);
            assert!(
                noise.trim().is_empty(),
                "{tool} on {}: {noise}",
                page.display()
            );
        }
    }
    // Control: a raw non-ASCII character does make groff warn, so the check can fail.
    if has_tool("groff") {
        let env = Env::new();
        let bad = env.path("bad.1");
        std::fs::write(&bad, ".TH X 1\n.SH NAME\nx \u{2014} y\n").unwrap();
        let out = Command::new("groff")
            .args(["-man", "-Tutf8", "-ww", "-z"])
            .arg(&bad)
            .output()
            .unwrap();
        assert!(!out.stderr.is_empty());
    }
}

#[test]
fn bash_completion_loads_and_zsh_fish_where_installed() {
    let bash = repo().join("completions/headroom.bash");
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}' && complete -p headroom",
            bash.display()
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("headroom"));
    if has_tool("zsh") {
        let z = repo().join("completions/_headroom");
        let out = Command::new("zsh")
            .arg("-c")
            .arg(format!(
                "autoload -U compinit && compinit -u && source '{}' && whence -w _headroom",
                z.display()
            ))
            .output()
            .unwrap();
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("function"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    if has_tool("fish") {
        let f = repo().join("completions/headroom.fish");
        let out = Command::new("fish")
            .arg("-c")
            .arg(format!(
                "source '{}'; complete -C'headroom pro'",
                f.display()
            ))
            .output()
            .unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("probe"),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_formula_parses_where_ruby_is_installed() {
    if !has_tool("ruby") {
        eprintln!("ruby is not installed: .ci/run installs it");
        return;
    }
    let out = Command::new("ruby")
        .arg("-c")
        .arg(repo().join("Formula/headroom.rb"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
