//! `top` and `calibrate` on real trees (Linux): a 200 MiB test tree above a small one.

use crate::schema;
use crate::support::Env;

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn top_lists_a_big_test_tree_above_a_small_one() {
    let env = Env::new();
    crate::support::require_root();
    let mut big = env.spawn(
        env.fixture(),
        &["hog", "--mib", "100", "--children", "1", "--depth", "2"],
    );
    big.expect("ready ");
    big.expect("ready ");
    let mut small = env.spawn(env.fixture(), &["tree", "--depth", "2", "--fanout", "2"]);
    small.ready();

    let out = env
        .cmd()
        .args(["top", "--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let r: schema::Top = schema::read(&out.stdout);
    assert_eq!(r.schema, "headroom.top/2");
    assert_eq!(r.uid, env.uid);
    assert!(
        r.sample_ms >= 400,
        "two samples ~500 ms apart: {}",
        r.sample_ms
    );
    let pos = |pid: i32| r.processes.iter().position(|row| row.pid == pid);
    let (b, s) = (pos(big.pid).unwrap(), pos(small.pid).unwrap());
    assert!(b < s, "largest first: {:?}", r.processes);
    let row = &r.processes[b];
    assert!(row.footprint_kb >= 195 * 1024, "{row:?}");
    assert_eq!(
        (row.process_count, row.tree_pids.len(), row.state.as_str()),
        (2, 2, "running")
    );
    assert!(row.cmd.contains("hog --mib 100"), "{row:?}");
    assert_eq!(r.processes[s].process_count, 3);
    assert!(["PARK_IDLE", "GROWTH_RATE", "PRESSURE", "NONE"].contains(&row.reason_code.as_str()));
    assert!(!row.reason.is_empty());
    // 200 MiB is below the default 512 MiB park threshold, and above 100.
    assert!(!row.park_candidate, "{row:?}");
    let out = env
        .cmd()
        .args([
            "top",
            "--json",
            "--pid",
            &big.pid.to_string(),
            "--park-min-mb",
            "100",
        ])
        .assert()
        .success()
        .get_output()
        .clone();
    let r: schema::Top = schema::read(&out.stdout);
    assert_eq!(r.processes.len(), 1);
    assert!(
        r.processes[0].park_candidate,
        "idle and over 100 MiB: {:?}",
        r.processes[0]
    );
    assert_eq!(r.processes[0].reason_code, "PARK_IDLE");

    // The human table shows the same rows.
    let out = env.cmd().arg("top").assert().success().get_output().clone();
    let text = String::from_utf8(out.stdout).unwrap();
    let line = |pid: i32| {
        text.lines()
            .position(|l| l.trim_start().starts_with(&format!("{pid} ")))
    };
    assert!(line(big.pid).unwrap() < line(small.pid).unwrap(), "{text}");
    drop((big, small));
}

#[test]
fn top_and_calibrate_refuse_what_does_not_exist() {
    let env = Env::new();
    env.cmd()
        .args(["top", "--pid", "999999"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no such process `999999`"));
}

#[test]
fn calibrate_suggests_a_limit_in_bytes() {
    let env = Env::new();
    let out = env
        .cmd()
        .args(["calibrate", "--json", "--duration", "1s"])
        .assert()
        .success()
        .get_output()
        .clone();
    let r: schema::Calibrate = schema::read(&out.stdout);
    assert_eq!(r.schema, "headroom.calibrate/1");
    assert!(r.samples >= 2, "{r:?}");
    let total = r.total_bytes;
    let s = r.suggested_limit_bytes;
    assert!(s <= total / 5 * 4, "at most 80 %: {r:?}");
    assert!(s >= (total / 5 * 3).min(total / 5 * 4) - (1 << 20), "{r:?}");
    assert!(s >= (4u64 << 30).min(total / 5 * 4) - (1 << 20), "{r:?}");
    assert_eq!(r.suggested_limit, format!("{}M", s >> 20));
    assert!(r.largest_trees.len() <= 3);
    // Piped: no progress bar, nothing on stderr.
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = env
        .cmd()
        .args(["calibrate", "--duration", "1s"])
        .assert()
        .success()
        .get_output()
        .clone();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!("headroom run --limit {}", r.suggested_limit)),
        "{text}"
    );
}
