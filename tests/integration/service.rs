//! `watch` and the login item as the service managers see them (#27 items 4, 4b, 7), for
//! real on Linux: two guards started the way the LaunchAgent, the systemd unit and `brew
//! services` start them (`HEADROOM_SERVICE` set), a program replaced under a running guard
//! as an upgrade replaces it, and `login-item register` run from a Homebrew-shaped prefix
//! (a Cellar keg, the `opt` link, the `bin/` link) against a stand-in `systemctl`.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Env, json_lines, wait_more_readings, wait_until};

/// The lock file's record of who holds the guard lock.
fn holder(env: &Env) -> serde_json::Value {
    std::fs::read(env.home.join("watch.lock"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(serde_json::Value::Null)
}

/// `watch` run through `env` with `HEADROOM_SERVICE=label` (or none), as a service manager
/// would start it; `env` execs headroom, so the tree's pid is headroom's.
fn service_watch(
    env: &Env,
    program: &Path,
    label: Option<&str>,
    name: &str,
) -> (crate::support::Tree, PathBuf, PathBuf) {
    let (out, err) = (
        env.path(&format!("{name}.out")),
        env.path(&format!("{name}.err")),
    );
    let set = label.map(|l| format!("HEADROOM_SERVICE={l}"));
    let mut args: Vec<&str> = vec!["-u", "HEADROOM_SERVICE"];
    args.extend(set.as_deref());
    let prog = program.to_str().unwrap();
    args.extend([
        prog,
        "watch",
        "--interval",
        "200ms",
        "--json",
        "--no-hangs",
        "--no-auto-reap",
    ]);
    let t = env.spawn_with(Path::new("/usr/bin/env"), &args, Some((&out, &err)));
    (t, out, err)
}

fn copy(from: &Path, to: &Path) {
    let st = Command::new("cp")
        .arg("--")
        .arg(from)
        .arg(to)
        .status()
        .unwrap();
    assert!(st.success(), "cp {} {}", from.display(), to.display());
}

#[test]
fn a_service_guard_leaves_another_services_guard_and_waits_for_one_started_by_hand() {
    let env = Env::new();
    let bin = env.headroom_path().to_path_buf();
    // Both `brew services` and the login item registered: the second leaves, exit 0, naming
    // the first, so launchd (KeepAlive = {SuccessfulExit = false}) does not respawn it.
    let (mut brew, brew_out, _) = service_watch(&env, &bin, Some("homebrew.mxcl.headroom"), "brew");
    wait_until("the brew guard to hold the lock", || {
        holder(&env)["pid"] == brew.pid && holder(&env)["label"] == "homebrew.mxcl.headroom"
    });
    let (mut agent, _, agent_err) = service_watch(&env, &bin, Some("dev.headroom.watch"), "agent");
    assert_eq!(agent.exit_code(), 0, "leaves, and is not restarted");
    let said = std::fs::read_to_string(&agent_err).unwrap();
    assert!(
        said.contains(&format!(
            "`homebrew.mxcl.headroom` (pid {}) already guards",
            brew.pid
        )) && said.contains("`dev.headroom.watch` leaves it to that one"),
        "{said}"
    );
    // Started by hand beside it: refused (exit 3), saying who holds the lock.
    let (mut by_hand, _, hand_err) = service_watch(&env, &bin, None, "hand");
    assert_eq!(by_hand.exit_code(), 3);
    assert!(
        std::fs::read_to_string(&hand_err)
            .unwrap()
            .contains(&format!("`homebrew.mxcl.headroom` (pid {})", brew.pid))
    );
    brew.signal(libc::SIGTERM);
    assert_eq!(brew.exit_code(), 0);
    assert!(json_lines(&brew_out).iter().any(|e| e["type"] == "summary"));

    // Control: the holder started by hand (it may stop any time). A service guard waits
    // instead of leaving nobody guarding, and takes over when it stops.
    let (mut first, _, _) = service_watch(&env, &bin, None, "first");
    wait_until("the hand-started guard to hold the lock", || {
        holder(&env)["pid"] == first.pid
    });
    let (mut waiting, waiting_out, waiting_err) =
        service_watch(&env, &bin, Some("dev.headroom.watch"), "waiting");
    wait_until("the service guard to say it waits", || {
        std::fs::read_to_string(&waiting_err)
            .unwrap_or_default()
            .contains("`dev.headroom.watch` waits")
    });
    assert!(
        json_lines(&waiting_out).is_empty(),
        "no round while it waits"
    );
    first.signal(libc::SIGTERM);
    assert_eq!(first.exit_code(), 0);
    wait_until("the waiting guard to take over", || {
        holder(&env)["pid"] == waiting.pid
    });
    wait_more_readings("rounds of the guard that took over", &waiting_out, 2);
    waiting.signal(libc::SIGTERM);
    assert_eq!(waiting.exit_code(), 0);
}

#[test]
fn a_guard_whose_program_is_replaced_says_so_once_and_under_a_service_exits_75() {
    let env = Env::new();
    let dir = env.dir.path().join("prefix");
    std::fs::create_dir(&dir).unwrap();
    let program = dir.join("headroom");
    copy(env.headroom_path(), &program);
    // An upgrade: a new file renamed over the old path (what `brew upgrade`'s new keg and
    // link, `cargo install` and package managers amount to; the running file is untouched).
    let replace = || {
        let new = dir.join("headroom.new");
        copy(env.headroom_path(), &new);
        std::fs::rename(&new, &program).unwrap();
    };
    let notices = |out: &Path| -> Vec<String> {
        json_lines(out)
            .into_iter()
            .filter(|e| e["type"] == "notice" && e["severity"] == "warning")
            .filter_map(|e| e["message"].as_str().map(str::to_string))
            .filter(|m| m.contains("was replaced"))
            .collect()
    };

    let (mut svc, out, _) = service_watch(&env, &program, Some("headroom-watch.service"), "svc");
    wait_more_readings("a round", &out, 1);
    replace();
    assert_eq!(
        svc.exit_code(),
        75,
        "exits so that its service manager restarts it"
    );
    let said = notices(&out);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].contains("`headroom-watch.service` starts the new one"),
        "{said:?}"
    );
    assert_eq!(json_lines(&out).last().unwrap()["type"], "summary");

    // Control 1: started by hand, it keeps guarding and says so once.
    let (mut hand, out, _) = service_watch(&env, &program, None, "hand");
    wait_more_readings("a round", &out, 1);
    replace();
    wait_until("the notice", || !notices(&out).is_empty());
    wait_more_readings("more rounds after the notice", &out, 3);
    assert_eq!(notices(&out).len(), 1, "said once");
    hand.signal(libc::SIGTERM);
    assert_eq!(hand.exit_code(), 0);

    // Control 2: nothing replaced, no notice and no exit of its own.
    let (mut calm, out, _) = service_watch(&env, &program, Some("headroom-watch.service"), "calm");
    wait_more_readings("rounds", &out, 3);
    assert!(notices(&out).is_empty());
    calm.signal(libc::SIGTERM);
    assert_eq!(calm.exit_code(), 0);
}

