use super::*;
use crate::core::session_log::FileSkipReason;

const NOW: i64 = 1_787_995_307; // 2026-08-29T09:21:47Z

fn report(verdict: FileVerdict, mtime: Option<i64>) -> FileReport {
    FileReport {
        name: "process-\x1b[2J.log".into(),
        size: 1_200_000,
        mtime,
        verdict,
        bytes_read: 65_536,
        micros: 17_042,
        tail_only: false,
        error: None,
    }
}

fn plan(replay: bool) -> LogProbePlan {
    LogProbePlan {
        dir: "/logs/s1".into(),
        now: NOW,
        replay,
        limits: ReaderLimits::default(),
    }
}

#[test]
fn human_lines_carry_every_verdict_and_escape_names() {
    let files = vec![
        report(FileVerdict::Work { at: NOW - 660 }, Some(NOW - 60)),
        report(
            FileVerdict::HeartbeatOnly {
                since_at_least: NOW - 6 * 3600,
            },
            Some(NOW + 120),
        ),
        report(FileVerdict::Unknown, None),
        report(FileVerdict::Skipped(FileSkipReason::Empty), Some(NOW)),
    ];
    let dir = DirReport {
        files,
        last_activity: Some(NOW - 660),
        verdict: DirVerdict::Work { at: NOW - 660 },
        micros: 20_000,
    };
    let r = LogProbeReport::new(&plan(true), &dir);
    let p = Printer::new(false, false, crate::output::ColorChoice::Never);
    let h = human(&r, &p);
    assert!(!h.contains('\x1b'), "{h}");
    assert!(h.contains("process-\\u{1b}[2J.log"), "{h}");
    assert!(
        h.contains("as of 2026-08-29T09:21:47Z; later lines ignored"),
        "{h}"
    );
    assert!(h.contains("mtime 1 min ago"), "{h}");
    assert!(h.contains("work 11 min ago  [17.0 ms, 64 KiB read]"), "{h}");
    assert!(h.contains("mtime 2 min later"), "{h}");
    assert!(h.contains("heartbeat only for at least 6 h"), "{h}");
    assert!(h.contains("mtime unknown"), "{h}");
    assert!(h.contains("unknown: no timestamped line read"), "{h}");
    assert!(h.contains("skipped: empty\n"), "{h}");
    assert!(
        h.contains("directory: work 11 min ago (at 2026-08-29T09:10:47Z)"),
        "{h}"
    );
    assert_eq!(r.directory.age_seconds, Some(660));
    assert_eq!(r.files[1].mtime_age_seconds, Some(-120));
    assert_eq!(r.files[3].skip_reason, Some("empty"));
    assert_eq!((r.files[0].read_ms, r.files[0].read_us), (17, 17_042));
}

#[test]
fn at_least_never_says_at_least_over() {
    assert_eq!(at_least(3 * 86_400), "2 days");
    assert_eq!(at_least(7200), "2 h");
}

#[test]
fn at_is_rfc3339_with_any_offset_and_not_in_the_future() {
    let now = NOW + 86_400;
    assert_eq!(parse_at("2026-08-29T09:21:47Z", now).unwrap(), NOW);
    assert_eq!(parse_at("2026-08-29T09:21:47.5Z", now).unwrap(), NOW);
    assert_eq!(parse_at("2026-08-29T11:21:47+02:00", now).unwrap(), NOW);
    assert_eq!(parse_at("2026-08-29T04:51:47-04:30", now).unwrap(), NOW);
    assert_eq!(parse_at("2026-08-29T09:21:47+00:00", now).unwrap(), NOW);
    let e = parse_at("2026-08-29T09:21:47Z", NOW - 1).unwrap_err();
    assert!(e.to_string().contains("in the future"), "{e}");
    assert!(
        parse_at("2026-08-29T09:21:47Z", NOW).is_ok(),
        "now itself is the past"
    );
    for bad in [
        "2026-08-29T09:21:47+24:00",
        "2026-08-29T09:21:47+0200",
        "x+éé:é",
        "+é:éé",
    ] {
        assert!(parse_at(bad, now).is_err(), "{bad}");
    }
    for bad in [
        "yesterday",
        "2026-08-29 09:21:47",
        "2026-13-01T00:00:00Z",
        "",
        "\x1b[2J",
    ] {
        let e = parse_at(bad, now).unwrap_err();
        assert!(!e.to_string().contains("timestamp format"), "{e}");
        assert!(e.downcast_ref::<exit::UsageError>().is_some(), "{bad}");
        assert!(!e.to_string().contains('\x1b'));
    }
}
