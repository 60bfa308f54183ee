//! Generated artefacts: the committed man pages and completions are current, every page
//! renders and names every subcommand, completions load, the formula parses and its `test
//! do` block passes against the built binary, and no schema name is typed by hand out of
//! step with `headroom schema`.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Env, has_tool, require_tool};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn subcommands() -> Vec<String> {
    use clap::CommandFactory;
    headroom::testing::Cli::command()
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
    assert_eq!(generated.len(), headroom::testing::ALL.len());
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

/// The SwiftBar plugin the formula installs is the one `headroom generate swiftbar`
/// prints and writes (executable: SwiftBar runs only executable files), and it runs: with
/// headroom on `PATH` it prints the figure and exits 0; without, it says so in the menu bar.
#[test]
fn the_swiftbar_plugin_is_current_executable_and_runs() {
    use std::os::unix::fs::PermissionsExt as _;
    let env = Env::new();
    let out = env.cmd().args(["generate", "swiftbar"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let committed = repo().join("swiftbar/headroom.30s.sh");
    assert!(
        out.stdout == std::fs::read(&committed).unwrap(),
        "swiftbar/headroom.30s.sh is stale: run `scripts/generate.sh`"
    );
    let dir = env.path("plugins");
    let o = env
        .cmd()
        .arg("generate")
        .arg("swiftbar")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let written = dir.join("headroom.30s.sh");
    assert_eq!(std::fs::read(&written).unwrap(), out.stdout);
    let mode = std::fs::metadata(&written).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o755, "{mode:o}");
    assert!(
        std::fs::metadata(&committed).unwrap().permissions().mode() & 0o111 != 0,
        "the committed plugin is executable"
    );
    if has_tool("shellcheck") {
        let o = Command::new("shellcheck").arg(&committed).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    }
    // Run as SwiftBar runs it, headroom found on PATH.
    let path_dir = env.path("path");
    std::fs::create_dir_all(&path_dir).unwrap();
    std::os::unix::fs::symlink(env.headroom_path(), path_dir.join("headroom")).unwrap();
    let run = |path: String, vars: &[(&str, &str)]| {
        let mut argv = env.as_test_user();
        argv.push(written.clone().into());
        Command::new(&argv[0])
            .args(&argv[1..])
            .env_remove("SWIFTBAR")
            .env_remove("XBARDarkMode")
            .envs(vars.iter().copied())
            .env("PATH", path)
            .env("HOME", env.path("nohome"))
            .env("HEADROOM_HOME", env.path("state"))
            .output()
            .unwrap()
    };
    let on_path = format!("{}:/usr/bin:/bin", path_dir.display());
    for vars in [
        &[("SWIFTBAR", "1")][..],
        &[("SWIFTBAR", "1"), ("XBARDarkMode", "true")],
        &[],
    ] {
        let o = run(on_path.clone(), vars);
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        assert!(text.lines().next().unwrap().contains(" sfimage="), "{text}");
        assert!(text.lines().any(|l| l == "---"), "{text}");
    }
    // Under xbar (XBARDarkMode set, SWIFTBAR not): the xbar flavour, a dark bar's colour.
    let o = run(on_path.clone(), &[("XBARDarkMode", "true")]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let first = text.lines().next().unwrap();
    assert!(
        !first.contains("sfimage") && first.contains(" | color=#"),
        "{text}"
    );
    assert!(text.lines().any(|l| l == "---"), "{text}");
    // Control: with no headroom anywhere it looks, the menu bar says so (exit 0 too).
    let elsewhere = ["/opt/homebrew/bin/headroom", "/usr/local/bin/headroom"];
    if elsewhere.iter().all(|p| !Path::new(p).exists()) {
        let o = run("/usr/bin:/bin".into(), &[]);
        let text = String::from_utf8_lossy(&o.stdout);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        assert!(
            text.starts_with("headroom? | color=#57606a\n---\n"),
            "{text}"
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
#[cfg_attr(not(hr_tool_groff), ignore = "needs groff")]
fn every_man_page_renders_and_the_main_page_names_every_subcommand() {
    require_tool("groff");
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
#[cfg_attr(
    not(all(hr_tool_groff, hr_tool_mandoc)),
    ignore = "needs groff and mandoc"
)]
fn every_man_page_is_lint_clean() {
    crate::support::require_tool("groff");
    crate::support::require_tool("mandoc");
    let pages: Vec<PathBuf> = std::fs::read_dir(repo().join("man"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(pages.len() > 10);
    for (tool, args) in [
        ("groff", &["-man", "-Tutf8", "-ww", "-z"][..]),
        ("mandoc", &["-Tlint"][..]),
    ] {
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
    {
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
#[cfg_attr(not(hr_tool_ruby), ignore = "needs ruby")]
fn the_formula_parses_where_ruby_is_installed() {
    require_tool("ruby");
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

/// Ruby with minitest (a bundled gem since Ruby 2.2), which the harness needs: the first
/// line of a test gated on `hr_tool_ruby`, which fails without either.
fn require_ruby_with_minitest() {
    require_tool("ruby");
    let ok = Command::new("ruby")
        .args(["-e", "require 'minitest'"])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(ok, "ruby has no minitest here");
}

fn formula_harness(args: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new("ruby")
        .arg(repo().join(".ci/formula-test.rb"))
        .args(args)
        .output()
        .unwrap()
}

/// The formula's `test do`, run for real (`.ci/formula-test.rb`: Homebrew's assertions, its
/// `shell_output`) against the binary under test and the committed man pages (#27 item 1).
#[test]
#[cfg_attr(not(hr_tool_ruby), ignore = "needs ruby")]
fn the_formula_test_block_passes_against_the_built_binary() {
    require_ruby_with_minitest();
    let bin_dir = crate::support::headroom_bin()
        .parent()
        .unwrap()
        .to_path_buf();
    let formula = repo().join("Formula/headroom.rb");
    let man = repo().join("man");
    let o = formula_harness(&[formula.as_os_str(), bin_dir.as_os_str(), man.as_os_str()]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{text}");
    assert!(text.contains("formula test passed"), "{text}");
    // Control: the block as it was (a schema name typed by hand, one version behind) fails,
    // with the message `brew test` gave.
    let env = Env::new();
    let old = env.path("old.rb");
    let src = std::fs::read_to_string(&formula).unwrap();
    let typed = src.replace(
        "assert_equal probe_schema, reading[\"schema\"]",
        "assert_equal \"headroom.probe/1\", reading[\"schema\"]",
    );
    assert_ne!(typed, src, "the control edits the block");
    std::fs::write(&old, typed).unwrap();
    let o = formula_harness(&[old.as_os_str(), bin_dir.as_os_str(), man.as_os_str()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("Expected: \"headroom.probe/1\""), "{err}");
}

/// The service block as Homebrew evaluates it on each OS (its `on_macos`/`on_linux`), and
/// what Homebrew's `service.rb` makes of it: macOS `KeepAlive = {SuccessfulExit = false}`
/// (a guard that exits 0 beside another is not respawned), Linux `Restart=on-failure` from
/// `keep_alive true` (`successful_exit: false` would give no `Restart=` there at all);
/// `ProcessType = Interactive`; `HEADROOM_SERVICE` naming the service (#27 items 5-7).
#[test]
#[cfg_attr(not(hr_tool_ruby), ignore = "needs ruby")]
fn the_formula_service_block_restarts_on_failure_only_unthrottled_and_names_itself() {
    require_ruby_with_minitest();
    let formula = repo().join("Formula/headroom.rb");
    let service = |os: &str| -> serde_json::Value {
        let o = formula_harness(&[
            formula.as_os_str(),
            std::ffi::OsStr::new("--service"),
            std::ffi::OsStr::new(os),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let mac = service("macos");
    assert_eq!(
        mac["keep_alive"],
        serde_json::json!({"successful_exit": false})
    );
    assert_eq!(
        mac["environment_variables"],
        serde_json::json!({"HEADROOM_SERVICE": headroom::testing::BREW_LABEL})
    );
    let linux = service("linux");
    assert_eq!(linux["keep_alive"], serde_json::json!(true));
    assert_eq!(
        linux["environment_variables"]["HEADROOM_SERVICE"]
            .as_str()
            .map(|l| format!("{l}.service")),
        Some(headroom::testing::BREW_UNIT.to_string())
    );
    for s in [&mac, &linux] {
        assert_eq!(s["process_type"], "interactive");
        assert_eq!(s["run"][1], "watch");
        assert!(
            s["run"][0]
                .as_str()
                .unwrap()
                .ends_with("/opt/headroom/bin/headroom")
        );
    }
}

/// Every `headroom.<name>/<n>` typed in the formula, the workflows, the scripts and the
/// docs is one `headroom schema` lists: a renamed or bumped schema fails here, not in a
/// user's `brew test` or a CI run (#27 item 1). CHANGELOG.md is history and names old
/// versions on purpose; the generated schemas, man pages and completions are checked
/// against the binary by their own staleness tests.
#[test]
fn no_schema_name_is_typed_out_of_step_with_headroom_schema() {
    let env = Env::new();
    let out = env.cmd().args(["schema", "--json"]).output().unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: std::collections::BTreeSet<String> = listed["schemas"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    assert!(names.iter().any(|n| n.starts_with("headroom.probe/")));
    let mut files: Vec<PathBuf> = ["Formula", ".github", "docs", "scripts", ".ci", "bench"]
        .iter()
        .map(|d| repo().join(d))
        .filter(|d| d.is_dir())
        .flat_map(|d| crate::support::files_under(&d))
        .collect();
    for doc in [
        "README.md",
        "CONTRIBUTING.md",
        "ARCHITECTURE.md",
        "BENCHMARKS.md",
    ] {
        files.push(repo().join(doc));
    }
    let mut wrong = Vec::new();
    let mut seen = 0;
    for f in files.iter().filter(|f| f.is_file()) {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue; // not text (a PNG)
        };
        for name in typed_schema_names(&text) {
            seen += 1;
            if !names.contains(&name) {
                wrong.push(format!(
                    "{}: `{name}`",
                    f.strip_prefix(repo()).unwrap_or(f).display()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "schema names typed by hand that `headroom schema` does not list (derive them, or \
         write the current one): {wrong:#?}\nlisted: {names:?}"
    );
    assert!(seen > 0, "the scan found the README's names");
    // Control: the formula's old typed name is caught.
    assert_eq!(
        typed_schema_names(
            "assert_equal \"headroom.probe/1\", x; headroom.rb; headroom.watch.lock"
        ),
        vec!["headroom.probe/1".to_string()]
    );
}

/// `headroom.<name>/<digits>` occurrences in `text` (name: lowercase letters and `-`).
fn typed_schema_names(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("headroom.") {
        let after = &rest[i + "headroom.".len()..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c == '-'))
            .unwrap_or(after.len());
        let tail = &after[name_len..];
        if name_len > 0 && tail.starts_with('/') {
            let digits = tail[1..]
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(tail.len() - 1);
            if digits > 0 {
                out.push(format!(
                    "headroom.{}/{}",
                    &after[..name_len],
                    &tail[1..=digits]
                ));
            }
        }
        rest = after;
    }
    out
}
