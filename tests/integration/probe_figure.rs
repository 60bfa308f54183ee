//! `probe --format swiftbar` and `--format tmux` from the binary (#27 item 10): read from a
//! made-up process table whose zombie parent has a hostile name, in a fresh state
//! directory, at the cost of one probe, and drawn by a real tmux status line.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::Env;

/// The zombie parent's name: a title-ending `|`, a line break that would start a SwiftBar
/// separator, tmux styles and a command, an ANSI escape and an emoji code.
const HOSTILE: &str = "a|b\n--- #[fg=red]#(id)\x1b[2J:fire:";

/// A `/proc` with the test user's parent (pid 10) and its 8 zombies, and a threads-max of
/// 12 with nobody else's tasks: 9 of 12 slots, 75 %, critical.
fn fake_proc(env: &Env) -> PathBuf {
    let root = env.path("fakeproc");
    let uid = env.uid;
    let mk = |pid: u32, comm: &str, state: &str, ppid: u32| {
        let dir = root.join(pid.to_string());
        std::fs::create_dir_all(&dir).unwrap();
        let st = state.chars().next().unwrap();
        std::fs::write(
            dir.join("stat"),
            format!("{pid} ({comm}) {st} {ppid} 10 10 0 -1 0 0 0 0 0 1 1 0 0 20 0 1 0 5 0 0"),
        )
        .unwrap();
        // The kernel writes a line break of a name as `\n` in status.
        let name = comm.replace('\n', "\\n");
        std::fs::write(
            dir.join("status"),
            format!(
                "Name:\t{name}\nState:\t{state}\nPPid:\t{ppid}\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nThreads:\t1\n"
            ),
        )
        .unwrap();
    };
    mk(10, HOSTILE, "S (sleeping)", 1);
    for z in 11..19 {
        mk(z, "z", "Z (zombie)", 10);
    }
    std::fs::create_dir_all(root.join("sys/kernel")).unwrap();
    std::fs::write(root.join("sys/kernel/threads-max"), "12\n").unwrap();
    std::fs::write(root.join("loadavg"), "0 0 0 1/9 9\n").unwrap();
    root
}

