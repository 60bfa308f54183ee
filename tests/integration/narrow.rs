//! Tables fit the width they are given ($COLUMNS when stdout is not a terminal): at 60
//! columns `limits`, `reap`, `top` and `doctor` drop or move columns and cut or wrap lines
//! instead of letting the terminal wrap them; wide, every column is there (issue 29 item 4).

use crate::probe::{mac_ceilings, snapshot_json};
use crate::support::Env;

/// A Mac with one parent (`agency`, pid 100) holding 150 zombies.
fn snapshot(env: &Env) -> std::path::PathBuf {
    let f = env.path("narrow.json");
    let ceilings = mac_ceilings(Some(4000), Some(2666), Some(4000), 300);
    std::fs::write(&f, snapshot_json("macos", 150, 150, ceilings)).unwrap();
    f
}

fn at(env: &Env, columns: usize, args: &[&str], snap: Option<&std::path::Path>) -> String {
    let mut c = env.cmd();
    c.env("COLUMNS", columns.to_string()).args(args);
    if let Some(s) = snap {
        c.arg("--snapshot").arg(s);
    }
    let out = c.output().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

fn assert_fits(what: &str, text: &str, width: usize) {
    assert!(!text.is_empty(), "{what} printed nothing");
    for l in text.lines() {
        assert!(
            l.chars().count() <= width,
            "{what} at {width}: a line of {} columns:\n{l}\n---\n{text}",
            l.chars().count()
        );
    }
}

#[test]
fn limits_reap_and_top_fit_60_columns_and_keep_every_column_when_wide() {
    let env = Env::new();
    let snap = snapshot(&env);
    let limits = at(&env, 60, &["limits"], Some(&snap));
    assert_fits("limits", &limits, 60);
    for key in ["rlimit-nproc", "2,666", "BINDS", "getrlimit(RLIMIT_NPROC)"] {
        assert!(limits.contains(key), "limits at 60 lost {key}:\n{limits}");
    }
    let reap = at(
        &env,
        60,
        &["reap", "--dry-run", "--min-zombies", "10"],
        Some(&snap),
    );
    assert_fits("reap", &reap, 60);
    for key in ["PID", "ZOMBIES", "VERDICT", "NAME", "agency", "150"] {
        assert!(reap.contains(key), "reap at 60 lost {key}:\n{reap}");
    }
    let top = at(&env, 60, &["top"], Some(&snap));
    assert_fits("top", &top, 60);
    for key in ["PID", "TREE", "CPU", "COMMAND", "agency"] {
        assert!(top.contains(key), "top at 60 lost {key}:\n{top}");
    }
    // Control: wide, every column is there and nothing is cut.
    let wide = at(&env, 200, &["limits"], Some(&snap));
    assert_fits("limits", &wide, 200);
    assert!(
        wide.lines()
            .any(|l| l.contains("rlimit-nproc") && l.contains("getrlimit")),
        "{wide}"
    );
    let wide = at(
        &env,
        200,
        &["reap", "--dry-run", "--min-zombies", "10"],
        Some(&snap),
    );
    assert!(
        wide.contains("CPU IDLE") && wide.contains("LOG AGE"),
        "{wide}"
    );
    let wide = at(&env, 200, &["top"], Some(&snap));
    assert_fits("top", &wide, 200);
    for key in ["PIDS", "STATE", "KB/s", "REASON"] {
        assert!(wide.contains(key), "top at 200 lost {key}:\n{wide}");
    }
    assert!(
        !top.contains("REASON"),
        "top at 60 kept every column:\n{top}"
    );
}

#[test]
fn doctor_fits_60_columns() {
    let env = Env::new();
    let narrow = at(&env, 60, &["doctor"], None);
    assert_fits("doctor", &narrow, 60);
    assert!(
        narrow.contains("processes") && narrow.contains("ok"),
        "{narrow}"
    );
    // Control: wide, a check and its verdict share a line.
    let wide = at(&env, 300, &["doctor"], None);
    assert!(
        wide.lines()
            .any(|l| l.trim_start().starts_with("processes") && l.contains("ok: headroom")),
        "{wide}"
    );
}
