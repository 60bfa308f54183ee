//! Every command line the README and the man pages' EXAMPLES show is kept true here, from
//! `tests/doc_commands.txt`: each one is run (itself, or a safe form of it) with its exit
//! status and its output (numbers redacted) checked, or listed as not run with the reason.
//! Whatever the entry, each `headroom …` in the line is parsed by the real binary (`--help`
//! put before its `--` or at its end: clap checks every flag and value before it, and nothing
//! runs), so a renamed flag fails here. A documented line with no entry fails; so does an
//! entry no document has any more.

use crate::support::{Env, chown, headroom_bin, is_root};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// How an entry is kept true.
#[derive(Debug, Clone, PartialEq)]
enum How {
    /// Run the documented line (or `alt`, a safe form of it) in a scratch directory.
    Run { alt: Option<String>, private: bool },
    /// A transcript: run against the fixture `spec` leaking zombies under `nproc`.
    Fixture { spec: Vec<String>, nproc: u32 },
    /// Parsed only, for this reason.
    NotRun(String),
}

#[derive(Debug, Clone)]
struct Entry {
    line: usize,
    cmd: String,
    how: How,
    setup: Vec<String>,
    exit: Option<i32>,
    expected: Vec<String>,
}

fn parse_entries(text: &str) -> Result<Vec<Entry>, String> {
    let mut out: Vec<Entry> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if let Some(cmd) = raw.strip_prefix("$ ") {
            out.push(Entry {
                line: n,
                cmd: cmd.trim().to_string(),
                how: How::NotRun(String::new()),
                setup: Vec::new(),
                exit: None,
                expected: Vec::new(),
            });
            continue;
        }
        if raw.starts_with('#') {
            continue;
        }
        let Some(e) = out.last_mut() else {
            if raw.trim().is_empty() {
                continue;
            }
            return Err(format!("line {n}: text before the first `$ ` entry"));
        };
        let directive = e.expected.is_empty();
        if directive && raw == "run" {
            e.how = How::Run {
                alt: None,
                private: false,
            };
        } else if directive && raw == "run-private" {
            e.how = How::Run {
                alt: None,
                private: true,
            };
        } else if let Some(alt) = raw.strip_prefix("run: ").filter(|_| directive) {
            e.how = How::Run {
                alt: Some(alt.to_string()),
                private: false,
            };
        } else if let Some(alt) = raw.strip_prefix("run-private: ").filter(|_| directive) {
            e.how = How::Run {
                alt: Some(alt.to_string()),
                private: true,
            };
        } else if let Some(spec) = raw.strip_prefix("fixture: ").filter(|_| directive) {
            let mut w: Vec<String> = spec.split_whitespace().map(String::from).collect();
            let nproc = w
                .iter()
                .position(|x| x.starts_with("nproc="))
                .map(|p| w.remove(p))
                .and_then(|x| x["nproc=".len()..].parse().ok())
                .ok_or(format!("line {n}: fixture needs nproc=N"))?;
            e.how = How::Fixture { spec: w, nproc };
        } else if let Some(why) = raw.strip_prefix("not-run: ").filter(|_| directive) {
            e.how = How::NotRun(why.to_string());
        } else if let Some(s) = raw.strip_prefix("setup: ").filter(|_| directive) {
            e.setup.push(s.to_string());
        } else if let Some(c) = raw.strip_prefix("? ").filter(|_| directive) {
            e.exit = Some(c.trim().parse().map_err(|_| format!("line {n}: `{raw}`"))?);
        } else {
            e.expected.push(raw.to_string());
        }
    }
    for e in &mut out {
        while e.expected.last().is_some_and(|l| l.trim().is_empty()) {
            e.expected.pop();
        }
        match &e.how {
            How::NotRun(why) if why.is_empty() => {
                return Err(format!(
                    "line {}: `{}` says neither run nor not-run (with a reason)",
                    e.line, e.cmd
                ));
            }
            How::NotRun(_) => {}
            _ if e.exit.is_none() => {
                return Err(format!("line {}: `{}` has no `? CODE`", e.line, e.cmd));
            }
            _ => {}
        }
    }
    Ok(out)
}

