//! `run --limit`'s warning step: one `approaching_limit` event when the tree crosses the
//! warning line, from `--warn`, `[memory] warn_pct`, or the default 90 %.

use crate::schema::{self, RunEvent};
use crate::support::{Env, wait_until};

fn approaching(stderr: &str) -> Vec<(f64, f64)> {
    stderr
        .lines()
        .filter(|l| l.contains("\"approaching_limit\""))
        .map(|l| match serde_json::from_str::<RunEvent>(l).unwrap() {
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
fn a_guarded_tree_near_its_limit_is_warned_once_and_left_alone() {
    let env = Env::new();
    if !env.private {
        eprintln!("skipped: needs root for a private uid (the tree's root must be the fixture)");
        return;
    }
    let cfg = env.path("guard.toml");
    std::fs::write(&cfg, "[[memory.guard]]\npattern = \"hog-warn\"\nlimit = \"100M\"\n[memory]\nwarn_pct = 80\n[watch]\nauto_reap = false\n[notifications]\nenabled = false\n").unwrap();
    let hog = env.named_fixture("hog-warn");
    let mut tree = env.spawn(&hog, &["hog", "--mib", "90"]);
    let pid: i32 = tree.expect("ready ").trim().parse().unwrap();
    let (out, err) = (env.path("watch.out"), env.path("watch.err"));
    let args = [
        "watch",
        "--interval",
        "1s",
        "--json",
        "--config",
        cfg.to_str().unwrap(),
    ];
    let mut watch = env.spawn_with(env.headroom_path(), &args, Some((&out, &err)));
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
