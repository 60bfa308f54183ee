//! What every subcommand's help ends with: two or three real examples, and where the exit
//! codes are. One table feeds `--help` (attached to the clap tree before parsing) and the man
//! pages' EXAMPLES sections, so the two cannot drift.

/// Each visible subcommand's examples: (what it does, the command line).
pub const EXAMPLES: &[(&str, &[(&str, &str)])] = &[
    (
        "probe",
        &[
            (
                "One reading; the exit code is its level",
                "headroom probe; echo $?",
            ),
            (
                "A node_exporter textfile, from cron",
                "headroom probe -q --format prometheus -o /var/lib/node_exporter/headroom.prom",
            ),
            (
                "The figure in tmux's status line",
                "tmux set -g status-right '#(headroom probe --format tmux)'",
            ),
        ],
    ),
    (
        "limits",
        &[
            ("Which ceiling binds, and why", "headroom limits"),
            (
                "The ceilings of a recorded machine",
                "headroom limits --snapshot incident.json",
            ),
        ],
    ),
    (
        "snapshot",
        &[
            (
                "Record the machine now, for a bug report",
                "headroom snapshot -o incident.json",
            ),
            (
                "Replay it later, on any OS",
                "headroom probe --snapshot incident.json",
            ),
        ],
    ),
    (
        "reap",
        &[
            (
                "What reap would do, without doing it",
                "headroom reap --dry-run",
            ),
            (
                "Only parents named agency holding at least 50 zombies",
                "headroom reap --allow agency --min-zombies 50",
            ),
            (
                "Decide on a recorded table (never signals)",
                "headroom reap -n --snapshot incident.json",
            ),
        ],
    ),
    (
        "evidence",
        &[
            (
                "Peaks, lowest free slots and cleanups, with a chart",
                "headroom evidence",
            ),
            (
                "The last day, also as an SVG",
                "headroom evidence --since 1d --svg slots.svg",
            ),
        ],
    ),
    (
        "idle-watch",
        &[
            (
                "Audit the liveness guard before trusting it",
                "headroom idle-watch --duration 5m --threshold 2m",
            ),
            (
                "Ten minutes, a reading a minute, as JSON Lines",
                "headroom idle-watch -d 10m -i 1m --json",
            ),
        ],
    ),
    (
        "log-probe",
        &[
            (
                "Is this session still working? File by file",
                "headroom log-probe ~/.copilot/logs/session-1234",
            ),
            (
                "The same, as of an archived instant",
                "headroom log-probe DIR --at 2026-08-29T09:21:47Z",
            ),
        ],
    ),
    (
        "run",
        &[
            (
                "A build that may use at most 4 GiB",
                "headroom run --limit 4G -- cargo build",
            ),
            (
                "Polling only, checking every second",
                "headroom run -l 512M --enforce poll -i 1s -- npm test",
            ),
            (
                "The watchdog's events as JSON Lines on stderr",
                "headroom run -l 2G --json -- make 2> run.jsonl",
            ),
        ],
    ),
    (
        "top",
        &[
            ("Your process trees, largest first", "headroom top"),
            ("One tree, as JSON", "headroom top --pid 4242 --json"),
            (
                "A live view, refreshed every 2 s until Ctrl-C",
                "headroom top --watch --interval 2s",
            ),
        ],
    ),
    (
        "park",
        &[
            (
                "Stop one process so its memory can be reclaimed",
                "headroom park 4242",
            ),
            ("Let it run again", "headroom wake 4242"),
        ],
    ),
    (
        "wake",
        &[
            ("Continue a parked process", "headroom wake 4242"),
            ("The same, reporting as JSON", "headroom wake 4242 --json"),
        ],
    ),
    (
        "park-tree",
        &[
            ("Stop a whole tree, root first", "headroom park-tree 4242"),
            ("Continue it, leaves first", "headroom wake-tree 4242"),
        ],
    ),
    (
        "wake-tree",
        &[
            (
                "Continue a parked tree, leaves first",
                "headroom wake-tree 4242",
            ),
            (
                "The same, listing what was left as JSON",
                "headroom wake-tree 4242 --json",
            ),
        ],
    ),
    (
        "calibrate",
        &[
            (
                "Sample for a minute and suggest a limit",
                "headroom calibrate --duration 1m",
            ),
            ("The suggestion as JSON", "headroom calibrate -d 30s --json"),
        ],
    ),
    (
        "hangs",
        &[
            (
                "Which apps are hung now, acting on nothing",
                "headroom hangs --dry-run",
            ),
            (
                "Keep checking; JSON Lines, one object a round",
                "headroom hangs --watch --interval 15s --json",
            ),
            (
                "Replay recorded rounds on any OS",
                "headroom hangs --observations rounds.json",
            ),
        ],
    ),
    (
        "login-item",
        &[
            (
                "Start headroom watch at login",
                "headroom login-item register",
            ),
            ("Is it registered?", "headroom login-item status --json"),
            ("Stop starting it", "headroom login-item unregister"),
        ],
    ),
    (
        "watch",
        &[
            ("One round, with probe's exit code", "headroom watch --once"),
            (
                "The guard, a round every 30 s, kept as JSON Lines",
                "headroom watch --interval 30s --json >> watch.jsonl",
            ),
            (
                "Watch and warn, but never reap",
                "headroom watch --no-auto-reap",
            ),
        ],
    ),
    (
        "config",
        &[
            (
                "The effective settings and where each came from",
                "headroom config",
            ),
            (
                "What a candidate file would change",
                "headroom config --config ./candidate.toml",
            ),
        ],
    ),
    (
        "doctor",
        &[
            (
                "Check headroom's readings against the system's tools",
                "headroom doctor",
            ),
            (
                "The same, as JSON for a bug report",
                "headroom doctor --json",
            ),
        ],
    ),
    (
        "schema",
        &[
            ("The outputs that have a schema", "headroom schema"),
            (
                "Validate a reading with a JSON Schema validator",
                "headroom schema probe > probe.json && headroom probe --json | check-jsonschema --schemafile probe.json -",
            ),
        ],
    ),
    (
        "mcp",
        &[
            (
                "Register the server with an agent",
                "claude mcp add headroom -- headroom mcp",
            ),
            ("Offer only the tools that read", "headroom mcp --read-only"),
        ],
    ),
];