fn chmod_exe(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn figure(env: &Env, home: &Path, root: &Path, format: &str, extra: &[&str]) -> String {
    let out = env
        .cmd()
        .env("HEADROOM_HOME", home)
        .args(["probe", "--format", format, "--proc-root"])
        .arg(root)
        .args(extra)
        .output()
        .unwrap();
    // A figure exits 0 at any level (here critical): a menu bar shows nothing otherwise.
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The title and the parameters of one SwiftBar line, as far as these tests need them
/// (the full reader is the formatter's unit test): the title ends at the first `|`.
fn swiftbar_line(line: &str) -> (&str, &str) {
    line.split_once(" | ").unwrap_or((line, ""))
}

#[test]
fn swiftbar_figure_is_the_protocol_with_no_history_in_a_fresh_home() {
    let env = Env::new();
    let root = fake_proc(&env);
    let home = env.path("fresh");
    let out = figure(&env, &home, &root, "swiftbar", &["--no-history"]);
    assert!(!home.exists(), "--no-history creates no state directory");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(swiftbar_line(lines[0]).0, "75%", "{out}");
    assert!(
        lines[0].starts_with("75% | color=#cf222e,#f85149 sfimage=xmark.octagon.fill sfconfig="),
        "{out}"
    );
    assert_eq!(lines[1], "---", "one title line, then the menu: {out}");
    assert!(
        lines.contains(
            &format!(
                "Critical: 75.0 % of the binding limit (threads-max) | symbolize=false emojize=false {}",
                lines[0].split_once(" | ").unwrap().1.split(" symbolize").next().unwrap()
            )
            .as_str()
        ),
        "{out}"
    );
    assert!(out.contains("9 of 12 task slots used, 3 free |"), "{out}");
    assert!(out.contains("No ETA: trend off (--no-history"), "{out}");
    let top = lines
        .iter()
        .find(|l| l.starts_with("8 zombies; most held by "))
        .unwrap();
    assert_eq!(
        swiftbar_line(top),
        (
            "8 zombies; most held by a\\u{7c}b\\n--- #[fg=red]#(id)\\u{1b}[2J:fire: (pid 10, 8 zombies)",
            "symbolize=false emojize=false"
        )
    );
    assert!(!out.contains('\x1b'));
    let bin = env.headroom_path().to_str().unwrap();
    assert!(
        out.contains(&format!(
            "bash={bin} param1=reap param2=--dry-run terminal=true"
        )),
        "{out}"
    );
    assert!(out.contains("No evidence log yet"), "{out}");
    assert!(
        out.ends_with("Refresh | symbolize=false emojize=false refresh=true\n"),
        "{out}"
    );

    // With history from the first reading: gathering, and the log it wrote can be drawn.
    let out = figure(&env, &home, &root, "swiftbar", &[]);
    assert!(
        out.contains("No ETA: trend gathering readings (1 of 3"),
        "{out}"
    );
    let chart = out
        .lines()
        .find(|l| l.starts_with("Open the evidence chart | "))
        .unwrap_or_else(|| panic!("{out}"));
    let svg = home.join("evidence.svg");
    assert!(
        chart.ends_with(&format!(
            "param3={bin} param4={} terminal=false",
            svg.display()
        )),
        "{chart}"
    );
    let script = chart
        .split_once("param2='")
        .and_then(|(_, r)| r.split_once('\''))
        .unwrap()
        .0;
    // The action as SwiftBar runs it (`/bin/sh -c SCRIPT headroom SVG`), with a stand-in
    // `open` that says what it was given: the SVG is drawn, then opened.
    let stub = env.path("stub");
    std::fs::create_dir_all(&stub).unwrap();
    let opened = env.path("opened");
    std::fs::write(
        stub.join("open"),
        format!("#!/bin/sh\nprintf '%s' \"$1\" > {}\n", opened.display()),
    )
    .unwrap();
    chmod_exe(&stub.join("open"));
    let mut argv = env.as_test_user();
    argv.extend(["/bin/sh", "-c", script, bin].map(Into::into));
    argv.push(svg.clone().into());
    let o = Command::new(&argv[0])
        .args(&argv[1..])
        .env("HEADROOM_HOME", &home)
        .env("PATH", format!("{}:/usr/bin:/bin", stub.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    assert_eq!(
        std::fs::read_to_string(&opened).unwrap(),
        svg.to_str().unwrap()
    );
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(
        drawn.starts_with("<?xml") || drawn.starts_with("<svg"),
        "{drawn}"
    );
}

#[test]
fn tmux_figure_is_one_line_with_the_name_escaped() {
    let env = Env::new();
    let root = fake_proc(&env);
    let home = env.path("fresh");
    let out = figure(&env, &home, &root, "tmux", &["--no-history"]);
    assert_eq!(
        out,
        "#[fg=white,bg=red,bold] slots 75% CRIT · a|b\\n--- ##[fg=red]##(id)\\u{1b}[… 8z #[default]\n"
    );
    assert!(!home.exists());
    // With history, in the same fresh home: the first reading has no trend yet, so the same
    // line, and the history is started.
    assert_eq!(figure(&env, &home, &root, "tmux", &[]), out);
    assert!(home.is_dir());
    // Control: the same table read as JSON names the parent as it is, and exits by the
    // level (2, critical), as every probe but a figure does.
    let out = env
        .cmd()
        .env("HEADROOM_HOME", &home)
        .args(["probe", "--json", "--no-history", "--proc-root"])
        .arg(&root)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let json = String::from_utf8(out.stdout).unwrap();
    assert!(
        json.contains(r#""name":"a|b\n--- #[fg=red]#(id)\u001b[2J:fire:""#),
        "{json}"
    );
}

/// The `openat` calls under `root` of one run of `probe --format FORMAT`.
fn table_opens(env: &Env, root: &Path, format: &str) -> usize {
    let trace = env.path(&format!("{format}.trace"));
    let out = env
        .cmd_via(&[
            "strace",
            "-f",
            "-qq",
            "-e",
            "trace=open,openat,openat2",
            "-o",
            trace.to_str().unwrap(),
        ])
        .env("HEADROOM_HOME", env.path("fresh"))
        .args(["probe", "--no-history", "--format", format, "--proc-root"])
        .arg(root)
        .output()
        .unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 3), "{out:?}");
    let calls = std::fs::read_to_string(&trace).unwrap();
    let root = root.to_str().unwrap();
    calls.lines().filter(|l| l.contains(root)).count()
}

/// The figures cost what one probe costs: the same reads of the process table as `--format
/// json` (the menu's actions look up headroom's path and the evidence log, not the table).
#[test]
#[cfg_attr(not(hr_tool_strace), ignore = "needs strace")]
fn the_figures_read_the_process_table_as_often_as_one_probe() {
    crate::support::require_tool("strace");
    let env = Env::new();
    let root = fake_proc(&env);
    let json = table_opens(&env, &root, "json");
    // Control: the trace sees the table read (each of the 9 processes' files).
    assert!(json >= 9, "{json}");
    for format in ["swiftbar", "xbar", "tmux", "human"] {
        assert_eq!(table_opens(&env, &root, format), json, "{format}");
    }
}

/// A private tmux server (its own socket name, no config) and, to draw its status line, a
/// client attached from a pane of a second one, whose screen `capture-pane` reads. Both
/// are killed by socket name, never anything else.
struct Tmux<'a> {
    env: &'a Env,
    sockets: [String; 2],
}

impl Tmux<'_> {
    fn run(&self, socket: usize, args: &[&str]) -> std::process::Output {
        let mut argv = self.env.as_test_user();
        argv.extend(["tmux", "-L", &self.sockets[socket], "-f", "/dev/null"].map(Into::into));
        argv.extend(args.iter().map(Into::into));
        let o = Command::new(&argv[0])
            .args(&argv[1..])
            .env("SHELL", "/bin/sh")
            // The sockets in the test's own scratch directory, gone with it.
            .env("TMUX_TMPDIR", self.env.path(""))
            .env_remove("TMUX")
            .output()
            .unwrap();
        assert!(o.status.success(), "tmux {args:?}: {o:?}");
        o
    }
}

impl Drop for Tmux<'_> {
    fn drop(&mut self) {
        for s in 0..2 {
            let mut argv = self.env.as_test_user();
            argv.extend(["tmux", "-L", &self.sockets[s], "kill-server"].map(Into::into));
            let _ = Command::new(&argv[0])
                .args(&argv[1..])
                .env("TMUX_TMPDIR", self.env.path(""))
                .output();
        }
    }
}

