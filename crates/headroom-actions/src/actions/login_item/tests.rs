//! The login-item sequences against a fake `launchctl`/`systemctl`, and the generated files
//! read back by real parsers.

use std::cell::RefCell;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Output};
use std::time::Duration;

use std::path::{Path, PathBuf};

use super::*;

/// Answers each command line with a canned exit code and stdout; records the calls.
#[derive(Default)]
pub(super) struct FakeExec {
    pub(super) answers: Vec<(&'static str, i32, &'static str)>,
    pub(super) calls: RefCell<Vec<String>>,
}

impl Exec for FakeExec {
    fn run(&self, program: &str, args: &[&str]) -> std::io::Result<Output> {
        let line = format!("{program} {}", args.join(" "));
        self.calls.borrow_mut().push(line.clone());
        let (code, out) = self
            .answers
            .iter()
            .find(|(prefix, _, _)| line.starts_with(prefix))
            .map_or((1, ""), |(_, c, o)| (*c, *o));
        Ok(Output {
            status: ExitStatus::from_raw(code << 8),
            stdout: out.as_bytes().to_vec(),
            stderr: vec![],
        })
    }

    /// No real sleep: `register` waits out `BOOTOUT_WAIT` for an agent this fake always
    /// reports loaded, and the budget is counted by the backoff, not by a clock (20 s of
    /// the library's test run, BENCHMARKS.md "Time to a green test run").
    fn pause(&self, _: Duration) {}
}

pub(super) fn exe(dir: &Path) -> PathBuf {
    let p = dir.join("bin with space/headroom");
    std::fs::create_dir_all(p.parent().unwrap_or(dir)).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&p, "#!/bin/sh\n").unwrap_or_else(|e| panic!("{e}"));
    p
}

#[test]
fn the_launch_agent_plist_parses_back_with_every_key() {
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let program = exe(d.path());
    let fake = FakeExec {
        answers: vec![("launchctl bootstrap", 0, "")],
        ..Default::default()
    };
    let l = Launchd {
        exec: &fake,
        uid: 501,
        agents_dir: d.path().join("LaunchAgents"),
    };
    l.register(&program, &d.path().join("state/watch.log"))
        .unwrap_or_else(|e| panic!("{e:#}"));
    let v = plist::Value::from_file(l.plist_path()).unwrap_or_else(|e| panic!("{e}"));
    let dict = v.as_dictionary().unwrap_or_else(|| panic!("not a dict"));
    assert_eq!(dict.get("Label").and_then(|x| x.as_string()), Some(LABEL));
    let args: Vec<&str> = dict["ProgramArguments"]
        .as_array()
        .unwrap_or_else(|| panic!())
        .iter()
        .filter_map(|x| x.as_string())
        .collect();
    assert_eq!(args, vec![program.to_str().unwrap_or_default(), "watch"]);
    assert!(Path::new(args[0]).is_absolute());
    assert_eq!(
        dict.get("RunAtLoad").and_then(|x| x.as_boolean()),
        Some(true)
    );
    // Restarted on a non-zero exit only: a guard that found another service's guard
    // exits 0 and stays stopped (#27 item 7).
    let keep = dict["KeepAlive"]
        .as_dictionary()
        .unwrap_or_else(|| panic!("KeepAlive is a dictionary"));
    assert_eq!(keep.len(), 1);
    assert_eq!(
        keep.get("SuccessfulExit").and_then(|x| x.as_boolean()),
        Some(false)
    );
    // Not launchd's most throttled class (#27 item 5).
    assert_eq!(
        dict.get("ProcessType").and_then(|x| x.as_string()),
        Some("Interactive")
    );
    let env = dict["EnvironmentVariables"]
        .as_dictionary()
        .unwrap_or_else(|| panic!("EnvironmentVariables is a dictionary"));
    assert_eq!(
        env.get(SERVICE_ENV).and_then(|x| x.as_string()),
        Some(LABEL)
    );
    assert!(
        dict.get("StandardErrorPath")
            .and_then(|x| x.as_string())
            .is_some_and(|p| p.ends_with("state/watch.log"))
    );
    assert_eq!(check_plist(&l.plist_path()), Ok(()));
    let calls = fake.calls.borrow();
    assert_eq!(calls[0], format!("launchctl bootout gui/501/{LABEL}"));
    assert_eq!(
        calls[1],
        format!("launchctl bootstrap gui/501 {}", l.plist_path().display())
    );
}

