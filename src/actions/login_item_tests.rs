//! The login-item sequences against a fake `launchctl`/`systemctl`, and the generated files
//! read back by real parsers.

use std::cell::RefCell;
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Output};

use super::*;

/// Answers each command line with a canned exit code and stdout; records the calls.
#[derive(Default)]
struct FakeExec {
    answers: Vec<(&'static str, i32, &'static str)>,
    calls: RefCell<Vec<String>>,
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
}

fn exe(dir: &Path) -> PathBuf {
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
    assert_eq!(
        dict.get("KeepAlive").and_then(|x| x.as_boolean()),
        Some(true)
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

#[test]
fn systemd_register_status_and_unregister() {
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let program = exe(d.path());
    let show = "LoadState=loaded\nActiveState=active\nSubState=running\nMainPID=777\nUnitFileState=enabled\n";
    let fake = FakeExec {
        answers: vec![
            ("systemctl --user show ", 0, show),
            ("systemctl --user", 0, ""),
        ],
        ..Default::default()
    };
    let s = Systemd {
        exec: &fake,
        units_dir: d.path().join("systemd/user"),
    };
    assert!(s.available());
    s.register(&program).unwrap_or_else(|e| panic!("{e:#}"));
    let unit = std::fs::read_to_string(s.unit_path()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        unit.contains(&format!("ExecStart=\"{}\" watch\n", program.display())),
        "{unit}"
    );
    assert!(unit.contains("WantedBy=default.target"));
    let st = s.status();
    assert!(
        st.registered && st.valid && st.loaded && st.effective,
        "{st:?}"
    );
    assert_eq!(st.running_pid, Some(777));
    assert_eq!(
        st.raw,
        "LoadState=loaded ActiveState=active SubState=running UnitFileState=enabled MainPID=777"
    );
    assert!(s.unregister().unwrap_or_else(|e| panic!("{e:#}")));
    assert!(!s.unit_path().exists());
    let calls = fake.calls.borrow();
    assert!(calls.contains(&"systemctl --user daemon-reload".to_string()));
    assert!(calls.contains(&format!("systemctl --user enable --now {UNIT}")));
    assert!(calls.contains(&format!("systemctl --user disable --now {UNIT}")));
}

#[test]
fn without_a_user_manager_systemd_is_unavailable() {
    let fake = FakeExec::default();
    let s = Systemd {
        exec: &fake,
        units_dir: PathBuf::from("/nonexistent"),
    };
    assert!(!s.available());
    assert_eq!(
        crontab_line(
            Path::new("/opt/homebrew/bin/headroom"),
            Path::new("/home/u/.local/state/headroom/watch.log")
        ),
        "@reboot /opt/homebrew/bin/headroom watch >> /home/u/.local/state/headroom/watch.log 2>&1"
    );
}

#[test]
fn the_unit_passes_systemd_analyze_verify_where_present() {
    let Ok(probe) = std::process::Command::new("systemd-analyze")
        .arg("--version")
        .output()
    else {
        // Not installed here: the text assertions above still hold. `.ci/run` installs it.
        assert!(
            std::env::var_os("HEADROOM_REQUIRE_TOOLS").is_none(),
            "systemd-analyze is required here"
        );
        return;
    };
    assert!(probe.status.success());
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let program = d.path().join("headroom");
    std::fs::copy("/bin/true", &program).unwrap_or_else(|e| panic!("{e}"));
    let unit = d.path().join(UNIT);
    std::fs::write(&unit, systemd_unit(&program)).unwrap_or_else(|e| panic!("{e}"));
    let o = std::process::Command::new("systemd-analyze")
        .args(["verify", "--man=no"])
        .arg(&unit)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    // --man=no: the Documentation= page is installed by the formula, not on this machine.
    assert!(o.status.success(), "{text}");
}
