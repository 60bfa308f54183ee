//! The GitHub workflows, read by a real YAML parser (Ruby's Psych): the Linux job runs
//! what `.ci/run` runs, word for word and no more, so the two cannot drift apart; the macOS
//! job runs on the runners that exist (#27 item 2). actionlint checks the rest of them, in
//! `.ci/run`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use crate::support::require_tool;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn workflow(name: &str) -> serde_json::Value {
    let o = Command::new("ruby")
        .args([
            "-ryaml",
            "-rjson",
            "-e",
            "puts JSON.generate(YAML.safe_load(File.read(ARGV[0])))",
        ])
        .arg(repo().join(".github/workflows").join(name))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// The `run:` scripts of a job.
fn runs(job: &serde_json::Value) -> Vec<String> {
    job["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .map(|r| r.trim().to_string())
        .collect()
}

/// The commands `.ci/run` runs that a GitHub runner can run too: its portable checks (fmt,
/// clippy, the README's test command, the release dry run), each a line of its own there.
fn ci_run_portable() -> (BTreeSet<String>, BTreeSet<String>) {
    let script = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let test_cmd = readme
        .split("<!-- test-command -->")
        .nth(1)
        .and_then(|t| t.lines().nth(2))
        .unwrap()
        .trim()
        .to_string();
    let mut every: BTreeSet<String> = script.lines().map(|l| l.trim().to_string()).collect();
    every.insert(test_cmd.clone());
    let mut portable: BTreeSet<String> = every
        .iter()
        .filter(|l| {
            ["cargo fmt", "cargo clippy", "cargo test", "scripts/"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .cloned()
        .collect();
    portable.insert(test_cmd);
    (every, portable)
}

#[test]
#[cfg_attr(not(hr_tool_ruby), ignore = "needs ruby")]
fn the_linux_job_runs_what_ci_run_runs_and_no_more() {
    require_tool("ruby");
    let ci = workflow("ci.yml");
    let linux = &ci["jobs"]["linux"];
    assert!(
        linux["runs-on"].as_str().unwrap().starts_with("ubuntu-"),
        "{linux}"
    );
    let job: BTreeSet<String> = runs(linux).into_iter().collect();
    for r in &job {
        assert!(
            !r.contains('\n'),
            "one command a step in the linux job: {r}"
        );
    }
    let (every, portable) = ci_run_portable();
    let missing_here: Vec<&String> = job.difference(&every).collect();
    assert!(
        missing_here.is_empty(),
        "the linux job runs what .ci/run does not: {missing_here:?}"
    );
    let missing_there: Vec<&String> = portable.difference(&job).collect();
    assert!(
        missing_there.is_empty(),
        ".ci/run runs what the linux job does not: {missing_there:?}"
    );
    assert!(
        job.contains("cargo test --locked") && job.len() >= 4,
        "{job:?}"
    );
}

#[test]
#[cfg_attr(not(hr_tool_ruby), ignore = "needs ruby")]
fn the_macos_jobs_run_on_the_runners_that_exist_and_the_release_builds_four_targets() {
    require_tool("ruby");
    let ci = workflow("ci.yml");
    let os: Vec<&str> = ci["jobs"]["macos"]["strategy"]["matrix"]["os"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o.as_str())
        .collect();
    // macos-13 was retired in December 2025: a job on it never starts.
    assert_eq!(os, ["macos-14", "macos-15", "macos-15-intel"]);
    let mac = runs(&ci["jobs"]["macos"]).join("\n");
    for needed in [
        "launchctl managername",
        "xcrun clang -fsyntax-only",
        "headroom doctor --json",
        "headroom hangs --dry-run --json",
        "ruby .ci/formula-test.rb Formula/headroom.rb target/debug man",
        "scripts/release.sh --dry-run",
    ] {
        assert!(mac.contains(needed), "the macos job lacks `{needed}`");
    }
    let release = workflow("release.yml");
    // YAML 1.1 reads the key `on` as `true`.
    let on = if release["on"].is_null() {
        &release["true"]
    } else {
        &release["on"]
    };
    assert_eq!(on["push"]["tags"], serde_json::json!(["v*"]));
    let targets: BTreeSet<&str> = release["jobs"]["archive"]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["target"].as_str())
        .collect();
    assert_eq!(
        targets,
        BTreeSet::from([
            "aarch64-apple-darwin",
            "x86_64-apple-darwin",
            "x86_64-unknown-linux-gnu",
            "aarch64-unknown-linux-gnu"
        ])
    );
    let publish = runs(&release["jobs"]["publish"]).join("\n");
    assert!(
        publish.contains("scripts/release.sh formula dist/SHA256SUMS"),
        "{publish}"
    );
}