/// A documented line without its trailing comment.
fn strip_comment(l: &str) -> String {
    match l.find(" # ") {
        Some(i) => l[..i].trim().to_string(),
        None => l.trim().to_string(),
    }
}

/// The README's command lines (```sh blocks) and its transcripts (`$ ` lines of ```text
/// blocks, each with the output below it).
fn readme_commands(readme: &str) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let (mut cmds, mut transcripts) = (Vec::new(), Vec::<(String, Vec<String>)>::new());
    let (mut block, mut open): (Option<String>, bool) = (None, false);
    for l in readme.lines() {
        if let Some(lang) = l.strip_prefix("```") {
            block = match block {
                None => Some(lang.trim().to_string()),
                Some(_) => None,
            };
            open = false;
            continue;
        }
        match block.as_deref() {
            Some("sh") if !l.trim().is_empty() => cmds.push(strip_comment(l)),
            Some("text") => {
                if let Some(c) = l.strip_prefix("$ ") {
                    cmds.push(strip_comment(c));
                    transcripts.push((strip_comment(c), Vec::new()));
                    open = true;
                } else if let Some(t) = transcripts.last_mut().filter(|_| open) {
                    t.1.push(l.to_string());
                }
            }
            _ => {}
        }
    }
    (cmds, transcripts)
}

/// The command lines of a man page's EXAMPLES section.
fn man_examples(page: &str) -> Vec<String> {
    let Some(ex) = page.split(".SH EXAMPLES").nth(1) else {
        return Vec::new();
    };
    let ex = ex.split("\n.SH").next().unwrap_or("");
    ex.lines()
        .filter_map(|l| l.strip_prefix("\\f(CW"))
        .filter_map(|l| l.strip_suffix("\\fR"))
        .map(|l| strip_comment(&l.replace("\\-", "-").replace("\\e", "\\")))
        .collect()
}