/// A Homebrew-shaped prefix: `Cellar/headroom/VERSION/bin/headroom` (a copy of the binary
/// under test), `opt/headroom` → the keg, `bin/headroom` → the keg's program.
struct Prefix {
    root: PathBuf,
}

impl Prefix {
    fn new(env: &Env) -> Self {
        let root = env.dir.path().join("homebrew");
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::create_dir_all(root.join("opt")).unwrap();
        let p = Self { root };
        p.install(env, "9.9.9");
        p
    }

    fn keg_program(&self, version: &str) -> PathBuf {
        self.root
            .join(format!("Cellar/headroom/{version}/bin/headroom"))
    }

    /// Install `version` and point the links at it, as `brew install`/`upgrade` does.
    fn install(&self, env: &Env, version: &str) {
        let prog = self.keg_program(version);
        std::fs::create_dir_all(prog.parent().unwrap()).unwrap();
        copy(env.headroom_path(), &prog);
        for (link, to) in [
            ("opt/headroom", format!("../Cellar/headroom/{version}")),
            (
                "bin/headroom",
                format!("../Cellar/headroom/{version}/bin/headroom"),
            ),
        ] {
            let l = self.root.join(link);
            let _ = std::fs::remove_file(&l);
            symlink(to, &l).unwrap();
        }
    }
}