/// Where every subcommand's help says the exit codes are.
pub(crate) const EXIT_TABLE_POINTER: &str =
    "Exit codes: the table in `headroom --help`, headroom(1) and the README (\"Exit codes\").";

/// The examples of subcommand `name`.
pub fn examples(name: &str) -> &'static [(&'static str, &'static str)] {
    EXAMPLES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(&[][..], |(_, e)| e)
}

/// `text` (a subcommand's after_help) followed by its examples and the exit-table pointer.
fn after_help(existing: Option<String>, name: &str) -> String {
    let mut s = existing.map(|t| t + "\n\n").unwrap_or_default();
    s.push_str("Examples:\n");
    for (what, line) in examples(name) {
        s.push_str(&format!("  # {what}\n  {line}\n"));
    }
    s.push('\n');
    s.push_str(EXIT_TABLE_POINTER);
    s
}

/// `sub`, defined now (see `cli::define_now`), with two helps, as clap offers them: `-h` a
/// screenful (each option's first sentence and the examples) and `--help` everything (the
/// whole option texts, the prose, the exit status, the examples).
pub fn with_examples(sub: clap::Command) -> clap::Command {
    let sub = crate::cli::define_now(sub);
    if sub.is_hide_set() {
        return sub;
    }
    let name = sub.get_name().to_string();
    let existing = sub.get_after_help().map(ToString::to_string);
    sub.after_long_help(after_help(existing, &name))
        .after_help(short_after_help(&name))
        .mut_args(|a| {
            if a.get_long_help().is_some() {
                return a;
            }
            let Some(full) = a.get_help().map(ToString::to_string) else {
                return a;
            };
            let short = first_sentence(&full);
            if short.len() == full.len() {
                return a;
            }
            a.help(short.to_string()).long_help(full)
        })
}

