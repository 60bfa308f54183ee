use super::*;
use crate::core::limits::LimitSource;
use crate::core::reading::Level;
use crate::output::Printer;

/// The first incident's report at `level` (the usage to match), its top parent named
/// `name`: the figures' tests take each level with a hostile name and a plain one.
pub(super) fn at(level: Level, name: &str) -> ProbeReport {
    let mut r = report();
    r.top_parents[0].name = name.into();
    r.reading.level = level;
    let (used, eta) = match level {
        Level::Normal => (400, None),
        Level::Warning => (1500, Some(786)),
        Level::Critical => (2744, Some(0)),
        Level::Unknown => (2744, None),
    };
    r.reading.used = used;
    r.reading.processes = used;
    r.reading.eta_seconds = eta;
    r.reading.growth_per_min = eta.map(|_| 10.0);
    if level == Level::Unknown {
        r.reading.limit = None;
        r.reading.limit_source = None;
        r.reading.usage_pct = None;
        r.reading.free_slots = None;
    } else {
        r.reading.usage_pct = Some(round2(used as f64 * 100.0 / 2666.0));
        r.reading.free_slots = Some(2666u64.saturating_sub(used));
    }
    r
}

fn report() -> ProbeReport {
    ProbeReport {
        reading: SlotReading {
            at: "2026-08-29T22:42:41Z".into(),
            uid: 501,
            processes: 2744,
            tasks: None,
            zombies: 2038,
            used: 2744,
            limit: Some(2666),
            limit_source: Some(LimitSource::RlimitNproc),
            usage_pct: Some(102.93),
            free_slots: Some(0),
            level: Level::Critical,
            growth_per_min: Some(10.0),
            eta_seconds: Some(0),
            trend_samples: 4,
            partial: true,
        },
        os: "macos".into(),
        warn_pct: 50.0,
        crit_pct: 75.0,
        top_parents: vec![TopParent {
            pid: 28979,
            name: "agency\x1b[2J".into(),
            zombies: 526,
        }],
        history: true,
        unreadable: 3,
        others_hidden: false,
    }
}

#[test]
fn human_block_names_the_binding_limit_and_escapes_names() {
    let p = Printer::new(false, false, crate::output::ColorChoice::Never);
    let h = human(&report(), &p, true);
    assert!(h.contains("102.9 %  CRITICAL"), "{h}");
    assert!(
        h.contains("2,744 of 2,666 process slots used, 0 free; the binding limit is rlimit-nproc"),
        "{h}"
    );
    assert!(h.contains("agency\\u{1b}[2J"), "{h}");
    assert!(h.contains("2,038 zombies); 3 could not be read"), "{h}");
    assert!(!h.contains('\x1b'));
}

#[test]
fn prometheus_text_has_every_gauge_and_omits_unknowns() {
    let mut r = report();
    let t = prometheus(&r);
    assert!(
        t.contains("headroom_limit{uid=\"501\",limit_source=\"rlimit-nproc\"} 2666\n"),
        "{t}"
    );
    assert!(
        t.contains("headroom_usage_ratio{uid=\"501\",limit_source=\"rlimit-nproc\"} 1.0293"),
        "{t}"
    );
    assert!(t.contains("headroom_level{uid=\"501\"} 2\n"));
    assert!(t.contains("# TYPE headroom_eta_seconds gauge\nheadroom_eta_seconds{uid=\"501\"} 0\n"));
    assert!(!t.contains("headroom_tasks{"));
    r.reading.limit = None;
    r.reading.limit_source = None;
    r.reading.eta_seconds = None;
    let t = prometheus(&r);
    assert!(!t.contains("headroom_limit{") && !t.contains("headroom_eta_seconds{"));
    assert!(t.ends_with('\n'));
}
