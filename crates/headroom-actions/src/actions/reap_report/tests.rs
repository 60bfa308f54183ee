use super::*;
use crate::actions::terminate::Termination;
use crate::core::emergency::Emergency;
use crate::core::liveness::Session;
use crate::core::patterns::{AllowDeny, Patterns};

/// A target `agency` with no session (shared with `reap_verify`'s tests).
pub(crate) fn decision(pid: i32, zombies: u64, override_: Option<&'static str>) -> Decision {
    Decision {
        pid,
        name: "agency".into(),
        exe: None,
        zombies,
        verdict: ReapVerdict::Target,
        reason: None,
        session: Session::none(),
        session_verdict: SessionVerdict::NoSession,
        override_,
        identity: None,
    }
}

fn report(sel: &Selection, reaped: u64) -> ReapReport {
    let t = Termination {
        outcome: TerminationOutcome::Sigkill,
        signals: vec![Signal::Term, Signal::Kill],
        error: None,
    };
    let mut targets: Vec<TargetReport> = sel
        .targets()
        .map(|d| TargetReport::new(d, &t, d.zombies))
        .collect();
    for x in &mut targets {
        x.zombies_reaped = reaped;
        x.verified = reaped > 0;
    }
    ReapReport {
        at: String::new(),
        uid: 501,
        dry_run: false,
        pressure: sel.pressure,
        usage: crate::core::slot_reading::fixture::sample(),
        policy: Policy {
            allow_deny: AllowDeny {
                allow: Patterns::new(["agency"]),
                deny: Patterns::default(),
            },
            min_zombies: 100,
            max_targets: 10,
            spare_sessions: true,
            idle_threshold_s: 7200.0,
            emergency: Emergency::default(),
        },
        grace_ms: 2000,
        parents: vec![],
        targets,
        slots_freed: reaped + 1,
        verify_ms: 0,
        already_handled: vec![],
        summary: String::new(),
    }
}

#[test]
fn e20_an_override_kill_is_labelled_everywhere() {
    let sel = Selection {
        decisions: vec![decision(28979, 526, Some("emergency"))],
        pressure: true,
        projected_used: 2139,
    };
    let r = report(&sel, 526);
    assert_eq!(r.targets[0].override_, Some("emergency"));
    assert!(
        summary(&r, &sel).starts_with("Emergency cleanup: 526 zombies reaped"),
        "{}",
        summary(&r, &sel)
    );
    let json = serde_json::to_value(&r.targets[0]).unwrap_or_default();
    assert_eq!(json["override"], "emergency");
}

#[test]
fn e21_an_ordinary_reap_is_not_labelled() {
    let sel = Selection {
        decisions: vec![decision(15428, 318, None)],
        pressure: false,
        projected_used: 0,
    };
    let s = summary(&report(&sel, 318), &sel);
    assert_eq!(s, "318 zombies reaped, 319 slots freed.");
    assert!(!s.contains("Emergency"));
}

#[test]
fn summaries_say_one_in_the_singular() {
    let sel = Selection {
        decisions: vec![decision(15428, 1, None)],
        pressure: false,
        projected_used: 0,
    };
    let mut r = report(&sel, 1);
    r.slots_freed = 1;
    assert_eq!(summary(&r, &sel), "1 zombie reaped, 1 slot freed.");
    r.slots_freed = 2;
    assert_eq!(summary(&r, &sel), "1 zombie reaped, 2 slots freed.");
    r.dry_run = true;
    assert_eq!(summary(&r, &sel), "1 parent would be terminated.");
}

#[test]
fn no_effect_and_degraded_summaries_are_distinct() {
    let sel = Selection {
        decisions: vec![decision(1, 600, None)],
        pressure: false,
        projected_used: 0,
    };
    assert_eq!(
        summary(&report(&sel, 0), &sel),
        "Cleanup without effect: zombie count unchanged (600)."
    );
    let mut blind = decision(2, 900, None);
    blind.verdict = ReapVerdict::Skipped;
    blind.reason = Some(SkipReason::SessionSignalUnavailable);
    let sel = Selection {
        decisions: vec![blind],
        pressure: false,
        projected_used: 0,
    };
    let r = report(&sel, 0);
    assert_eq!(
        summary(&r, &sel),
        "No candidates: 1 parent's session signals are unreadable."
    );
}
