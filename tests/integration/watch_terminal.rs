//! `watch` on a real terminal (issue 18): the status line is rewritten in place
//! (`\r\x1b[2K`, no newline) only when stdout is a terminal and colour is on — not under
//! `--color never`, `NO_COLOR`, `TERM=dumb` or `--once` — and `CLICOLOR_FORCE` is honoured
//! as `output::colour_enabled` ranks it (it beats `NO_COLOR`; `0` forces nothing), but it
//! cannot make a pipe a terminal. The terminal is a pty from `script` (util-linux), ended
//! with a real Ctrl-C typed into it.
//!
//! Nothing here can act: the table is a made-up `/proc` (`--proc-root`, on which no cleanup
//! or guard acts), with `--no-auto-reap`, `--no-hangs` and an empty config besides.

use std::io::{Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Instant;

use crate::support::{Env, TIMEOUT, require_tool, spawn_retrying};

/// What the rewrite of the status line starts with (crates/headroom-commands/src/commands/watch/mod.rs `emit`).
const REWRITE: &str = "\r\x1b[2K";
/// Readings to wait for before ending a running guard: enough to see lines follow lines.
const READINGS: usize = 3;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Stdout {
    /// A pty from `script`, ended by typing Ctrl-C.
    Terminal,
    /// A pipe read by the test, ended by SIGINT.
    Pipe,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Expect {
    /// Every reading rewrites the one status line in place.
    Rewritten,
    /// Every reading is a plain line of its own, without any terminal control.
    Plain,
}

struct Case {
    name: &'static str,
    stdout: Stdout,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    expect: Expect,
}

const CASES: &[Case] = &[
    Case {
        name: "a terminal with colour on by default",
        stdout: Stdout::Terminal,
        args: &[],
        env: &[],
        expect: Expect::Rewritten,
    },
    Case {
        name: "--color never",
        stdout: Stdout::Terminal,
        args: &["--color", "never"],
        env: &[],
        expect: Expect::Plain,
    },
    Case {
        name: "NO_COLOR",
        stdout: Stdout::Terminal,
        args: &[],
        env: &[("NO_COLOR", "1")],
        expect: Expect::Plain,
    },
    Case {
        name: "TERM=dumb",
        stdout: Stdout::Terminal,
        args: &[],
        env: &[("TERM", "dumb")],
        expect: Expect::Plain,
    },
    Case {
        name: "--once",
        stdout: Stdout::Terminal,
        args: &["--once"],
        env: &[],
        expect: Expect::Plain,
    },
    Case {
        name: "CLICOLOR_FORCE beats NO_COLOR on a terminal",
        stdout: Stdout::Terminal,
        args: &[],
        env: &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")],
        expect: Expect::Rewritten,
    },
    Case {
        name: "CLICOLOR_FORCE=0 forces nothing",
        stdout: Stdout::Terminal,
        args: &[],
        env: &[("CLICOLOR_FORCE", "0"), ("NO_COLOR", "1")],
        expect: Expect::Plain,
    },
    Case {
        name: "--color always beats NO_COLOR on a terminal",
        stdout: Stdout::Terminal,
        args: &["--color", "always"],
        env: &[("NO_COLOR", "1")],
        expect: Expect::Rewritten,
    },
    Case {
        // Colour is forced on, but a pipe cannot be rewritten: lines stay lines.
        name: "CLICOLOR_FORCE with stdout piped",
        stdout: Stdout::Pipe,
        args: &[],
        env: &[("CLICOLOR_FORCE", "1")],
        expect: Expect::Plain,
    },
];

/// A one-process made-up `/proc` owned by the test user (as in watch.rs).
fn fake_proc(env: &Env) -> std::path::PathBuf {
    let fake = env.path("proc");
    let uid = env.uid;
    std::fs::create_dir_all(fake.join("10")).unwrap();
    std::fs::write(
        fake.join("10/status"),
        format!(
            "Name:\tx\nState:\tS (sleeping)\nPPid:\t1\nUid:\t{uid}\t{uid}\t{uid}\t{uid}\nThreads:\t1\n"
        ),
    )
    .unwrap();
    std::fs::create_dir_all(fake.join("sys/kernel")).unwrap();
    std::fs::write(fake.join("sys/kernel/threads-max"), "100\n").unwrap();
    std::fs::write(fake.join("loadavg"), "0 0 0 1/1 1\n").unwrap();
    fake
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// A running `watch` whose output comes back in chunks; ended (and waited for) on drop.
struct Running {
    child: Child,
    /// `script`'s stdin, the keyboard of the pty; `None` for a pipe.
    keyboard: Option<ChildStdin>,
    chunks: Receiver<Vec<u8>>,
    out: Vec<u8>,
}

impl Running {
    fn start(env: &Env, case: &Case) -> Self {
        let fake = fake_proc(env);
        let config = env.path("empty.toml");
        std::fs::write(&config, "").unwrap();
        let mut argv: Vec<String> = env
            .as_test_user()
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        argv.push(env.headroom_path().to_str().unwrap().to_string());
        argv.extend(["--config", config.to_str().unwrap()].map(String::from));
        argv.extend(
            [
                "watch",
                "--interval",
                "100ms",
                "--no-auto-reap",
                "--no-hangs",
                "--proc-root",
                fake.to_str().unwrap(),
            ]
            .map(String::from),
        );
        argv.extend(case.args.iter().map(|a| a.to_string()));
        let mut c = match case.stdout {
            Stdout::Terminal => {
                // `exec`: headroom is the pty's foreground process, so Ctrl-C reaches it and
                // `script -e` returns its exit code.
                let line: Vec<String> = argv.iter().map(|a| sh_quote(a)).collect();
                let mut c = Command::new("script");
                c.args(["-qfec", &format!("exec {}", line.join(" ")), "/dev/null"])
                    .env("SHELL", "/bin/sh");
                c
            }
            Stdout::Pipe => {
                let mut c = Command::new(&argv[0]);
                c.args(&argv[1..]);
                c
            }
        };
        c.env("HEADROOM_HOME", &env.home)
            .env("TERM", "xterm-256color")
            .env_remove("NO_COLOR")
            .env_remove("CLICOLOR_FORCE")
            .env_remove("CLICOLOR");
        for (k, v) in case.env {
            c.env(k, v);
        }
        let pty = case.stdout == Stdout::Terminal;
        c.stdin(if pty { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = spawn_retrying(&mut c);
        let keyboard = child.stdin.take();
        let mut stdout = child.stdout.take().unwrap();
        let (tx, chunks) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stdout.read(&mut buf) {
                if tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            keyboard,
            chunks,
            out: Vec::new(),
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.out).into_owned()
    }

    fn readings(&self) -> usize {
        self.text().matches(" zombies ").count()
    }

    /// Read until `done` holds or the output ends; false if TIMEOUT passed first.
    fn read_until(&mut self, done: impl Fn(&Self) -> bool) -> bool {
        let deadline = Instant::now() + TIMEOUT;
        while !done(self) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => self.out.extend(chunk),
                Err(RecvTimeoutError::Disconnected) => return true,
                Err(RecvTimeoutError::Timeout) => return false,
            }
        }
        true
    }

    /// End it as a user would (Ctrl-C on the terminal, SIGINT on a pipe's writer), read
    /// the rest of its output and return its exit code.
    fn interrupt(&mut self) -> Option<i32> {
        match self.keyboard.as_mut() {
            Some(k) => k.write_all(b"\x03").and_then(|()| k.flush()).unwrap(),
            None => {
                let pid = i32::try_from(self.child.id()).unwrap();
                #[allow(clippy::disallowed_methods)]
                // SAFETY: kill has no memory-safety preconditions; pid is this test's own
                // child (setpriv exec'd headroom in it), not yet waited for.
                let rc = unsafe { libc::kill(pid, libc::SIGINT) };
                assert_eq!(rc, 0, "kill {pid} SIGINT");
            }
        }
        self.finish()
    }

    /// The rest of the output and the exit code, once the output has ended.
    fn finish(&mut self) -> Option<i32> {
        assert!(
            self.read_until(|_| false),
            "no end within {TIMEOUT:?}: {:?}",
            self.text()
        );
        self.child.wait().unwrap().code()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SIGKILL to our own child (`script` or headroom); with `script` gone the pty
            // hangs up and headroom stops on SIGHUP.
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Run one case and check what its stdout shows; panics naming the case.
fn check(case: &Case) {
    let env = Env::new();
    let mut w = Running::start(&env, case);
    let once = case.args.contains(&"--once");
    let code = if once {
        w.finish()
    } else {
        let enough = w.read_until(|w| w.readings() >= READINGS);
        assert!(
            enough,
            "{}: no {READINGS} readings within {TIMEOUT:?}: {:?}",
            case.name,
            w.text()
        );
        w.interrupt()
    };
    let text = w.text();
    let readings = w.readings();
    // `--once` is probe's code (normal: 0); SIGINT after the round in flight is 130.
    assert_eq!(
        code,
        Some(if once { 0 } else { 130 }),
        "{}: {text:?}",
        case.name
    );
    assert!(
        text.contains("rounds, 0 cleanups") || text.contains("1 round, 0 cleanups"),
        "{}: the summary closes it: {text:?}",
        case.name
    );
    if once {
        assert_eq!(readings, 1, "{}: {text:?}", case.name);
    } else {
        assert!(readings >= READINGS, "{}: {text:?}", case.name);
    }
    match case.expect {
        Expect::Rewritten => {
            let parts: Vec<&str> = text.split(REWRITE).collect();
            // Every reading, and nothing else, is written over the line before it...
            assert_eq!(parts.len() - 1, readings, "{}: {text:?}", case.name);
            assert!(
                parts[1..].iter().all(|p| p.contains(" zombies ")),
                "{}: {text:?}",
                case.name
            );
            // ...with no newline between readings (the last is closed by the summary).
            assert!(
                parts[1..parts.len() - 1].iter().all(|p| !p.contains('\n')),
                "{}: a reading ended its line: {text:?}",
                case.name
            );
        }
        Expect::Plain => {
            // A terminal shows `\n` as `\r\n` (onlcr); past that, no control at all.
            let plain = text.replace("\r\n", "\n");
            assert!(
                !plain.contains('\r') && !plain.contains('\x1b'),
                "{}: terminal control in plain output: {text:?}",
                case.name
            );
            let lines = plain.lines().filter(|l| l.contains(" zombies ")).count();
            assert_eq!(
                lines, readings,
                "{}: one line a reading: {text:?}",
                case.name
            );
        }
    }
}

#[test]
#[cfg_attr(not(hr_tool_script), ignore = "needs script (util-linux)")]
fn on_a_terminal_the_status_line_is_rewritten_only_with_colour_on() {
    require_tool("script");
    // The cases are independent (an Env each: their own HEADROOM_HOME and watch lock), so
    // they run side by side.
    std::thread::scope(|s| {
        for case in CASES {
            s.spawn(move || check(case));
        }
    });
}