#[test]
fn launchd_status_is_read_back_with_the_raw_state() {
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let program = exe(d.path());
    let running =
        "gui/501/dev.headroom.watch = {\n\tactive count = 1\n\tstate = running\n\tpid = 4242\n}\n";
    let fake = FakeExec {
        answers: vec![
            ("launchctl print", 0, running),
            ("launchctl bootstrap", 0, ""),
        ],
        ..Default::default()
    };
    let l = Launchd {
        exec: &fake,
        uid: 501,
        agents_dir: d.path().to_path_buf(),
    };
    let none = l.status();
    assert!(!none.registered && !none.effective);
    l.register(&program, &d.path().join("w.log"))
        .unwrap_or_else(|e| panic!("{e:#}"));
    let s = l.status();
    assert!(s.registered && s.valid && s.loaded && s.effective, "{s:?}");
    assert_eq!(s.running_pid, Some(4242));
    assert_eq!(s.raw, "launchctl print exit=0 state=running");
    // Registered but not loaded (113: not found in the domain) is not effective.
    let gone = FakeExec {
        answers: vec![("launchctl print", 113, "Could not find service")],
        ..Default::default()
    };
    let s = Launchd {
        exec: &gone,
        uid: 501,
        agents_dir: d.path().to_path_buf(),
    }
    .status();
    assert!(s.registered && !s.loaded && !s.effective);
    assert!(s.raw.contains("exit=113"));
}

#[test]
fn a_hand_edited_garbage_plist_is_reported_not_trusted() {
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fake = FakeExec {
        answers: vec![("launchctl print", 0, "state = running\n")],
        ..Default::default()
    };
    let l = Launchd {
        exec: &fake,
        uid: 501,
        agents_dir: d.path().to_path_buf(),
    };
    std::fs::write(l.plist_path(), "<plist><dict><key>Label</key>oops")
        .unwrap_or_else(|e| panic!("{e}"));
    let s = l.status();
    assert!(s.registered && !s.valid && !s.effective);
    assert!(
        s.problem
            .as_deref()
            .is_some_and(|p| p.contains("not a valid plist")),
        "{s:?}"
    );
}

#[test]
fn a_registered_program_that_is_gone_or_in_a_keg_or_an_older_agent_asks_for_register_again() {
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fake = FakeExec {
        answers: vec![("launchctl", 0, "state = running\n")],
        ..Default::default()
    };
    let l = Launchd {
        exec: &fake,
        uid: 501,
        agents_dir: d.path().join("LaunchAgents"),
    };
    let log = d.path().join("watch.log");
    // Control: what register writes, for a program that exists, is trusted.
    let program = exe(d.path());
    l.register(&program, &log)
        .unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(l.status().problem, None);
    // The program deleted (`brew upgrade` removed the keg it was in).
    std::fs::remove_file(&program).unwrap_or_else(|e| panic!("{e}"));
    let s = l.status();
    assert!(!s.valid && !s.effective, "{s:?}");
    assert_eq!(
        s.problem.as_deref(),
        Some(
            format!(
                "the registered program `{}` is gone: run `headroom login-item register` again",
                program.display()
            )
            .as_str()
        )
    );
    // A program that exists, inside a keg: the next upgrade deletes it.
    let keg = d.path().join("brew/Cellar/headroom/0.1.0/bin/headroom");
    std::fs::create_dir_all(keg.parent().unwrap_or(d.path())).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&keg, "#!/bin/sh\n").unwrap_or_else(|e| panic!("{e}"));
    l.register(&keg, &log).unwrap_or_else(|e| panic!("{e:#}"));
    let p = l.status().problem.unwrap_or_default();
    assert!(
        p.contains("inside Homebrew's keg for headroom 0.1.0") && p.contains("register` again"),
        "{p}"
    );
    // An agent an older headroom wrote: KeepAlive = true, Background, no environment.
    let program = exe(d.path());
    let mut old = launch_agent(&program, &log);
    if let Some(dict) = old.as_dictionary_mut() {
        dict.insert("KeepAlive".into(), true.into());
        dict.insert("ProcessType".into(), "Background".into());
        dict.remove("EnvironmentVariables");
    }
    old.to_file_xml(l.plist_path())
        .unwrap_or_else(|e| panic!("{e}"));
    let p = l.status().problem.unwrap_or_default();
    assert_eq!(
        p,
        "it differs from what this headroom writes (`KeepAlive`, `ProcessType`, \
         `EnvironmentVariables`): run `headroom login-item register` again"
    );
}

#[test]
fn a_brew_service_is_detected() {
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fake = FakeExec::default();
    let l = Launchd {
        exec: &fake,
        uid: 501,
        agents_dir: d.path().to_path_buf(),
    };
    assert!(!l.brew_service());
    std::fs::write(d.path().join(format!("{BREW_LABEL}.plist")), "x")
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(l.brew_service());
    let loaded = FakeExec {
        answers: vec![("launchctl print gui/501/homebrew.mxcl.headroom", 0, "")],
        ..Default::default()
    };
    let e = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    assert!(
        Launchd {
            exec: &loaded,
            uid: 501,
            agents_dir: e.path().to_path_buf()
        }
        .brew_service()
    );
}

/// A stand-in `launchctl` that behaves like the real one after a bootout of a loaded agent:
/// the job stays in the domain for `linger` of (virtual) time — `print` finds it, and a
/// `bootstrap` exits 5 until `linger + eio_after_gone` has passed.
struct SlowLaunchctl {
    loaded: bool,
    linger: Duration,
    eio_after_gone: Duration,
    /// `print` keeps finding the job whatever the time (a launchctl whose print lies).
    print_never_gone: bool,
    now: std::cell::Cell<Duration>,
    booted_out_at: std::cell::Cell<Option<Duration>>,
    calls: RefCell<Vec<String>>,
}