#[test]
#[cfg_attr(not(hr_tool_tmux), ignore = "needs tmux")]
fn a_real_tmux_status_line_draws_the_figure_as_text() {
    crate::support::require_tool("tmux");
    let env = Env::new();
    let root = fake_proc(&env);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    let unique = format!("headroom-it-{}-{nanos}", std::process::id());
    let tmux = Tmux {
        env: &env,
        sockets: [format!("{unique}-status"), format!("{unique}-screen")],
    };
    let script = env.path("figure.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nHEADROOM_HOME={} exec {} probe --format tmux --no-history --proc-root {}\n",
            env.path("fresh").display(),
            env.headroom_path().display(),
            root.display()
        ),
    )
    .unwrap();
    chmod_exe(&script);
    // What a user writes in .tmux.conf, and beside it the same line set directly.
    let direct = figure(&env, &env.path("fresh"), &root, "tmux", &["--no-history"]);
    let status = format!("#({})|{}", script.display(), direct.trim_end());
    tmux.run(
        0,
        &[
            "new-session",
            "-d",
            "-s",
            "s",
            "-x",
            "200",
            "-y",
            "5",
            "sleep 300",
        ],
    );
    for (k, v) in [
        ("status-right-length", "200"),
        ("status-interval", "1"),
        ("status-left", ""),
        ("status-right", status.as_str()),
    ] {
        tmux.run(0, &["set", "-g", k, v]);
    }
    let attach = format!("tmux -L {} attach -t s", tmux.sockets[0]);
    tmux.run(
        1,
        &[
            "new-session",
            "-d",
            "-s",
            "o",
            "-x",
            "200",
            "-y",
            "5",
            &attach,
        ],
    );
    let shown = "slots 75% CRIT · a|b\\n--- #[fg=red]#(id)\\u{1b}[… 8z";
    let deadline = std::time::Instant::now() + crate::support::TIMEOUT;
    let screen = loop {
        let o = tmux.run(1, &["capture-pane", "-p", "-t", "o"]);
        let screen = String::from_utf8_lossy(&o.stdout).into_owned();
        if screen.matches(shown).count() == 2 {
            break screen;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the status line never showed the figure twice:\n{screen}"
        );
        // Each look is two processes: poll gently.
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let line = screen.lines().rfind(|l| l.contains(shown)).unwrap();
    assert!(
        line.trim_end().ends_with(&format!("{shown} | {shown}")),
        "{screen}"
    );
    // Styled as the level says: bold white on red (SGR 1, 37, 41).
    let o = tmux.run(1, &["capture-pane", "-p", "-e", "-t", "o"]);
    let styled = String::from_utf8_lossy(&o.stdout);
    assert!(
        styled.contains("\x1b[1m\x1b[37m\x1b[41m slots 75% CRIT"),
        "{styled:?}"
    );
    // `#(id)` in the name ran nothing: no uid=… anywhere on the screen.
    assert!(!screen.contains("uid="), "{screen}");
}
