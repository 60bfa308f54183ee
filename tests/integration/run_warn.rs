//! `run --limit`'s warning step: one `approaching_limit` event when the tree crosses the
//! warning line, from `--warn`, `[memory] warn_pct`, or the default 90 %.

use crate::schema::{self, RunEvent};
use crate::support::{Env, wait_until};
use crate::watch::{Guarded, guarded_hog};

fn approaching(stderr: &str) -> Vec<(f64, f64)> {
    stderr
        .lines()
        .filter(|l| l.contains("\"approaching_limit\""))
        .map(|l| match schema::run_event(l).unwrap() {
            RunEvent::ApproachingLimit { pct, warn_pct, .. } => (pct, warn_pct),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn a_tree_near_its_limit_is_warned_once_before_anything_is_done() {
    let env = Env::new();
    let fx = env.fixture().to_str().unwrap().to_string();
    let cfg = env.path("headroom.toml");
    std::fs::write(
        &cfg,
        "[memory]\nwarn_pct = 80\n[notifications]\nenabled = false\n",
    )
    .unwrap();
    let cfg = cfg.to_str().unwrap().to_string();
    for (extra, want) in [
        (vec![], 90.0),
        (vec!["--warn", "50"], 50.0),
        (vec!["--config", cfg.as_str()], 80.0),
    ] {
        let err = env.path("stderr");
        let out = env.path("stdout");
        let mut args = vec!["--json", "run", "--limit", "100M", "--interval", "50ms"];
        args.extend(&extra);
        args.extend(["--enforce", "poll", "--", &fx, "hog", "--mib", "95"]);
        let mut t = env.spawn_with(env.headroom_path(), &args, Some((&out, &err)));
        let read = || std::fs::read_to_string(&err).unwrap_or_default();
        wait_until("the warning", || !approaching(&read()).is_empty());
        // Samples keep coming at 95 % (checked in the summary below): still one warning.
        wait_until("the hog's ready line", || {
            std::fs::read_to_string(&out).is_ok_and(|o| o.contains("ready"))
        });
        std::thread::sleep(std::time::Duration::from_millis(500));
        t.signal(libc::SIGINT);
        let code = t.exit_code();
        let events = schema::run_events(&read());
        let w = approaching(&read());
        assert_eq!(w.len(), 1, "{extra:?}: {events:?}");
        assert!(w[0].0 >= want && w[0].0 < 100.0, "{w:?}");
        assert_eq!(w[0].1, want, "{extra:?}");
        assert!(
            !events.iter().any(|e| matches!(e, RunEvent::Breach { .. })),
            "{events:?}"
        );
        let RunEvent::Summary(s) = events.last().unwrap() else {
            panic!("{events:?}")
        };
        assert!(
            s.samples >= 5,
            "not enough samples to show one warning per crossing: {s:?}"
        );
        assert_eq!(code, 130, "{events:?}");
        drop(t);
    }
}

/// `watch`'s guards: a guarded tree at 90 % of its limit gets one `approaching-limit` event
/// over many rounds, and is not acted on.
#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn a_guarded_tree_near_its_limit_is_warned_once_and_left_alone() {
    let env = Env::new();
    let Guarded {
        tree,
        pid,
        mut watch,
        out,
        err,
    } = guarded_hog(
        &env,
        "hog-warn",
        "90",
        "[[memory.guard]]\npattern = \"hog-warn\"\nlimit = \"100M\"\n[memory]\nwarn_pct = 80\n[watch]\nauto_reap = false\n[notifications]\nenabled = false\n",
    );
    let count = |t: &str| {
        crate::support::json_lines(&out)
            .iter()
            .filter(|e| e["type"] == t)
            .count()
    };
    wait_until("the warning", || count("approaching-limit") >= 1);
    let r = count("reading");
    wait_until("three more rounds", || count("reading") >= r + 3);
    watch.signal(libc::SIGTERM);
    assert_eq!(
        watch.exit_code(),
        0,
        "{}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    let events = crate::support::json_lines(&out);
    let w: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "approaching-limit")
        .collect();
    assert_eq!(w.len(), 1, "{events:?}");
    assert_eq!(w[0]["root"], pid);
    assert_eq!(w[0]["pattern"], "hog-warn");
    assert_eq!(w[0]["warn_pct"], 80.0);
    assert!(w[0]["pct"].as_f64().unwrap() >= 80.0);
    assert_eq!(
        count("memory"),
        0,
        "acted on a tree under its limit: {events:?}"
    );
    // The control: the tree is still there, untouched.
    assert_eq!(
        crate::support::proc_state(pid).map(|s| s != 'Z'),
        Some(true)
    );
    drop(tree);
}

/// The warning step and the ending each post one desktop notification, through the
/// notifier on `PATH` (a stand-in `notify-send` that records its arguments); a tree that
/// stays under its warning line posts none.
#[test]
fn the_warning_and_the_ending_are_each_notified_once() {
    let env = Env::new();
    let bin = env.path("bin");
    std::fs::create_dir(&bin).unwrap();
    let notes = env.path("notes");
    let script = bin.join("notify-send");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s|' \"$@\" >>'{}'\necho >>'{}'\n",
            notes.display(),
            notes.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("PATH={}:/usr/bin:/bin", bin.display());
    let fx = env.fixture().to_str().unwrap().to_string();
    let headroom = env.headroom_path().to_str().unwrap().to_string();
    let notes_now = || {
        std::fs::read_to_string(&notes)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let start = |limit: &str, hog: &[&str]| {
        let (out, err) = (env.path("stdout"), env.path("stderr"));
        let _ = std::fs::remove_file(&err);
        let args = [
            path.as_str(),
            headroom.as_str(),
            "--json",
            "run",
            "--limit",
            limit,
            "--interval",
            "50ms",
            "--grace",
            "1s",
            "--enforce",
            "poll",
            "--",
            fx.as_str(),
            "hog",
        ];
        let args: Vec<&str> = args.iter().chain(hog).copied().collect();
        let t = env.spawn_with(
            std::path::Path::new("/usr/bin/env"),
            &args,
            Some((&out, &err)),
        );
        (t, out, err)
    };

    // Under the line (40 of 100 MiB): ready, sampled, no notification.
    let (mut t, out, err) = start("100M", &["--mib", "40"]);
    wait_until("the hog's ready line", || {
        std::fs::read_to_string(&out).is_ok_and(|o| o.contains("ready"))
    });
    t.signal(libc::SIGINT);
    assert_eq!(t.exit_code(), 130);
    assert!(notes_now().is_empty(), "{:?}", notes_now());
    drop(t);

    // At 95 % of the limit: one warning, one notification naming the command and the limit.
    let (mut t, out, err2) = start("100M", &["--mib", "95"]);
    let read = || std::fs::read_to_string(&err2).unwrap_or_default();
    wait_until("the warning", || !approaching(&read()).is_empty());
    wait_until("the notification", || !notes_now().is_empty());
    wait_until("the hog's ready line", || {
        std::fs::read_to_string(&out).is_ok_and(|o| o.contains("ready"))
    });
    t.signal(libc::SIGINT);
    assert_eq!(t.exit_code(), 130, "{}", read());
    let n = notes_now();
    assert_eq!(n.len(), 1, "{n:?}");
    assert!(
        n[0].starts_with("--app-name=headroom|headroom: memory limit near|"),
        "{n:?}"
    );
    assert!(
        n[0].contains("hr-fixture") && n[0].contains("of its limit of 100 MiB"),
        "{n:?}"
    );
    // The helper is headroom's child but never the tree's: nothing was parked or ended.
    let events = schema::run_events(&read());
    assert!(
        !events.iter().any(|e| matches!(e, RunEvent::Breach { .. })),
        "{events:?}"
    );
    drop(t);
    let _ = std::fs::remove_file(&notes);

    // Over the limit: the warning on the way up (from 40 MiB at 20 MiB/s: five samples
    // between 90 % and the limit), then the ending, each notified once.
    let grow = ["--mib", "40", "--grow-mib-per-s", "20"];
    let (mut t, _out, _) = start("50M", &grow);
    let code = t.exit_code();
    assert!(
        code == 137 || code == 143,
        "exit {code}: {}",
        std::fs::read_to_string(&err).unwrap_or_default()
    );
    let n = notes_now();
    assert_eq!(n.len(), 2, "{n:?}");
    assert!(n[0].contains("headroom: memory limit near"), "{n:?}");
    assert!(
        n[1].contains("headroom ended `") && n[1].contains("over its memory limit of 50 MiB"),
        "{n:?}"
    );
    drop(t);
}
