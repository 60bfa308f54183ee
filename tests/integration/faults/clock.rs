//! Fault 5: the wall clock stepped by hours between runs, on a real process (`faketime`,
//! LD_PRELOAD; the library's own tests inject the clock: `watch::cleanup::in_cooldown`, and the hang
//! cooldown in `core/hangs/tests.rs`, which is macOS-only in practice). Guaranteed: the
//! trend never shows a negative duration (samples "from the future" are dropped), a clock
//! set back neither freezes the reap cooldown for hours nor skips it, and a session child's
//! CPU idle time, on the awake clock, is neither negative nor "idle for 5 h" after a step.

use super::{check_state_files, require_sandbox};
use crate::liveness::{parent, seed_cpu_history, setup};
use crate::schema;
use crate::support::{Env, proc_state, require_tool};

fn probe_at(env: &Env, offset: &str) -> serde_json::Value {
    let out = env
        .cmd_via(&["faketime", "-f", offset])
        .args(["probe", "--json"])
        .output()
        .unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
#[cfg_attr(
    not(all(hr_root, hr_tool_faketime)),
    ignore = "needs root and faketime"
)]
fn a_clock_stepped_by_hours_gives_no_negative_trend_and_keeps_the_cooldown_short() {
    let env = Env::new();
    require_sandbox(&env);
    require_tool("faketime");
    // The trend: a reading now, then 5 h earlier, then 5 h later.
    let mut ats = Vec::new();
    for offset in ["+0", "-5h", "+5h", "+5h"] {
        let r = probe_at(&env, offset);
        ats.push(headroom_core::time::parse_ms(r["at"].as_str().unwrap()).unwrap());
        assert!(r["eta_seconds"].as_f64().is_none_or(|v| v >= 0.0), "{r}");
        if offset == "-5h" {
            assert_eq!(
                r["trend_samples"], 1,
                "the sample from the future is dropped: {r}"
            );
        }
    }
    assert!(
        ats[0] - ats[1] > 4 * 3_600_000,
        "faketime took effect: {ats:?}"
    );
    assert!(ats[2] - ats[0] > 4 * 3_600_000, "{ats:?}");
    // The cooldown across `watch --once` runs from cron: a cleanup now, then the clock set
    // back 5 h. The next run restarts the cooldown (1 s here) from its own now, so a run
    // 1.5 s later cleans up again, instead of waiting 5 h for the clock to catch up.
    let cfg = env.path("clock.toml");
    std::fs::write(
        &cfg,
        "[reap]\nallow = [\"agency-clock\"]\ngrace = \"300ms\"\n[watch]\nreap_cooldown = \"1s\"\n[notifications]\nenabled = false\n",
    )
    .unwrap();
    let once = |offset: &str| {
        let out = env
            .cmd_via(&["faketime", "-f", offset])
            .args([
                "watch",
                "--once",
                "--json",
                "--no-hangs",
                "--crit",
                "0.0001",
                "--warn",
                "0.0001",
                "--config",
            ])
            .arg(&cfg)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|e| e["type"] == "cleanup")
            .flat_map(|e| e["targets"].as_array().unwrap().clone())
            .count()
    };
    let leaker = env.named_fixture("agency-clock");
    let mut first = env.spawn(&leaker, &["leak", "--zombies", "120", "--ignore-term"]);
    let pid1 = first.ready()["pid"].as_i64().unwrap() as i32;
    // Two readings confirm critical; the second run cleans up.
    let acted = once("+0") + once("+0");
    assert_eq!(acted, 1);
    crate::support::wait_until("the first leaker gone", || proc_state(pid1).is_none());
    let terms = env.path("terms");
    let mut second = env.spawn(
        &leaker,
        &[
            "leak",
            "--zombies",
            "120",
            "--count-term",
            terms.to_str().unwrap(),
        ],
    );
    let pid2 = second.ready()["pid"].as_i64().unwrap() as i32;
    assert_eq!(
        once("-5h"),
        0,
        "the last cleanup is 'in the future': cooldown from now"
    );
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(
        once("-5h"),
        1,
        "the cooldown ended 1 s later, not 5 h later"
    );
    crate::support::wait_until("the second leaker gone", || proc_state(pid2).is_none());
    let delivered = std::fs::read_to_string(&terms)
        .unwrap_or_default()
        .lines()
        .count();
    assert_eq!(delivered, 1);
    check_state_files(&env.home);
    drop((first, second));
}

#[test]
#[cfg_attr(
    not(all(hr_root, hr_tool_faketime, hr_tool_unshare)),
    ignore = "needs root, faketime and unshare"
)]
fn a_wall_clock_stepped_by_hours_is_not_cpu_idle_time() {
    // A session whose log has been quiet for 3 h and whose child uses no CPU: only the CPU
    // history (read a moment ago, on the awake clock) keeps it from being idle past the 10 min threshold.
    let s = setup("agency-cik", None);
    require_sandbox(&s.env);
    require_tool("faketime");
    // The wall clock stepped, the monotonic one not: what `date -s` or NTP does.
    let reap_at = |offset: &str| -> schema::Reap {
        let out = s
            .cmd_awake_ahead(&["faketime", "-f", offset])
            .env("FAKETIME_DONT_FAKE_MONOTONIC", "1")
            .args(["reap", "--dry-run", "--json", "--allow", "agency-cik"])
            .args(["--idle-threshold", "10m"])
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
    };
    let first = reap_at("+0");
    assert_eq!(
        parent(&first, s.leaker).cpu_idle_seconds,
        None,
        "first sighting"
    );
    let t0 = headroom_core::time::parse_ms(&first.at).unwrap();
    for (offset, hours) in [("+5h", 5), ("-5h", -5)] {
        let r = reap_at(offset);
        let at = headroom_core::time::parse_ms(&r.at).unwrap();
        assert!(
            (at - t0 - hours * 3_600_000).abs() < 600_000,
            "faketime took effect: {} vs {}",
            r.at,
            first.at
        );
        let p = parent(&r, s.leaker);
        let idle = p
            .cpu_idle_seconds
            .unwrap_or_else(|| panic!("{offset}: {p:?}"));
        assert!(
            (0.0..3600.0).contains(&idle),
            "{offset}: CPU idle {idle} s after a wall step"
        );
        assert_ne!(p.verdict, "target", "{offset}: {p:?}");
        assert!(r.targets.is_empty());
    }
    // The control: CPU idle for 20 min on the awake clock (past the 10 min threshold; not
    // hours, which the awake clock of a machine up less long, as `seed_cpu_history` moves
    // it, cannot hold), the same session is a target.
    seed_cpu_history(&s, 1200);
    let r = reap_at("+0");
    let p = parent(&r, s.leaker);
    assert!(p.cpu_idle_seconds.unwrap() >= 1200.0 - 60.0, "{p:?}");
    assert_eq!((p.verdict.as_str(), p.session.as_str()), ("target", "idle"));
    drop(s.tree);
}
