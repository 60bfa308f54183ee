//! Issue 25 items 1 and 2 on real processes (Linux, as the private test uid): a config file
//! someone else could have written never steers a signal, and every pattern list is held to
//! one rule. Each breaking input runs against a live fixture that must not be signalled;
//! each control runs the same guard or reap where it does act.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::support::{Env, Tree, chown, proc_state, zombie_children};

fn chmod(p: &Path, mode: u32) {
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A guard on `name` at 16 MiB, nothing else acting, for `watch --once`.
fn guard(name: &str) -> String {
    format!(
        "[[memory.guard]]\npattern = \"{name}\"\nlimit = \"16M\"\n[memory]\ngrace = \"1s\"\n\
         [watch]\nauto_reap = false\nhangs = false\n[notifications]\nenabled = false\n"
    )
}

/// A 64 MiB hog named `name`, the root of its tree (its parent is the test's supervisor).
fn hog(env: &Env, name: &str) -> (Tree, i32) {
    let exe = env.named_fixture(name);
    let mut tree = env.spawn(&exe, &["hog", "--mib", "64"]);
    let pid: i32 = tree.expect("ready ").trim().parse().unwrap();
    (tree, pid)
}

fn alive(pid: i32) -> bool {
    proc_state(pid).is_some_and(|s| s != 'Z')
}

/// `args` as the test user with `home` as HEADROOM_HOME: (exit code, stderr).
fn run_in(env: &Env, home: &Path, args: &[&str]) -> (i32, String) {
    let out = env
        .cmd()
        .env("HEADROOM_HOME", home)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A uid that is neither the test user nor root, as the owner of a file someone else wrote.
fn someone_else(env: &Env) -> u32 {
    env.uid + 977
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn a_config_someone_else_could_write_never_drives_a_memory_guard_a_trusted_one_does() {
    let env = Env::new();
    crate::support::require_root();
    let (mut tree, pid) = hog(&env, "hog-trust");
    let text = guard("hog-trust");
    let other = someone_else(&env);
    // 1. HEADROOM_HOME owned by another user (0755), its config.toml theirs.
    let theirs = env.dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    let cfg = theirs.join("config.toml");
    std::fs::write(&cfg, &text).unwrap();
    chown(&cfg, other);
    chown(&theirs, other);
    chmod(&theirs, 0o755);
    let shown = cfg.display().to_string();
    let (code, err) = run_in(&env, &theirs, &["watch", "--once"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!(
            "config file `{shown}` is not trusted: it is owned by uid {other}"
        )),
        "{err}"
    );
    // 2. The user's own 0700 directory, a config.toml others can write.
    let home = &env.home;
    chmod(home, 0o700);
    let mine = home.join("config.toml");
    std::fs::write(&mine, &text).unwrap();
    chown(&mine, env.uid);
    chmod(&mine, 0o666);
    let (code, err2) = run_in(&env, home, &["watch", "--once"]);
    assert_eq!(code, 2, "{err2}");
    assert!(
        err2.contains("it has mode 0666: group or others can write it"),
        "{err2}"
    );
    // 3. The file private, the directory holding it writable by others.
    chmod(&mine, 0o600);
    chmod(home, 0o777);
    let (code, err3) = run_in(&env, home, &["watch", "--once"]);
    assert_eq!(code, 2, "{err3}");
    assert!(
        err3.contains(&format!("`{}` has mode 0777", home.display())),
        "{err3}"
    );
    chmod(home, 0o700);
    // 4. `--config FILE`: another's file, then the user's own but group-writable.
    let flag = env.path("flag.toml");
    std::fs::write(&flag, &text).unwrap();
    chown(&flag, other);
    let f = flag.to_str().unwrap();
    let (code, err4) = run_in(&env, home, &["watch", "--once", "--config", f]);
    assert_eq!(code, 2, "{err4}");
    assert!(
        err4.contains(&format!("config file `{f}` is not trusted")),
        "{err4}"
    );
    chown(&flag, env.uid);
    chmod(&flag, 0o620);
    let (code, err5) = run_in(&env, home, &["watch", "--once", "--config", f]);
    assert_eq!(code, 2, "{err5}");
    assert!(err5.contains("it has mode 0620"), "{err5}");
    for e in [&err, &err2, &err3, &err4, &err5] {
        assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
        assert!(
            e.contains("owned by you or root and not writable by group or others")
                && e.contains("nothing was signalled"),
            "{e}"
        );
    }
    assert!(alive(pid), "an untrusted guard signalled the hog");
    // Control: the same guard from the user's own private file acts.
    chmod(&flag, 0o600);
    let (code, err) = run_in(&env, home, &["watch", "--once", "--config", f]);
    assert!(code == 0 || code == 1, "{code}: {err}");
    assert_eq!(tree.exit_code(), 128 + 15, "the trusted guard SIGTERMs");
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn a_root_owned_config_is_trusted() {
    let env = Env::new();
    crate::support::require_root();
    let (mut tree, _pid) = hog(&env, "hog-rooted");
    // Written by the test (root), 0644, in a root-owned 0755 directory.
    let dir = env.dir.path().join("etc");
    std::fs::create_dir(&dir).unwrap();
    chmod(&dir, 0o755);
    let cfg = dir.join("headroom.toml");
    std::fs::write(&cfg, guard("hog-rooted")).unwrap();
    chmod(&cfg, 0o644);
    let (code, err) = run_in(
        &env,
        &env.home,
        &["watch", "--once", "--config", cfg.to_str().unwrap()],
    );
    assert!(code == 0 || code == 1, "{code}: {err}");
    assert!(!err.contains("not trusted"), "{err}");
    assert_eq!(tree.exit_code(), 128 + 15);
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn reap_refuses_an_untrusted_config_and_read_only_commands_go_on_with_a_warning() {
    let env = Env::new();
    crate::support::require_root();
    let exe = env.named_fixture("agency-trust");
    let mut tree = env.spawn(&exe, &["leak", "--zombies", "120"]);
    let pid = tree.ready()["pid"].as_i64().unwrap() as i32;
    let home = &env.home;
    chmod(home, 0o700);
    let cfg = home.join("config.toml");
    std::fs::write(
        &cfg,
        "[reap]\nallow = [\"agency-trust\"]\ngrace = \"200ms\"\n[notifications]\nenabled = false\n",
    )
    .unwrap();
    chown(&cfg, env.uid);
    chmod(&cfg, 0o646);
    let (code, err) = run_in(&env, home, &["reap"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not trusted: it has mode 0646"), "{err}");
    assert_eq!(zombie_children(pid), 120, "nothing was signalled");
    // Read-only: the file is read, with the warning.
    for args in [&["reap", "--dry-run"][..], &["probe"][..], &["config"][..]] {
        let (code, err) = run_in(&env, home, args);
        assert!(code != 2 && code != 64, "{args:?}: {code}: {err}");
        assert!(
            err.contains("is not trusted") && err.contains("signals nothing"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(zombie_children(pid), 120);
    // Control: the same file, private, and reap acts on it.
    chmod(&cfg, 0o600);
    let (code, err) = run_in(&env, home, &["reap"]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("not trusted"), "{err}");
    assert_eq!(tree.exit_code(), 128 + 15);
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn a_bad_pattern_is_refused_in_the_config_and_in_flags_a_real_one_acts() {
    let env = Env::new();
    crate::support::require_root();
    let (mut tree, pid) = hog(&env, "hog-pat");
    let exe = env.named_fixture("agency-pat");
    let mut leaker = env.spawn(&exe, &["leak", "--zombies", "120"]);
    let lpid = leaker.ready()["pid"].as_i64().unwrap() as i32;
    let cfg = env.path("pat.toml");
    let f = cfg.to_str().unwrap().to_string();
    let write = |text: &str| std::fs::write(&cfg, text).unwrap();
    for (text, says) in [
        (guard("/"), "memory.guard[0] `pattern` `/` is refused"),
        (guard("*"), "memory.guard[0] `pattern` `*` is refused"),
        (guard("."), "memory.guard[0] `pattern` `.` is refused"),
        (guard("h"), "memory.guard[0] `pattern` `h` is refused"),
        (guard("hog*"), "memory.guard[0] `pattern` `hog*` is refused"),
        (
            format!("{}[hangs]\nallow = [\"/\"]\n", guard("hog-pat")),
            "hangs.allow entry `/` is refused",
        ),
        (
            "[reap]\nallow = [\"/\"]\n".to_string(),
            "reap.allow pattern `/` is refused",
        ),
    ] {
        write(&text);
        let (code, err) = run_in(&env, &env.home, &["watch", "--once", "--config", &f]);
        assert_eq!(code, 64, "{text}: {err}");
        assert!(err.contains(says), "{text}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    }
    for (flag, value) in [
        ("--allow", "/"),
        ("--allow", "*"),
        ("--allow", "."),
        ("--allow", "agency*"),
        ("--deny", "*"),
        ("--deny", ".."),
    ] {
        let (code, err) = run_in(
            &env,
            &env.home,
            &[
                "reap",
                "--allow",
                "agency-pat",
                flag,
                value,
                "--grace",
                "100ms",
            ],
        );
        assert_eq!(code, 64, "{flag} {value}: {err}");
        let list = flag.trim_start_matches("--");
        assert!(
            err.contains(&format!("{list} pattern `{value}` is refused")),
            "{flag} {value}: {err}"
        );
    }
    assert!(
        alive(pid) && zombie_children(lpid) == 120,
        "nothing was signalled"
    );
    // Controls: a real guard pattern matches and acts; a real allow pattern reaps.
    write(&guard("hog-pat"));
    let (code, err) = run_in(&env, &env.home, &["watch", "--once", "--config", &f]);
    assert!(code == 0 || code == 1, "{code}: {err}");
    assert_eq!(tree.exit_code(), 128 + 15);
    let (code, err) = run_in(
        &env,
        &env.home,
        &[
            "reap",
            "--allow",
            "agency-pat",
            "--deny",
            "unrelated",
            "--grace",
            "100ms",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(leaker.exit_code(), 128 + 15);
}
