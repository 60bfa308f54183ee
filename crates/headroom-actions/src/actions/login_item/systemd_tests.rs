//! The systemd user unit against a fake `systemctl`, and the unit read back by
//! `systemd-analyze verify` where it is installed.

use std::path::{Path, PathBuf};

use super::systemd::{unit_problem, unit_program};
use super::tests::{FakeExec, exe};
use super::*;

#[test]
fn a_unit_with_a_gone_program_or_written_by_an_older_headroom_asks_for_register_again() {
    let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let program = exe(d.path());
    let unit = systemd_unit(&program);
    assert_eq!(unit_program(&unit).as_deref(), program.to_str());
    let quoted = Path::new("/a \"b\\c/headroom");
    assert_eq!(
        unit_program(&systemd_unit(quoted)).as_deref(),
        quoted.to_str()
    );
    assert_eq!(unit_problem(Path::new("u"), &unit), None);
    // The unit before #27: no HEADROOM_SERVICE.
    let older = unit.replace(&format!("Environment={SERVICE_ENV}={UNIT}\n"), "");
    assert!(
        unit_problem(Path::new("u"), &older).is_some_and(|p| p.contains("differs")),
        "{older}"
    );
    std::fs::remove_file(&program).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        unit_problem(Path::new("u"), &unit)
            .is_some_and(|p| p.contains("is gone: run `headroom login-item register` again"))
    );
    assert!(
        unit_problem(Path::new("u"), "[Service]\nExecStart=/bin/true\n")
            .is_some_and(|p| p.contains("does not run `headroom watch`"))
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
    assert!(unit.contains("\nRestart=on-failure\n"), "{unit}");
    assert!(
        unit.contains(&format!("\nEnvironment={SERVICE_ENV}={UNIT}\n")),
        "{unit}"
    );
    assert!(!s.brew_service());
    std::fs::write(s.units_dir.join(BREW_UNIT), "").unwrap_or_else(|e| panic!("{e}"));
    assert!(s.brew_service());
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
#[cfg_attr(not(hr_tool_systemd_analyze), ignore = "needs systemd-analyze")]
fn the_unit_passes_systemd_analyze_verify_where_present() {
    let probe = std::process::Command::new("systemd-analyze")
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("systemd-analyze is required here (build.rs found it): {e}"));
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
