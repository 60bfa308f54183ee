//! Every subcommand introduces itself with the same sentence everywhere a user meets it:
//! its `-h`/`--help` and `help SUB`, its man page's NAME line, headroom(1)'s SUBCOMMANDS list
//! and the zsh and fish completions, all held against its one-liner in `headroom --help`.
//! The generated-file tests only compare files with a fresh generation, so a wrong about
//! (a flattened struct's doc comment taking over, clap#3127) passed them all.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::support::Env;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Collapses whitespace and drops roff and shell escapes, so that the same sentence compares
/// equal whichever file it was wrapped or quoted in.
fn plain(s: &str) -> String {
    let s = s
        .replace("\\*(Aq", "'")
        .replace("\\(aq", "'")
        .replace("'\\''", "'")
        .replace('\\', "");
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The `Commands:` list of `headroom --help`: name → one-liner (continuation lines joined).
fn one_liners(help: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut last: Option<String> = None;
    for line in help
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
    {
        let indent = line.len() - line.trim_start().len();
        if indent == 2 {
            let (name, about) = line.trim().split_once(' ').unwrap();
            out.insert(name.to_string(), about.trim().to_string());
            last = Some(name.to_string());
        } else if let Some(name) = &last {
            let about = out.get_mut(name).unwrap();
            about.push(' ');
            about.push_str(line.trim());
        }
    }
    out.remove("help");
    out
}

fn first_line(out: &[u8]) -> String {
    String::from_utf8_lossy(out)
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

/// The NAME line of a man page, after `headroom\-SUB \- `.
fn man_name(page: &str) -> String {
    let name: Vec<&str> = page
        .lines()
        .skip_while(|l| *l != ".SH NAME")
        .skip(1)
        .take_while(|l| !l.starts_with('.'))
        .collect();
    let name = name.join(" ");
    plain(name.split_once(" \\- ").map_or("", |(_, about)| about))
}

#[test]
fn every_command_introduces_itself_with_its_one_liner_everywhere() {
    let env = Env::new();
    let top = env.cmd().arg("--help").output().unwrap();
    let liners = one_liners(&String::from_utf8_lossy(&top.stdout));
    assert!(liners.len() >= 20, "parsed too few commands: {liners:?}");
    let manual = std::fs::read_to_string(repo().join("man/headroom.1")).unwrap();
    let zsh = std::fs::read_to_string(repo().join("completions/_headroom")).unwrap();
    let fish = std::fs::read_to_string(repo().join("completions/headroom.fish")).unwrap();
    let mut wrong = Vec::new();
    let mut counts = Vec::new();
    for (sub, about) in &liners {
        let about = plain(about);
        let mut check = |where_: &str, got: String| {
            if plain(&got) != about {
                wrong.push(format!(
                    "{sub}: {where_} says {got:?}, --help says {about:?}"
                ));
            }
        };
        for flag in ["-h", "--help"] {
            let out = env.cmd().args([sub.as_str(), flag]).output().unwrap();
            check(flag, first_line(&out.stdout));
        }
        let out = env.cmd().args(["help", sub.as_str()]).output().unwrap();
        check("help SUB", first_line(&out.stdout));
        let page = std::fs::read_to_string(repo().join(format!("man/headroom-{sub}.1")))
            .unwrap_or_default();
        check("its man page's NAME", man_name(&page));
        let described = page
            .lines()
            .skip_while(|l| *l != ".SH DESCRIPTION")
            .nth(1)
            .is_some_and(|l| !l.starts_with('.') && !l.trim().is_empty());
        if !described {
            counts.push(format!("{sub}: its man page has no DESCRIPTION"));
        }
        // headroom(1) lists `headroom\-SUB(1)` and the one-liner on the lines after it.
        let entry = format!("headroom\\-{}(1)", sub.replace('-', "\\-"));
        let listed: Vec<&str> = manual
            .lines()
            .skip_while(|l| *l != entry)
            .skip(1)
            .take_while(|l| !l.starts_with('.'))
            .collect();
        check("headroom(1)", listed.join(" "));
        // zsh: `'SUB:about' \` in the command list and in `help`'s.
        let zsh_entries: Vec<&str> = zsh
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("'{sub}:")))
            .collect();
        if zsh_entries.len() != 2 {
            counts.push(format!("{sub}: {} zsh entries, not 2", zsh_entries.len()));
        }
        for e in zsh_entries {
            check(
                "zsh",
                e.trim_end_matches(" \\").trim_end_matches('\'').to_string(),
            );
        }
        // fish: `-a "SUB" -d 'about'`, likewise twice.
        let marker = format!("-f -a \"{sub}\" -d '");
        let fish_entries: Vec<&str> = fish
            .lines()
            .filter_map(|l| l.split_once(&marker).map(|(_, d)| d))
            .collect();
        if fish_entries.len() != 2 {
            counts.push(format!("{sub}: {} fish entries, not 2", fish_entries.len()));
        }
        for e in fish_entries {
            check("fish", e.trim_end_matches('\'').to_string());
        }
    }
    wrong.extend(counts);
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `-h` is the short help and `--help` the long one, as clap offers: `-h` fits a screen and
/// ends with the examples; `--help` keeps the prose, the exit status and the examples.
#[test]
fn dash_h_is_a_screenful_and_double_dash_help_is_complete() {
    let env = Env::new();
    let text = |args: &[&str]| {
        let out = env.cmd().args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let top = text(&["--help"]);
    for sub in one_liners(&top).keys() {
        let short = text(&[sub, "-h"]);
        let long = text(&[sub, "--help"]);
        assert!(
            short.lines().count() <= 45,
            "{sub} -h is {} lines",
            short.lines().count()
        );
        assert!(
            short.contains("\nExamples:\n") && long.contains("\nExamples:\n"),
            "{sub}"
        );
        assert!(
            long.contains("Exit codes: the table in"),
            "{sub} --help lost the exit pointer"
        );
        assert!(
            !short.contains("Exit codes: the table in"),
            "{sub} -h is the long help"
        );
        assert!(short.lines().count() < long.lines().count(), "{sub}");
    }
    // `run`, the longest: its prose and exit status are in --help only.
    let (short, long) = (text(&["run", "-h"]), text(&["run", "--help"]));
    let (short, long) = (plain(&short), plain(&long));
    assert!(
        long.contains("Exit status: the command's own code"),
        "{long}"
    );
    assert!(!short.contains("Exit status"), "{short}");
    assert!(long.contains("The command does not inherit it"), "{long}");
    assert!(
        !short.contains("The command does not inherit it"),
        "{short}"
    );
}
