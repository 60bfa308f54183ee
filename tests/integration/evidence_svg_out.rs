//! `evidence --svg PATH` writes where PATH says, and leaves PATH what it is: stdout for `-`
//! and `/dev/stdout`, a device node and a FIFO written and kept, a regular file replaced
//! whole, a symbolic link followed only when it is the user's or root's. Also `--tz local`
//! and `$COLUMNS`, which reach the same drawing.

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::support::{Env, is_root, require_tool};

fn with_fixture() -> Env {
    let env = Env::new();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/evidence-2026-08-29/evidence.csv");
    std::fs::copy(fixture, env.home.join("evidence.csv")).unwrap();
    env
}

fn run(env: &Env, args: &[&str]) -> (String, String, i32) {
    let out = env
        .cmd()
        .arg("evidence")
        .args(args)
        .current_dir(env.path(""))
        .output()
        .unwrap();
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap(),
    )
}

fn is_svg(s: &str) -> bool {
    s.starts_with("<svg") && s.trim_end().ends_with("</svg>") && !s.contains("\nevidence: ")
}

#[test]
fn a_dash_and_dev_stdout_write_the_svg_to_stdout_alone() {
    let env = with_fixture();
    let (out, _, code) = run(&env, &["--svg", "-"]);
    assert_eq!(code, 0);
    assert!(is_svg(&out), "{out}");
    assert!(!env.path("-").exists(), "no file named `-`");
    let (via_dev, _, code) = run(&env, &["--svg", "/dev/stdout"]);
    assert_eq!(code, 0);
    assert_eq!(via_dev, out, "/dev/stdout is standard output too");
    for other in ["--json", "--chart"] {
        let (_, err, code) = run(&env, &["--svg", "-", other]);
        assert_eq!(code, 64, "{other}: {err}");
        assert!(err.contains("`--svg -`"), "{err}");
    }
    // Control: a file name writes the file and the summary to stdout.
    let (out, _, code) = run(&env, &["--svg", "x.svg"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("evidence: 154 rows"), "{out}");
    assert!(is_svg(&std::fs::read_to_string(env.path("x.svg")).unwrap()));
}

#[test]
fn a_device_node_stays_a_device_node_and_a_regular_file_is_replaced_whole() {
    let env = with_fixture();
    if is_root() {
        // A /dev/null of our own in the test user's directory, where the test user may
        // rename over anything: the old writer replaced it with a regular file.
        let node = env.path("null");
        let c = std::ffi::CString::new(node.to_str().unwrap()).unwrap();
        // SAFETY: c is a NUL-terminated path; makedev(1, 3) is /dev/null's number.
        let rc = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
        assert_eq!(rc, 0, "mknod");
        std::fs::set_permissions(&node, std::fs::Permissions::from_mode(0o666)).unwrap();
        let (_, err, code) = run(&env, &["--svg", node.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        let m = std::fs::symlink_metadata(&node).unwrap();
        assert!(m.file_type().is_char_device(), "{:?}", m.file_type());
        // dev_t is u64 on Linux, i32 on macOS.
        #[cfg(target_os = "linux")]
        assert_eq!(m.rdev(), libc::makedev(1, 3));
        #[cfg(not(target_os = "linux"))]
        assert_eq!(m.rdev() as i64, i64::from(libc::makedev(1, 3)));
    }
    // Control: a regular file is replaced by a new one (another inode), its mode kept.
    let file = env.path("old.svg");
    std::fs::write(&file, "previous").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    if is_root() {
        crate::support::chown(&file, env.uid);
    }
    let before = std::fs::metadata(&file).unwrap().ino();
    let (_, err, code) = run(&env, &["--svg", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let m = std::fs::metadata(&file).unwrap();
    assert_ne!(m.ino(), before, "renamed over, never written in place");
    assert_eq!(m.permissions().mode() & 0o777, 0o644);
    assert!(is_svg(&std::fs::read_to_string(&file).unwrap()));
}

#[test]
fn a_fifo_receives_the_svg_and_stays_a_fifo() {
    let env = with_fixture();
    let fifo = env.path("pipe");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: c is a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
    if is_root() {
        crate::support::chown(&fifo, env.uid);
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let (_, err, code) = run(&env, &["--svg", fifo.to_str().unwrap()]);
    // Should headroom not have opened it, open it here so the reader sees its end.
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags_nonblock()
        .open(&fifo);
    let got = reader.join().unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(is_svg(&got), "{got}");
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
}

trait NonBlock {
    fn custom_flags_nonblock(&mut self) -> &mut Self;
}

impl NonBlock for std::fs::OpenOptions {
    fn custom_flags_nonblock(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_NONBLOCK)
    }
}

fn link(env: &Env, name: &str, to: &Path, owner: Option<u32>) -> PathBuf {
    let l = env.path(name);
    std::os::unix::fs::symlink(to, &l).unwrap();
    if let Some(uid) = owner {
        std::os::unix::fs::lchown(&l, Some(uid), Some(uid)).unwrap();
    }
    l
}

#[test]
fn the_user_s_own_link_is_written_through_and_stays_a_link() {
    let env = with_fixture();
    let target = env.path("target.svg");
    std::fs::write(&target, "previous").unwrap();
    if is_root() {
        crate::support::chown(&target, env.uid);
    }
    // The user's own link: the file it leads to is replaced, the link stays a link.
    let own = link(&env, "own.svg", &target, is_root().then_some(env.uid));
    let (_, err, code) = run(&env, &["--svg", own.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        std::fs::symlink_metadata(&own)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(is_svg(&std::fs::read_to_string(&target).unwrap()));
}

/// Root's links: one owned by root is followed (as /dev/stdout is), another user's planted
/// where this user writes is refused. Needs root to make links owned by others.
#[test]
#[cfg_attr(not(hr_root), ignore = "needs root")]
fn root_s_link_is_followed_and_another_user_s_link_is_refused() {
    crate::support::require_root();
    let env = with_fixture();
    let target = env.path("target.svg");
    std::fs::write(&target, "previous").unwrap();
    crate::support::chown(&target, env.uid);
    // Root's link (as /dev/stdout is): followed too.
    std::fs::write(&target, "previous").unwrap();
    let roots = link(&env, "roots.svg", &target, None);
    let (_, err, code) = run(&env, &["--svg", roots.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(is_svg(&std::fs::read_to_string(&target).unwrap()));
    // Another user's link, planted where this user writes: refused, nothing written.
    std::fs::write(&target, "precious").unwrap();
    let planted = link(&env, "planted.svg", &target, Some(65_534));
    let (_, err, code) = run(&env, &["--svg", planted.to_str().unwrap()]);
    assert_eq!(code, 3, "{err}");
    assert!(err.contains("owned by uid 65534"), "{err}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    assert!(
        std::fs::symlink_metadata(&planted)
            .unwrap()
            .file_type()
            .is_symlink()
    );
}

#[test]
fn tz_local_names_the_offset_and_ticks_on_the_local_hours() {
    let env = with_fixture();
    let chart = |tz: &[&str]| {
        let out = env
            .cmd()
            .args(["evidence", "--chart", "--width", "80"])
            .args(tz)
            .env("TZ", "XST-05:30")
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let local = chart(&["--tz", "local"]);
    assert!(
        local.contains("2026-08-29 18:30 → 08-30 07:00 UTC+05:30"),
        "{local}"
    );
    let labels = |out: &str| {
        let i = out.lines().position(|l| l.contains('└')).unwrap();
        out.lines().nth(i + 2).unwrap().to_string()
    };
    let ticks = labels(&local);
    assert!(
        ticks.contains("20:00") && ticks.contains("00:00"),
        "{ticks}"
    );
    let utc = chart(&[]);
    assert!(
        utc.contains("2026-08-29 13:00 → 08-30 01:30 UTC,"),
        "control: {utc}"
    );
    assert!(labels(&utc).contains("14:00"));
}

#[test]
fn columns_from_the_environment_are_clamped_like_width() {
    let env = with_fixture();
    for (cols, max) in [("999999999999999999999", 1000), ("5000", 1000), ("5", 30)] {
        let out = env
            .cmd()
            .args(["evidence", "--chart"])
            .env("COLUMNS", cols)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{cols}");
        let text = String::from_utf8(out.stdout).unwrap();
        let plot: Vec<&str> = text.lines().filter(|l| l.contains('┤')).collect();
        assert!(
            plot.iter().all(|l| l.chars().count() == max),
            "{cols}: {text}"
        );
    }
}

#[test]
#[cfg_attr(not(hr_tool_rsvg_convert), ignore = "needs rsvg-convert")]
fn a_hostile_log_makes_an_svg_librsvg_reads() {
    require_tool("rsvg-convert");
    let env = Env::new();
    let header = headroom_core::evidence_csv::columns().join(",");
    let mut text = format!("{header}\n");
    for (i, source) in [
        "x\u{FFFE}\u{FFFF}",
        "<b>&amp;",
        "\u{1b}]8;;x\u{7}y",
        "per-uid",
    ]
    .iter()
    .enumerate()
    {
        text.push_str(&format!(
            "2026-08-29T22:4{i}:41Z,501,3869,,3326,3869,{},\"{source}\",96.73,131,critical,10.0,786,4,false,87537,\"a\u{FFFE}\",600,no-session,poll,,\n",
            4000 + i
        ));
    }
    std::fs::write(env.home.join("evidence.csv"), text).unwrap();
    let svg = env.path("hostile.svg");
    let out = env
        .cmd()
        .args(["evidence", "--svg", svg.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let png = env.path("hostile.png");
    let r = std::process::Command::new("rsvg-convert")
        .arg(&svg)
        .arg("-o")
        .arg(&png)
        .output()
        .unwrap();
    assert!(
        r.status.success() && r.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
}