impl SlowLaunchctl {
    fn new(loaded: bool, linger_ms: u64, eio_after_gone_ms: u64) -> Self {
        Self {
            loaded,
            linger: Duration::from_millis(linger_ms),
            eio_after_gone: Duration::from_millis(eio_after_gone_ms),
            print_never_gone: false,
            now: Default::default(),
            booted_out_at: Default::default(),
            calls: Default::default(),
        }
    }

    fn count(&self, prefix: &str) -> usize {
        self.calls
            .borrow()
            .iter()
            .filter(|c| c.starts_with(prefix))
            .count()
    }
}

impl Exec for SlowLaunchctl {
    fn run(&self, program: &str, args: &[&str]) -> std::io::Result<Output> {
        assert_eq!(program, "launchctl");
        self.calls.borrow_mut().push(format!(
            "{program} {} @{}ms",
            args.join(" "),
            self.now.get().as_millis()
        ));
        let now = self.now.get();
        let leaving = self.booted_out_at.get().map(|t| now - t);
        let code = match args.first().copied() {
            Some("bootout") if self.loaded && leaving.is_none() => {
                self.booted_out_at.set(Some(now));
                0
            }
            Some("bootout") => 3,
            Some("print") => match leaving {
                Some(d) if d >= self.linger && !self.print_never_gone => 113,
                Some(_) => 0,
                None if self.loaded => 0,
                None => 113,
            },
            Some("bootstrap") => match leaving {
                Some(d) if d < self.linger + self.eio_after_gone => 5,
                None if self.loaded => 5,
                _ => 0,
            },
            _ => 64,
        };
        Ok(Output {
            status: ExitStatus::from_raw(code << 8),
            stdout: vec![],
            stderr: if code == 5 {
                b"Bootstrap failed: 5: Input/output error".to_vec()
            } else {
                vec![]
            },
        })
    }

    fn pause(&self, d: Duration) {
        self.now.set(self.now.get() + d);
    }
}

fn register_with(fake: &SlowLaunchctl) -> Result<()> {
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let program = exe(d.path());
    Launchd {
        exec: fake,
        uid: 501,
        agents_dir: d.path().join("LaunchAgents"),
    }
    .register(&program, &d.path().join("w.log"))
}

#[test]
fn register_over_a_loaded_agent_waits_for_bootout_to_finish() {
    let fake = SlowLaunchctl::new(true, 2_500, 0);
    register_with(&fake).unwrap_or_else(|e| panic!("{e:#}"));
    // It polled print until 113, then bootstrapped once, after the job had left.
    assert!(fake.count("launchctl print") >= 2, "{:?}", fake.calls);
    assert_eq!(fake.count("launchctl bootstrap"), 1, "{:?}", fake.calls);
    let t = fake.now.get();
    assert!(
        t >= Duration::from_millis(2_500) && t < BOOTOUT_WAIT,
        "{t:?}"
    );
}

#[test]
fn a_bootstrap_that_still_meets_the_old_job_is_retried_on_exit_5() {
    // print already says gone, but launchd still answers 5 for 1.2 s.
    let fake = SlowLaunchctl::new(true, 0, 1_200);
    register_with(&fake).unwrap_or_else(|e| panic!("{e:#}"));
    assert!(fake.count("launchctl bootstrap") >= 2, "{:?}", fake.calls);
    assert!(fake.now.get() >= Duration::from_millis(1_200));
}

#[test]
fn a_job_that_never_leaves_fails_after_the_wait_naming_exit_5() {
    let mut fake = SlowLaunchctl::new(true, 60_000, 0);
    fake.print_never_gone = true;
    let e = register_with(&fake).err().map(|e| format!("{e:#}"));
    let e = e.unwrap_or_else(|| panic!("registered over a job that never left"));
    assert!(e.contains("exit 5") && e.contains("10 s"), "{e}");
    assert_eq!(fake.now.get(), BOOTOUT_WAIT);
}

#[test]
fn nothing_loaded_means_no_waiting_and_other_failures_are_not_retried() {
    let fake = SlowLaunchctl::new(false, 0, 0);
    register_with(&fake).unwrap_or_else(|e| panic!("{e:#}"));
    assert_eq!(fake.count("launchctl print"), 0, "{:?}", fake.calls);
    assert_eq!(fake.now.get(), Duration::ZERO);
    // A bootstrap failing with anything but 5 is reported at once.
    let fails = FakeExec {
        answers: vec![
            ("launchctl bootout", 3, ""),
            ("launchctl bootstrap", 37, ""),
        ],
        ..Default::default()
    };
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let e = Launchd {
        exec: &fails,
        uid: 501,
        agents_dir: d.path().to_path_buf(),
    }
    .register(&exe(d.path()), &d.path().join("w.log"))
    .err()
    .map(|e| format!("{e:#}"))
    .unwrap_or_default();
    assert!(e.contains("exit 37"), "{e}");
    assert_eq!(fails.calls.borrow().len(), 2);
}
