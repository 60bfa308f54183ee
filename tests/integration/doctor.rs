//! `doctor` against real processes (Linux) and against a stand-in `ps` that lies.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::schema;
use crate::support::Env;

/// `doctor --json` as the test user with `HOME` and the state directory in the test's own
/// home (mode 0700, as headroom creates it), and `path_prefix` before `PATH`.
fn doctor(env: &Env, path_prefix: Option<&Path>) -> (schema::Doctor, i32, String) {
    doctor_with(env, path_prefix, &[])
}

/// A PATH of one directory with a link to every program on this PATH but `tool` (the
/// first of each name, as a lookup would find it).
#[cfg(target_os = "linux")]
fn path_without(env: &Env, tool: &str) -> String {
    let dir = env.path(&format!("path-without-{tool}"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    for d in std::env::split_paths(&path) {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let link = dir.join(e.file_name());
            if e.file_name() != tool && std::fs::symlink_metadata(&link).is_err() {
                std::os::unix::fs::symlink(e.path(), &link).unwrap();
            }
        }
    }
    assert!(!dir.join(tool).exists() && dir.join("sh").exists());
    dir.to_str().unwrap().to_string()
}

/// `doctor` as above, with environment variables set (Some) or removed (None).
fn doctor_with(
    env: &Env,
    path_prefix: Option<&Path>,
    vars: &[(&str, Option<&str>)],
) -> (schema::Doctor, i32, String) {
    std::fs::set_permissions(&env.home, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut c = env.cmd();
    c.args(["doctor", "--json"]).env("HOME", &env.home);
    if let Some(p) = path_prefix {
        let path = std::env::var("PATH").unwrap_or_default();
        c.env("PATH", format!("{}:{path}", p.display()));
    }
    for (k, v) in vars {
        match v {
            Some(v) => c.env(k, v),
            None => c.env_remove(k),
        };
    }
    let out = c.output().unwrap();
    let code = out.status.code().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let report: schema::Doctor = schema::read_or(&out.stdout, &stderr);
    (report, code, stderr)
}

fn check<'a>(r: &'a schema::Doctor, name: &str) -> &'a schema::DoctorCheck {
    r.checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no `{name}` check in {:?}", r.checks))
}

#[cfg(target_os = "linux")]
#[test]
fn doctor_agrees_with_ps_and_the_kernel_on_real_processes() {
    let env = Env::new();
    let leaker = env.named_fixture("leak-doctor");
    let mut tree = env.spawn(&leaker, &["leak", "--zombies", "5"]);
    tree.ready();
    let (r, code, stderr) = doctor(&env, None);
    assert_eq!(code, 0, "{r:?}\n{stderr}");
    assert_eq!(r.schema, "headroom.doctor/1");
    assert_eq!(r.uid, env.uid);
    assert_eq!(r.ok + r.mismatches + r.skipped, r.checks.len());
    assert_eq!(r.mismatches, 0);
    let must_be_ok = [
        "processes",
        "zombies",
        "ceiling.threads-max",
        "ceiling.pid-max",
        "ceiling.cgroup-pids",
        "child.cpu",
        "child.footprint",
        "state-dir",
    ];
    for name in must_be_ok {
        let c = check(&r, name);
        assert_eq!(c.outcome, "ok", "{c:?}");
        assert!(c.headroom.is_some() && c.system.is_some(), "{c:?}");
    }
    if crate::support::has_tool("bash") {
        assert_eq!(check(&r, "ceiling.rlimit-nproc").outcome, "ok");
    }
    if env.private {
        // The uid is the test's alone: exactly the fixture's zombies, and the fixture, its
        // zombies and doctor itself.
        assert_eq!(check(&r, "zombies").headroom.as_deref(), Some("5"));
        assert_eq!(check(&r, "processes").headroom.as_deref(), Some("7"));
    }
    for c in r.checks.iter().filter(|c| c.outcome == "skipped") {
        assert!(c.note.as_deref().is_some_and(|n| !n.is_empty()), "{c:?}");
    }
    assert_eq!(check(&r, "window-server").outcome, "skipped");
}

