//! The third-party app sequence (Behaviors 14-17), bad input before a restart, and the
//! plan reported by --dry-run, on the fake world of `tests.rs`.

use super::tests::*;
use super::*;

// --- Behaviors 14–17: third-party apps.

#[test]
fn b14_sends_sigterm_to_a_confirmed_third_party_app() {
    let mut f = Fake::new(Old::ExitsAfterTerm(Duration::from_millis(400)));
    let r = recover(&mut f, &app_target(), &settings());
    assert!(r.ok && r.signalled);
    assert!(f.actions()[0].starts_with("SIGTERM 501 @0ms -> Sent"));
    assert!(
        !f.log.iter().any(|l| l.starts_with("SIGKILL")),
        "{:?}",
        f.log
    );
}

#[test]
fn b15_sends_sigkill_only_when_the_same_app_process_does_not_stop_within_the_grace_period() {
    // Stops within the grace period: no SIGKILL.
    let mut f = Fake::new(Old::ExitsAfterTerm(GRACE - Duration::from_millis(100)));
    recover(&mut f, &app_target(), &settings());
    assert!(!f.log.iter().any(|l| l.starts_with("SIGKILL")));
    // Still the same process after the grace period: SIGKILL, at the end of the grace period.
    let mut f = Fake::new(Old::NeedsKill);
    let r = recover(&mut f, &app_target(), &settings());
    assert!(r.ok);
    assert!(f.actions()[1].starts_with("SIGKILL 501 @2000ms -> Sent"));
    // The pid now belongs to another process: never SIGKILLed, never even attempted.
    let mut f = Fake::new(Old::ReusedDuringGrace);
    let r = recover(&mut f, &app_target(), &settings());
    assert!(
        !f.log.iter().any(|l| l.starts_with("SIGKILL")),
        "{:?}",
        f.log
    );
    assert!(r.ok, "the old process is gone, so the app is reopened");
}

#[test]
fn b16_waits_for_the_old_app_pid_to_stop_before_reopening() {
    let mut f = Fake::new(Old::ExitsAfterTerm(Duration::from_millis(700)));
    assert!(recover(&mut f, &app_target(), &settings()).ok);
    let open = f.log.iter().position(|l| l.starts_with("exec")).unwrap();
    assert!(f.log[open - 1].ends_with("= false"), "{:?}", f.log);
    // A process that survives SIGKILL is never reopened over.
    let mut f = Fake::new(Old::Unkillable);
    let r = recover(&mut f, &app_target(), &settings());
    assert!(!r.ok);
    assert!(!f.log.iter().any(|l| l.starts_with("exec")));
    assert!(
        r.detail
            .unwrap()
            .contains("still running 5 s after SIGKILL")
    );
    assert_eq!(f.clock, GRACE + KILL_WAIT);
}

#[test]
fn b17_opens_the_same_third_party_app_bundle_in_the_background() {
    let mut f = Fake::new(Old::ExitsAfterTerm(Duration::ZERO));
    let r = recover(&mut f, &app_target(), &settings());
    assert!(r.ok && r.new_pid.is_none());
    let execs: Vec<_> = f
        .actions()
        .into_iter()
        .filter(|l| l.starts_with("exec"))
        .collect();
    assert_eq!(execs.len(), 1);
    assert!(execs[0].starts_with("exec /usr/bin/open -g /Applications/Editor.app @"));
}

#[test]
fn failing_or_missing_open_is_a_restart_failure() {
    for res in [
        out(1, "The file /Applications/Editor.app does not exist."),
        Err("cannot run `/usr/bin/open`: No such file or directory".to_string()),
    ] {
        let mut f = Fake::new(Old::ExitsAfterTerm(Duration::ZERO)).execs(vec![res]);
        let r = recover(&mut f, &app_target(), &settings());
        assert!(!r.ok && r.signalled);
        let d = r.detail.unwrap();
        assert!(d.contains("/usr/bin/open") && d.contains("501"), "{d}");
    }
}

#[test]
fn the_steps_performed_record_the_escalation_as_it_happened() {
    let describe = |r: &Recovery| {
        r.steps
            .iter()
            .map(RecoveryStep::describe)
            .collect::<Vec<_>>()
    };
    let mut f = Fake::new(Old::NeedsKill);
    let r = recover(&mut f, &app_target(), &settings());
    let d = describe(&r);
    assert!(
        d[0].starts_with("SIGTERM pid 501") && d[0].contains("sent"),
        "{d:?}"
    );
    assert!(d[1].contains("still running"), "{d:?}");
    assert!(
        d[2].starts_with("SIGKILL pid 501") && d[2].contains("sent"),
        "{d:?}"
    );
    assert!(d[3].contains("exited after"), "{d:?}");
    let mut f = Fake::new(Old::ExitsAfterTerm(Duration::from_millis(700)));
    let r = recover(&mut f, &app_target(), &settings());
    let d = describe(&r);
    assert!(d[1].contains("exited after 0.7 s"), "{d:?}");
    assert!(!d.iter().any(|l| l.starts_with("SIGKILL")), "{d:?}");
}

// --- Bad input: a pid gone or reused before the restart.

#[test]
fn a_pid_gone_before_the_restart_is_a_failure_and_nothing_is_reopened() {
    for (old, says) in [
        (Old::AlreadyGone, "already exited"),
        (Old::Reused, "another process"),
    ] {
        for target in [app_target(), service_target()] {
            let mut f = Fake::new(old);
            let r = recover(&mut f, &target, &settings());
            assert!(!r.ok && !r.signalled);
            assert!(r.detail.as_deref().unwrap().contains(says), "{r:?}");
            // The identity is checked before any signal (by the signal path's own re-read,
            // once): nothing is sent.
            assert!(!f.log.iter().any(|l| l.ends_with("-> Sent")), "{:?}", f.log);
            assert!(
                matches!(&r.steps[..], [RecoveryStep::Signal { result: Some(res), .. }] if res.starts_with("already gone") || res.starts_with("not sent")),
                "{:?}",
                r.steps
            );
        }
    }
}

#[test]
fn an_unreadable_start_time_means_nothing_is_signalled() {
    let mut t = app_target();
    t.identity = None;
    let mut f = Fake::new(Old::NeedsKill);
    let r = recover(&mut f, &t, &settings());
    assert!(!r.ok && !r.signalled);
    assert!(f.log.is_empty());
    assert!(r.detail.unwrap().contains("nothing was signalled"));
}

// --- The plan reported by --dry-run and --observations.

#[test]
fn the_plan_lists_the_exact_steps_of_each_sequence() {
    let lines = |t: &RecoveryTarget| {
        plan(t, &settings())
            .iter()
            .map(RecoveryStep::describe)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        lines(&app_target()),
        vec![
            "SIGTERM pid 501",
            "wait up to 2 s for pid 501 to exit",
            "SIGKILL pid 501 (only if the same process is still running after the grace period)",
            "wait up to 5 s for pid 501 to exit",
            "/usr/bin/open -g /Applications/Editor.app",
        ]
    );
    let s = lines(&service_target());
    assert_eq!(s[4], KICK_GUI.trim_start_matches("exec "));
    assert!(s[5].starts_with(KICK_USER.trim_start_matches("exec ")));
    assert!(s[5].contains("only if launchd reports the service not found in gui/501"));
    assert!(s[6].starts_with("wait up to 5 s for a replacement pid under /System/Library/"));
    let json = serde_json::to_value(plan(&app_target(), &settings())).unwrap();
    assert_eq!(json[0]["step"], "signal");
    assert_eq!(json[4]["argv"][1], "-g");
}