/// Every documented command line, with where it is documented.
fn documented() -> BTreeMap<String, Vec<String>> {
    let mut all: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    for c in readme_commands(&readme).0 {
        all.entry(c).or_default().push("README.md".into());
    }
    let mut pages: Vec<PathBuf> = std::fs::read_dir(repo().join("man"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    for p in pages {
        let page = std::fs::read_to_string(&p).unwrap();
        let name = format!("man/{}", p.file_name().unwrap().to_string_lossy());
        for c in man_examples(&page) {
            all.entry(c).or_default().push(name.clone());
        }
    }
    all
}

/// The documented lines without an entry, and the entries nothing documents.
fn coverage(docs: &BTreeMap<String, Vec<String>>, entries: &[Entry]) -> Vec<String> {
    let mut problems = Vec::new();
    for (cmd, wher) in docs {
        if !entries.iter().any(|e| &e.cmd == cmd) {
            problems.push(format!(
                "`{cmd}` ({}) is neither run nor listed as not run in tests/doc_commands.txt",
                wher.join(", ")
            ));
        }
    }
    for e in entries {
        if !docs.contains_key(&e.cmd) {
            problems.push(format!(
                "tests/doc_commands.txt line {}: `{}` is in no document any more",
                e.line, e.cmd
            ));
        }
    }
    problems
}

/// Shell words and operators, as far as the documented lines need (quotes, escapes,
/// `|`, `||`, `&&`, `;`, `&`, `<`, `>`, `>>`, `2>`).
fn shell_words(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut word) = (Vec::new(), String::new(), false);
    let mut it = line.chars().peekable();
    let flush = |out: &mut Vec<String>, cur: &mut String, word: &mut bool| {
        if *word {
            out.push(std::mem::take(cur));
            *word = false;
        }
    };
    while let Some(c) = it.next() {
        match c {
            '\'' => {
                word = true;
                for q in it.by_ref() {
                    if q == '\'' {
                        break;
                    }
                    cur.push(q);
                }
            }
            '"' => {
                word = true;
                while let Some(q) = it.next() {
                    match q {
                        '"' => break,
                        '\\' => cur.extend(it.next()),
                        q => cur.push(q),
                    }
                }
            }
            '\\' => {
                word = true;
                cur.extend(it.next());
            }
            c if c.is_whitespace() => flush(&mut out, &mut cur, &mut word),
            '|' | '&' | ';' | '<' | '>' => {
                if cur == "2" && c == '>' {
                    cur.clear();
                    word = false;
                    out.push("2>".into());
                    continue;
                }
                flush(&mut out, &mut cur, &mut word);
                let mut op = c.to_string();
                if matches!(
                    (c, it.peek()),
                    ('|', Some('|')) | ('&', Some('&')) | ('>', Some('>'))
                ) {
                    op.extend(it.next());
                }
                out.push(op);
            }
            c => {
                word = true;
                cur.push(c);
            }
        }
    }
    flush(&mut out, &mut cur, &mut word);
    out
}

fn is_operator(w: &str) -> bool {
    matches!(w, "|" | "||" | "&&" | ";" | "&" | "<" | ">" | ">>" | "2>")
}

/// Each `headroom SUBCOMMAND …` in a line: its arguments up to the next operator.
fn headroom_invocations(line: &str) -> Vec<Vec<String>> {
    let subs: Vec<String> = headroom::testing::full_command()
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    let w = shell_words(line);
    let mut out = Vec::new();
    for (i, x) in w.iter().enumerate() {
        if x == "headroom" && w.get(i + 1).is_some_and(|s| subs.contains(s)) {
            out.push(
                w[i + 1..]
                    .iter()
                    .take_while(|a| !is_operator(a))
                    .cloned()
                    .collect(),
            );
        }
    }
    out
}

/// Parses `args` with the real binary, `--help` put where nothing after it is an option.
fn parses(args: &[String]) -> Result<(), String> {
    let mut argv: Vec<String> = args.to_vec();
    let at = argv.iter().position(|a| a == "--").unwrap_or(argv.len());
    argv.insert(at, "--help".into());
    let out = Command::new(headroom_bin())
        .args(&argv)
        .env(
            "HEADROOM_HOME",
            std::env::temp_dir().join("headroom-doc-commands-unused"),
        )
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(0) && stdout.contains("Usage: headroom") {
        Ok(())
    } else {
        Err(format!(
            "`headroom {}` does not parse (exit {:?}): {}",
            argv.join(" "),
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Numbers (with their thousands separators and decimals) as `[N]`, each run of blanks as
/// two (a column's width follows its numbers), trailing blanks cut.
fn redact(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let c: Vec<char> = l.chars().collect();
            let (mut s, mut i) = (String::new(), 0);
            while i < c.len() {
                if !c[i].is_ascii_digit() {
                    s.push(c[i]);
                    i += 1;
                    continue;
                }
                let digit_at = |j: usize| c.get(j).is_some_and(char::is_ascii_digit);
                while digit_at(i) || (matches!(c.get(i), Some(',' | '.')) && digit_at(i + 1)) {
                    i += 1;
                }
                s.push_str("[N]");
            }
            let mut out = String::new();
            let mut blanks = 0;
            for ch in s.chars() {
                if ch == ' ' {
                    blanks += 1;
                    continue;
                }
                out.push_str(match blanks {
                    0 => "",
                    1 => " ",
                    _ => "  ",
                });
                blanks = 0;
                out.push(ch);
            }
            out.trim_end().to_string()
        })
        .collect()
}

/// One line against a pattern where `[..]` is any text.
fn line_matches(pat: &str, line: &str) -> bool {
    let parts: Vec<&str> = pat.split("[..]").collect();
    if parts.len() == 1 {
        return pat == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || line.len() < first.len() + last.len() || !line.ends_with(last) {
        return false;
    }
    let mut rest = &line[first.len()..line.len() - last.len()];
    for p in &parts[1..parts.len() - 1] {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    true
}

/// Lines against patterns where a `...` line is any number of lines.
fn lines_match(pats: &[String], lines: &[String]) -> bool {
    match pats.split_first() {
        None => lines.is_empty(),
        Some((p, rest)) if p == "..." => (0..=lines.len()).any(|k| lines_match(rest, &lines[k..])),
        Some((p, rest)) => lines
            .split_first()
            .is_some_and(|(l, more)| line_matches(p, l) && lines_match(rest, more)),
    }
}

/// Where the entries run: one scratch directory and HOME for all (an entry may use a file
/// an earlier one wrote), `headroom` first in PATH, the test user's HEADROOM_HOME.
struct Scratch {
    env: Env,
    bin: PathBuf,
    work: PathBuf,
    home: PathBuf,
}

impl Scratch {
    fn new() -> Self {
        let env = Env::new();
        let bin = env.dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        std::os::unix::fs::symlink(env.headroom_path(), bin.join("headroom")).unwrap();
        // doctor checks the state directory is the user's alone, as a real one is.
        std::fs::set_permissions(
            &env.home,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        let work = env.path("doc");
        let home = env.path("doc-home");
        for d in [&work, &home] {
            std::fs::create_dir(d).unwrap();
            if env.private {
                chown(d, env.uid);
            }
        }
        Self {
            env,
            bin,
            work,
            home,
        }
    }

    /// `bash -c line` as the test user, under `prefix` (prlimit) when given.
    fn bash(&self, line: &str, prefix: &[&str]) -> std::process::Output {
        let mut argv = self.env.as_test_user();
        argv.extend(["timeout", "--kill-after=5", "60"].map(Into::into));
        argv.extend(prefix.iter().map(Into::into));
        argv.extend(["bash", "-c", line].map(Into::into));
        let path = format!(
            "{}:{}",
            self.bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(&self.work)
            .env("PATH", path)
            .env("HOME", &self.home)
            .env("HEADROOM_HOME", &self.env.home)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .output()
            .unwrap()
    }
}

/// Runs one entry; `Ok(false)` when it was only parsed (a private uid is needed to run it).
fn run_entry(
    s: &Scratch,
    e: &Entry,
    transcripts: &[(String, Vec<String>)],
) -> Result<bool, String> {
    let (line, prefix, _tree) = match &e.how {
        How::NotRun(_) => return Ok(false),
        How::Run { private: true, .. } | How::Fixture { .. } if !s.env.private => return Ok(false),
        How::Run { alt, .. } => (alt.clone().unwrap_or(e.cmd.clone()), Vec::new(), None),
        How::Fixture { spec, nproc } => {
            let fixture = s.env.named_fixture(&spec[0]);
            let args: Vec<&str> = spec[1..].iter().map(String::as_str).collect();
            let mut tree = s.env.spawn(&fixture, &args);
            tree.ready();
            let pre = vec![
                "prlimit".to_string(),
                format!("--nproc={nproc}"),
                "--".into(),
            ];
            (e.cmd.clone(), pre, Some(tree))
        }
    };
    for setup in &e.setup {
        let out = s.bash(setup, &[]);
        if !out.status.success() {
            return Err(format!(
                "line {}: setup `{setup}` failed: {}",
                e.line,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    let prefix: Vec<&str> = prefix.iter().map(String::as_str).collect();
    let out = s.bash(&line, &prefix);
    let got = redact(&String::from_utf8_lossy(&out.stdout));
    let code = out.status.code();
    if std::env::var_os("DOC_COMMANDS_SHOW").is_some() {
        // What an entry would say, to write one: DOC_COMMANDS_SHOW=1 … -- --nocapture.
        eprintln!(">>> {}\n{}\n<<<", e.cmd, got.join("\n"));
    }
    let mut wrong = Vec::new();
    if code != e.exit {
        wrong.push(format!("exit {code:?}, want {:?}", e.exit));
    }
    if !lines_match(&e.expected, &got) {
        wrong.push(format!(
            "its output (numbers redacted) does not match:\n{}\nwant:\n{}",
            got.join("\n"),
            e.expected.join("\n")
        ));
    }
    if let How::Fixture { .. } = e.how {
        // The README's transcript of this line is held to the same pattern.
        match transcripts.iter().find(|(c, _)| c == &e.cmd) {
            Some((_, shown)) => {
                let shown = redact(&shown.join("\n"));
                if !lines_match(&e.expected, &shown) {
                    wrong.push(format!(
                        "the README's transcript does not match the entry:\n{}",
                        shown.join("\n")
                    ));
                }
            }
            None => wrong.push("no README transcript of it".into()),
        }
    }
    if wrong.is_empty() {
        Ok(true)
    } else {
        Err(format!(
            "line {}: `{line}`: {}\nstderr: {}",
            e.line,
            wrong.join("; "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn entries() -> Vec<Entry> {
    let text = std::fs::read_to_string(repo().join("tests/doc_commands.txt")).unwrap();
    parse_entries(&text).unwrap()
}

#[test]
#[cfg_attr(
    not(all(hr_tool_jq, hr_tool_prlimit, any(not(hr_root), hr_tool_setpriv))),
    ignore = "needs jq, prlimit (and setpriv as root)"
)]
fn every_documented_command_line_is_run_or_listed_and_stays_true() {
    crate::support::require_tool("jq");
    crate::support::require_tool("prlimit");
    if is_root() {
        crate::support::require_tool("setpriv");
    }
    let entries = entries();
    let problems = coverage(&documented(), &entries);
    assert!(problems.is_empty(), "{problems:#?}");
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let transcripts = readme_commands(&readme).1;
    let s = Scratch::new();
    let (mut wrong, mut ran, mut parsed_only) = (Vec::new(), 0, Vec::new());
    for e in &entries {
        let calls = headroom_invocations(&e.cmd);
        if calls.is_empty() && !matches!(e.how, How::NotRun(_)) {
            wrong.push(format!("line {}: `{}` runs no headroom", e.line, e.cmd));
        }
        wrong.extend(calls.iter().filter_map(|a| parses(a).err()));
        match run_entry(&s, e, &transcripts) {
            Ok(true) => ran += 1,
            Ok(false) => parsed_only.push(e.cmd.clone()),
            Err(w) => wrong.push(w),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    eprintln!(
        "doc commands: {ran} run, {} parsed only: {parsed_only:#?}",
        parsed_only.len()
    );
    if s.env.private {
        assert!(ran > 40, "only {ran} of {} entries ran", entries.len());
    }
}

#[test]
fn a_renamed_flag_or_a_new_undocumented_line_fails() {
    // The documented reap example parses; the same with a flag renamed does not.
    let ok = headroom_invocations("headroom reap --allow agency --min-zombies 50");
    assert_eq!(ok.len(), 1);
    parses(&ok[0]).unwrap();
    let renamed = headroom_invocations("headroom reap --allow agency --min-zombie 50");
    let e = parses(&renamed[0]).unwrap_err();
    assert!(e.contains("--min-zombie"), "{e}");
    // A bad value is caught before `--help` too, and `--help` goes before `--`.
    assert!(parses(&headroom_invocations("headroom reap --grace soon")[0]).is_err());
    let run = headroom_invocations("headroom run --limit 4G -- npm run build 2> x | jq .");
    assert_eq!(run[0].last().map(String::as_str), Some("build"));
    parses(&run[0]).unwrap();
    assert!(parses(&headroom_invocations("headroom run --limt 4G -- make")[0]).is_err());
    // Only `headroom SUBCOMMAND` words count, wherever they stand.
    assert_eq!(
        headroom_invocations("claude mcp add headroom -- headroom mcp --tools read,act"),
        vec![vec!["mcp", "--tools", "read,act"]]
    );
    assert!(headroom_invocations("brew services start headroom").is_empty());
    // A documented line without an entry, and an entry without its line, are reported.
    let entries = entries();
    let mut docs = documented();
    assert!(coverage(&docs, &entries).is_empty());
    docs.insert("headroom probe --new-flag".into(), vec!["README.md".into()]);
    let p = coverage(&docs, &entries);
    assert!(p.len() == 1 && p[0].contains("--new-flag"), "{p:?}");
    docs.remove("headroom probe --new-flag");
    docs.remove("headroom limits");
    let p = coverage(&docs, &entries);
    assert!(p.len() == 1 && p[0].contains("in no document"), "{p:?}");
    // An entry must say how it is kept true.
    assert!(parse_entries("$ headroom probe\n").is_err());
    assert!(
        parse_entries("$ headroom probe\nrun\n").is_err(),
        "no exit status"
    );
    assert!(parse_entries("$ headroom probe\nnot-run: why\n").is_ok());
}

#[test]
fn redacted_output_matches_only_its_pattern() {
    let got = redact("  292 of 4,000 task slots used, 73.0 %.\nuid 3901029 (linux)\n");
    assert_eq!(
        got,
        ["  [N] of [N] task slots used, [N] %.", "uid [N] (linux)"]
    );
    let pat: Vec<String> = ["  [N] of [N] task [..] used, [..] %.", "..."]
        .map(String::from)
        .to_vec();
    assert!(lines_match(&pat, &got));
    let wrong: Vec<String> = ["  [N] of [N] process slots used[..]", "..."]
        .map(String::from)
        .to_vec();
    assert!(!lines_match(&wrong, &got));
    assert!(
        !lines_match(&pat[..1], &got),
        "a line more than the pattern"
    );
    assert_eq!(
        shell_words(r#"jq -r '"\(.pid)"' 2>run.jsonl >> w && x"#),
        [
            "jq",
            "-r",
            r#""\(.pid)""#,
            "2>",
            "run.jsonl",
            ">>",
            "w",
            "&&",
            "x"
        ]
    );
}

/// A command whose code can refuse (exit 3) says so in its help's exit-status paragraph.
#[test]
fn a_command_that_can_refuse_lists_exit_3() {
    let help = |sub: &str| {
        let out = Command::new(headroom_bin())
            .args([sub, "--help"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    let status = |h: &str| {
        h.split("\n\n")
            .find(|p| p.starts_with("Exit status:"))
            .map(|p| p.replace('\n', " "))
    };
    let mut checked = 0;
    for (sub, src) in [
        // reap refuses in its cleanup (the ancestry it cannot read), `watch`'s too.
        ("reap", "crates/headroom-actions/src/actions/cleanup.rs"),
        ("watch", "crates/headroom-commands/src/commands/watch"),
    ] {
        let path = repo().join(src);
        let text: String = if path.is_dir() {
            crate::support::files_under(&path)
                .iter()
                .map(|f| std::fs::read_to_string(f).unwrap())
                .collect()
        } else {
            std::fs::read_to_string(&path).unwrap()
        };
        assert!(
            text.contains("RefusedError("),
            "{src} no longer refuses: drop it here"
        );
        let para = status(&help(sub)).unwrap();
        assert!(
            para.contains("; 3 "),
            "`{sub} --help` leaves out exit 3: {para}"
        );
        checked += 1;
    }
    assert_eq!(checked, 2);
    // Control: the paragraph reap had before is caught by the same check.
    let old = "Exit status: 0 nothing needed doing; 1 a target survived; 2 error; 64 usage error.";
    assert!(!status(old).unwrap().contains("; 3 "));
}