/// A `ps` that lies about everything doctor asks it.
fn lying_ps(env: &Env) -> std::path::PathBuf {
    let dir = env.dir.path().join("lying-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in\n  *ruid=,stat=*) i=0; while [ $i -lt 40 ]; do echo \"{uid} Z\"; \
         i=$((i+1)); done; echo \"{uid} S\" ;;\n  *time=,rss=*) echo '01:00:00 1' ;;\n  *) exit 1 ;;\nesac\n",
        uid = env.uid
    );
    let ps = dir.join("ps");
    std::fs::write(&ps, script).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&ps, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

#[test]
fn a_lying_ps_is_reported_as_a_mismatch_with_both_values() {
    let env = Env::new();
    let (r, code, stderr) = doctor(&env, Some(&lying_ps(&env)));
    assert_eq!(code, 1, "{r:?}\n{stderr}");
    for name in ["processes", "zombies", "child.cpu", "child.footprint"] {
        let c = check(&r, name);
        assert_eq!(c.outcome, "mismatch", "{c:?}");
        assert!(c.headroom.is_some() && c.system.is_some(), "{c:?}");
    }
    assert!(
        check(&r, "zombies")
            .system
            .as_deref()
            .unwrap()
            .starts_with("40")
    );
    assert!(r.mismatches >= 4);
    // The human form says the same, with both values on the line.
    let out = env
        .cmd()
        .arg("doctor")
        .env("HOME", &env.home)
        .env(
            "PATH",
            format!(
                "{}:{}",
                lying_ps(&env).display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("zombies"))
        .unwrap();
    assert!(
        line.contains("mismatch") && line.contains("headroom") && line.contains("40"),
        "{text}"
    );
}

#[test]
fn a_state_directory_others_can_enter_is_a_mismatch() {
    let env = Env::new();
    let mut c = env.cmd();
    std::fs::set_permissions(&env.home, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = c
        .args(["doctor", "--json"])
        .env("HOME", &env.home)
        .output()
        .unwrap();
    let r: schema::Doctor = schema::read(&out.stdout);
    let s = check(&r, "state-dir");
    assert_eq!(s.outcome, "mismatch", "{s:?}");
    assert!(s.system.as_deref().unwrap().contains("0755"), "{s:?}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn doctor_says_it_is_a_diagnostic_and_refuses_a_snapshot() {
    let env = Env::new();
    let out = env.cmd().args(["doctor", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("diagnostic") && help.contains("at the wall"),
        "{help}"
    );
    assert!(!help.contains("burn-child"), "{help}");
    let snap = env.path("s.json");
    std::fs::write(&snap, "{}").unwrap();
    let out = env
        .cmd()
        .args(["doctor", "--snapshot"])
        .arg(&snap)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    // `--snapshot` is offered only by the commands that replay one (issue 18).
    assert!(String::from_utf8_lossy(&out.stderr).contains("unexpected argument `--snapshot`"));
}

/// Stand-ins for the notification helper (which must never run: doctor posts nothing) and
/// for `dbus-send`, answering as `$OWNER` and `$ACTIVATABLE` say.
#[cfg(target_os = "linux")]
fn notify_stand_ins(env: &Env) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = env.dir.path().join("notify-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let posted = env.dir.path().join("work").join("posted");
    let scripts = [
        (
            "notify-send",
            format!("#!/bin/sh\necho \"$*\" >> '{}'\n", posted.display()),
        ),
        (
            "dbus-send",
            "#!/bin/sh\ncase \"$*\" in\n  *NameHasOwner*) echo \"   boolean $OWNER\" ;;\n  \
             *ListActivatableNames*) echo '   array ['; echo \"      string \\\"$ACTIVATABLE\\\"\"; \
             echo '   ]' ;;\n  *) exit 1 ;;\nesac\n"
                .to_string(),
        ),
    ];
    for (name, text) in scripts {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, posted)
}

#[cfg(target_os = "linux")]
#[test]
fn notifications_need_the_helper_a_session_bus_that_answers_and_a_service() {
    use std::os::unix::net::UnixListener;
    let env = Env::new();
    let (bin, posted) = notify_stand_ins(&env);
    // A session bus socket the test listens on (doctor connects and sends nothing). Each
    // connection is closed at once: `systemctl --user` (the login-item check) talks to the
    // same bus and would otherwise wait for an answer.
    let sock = env.dir.path().join("bus");
    let listener = UnixListener::bind(&sock).unwrap();
    std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::thread::spawn(move || {
        for c in listener.incoming() {
            drop(c);
        }
    });
    let bus = format!("unix:path={}", sock.display());
    let run = |vars: &[(&str, Option<&str>)]| {
        let (r, _, stderr) = doctor_with(&env, Some(&bin), vars);
        (r, stderr)
    };
    let (r, stderr) = run(&[
        ("DBUS_SESSION_BUS_ADDRESS", Some(&bus)),
        ("OWNER", Some("true")),
    ]);
    let c = check(&r, "notifications");
    assert_eq!(c.outcome, "ok", "{c:?}\n{stderr}");
    assert!(
        c.headroom
            .as_deref()
            .unwrap()
            .contains("notify-bin/notify-send"),
        "{c:?}"
    );
    let system = c.system.as_deref().unwrap();
    assert!(system.contains(&bus) && system.contains("running"), "{c:?}");
    // Not running but activatable: the bus starts it on the first notification.
    let (r, _) = run(&[
        ("DBUS_SESSION_BUS_ADDRESS", Some(&bus)),
        ("OWNER", Some("false")),
        ("ACTIVATABLE", Some("org.freedesktop.Notifications")),
    ]);
    let c = check(&r, "notifications");
    assert_eq!(c.outcome, "ok", "{c:?}");
    assert!(
        c.system.as_deref().unwrap().contains("activatable"),
        "{c:?}"
    );
    // A bus without a notification service.
    let (r, _) = run(&[
        ("DBUS_SESSION_BUS_ADDRESS", Some(&bus)),
        ("OWNER", Some("false")),
        ("ACTIVATABLE", Some("org.example.Other")),
    ]);
    let c = check(&r, "notifications");
    assert_eq!(c.outcome, "skipped", "{c:?}");
    assert!(
        c.note
            .as_deref()
            .unwrap()
            .contains("no notification service"),
        "{c:?}"
    );
    // An address where nothing listens, named in the reason.
    let gone = env.dir.path().join("no-bus");
    let (r, _) = run(&[
        (
            "DBUS_SESSION_BUS_ADDRESS",
            Some(&format!("unix:path={}", gone.display())),
        ),
        ("OWNER", Some("true")),
    ]);
    let c = check(&r, "notifications");
    assert_eq!(c.outcome, "skipped", "{c:?}");
    assert!(c.note.as_deref().unwrap().contains("no-bus"), "{c:?}");
    // No bus named at all: $XDG_RUNTIME_DIR/bus is where the clients would look.
    let (r, _) = run(&[
        ("DBUS_SESSION_BUS_ADDRESS", None),
        ("XDG_RUNTIME_DIR", None),
        ("OWNER", Some("true")),
    ]);
    let c = check(&r, "notifications");
    assert_eq!(c.outcome, "skipped", "{c:?}");
    assert!(c.note.as_deref().unwrap().contains("unset"), "{c:?}");
    let runtime = env.dir.path().to_str().unwrap();
    let (r, _) = run(&[
        ("DBUS_SESSION_BUS_ADDRESS", None),
        ("XDG_RUNTIME_DIR", Some(runtime)),
        ("OWNER", Some("true")),
    ]);
    let c = check(&r, "notifications");
    assert_eq!(
        c.outcome, "ok",
        "$XDG_RUNTIME_DIR/bus is the test's socket: {c:?}"
    );
    // No helper: a bus that answers is not enough. The PATH is the test's own copy of this
    // machine's without notify-send, so the case runs whether or not it is installed.
    let no_helper = path_without(&env, "notify-send");
    let (r, _, _) = doctor_with(
        &env,
        None,
        &[
            ("DBUS_SESSION_BUS_ADDRESS", Some(&bus)),
            ("OWNER", Some("true")),
            ("PATH", Some(&no_helper)),
        ],
    );
    let c = check(&r, "notifications");
    assert_eq!(c.outcome, "skipped", "{c:?}");
    assert!(c.note.as_deref().unwrap().contains("notify-send"), "{c:?}");
    // Nothing was posted in any of these.
    assert!(!posted.exists(), "doctor posted a notification");
}

/// What the guard does unasked is listed from the effective config, with how to turn each
/// off, and the running guard is named from the lock's record (#27 item 9).
#[cfg(target_os = "linux")]
#[test]
fn doctor_lists_what_the_running_guard_does_on_its_own_from_the_effective_config() {
    let env = Env::new();
    let (r, _, _) = doctor(&env, None);
    let on: Vec<(&str, bool)> = r
        .guard
        .acts
        .iter()
        .map(|a| (a.name.as_str(), a.on))
        .collect();
    assert_eq!(
        on,
        [
            ("auto-reap", true),
            ("hangs", false),
            ("memory-guards", false),
            ("notifications", true)
        ],
        "the defaults, on Linux"
    );
    let reap = &r.guard.acts[0];
    assert!(reap.what.contains("SIGKILL after 2s"), "{}", reap.what);
    let config = env.home.join("config.toml");
    assert_eq!(
        reap.switch,
        format!(
            "`auto_reap = false` under `[watch]` in `{}`",
            config.display()
        )
    );
    assert_eq!(r.guard.running, None, "no guard runs");

    // Control: the config turns reaping off and adds a guard; a watch runs.
    std::fs::write(
        &config,
        "[watch]\nauto_reap = false\n[[memory.guard]]\npattern = \"cargo\"\nlimit = \"8G\"\n",
    )
    .unwrap();
    let out = env.path("w.out");
    let mut w = env.spawn_with(
        env.headroom_path(),
        &["watch", "--interval", "200ms", "--json", "--no-hangs"],
        Some((&out, &env.path("w.err"))),
    );
    crate::support::wait_more_readings("a round", &out, 1);
    let (r, _, _) = doctor(&env, None);
    let on: Vec<bool> = r.guard.acts.iter().map(|a| a.on).collect();
    assert_eq!(on, [false, false, true, true]);
    assert!(
        r.guard.acts[2].what.contains("`cargo` over 8"),
        "{:?}",
        r.guard.acts[2]
    );
    let running = r.guard.running.as_ref().expect("the running guard");
    assert_eq!((running.pid, running.once), (w.pid as u32, false));
    assert_eq!(r.guard.config.as_deref(), config.to_str());
    // Its human form says the same, and how to turn what is on off.
    let mut c = env.cmd();
    let text = c.arg("doctor").env("HOME", &env.home).output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!(
            "What the guard does on its own (the running guard is a guard started by hand (pid {})",
            w.pid
        )) && text.contains("memory-guards  on ")
            && text.contains("auto-reap      off"),
        "{text}"
    );
    w.signal(libc::SIGTERM);
    assert_eq!(w.exit_code(), 0);
}