/// What `-h` ends with: the examples and where the rest is.
fn short_after_help(name: &str) -> String {
    let mut s = String::from("Examples:\n");
    for (what, line) in examples(name) {
        s.push_str(&format!("  # {what}\n  {line}\n"));
    }
    s.push_str("\nMore (how it works, exit status): --help");
    s
}

/// An option's text up to its first `. ` or `; ` outside parentheses and backticks: what
/// `-h` shows of it.
pub(crate) fn first_sentence(text: &str) -> &str {
    let mut depth = 0i32;
    let mut code = false;
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'`' => code = !code,
            b'(' | b'[' if !code => depth += 1,
            b')' | b']' if !code => depth -= 1,
            b'.' | b';' if !code && depth == 0 && bytes.get(i + 1) == Some(&b' ') => {
                return &text[..i];
            }
            _ => {}
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_visible_subcommand_has_two_or_three_examples_and_no_other_has_any() {
        use clap::CommandFactory;
        let cmd = crate::cli::Cli::command();
        let visible: Vec<&str> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .map(clap::Command::get_name)
            .collect();
        for name in &visible {
            let n = examples(name).len();
            assert!((2..=3).contains(&n), "{name} has {n} examples");
        }
        for (name, _) in EXAMPLES {
            assert!(visible.contains(name), "examples for unknown `{name}`");
        }
        // Every example runs headroom (or registers it), and names its own command.
        for (name, list) in EXAMPLES {
            for (what, line) in *list {
                assert!(line.contains("headroom"), "{name}: {line}");
                assert!(
                    !what.is_empty() && what.is_ascii() && line.is_ascii(),
                    "{line}"
                );
            }
            assert!(
                list.iter()
                    .any(|(_, l)| l.contains(&format!("headroom {name}"))),
                "{name}"
            );
        }
    }

    #[test]
    fn first_sentence_stops_at_a_full_stop_or_semicolon_outside_brackets() {
        assert_eq!(
            first_sentence("Warn at PCT (again after 5 points); 100 turns it off"),
            "Warn at PCT (again after 5 points)"
        );
        assert_eq!(
            first_sentence("Write it here. The command does not inherit it"),
            "Write it here"
        );
        assert_eq!(
            first_sentence("A `a. b` pattern (e.g. this; that) stays"),
            "A `a. b` pattern (e.g. this; that) stays"
        );
        assert_eq!(first_sentence("v1.2 is a version"), "v1.2 is a version");
    }

    /// Each `headroom …` invocation in an example line, as argv: the line cut at the shell's
    /// `;`, `|`, `&&` and `>`, then from the last `headroom` word on.
    fn invocations(line: &str) -> Vec<Vec<String>> {
        line.split([';', '|', '>', '&'])
            .filter_map(|seg| {
                let words: Vec<String> = seg
                    .split_whitespace()
                    .map(|w| w.trim_matches('\'').to_string())
                    .collect();
                let at = words.iter().rposition(|w| w == "headroom")?;
                Some(words[at..].to_vec())
            })
            .collect()
    }

    /// The examples are real: every headroom command line in them parses as it is shown.
    #[test]
    fn every_example_parses() {
        use clap::Parser;
        let mut n = 0;
        for (name, list) in EXAMPLES {
            for (_, line) in *list {
                for argv in invocations(line) {
                    if let Err(e) = crate::cli::Cli::try_parse_from(&argv) {
                        panic!("{name}: `{line}` does not parse: {e}");
                    }
                    n += 1;
                }
            }
        }
        assert!(n >= 40, "{n}");
        // Control: a mistyped example is caught.
        let bad = invocations("headroom probe --jsn | jq .");
        assert_eq!(bad, vec![vec!["headroom", "probe", "--jsn"]]);
        assert!(crate::cli::Cli::try_parse_from(&bad[0]).is_err());
    }
}