/// A stand-in `systemctl` that answers like a user manager that loaded and runs the unit.
fn fake_systemctl(env: &Env) -> PathBuf {
    let dir = env.dir.path().join("fakebin");
    std::fs::create_dir(&dir).unwrap();
    let script = dir.join("systemctl");
    std::fs::write(
        &script,
        "#!/bin/sh\ncase \"$*\" in\n  *' show '*) printf 'LoadState=loaded\\nActiveState=active\\n\
         SubState=running\\nMainPID=4242\\nUnitFileState=enabled\\n' ;;\nesac\nexit 0\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    dir
}

fn login_item(env: &Env, program: &Path, fakebin: &Path, args: &[&str]) -> std::process::Output {
    let mut argv = env.as_test_user();
    argv.push(program.into());
    let path = format!(
        "{}:{}",
        fakebin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new(&argv[0])
        .args(&argv[1..])
        .args(args)
        .env("HEADROOM_HOME", &env.home)
        .env("HOME", env.path(""))
        .env("XDG_CONFIG_HOME", env.path(".config"))
        .env("PATH", path)
        .env_remove("HOMEBREW_PREFIX")
        .output()
        .unwrap()
}

#[test]
fn login_item_registers_homebrews_opt_link_which_outlives_an_upgrade() {
    let env = Env::new();
    let brew = Prefix::new(&env);
    let fakebin = fake_systemctl(&env);
    let unit = env.path(".config/systemd/user/headroom-watch.service");
    let opt = brew
        .root
        .canonicalize()
        .unwrap()
        .join("opt/headroom/bin/headroom");
    // Invoked the way a user types it: through the prefix's bin/ link.
    let o = login_item(
        &env,
        &brew.root.join("bin/headroom"),
        &fakebin,
        &["login-item", "register"],
    );
    assert!(o.status.success(), "{o:?}");
    let text = std::fs::read_to_string(&unit).unwrap();
    assert!(
        text.contains(&format!("ExecStart={} watch\n", opt.display())),
        "registered the opt link, not the keg: {text}"
    );
    // `brew upgrade`: the new keg, the links moved, the old keg deleted.
    brew.install(&env, "9.9.10");
    std::fs::remove_dir_all(brew.root.join("Cellar/headroom/9.9.9")).unwrap();
    let o = login_item(&env, &opt, &fakebin, &["login-item", "status", "--json"]);
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["valid"], true, "{s}");
    assert_eq!(s["problem"], serde_json::Value::Null);
    assert_eq!(o.status.code(), Some(0));

    // The breaking input: what registering canonicalised to before — the keg path. After
    // the upgrade it is gone, and status (exit 1) and doctor say what to do.
    let old = brew
        .root
        .canonicalize()
        .unwrap()
        .join("Cellar/headroom/9.9.9/bin/headroom");
    std::fs::write(
        &unit,
        text.replace(&opt.display().to_string(), &old.display().to_string()),
    )
    .unwrap();
    let o = login_item(&env, &opt, &fakebin, &["login-item", "status"]);
    assert_eq!(o.status.code(), Some(1));
    let said = String::from_utf8_lossy(&o.stdout);
    let gone = format!(
        "the registered program `{}` is gone: run `headroom login-item register` again",
        old.display()
    );
    assert!(said.contains(&gone), "{said}");
    let o = login_item(&env, &opt, &fakebin, &["doctor", "--json"]);
    let d: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let check = d["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "login-item")
        .cloned()
        .unwrap();
    assert_eq!(check["outcome"], "mismatch", "{check}");
    assert!(
        check["headroom"].as_str().unwrap().contains(&gone),
        "{check}"
    );
}
