//! Fault 3: SIGKILL at random points while headroom writes its state and evidence: at least
//! 1,000 kills at random delays against `probe` (history and evidence each run) and
//! `watch --interval 100ms`, both at once on one state directory. Guaranteed: every state
//! file parses (or is set aside with a message), the evidence log holds whole rows only,
//! no temporary outlives the next run, and the next run works.
//!
//! The kill loop signals only the children it spawned itself, by their `Child` handle, and
//! only before it has waited for them (so the pid cannot have been reused).

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{check_state_files, require_sandbox};
use crate::support::Env;

/// xorshift64*: reproducible delays from a printed seed (HEADROOM_FAULT_SEED replays one).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

#[derive(Default)]
struct Tally {
    /// SIGKILLs delivered to a running headroom (not to setpriv before its exec).
    kills: AtomicU64,
    /// Runs that ended by themselves before their kill.
    completed: AtomicU64,
}

fn spawn(env: &Env, args: &[&str]) -> Child {
    let mut argv = env.as_test_user();
    argv.push(env.headroom_path().into());
    let mut c = Command::new(&argv[0]);
    c.args(&argv[1..])
        .args(args)
        .env("HEADROOM_HOME", &env.home)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    crate::support::spawn_retrying(&mut c)
}

/// Whether our child `pid` is headroom already (setpriv has exec'd it).
fn is_headroom(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "headroom")
}

/// Start `args`, wait a random delay below `max_us`, SIGKILL it if it still runs, reap it.
fn kill_loop(env: &Env, args: &[&str], rng: &mut Rng, max_us: u64, goal: u64, t: &Tally) {
    let mut mine = 0;
    while mine < goal {
        let mut child = spawn(env, args);
        std::thread::sleep(Duration::from_micros(rng.below(max_us)));
        match child.try_wait().unwrap() {
            Some(_) => {
                t.completed.fetch_add(1, Ordering::SeqCst);
            }
            None => {
                let counted = is_headroom(child.id());
                // Our own unreaped child: the pid is still ours.
                child.kill().unwrap();
                let status = child.wait().unwrap();
                if counted && std::os::unix::process::ExitStatusExt::signal(&status) == Some(9) {
                    t.kills.fetch_add(1, Ordering::SeqCst);
                    mine += 1;
                }
                continue;
            }
        }
        child.wait().unwrap();
    }
}

/// How long one probe takes here, start to exit, in µs.
fn probe_us(env: &Env) -> u64 {
    let started = Instant::now();
    for _ in 0..5 {
        let mut c = spawn(env, &["probe", "--json"]);
        c.wait().unwrap();
    }
    (started.elapsed().as_micros() / 5) as u64
}

#[test]
#[cfg_attr(not(hr_root), ignore = "needs root (namespaces, a private uid)")]
fn a_thousand_sigkills_mid_write_leave_every_file_whole() {
    let env = Env::new();
    require_sandbox(&env);
    let _heavy = super::heavy();
    let seed = std::env::var("HEADROOM_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    let probe = probe_us(&env);
    eprintln!("crash: HEADROOM_FAULT_SEED={seed}; a probe takes {probe} µs here");
    let tally = Tally::default();
    let started = Instant::now();
    std::thread::scope(|s| {
        let (env, tally) = (&env, &tally);
        // Two probe loops (cron runs overlapping, contending for the locks) and a watch.
        for k in 0..2u32 {
            s.spawn(move || {
                let mut rng = Rng(seed.rotate_left(k * 7));
                // Delays across a whole run: start-up, reading, history, evidence, exit.
                // Capped: on a loaded machine a probe can take 0.6 s, and 900 kills across
                // that would take minutes; the watch loop keeps hitting writes either way.
                kill_loop(
                    env,
                    &["probe", "--json"],
                    &mut rng,
                    probe.min(100_000),
                    450,
                    tally,
                );
            });
        }
        s.spawn(move || {
            let mut rng = Rng(seed.rotate_left(17));
            let watch = [
                "watch",
                "--interval",
                "100ms",
                "--json",
                "--no-auto-reap",
                "--no-hangs",
            ];
            // Up to two rounds each: killed inside a round or between rounds.
            kill_loop(env, &watch, &mut rng, 250_000, 100, tally);
        });
    });
    let kills = tally.kills.load(Ordering::SeqCst);
    let completed = tally.completed.load(Ordering::SeqCst);
    let took = started.elapsed();

    // Before any repair: the state files parse (the evidence log may end in a torn row,
    // which the next writer cuts off).
    let evidence = env.home.join("evidence.csv");
    let torn = std::fs::read(&evidence).is_ok_and(|b| !b.is_empty() && !b.ends_with(b"\n"));
    let mut aside = 0;
    for e in std::fs::read_dir(&env.home).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.contains(".corrupt-") {
            aside += 1;
        } else if name.ends_with(".json") {
            let bytes = std::fs::read(e.path()).unwrap();
            serde_json::from_slice::<serde_json::Value>(&bytes)
                .unwrap_or_else(|err| panic!("{name} is torn ({err})"));
        }
    }
    assert_eq!(
        aside, 0,
        "atomic replace: nothing should ever need setting aside"
    );

    // The next run works, and leaves everything whole.
    let next = env
        .cmd()
        .args(["probe", "--json"])
        .env("HEADROOM_HOME", &env.home)
        .output()
        .unwrap();
    assert!(next.status.code().is_some_and(|c| c <= 3), "{next:?}");
    assert!(
        next.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&next.stderr)
    );
    let w = env
        .cmd()
        .args(["watch", "--once", "--json", "--no-hangs", "--no-auto-reap"])
        .output()
        .unwrap();
    let text = String::from_utf8(w.stdout).unwrap();
    assert!(!text.contains("\"notice\""), "{text}");
    let (files, rows) = check_state_files(&env.home);
    let rows = rows.len() as u64;
    eprintln!(
        "crash: {kills} SIGKILLs in {took:.1?} (+{completed} runs that finished first); \
         {rows} whole evidence rows (at least {} expected: every finished run and the two \
         after), torn tail before the next run: {torn}, {files} files checked, {aside} set aside",
        completed + 2
    );
    assert!(kills >= 1000, "{kills}");
    assert!(
        rows >= completed + 2,
        "{rows} rows for {completed} finished runs"
    );
}
