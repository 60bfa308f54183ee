use super::human::truncate;
use super::*;
use crate::output::Printer;

fn report(trees: usize) -> TopReport {
    let row = |i: usize| TopRow {
        pid: 1000 + i as i32,
        cmd: format!("cargo build --release --workspace --all-features job {i}"),
        footprint_kb: (trees - i) as u64 * 1024,
        tree_pids: vec![1000 + i as i32],
        process_count: 1,
        state: TreeState::Running,
        growth_kb_s: 300,
        cpu_pct: Some(50.0),
        park_candidate: i == 0,
        reason_code: if i % 4 == 0 {
            ReasonCode::GrowthRate
        } else {
            ReasonCode::None
        },
        reason: "growing 300 KB/s, faster than 200 KB/s".into(),
    };
    TopReport {
        at: "t".into(),
        uid: 501,
        free_pct: Some(40),
        total_bytes: None,
        available_bytes: None,
        park_min_mb: 512,
        sample_ms: 500,
        processes: (0..trees).map(row).collect(),
    }
}

#[test]
fn a_watched_screen_fits_the_terminal_height_and_keeps_its_header() {
    let p = Printer::new(false, false, crate::output::ColorChoice::Never);
    for (w, h) in [(60, 12), (80, 24), (200, 8)] {
        let s = human_sized(&report(30), &p, Some(w), Some(h));
        let lines: Vec<&str> = s.lines().collect();
        assert!(lines.len() < h, "{w}x{h}: {} lines\n{s}", lines.len());
        assert!(lines[0].starts_with("headroom top: 30 trees"), "{s}");
        assert!(lines[1].trim_start().starts_with("PID"), "{s}");
        assert!(lines.iter().any(|l| l.starts_with("… and ")), "{s}");
        assert!(lines.iter().all(|l| l.chars().count() <= w), "{s}");
        // The largest tree is the one kept.
        assert!(lines[2].trim_start().starts_with("1000 "), "{s}");
    }
    // Control: without a height, the usual 25 rows.
    let s = human_sized(&report(30), &p, None, None);
    assert!(s.lines().count() > 25, "{s}");
}

use crate::core::snapshot::fixture::MIB;

/// `judge`'s verdict and its reason in words, as a row gets them.
struct Judged {
    park_candidate: bool,
    reason_code: ReasonCode,
    reason: String,
}

fn judge(f: &TreeFacts, park_min_bytes: u64, free_pct: Option<f64>) -> Judged {
    let v = super::judge(f, park_min_bytes, free_pct);
    Judged {
        park_candidate: v.park_candidate(),
        reason_code: v.reason_code,
        reason: reason(&v, f, park_min_bytes, free_pct),
    }
}

fn facts(mib: u64, cpu: Option<f64>, growth: i64) -> TreeFacts {
    TreeFacts {
        state: TreeState::Running,
        footprint_bytes: mib * MIB,
        change: TreeChange {
            growth_kb_s: growth,
            cpu_fraction: cpu,
        },
        refusal: None,
        window_ms: 500,
    }
}

#[test]
fn reason_codes_in_caproom_precedence() {
    let v = judge(&facts(600, Some(0.001), 5000), 512 * MIB, Some(5.0));
    assert!(v.park_candidate);
    assert_eq!(v.reason_code, ReasonCode::ParkIdle);
    assert!(
        v.reason.contains("idle") && v.reason.contains("600 MiB ≥ 512 MiB"),
        "{}",
        v.reason
    );

    let v = judge(&facts(600, Some(0.5), 5000), 512 * MIB, Some(5.0));
    assert_eq!(
        (v.park_candidate, v.reason_code),
        (false, ReasonCode::GrowthRate)
    );
    assert!(v.reason.contains("busy: 50.0 % CPU"), "{}", v.reason);

    let v = judge(&facts(100, Some(0.0), 100), 512 * MIB, Some(5.0));
    assert_eq!(v.reason_code, ReasonCode::Pressure);
    assert!(v.reason.contains("100 MiB < 512 MiB"), "{}", v.reason);

    let v = judge(&facts(100, Some(0.0), 100), 512 * MIB, Some(40.0));
    assert_eq!(v.reason_code, ReasonCode::None);
    let v = judge(&facts(100, Some(0.0), 100), 512 * MIB, None);
    assert_eq!(
        v.reason_code,
        ReasonCode::None,
        "unknown free is not pressure"
    );

    let mut f = facts(900, None, 0);
    assert!(!judge(&f, 512 * MIB, None).park_candidate, "unknown CPU");
    f.change.cpu_fraction = Some(0.0);
    f.refusal = Some("headroom runs inside it".into());
    let v = judge(&f, 512 * MIB, None);
    assert!(!v.park_candidate && v.reason.contains("headroom runs inside it"));
    f.refusal = None;
    f.state = TreeState::Parked;
    assert_eq!(judge(&f, 512 * MIB, None).reason, "already parked");
}

#[test]
fn truncation_is_char_safe() {
    assert_eq!(truncate("héllo wörld", 5), "héll…");
    assert_eq!(truncate("short", 60), "short");
    assert_eq!(truncate("🦀🦀🦀", 2), "🦀…");
}
