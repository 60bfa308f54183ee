//! The benchmark scripts run on the machine they measure, again and again (`bench/all.py`):
//! what they make for a run goes with the run.

use std::path::Path;
use std::process::Command;

/// `bench/mcp_roundtrip.py` writes the SDK peer's script to a temp dir of its own; one run
/// (one round) with TMPDIR a fresh directory leaves it empty. The control: the run measured
/// all three servers, so the peer's script was written and used.
#[test]
#[cfg_attr(not(hr_mcp_python), ignore = "needs HEADROOM_MCP_PYTHON (see .ci/run)")]
fn mcp_roundtrip_leaves_no_temp_dir_behind() {
    let python = crate::mcp::sdk_python();
    let tmp = tempfile::tempdir().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/mcp_roundtrip.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(crate::support::headroom_bin())
        .args(["1", "--json"])
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let cases: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = cases.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}\n{stderr}");
    assert!(names.iter().any(|n| n.contains("echo")), "{names:?}");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}
