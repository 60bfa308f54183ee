//! The property test of `select`, with an oracle of its own.
//!
//! Each case is a generated process tree: headroom under a chain of ancestors (some missing
//! from the table, as a scan drops what it cannot read, and holding zombies themselves),
//! zombie parents hung under init, the chain or headroom, and their live children as real
//! records with varied names, executables, states, CPU histories and log directories
//! (absolute, relative to the child's cwd, relative with no cwd). Sessions come from that
//! tree through `liveness::assess`, exactly as `reap` builds them; the ancestry through
//! `ProcessTable::ancestry` with the missing ancestors read "directly". Pressure is often
//! exactly at the wall.
//!
//! Some parents are then left out of the session map (a caller that did not assess them).
//! The oracle (`props/oracle.rs`) re-derives, from the generated records alone and without the helpers
//! `select` uses (`session_children`, `Session::verdict`, `self_and_ancestors`,
//! `Emergency::clamped`/`under_pressure`/`needs_more_relief`), which parents are protected,
//! each parent's session verdict, the pressure, and which targets the override may add; then
//! checks every decision against it both ways: no protected parent is a target, and a parent
//! nothing protects is a target unless the run limit or the projected relief says otherwise.
//!
//! Mutations of `select` tried by hand against this test alone (CONTRIBUTING.md, "Mutation
//! testing"):
//! caught: dropping the foreign-uid, zombie-parent, identity, unreadable-session,
//! active-session, policy or directly-read-ancestor check; a parent missing from the session
//! map read as "no session"; the unclamped emergency; dropping the relief-reached check;
//! `<=` for `<` in the zombie threshold; `>` for `>=` in the run limit; the override flag
//! kept on a rejected parent. Not caught: the candidate order (any order satisfies these
//! checks), dropping the relief credit (an active parent after enough relief is rare in
//! the generated trees), and, masked because `ProcessTable::ancestry` (as reap builds
//! it) always holds pid 1 and the whole chain, `pid < 1` for `pid <= 1` and dropping the
//! table's own ancestors. `policy/tests.rs` has unit tests for those.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::*;
use crate::emergency::Emergency;
use crate::liveness::{self, ChildReader, Clocks, CpuEntry, CpuTracker, LogJudge};
use crate::patterns::{AllowDeny, Patterns};
use crate::process_table::ProcessTable;
use crate::snapshot::fixture::{OTHER_UID, UID, proc, snapshot, zombie};
use crate::snapshot::{ProcState, ProcessRecord};

mod generate;
mod oracle;

use generate::{arb_policy, arb_world};
use oracle::{oracle_ancestors, oracle_pressure, oracle_recovery, oracle_verdict};

const THRESHOLD_S: f64 = 7200.0;
const WALL_S: i64 = 1_788_000_000;
const AWAKE_MS: i64 = 50_000_000;
const CPU_NS: u64 = 90_000_000_000;
const SELF_PID: i32 = 9;
const WRAPPER: &str = "/Users/x/.config/agency/CurrentVersion/agency";
const PARENT_NAMES: [&str; 5] = ["agency", "node", "python3", "AgEnCy-x", "zsh"];
const PARENT_EXES: [Option<&str>; 4] = [
    Some(WRAPPER),
    Some("/usr/bin/node"),
    Some("/opt/homebrew/bin/python3"),
    None,
];

#[derive(Debug, Clone, Copy)]
enum Cpu {
    /// No stored reading: unknown.
    NoHistory,
    /// The counter did not move since a reading a minute ago; idle for this many seconds.
    Idle(i64),
    /// 10 s of CPU in the last minute.
    Worked,
    /// The counter cannot be read.
    Unreadable,
}

#[derive(Debug, Clone, Copy)]
enum Log {
    None,
    Absolute(i64),
    /// `--log-dir logs`, resolved against the child's cwd.
    Relative(i64),
    /// `--log-dir logs` with no cwd recorded: unknown.
    RelativeNoCwd,
}

#[derive(Debug, Clone)]
struct ChildSpec {
    /// 0: the parent's name; else one of `copilot`, `node`, `python3`.
    name: usize,
    /// 0: the parent's executable; 1: another; 2: unknown.
    exe: usize,
    state: ProcState,
    cpu: Cpu,
    log: Log,
}

#[derive(Debug, Clone)]
struct ParentSpec {
    zombies: u64,
    name: usize,
    exe: usize,
    own: bool,
    /// 0: running; 1: a zombie itself; 2: stopped.
    state: u8,
    started: bool,
    /// 0: init; 1: headroom; 2+: that chain member (if the chain is that long).
    under: usize,
    children: Vec<ChildSpec>,
}

#[derive(Debug, Clone)]
struct WorldSpec {
    /// headroom's ancestors below init, nearest first: (missing from the table, zombies).
    chain: Vec<(bool, u64)>,
    /// Whether the missing ancestors also count as unreadable entries of the scan.
    count_missing: bool,
    parents: Vec<ParentSpec>,
    used: u64,
    limit: Option<u64>,
    wall: bool,
}

/// The generated world, built: every record (the missing ones included), the snapshot's
/// records, the CPU history, the log judge's table, and each record's CPU idle and log age
/// as the oracle knows them from the spec.
struct Built {
    all: Vec<ProcessRecord>,
    visible: Vec<ProcessRecord>,
    unreadable: u64,
    history: Vec<CpuEntry>,
    logs: HashMap<PathBuf, i64>,
    known: HashMap<i32, (Option<f64>, Option<f64>)>,
}

fn build(w: &WorldSpec) -> Built {
    let mut all = vec![proc(1, 0, "launchd")];
    let mut missing = HashSet::new();
    let chain_pid = |i: usize| 10 + i as i32;
    let mut next_zombie = 5000;
    let mut zombies = |all: &mut Vec<ProcessRecord>, ppid: i32, n: u64| {
        for _ in 0..n {
            all.push(zombie(next_zombie, ppid));
            next_zombie += 1;
        }
    };
    for (i, &(gone, n)) in w.chain.iter().enumerate() {
        let up = if i + 1 < w.chain.len() {
            chain_pid(i + 1)
        } else {
            1
        };
        let mut p = proc(chain_pid(i), up, "agency");
        p.exe = Some(WRAPPER.into());
        all.push(p);
        if gone {
            missing.insert(chain_pid(i));
        }
        zombies(&mut all, chain_pid(i), n);
    }
    all.push(proc(SELF_PID, chain_pid(0), "headroom"));
    let mut history = Vec::new();
    let mut logs = HashMap::new();
    let mut known = HashMap::new();
    for (i, ps) in w.parents.iter().enumerate() {
        let pid = 100 + 10 * i as i32;
        let ppid = match ps.under {
            0 => 1,
            1 => SELF_PID,
            k if k - 2 < w.chain.len() => chain_pid(k - 2),
            _ => 1,
        };
        let mut p = proc(pid, ppid, PARENT_NAMES[ps.name]);
        p.exe = PARENT_EXES[ps.exe].map(str::to_string);
        p.uid = if ps.own { UID } else { OTHER_UID };
        p.state = match ps.state {
            1 => ProcState::Zombie,
            2 => ProcState::Stopped,
            _ => ProcState::Sleeping,
        };
        if !ps.started {
            p.start_time = None;
        }
        for (j, cs) in ps.children.iter().enumerate() {
            let (c, seen) = child(cs, &p, j, &mut history, &mut logs);
            known.insert(c.pid, seen);
            all.push(c);
        }
        all.push(p);
        zombies(&mut all, pid, ps.zombies);
    }
    let visible: Vec<ProcessRecord> = all
        .iter()
        .filter(|r| !missing.contains(&r.pid))
        .cloned()
        .collect();
    let unreadable = if w.count_missing {
        missing.len() as u64
    } else {
        0
    };
    Built {
        all,
        visible,
        unreadable,
        history,
        logs,
        known,
    }
}

/// Child `j` of parent `p`: its record, with its CPU reading added to `history` and its log
/// directory to `logs`; and its CPU idle and log age as the oracle knows them.
fn child(
    cs: &ChildSpec,
    p: &ProcessRecord,
    j: usize,
    history: &mut Vec<CpuEntry>,
    logs: &mut HashMap<PathBuf, i64>,
) -> (ProcessRecord, (Option<f64>, Option<f64>)) {
    let cpid = p.pid + 1 + j as i32;
    let name = ["", "copilot", "node", "python3"][cs.name];
    let mut c = proc(cpid, p.pid, if cs.name == 0 { &p.name } else { name });
    c.exe = match cs.exe {
        0 => p.exe.clone(),
        1 => Some(format!("/opt/tools/{cpid}")),
        _ => None,
    };
    c.state = cs.state;
    c.cpu_ns = Some(CPU_NS);
    let cpu = cpu_reading(&mut c, cs.cpu, history);
    let log = log_dir(&mut c, cs.log, name, logs);
    (c, (cpu, log))
}

/// `c`'s stored CPU reading as `cpu` says (into `history`); its CPU idle in seconds.
fn cpu_reading(c: &mut ProcessRecord, cpu: Cpu, history: &mut Vec<CpuEntry>) -> Option<f64> {
    let (cpid, st) = (c.pid, c.start_time.unwrap_or_default());
    let entry = |cpu_ns: u64, last: i64| CpuEntry {
        pid: cpid,
        start_time: st,
        cpu_ns,
        read_at_ms: AWAKE_MS - 60_000,
        last_active_ms: last,
    };
    match cpu {
        Cpu::NoHistory => None,
        Cpu::Unreadable => {
            c.cpu_ns = None;
            history.push(entry(CPU_NS, AWAKE_MS - 3_600_000));
            None
        }
        Cpu::Idle(s) => {
            history.push(entry(CPU_NS, AWAKE_MS - s * 1000));
            Some(s as f64)
        }
        Cpu::Worked => {
            history.push(entry(CPU_NS - 10_000_000_000, AWAKE_MS - 60_000));
            Some(0.0)
        }
    }
}

/// `c`'s log directory as `log` says: its argv (`name` first) and cwd, and the directory's
/// last activity (into `logs`); its log age in seconds, as far as it can be known.
fn log_dir(
    c: &mut ProcessRecord,
    log: Log,
    name: &str,
    logs: &mut HashMap<PathBuf, i64>,
) -> Option<f64> {
    let cpid = c.pid;
    let dir = PathBuf::from(format!("/work/{cpid}"));
    match log {
        Log::None => None,
        Log::Absolute(age) => {
            let d = PathBuf::from(format!("/logs/{cpid}"));
            c.argv = Some(vec![
                name.into(),
                "--log-dir".into(),
                d.display().to_string(),
            ]);
            logs.insert(d, WALL_S - age);
            Some(age as f64)
        }
        Log::Relative(age) => {
            c.argv = Some(vec![name.into(), "--log-dir=logs".into()]);
            c.cwd = Some(dir.display().to_string());
            logs.insert(dir.join("logs"), WALL_S - age);
            Some(age as f64)
        }
        Log::RelativeNoCwd => {
            c.argv = Some(vec![name.into(), "--log-dir".into(), "logs".into()]);
            // Stale logs where headroom happens to run must not count.
            logs.insert(PathBuf::from("logs"), WALL_S - 36_000);
            None
        }
    }
}

struct FakeLogJudge<'a>(&'a HashMap<PathBuf, i64>);

impl LogJudge for FakeLogJudge<'_> {
    fn last_activity(&self, dir: &Path, _now: i64) -> Option<i64> {
        self.0.get(dir).copied()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn select_agrees_with_the_oracle_on_generated_trees(
        w in arb_world(),
        p in arb_policy(),
        forget in prop::collection::vec(prop::bool::weighted(0.1), 8),
    ) {
        let b = build(&w);
        // Small limits too, where a few targets' relief reaches the recovery target.
        let used = match w.limit {
            Some(l) if w.wall => l,
            Some(l) if l < 64 => w.used % (l + 4),
            _ => w.used,
        };
        let mut snap = snapshot("linux", b.visible.clone());
        snap.self_pid = SELF_PID;
        snap.unreadable = b.unreadable;
        let table = ProcessTable::new(&snap);
        let ancestry = table
            .ancestry(SELF_PID, &mut |pid| b.all.iter().find(|r| r.pid == pid).map(|r| r.ppid))
            .map_err(|pid| TestCaseError::fail(format!("ancestor {pid} unreadable")))?;
        let parents: Vec<i32> = table.zombie_parents(UID).iter().map(|z| z.pid).collect();
        let mut tracker = CpuTracker::new(b.history.clone(), p_active());
        let argv = |pid: i32| table.get(pid).and_then(|r| r.argv.clone());
        let cwd = |pid: i32| table.get(pid).and_then(|r| r.cwd.clone()).map(PathBuf::from);
        let read = ChildReader { argv: &argv, cwd: &cwd };
        let clocks = Clocks { wall_s: WALL_S, awake_ms: Some(AWAKE_MS) };
        let mut sessions = liveness::assess(&table, &parents, &mut tracker, &read, &FakeLogJudge(&b.logs), clocks);
        // A caller that did not assess some parents: they must read as unreadable.
        let forgotten: HashSet<i32> = (0..w.parents.len())
            .filter(|&i| forget[i])
            .map(|i| 100 + 10 * i as i32)
            .collect();
        sessions.retain(|pid, _| !forgotten.contains(pid));
        let s = select(
            Situation { table: &table, uid: UID, self_pid: SELF_PID, ancestry: &ancestry, used, limit: w.limit, sessions: &sessions },
            &p,
        );

        let pressure = oracle_pressure(&p, used, w.limit);
        prop_assert_eq!(s.pressure, pressure);
        let protected = oracle_ancestors(&b.all);
        let mut zombie_counts: HashMap<i32, u64> = HashMap::new();
        for r in b.visible.iter().filter(|r| r.uid == UID && r.state == ProcState::Zombie) {
            *zombie_counts.entry(r.ppid).or_default() += 1;
        }
        let decided: HashMap<i32, u64> = s.decisions.iter().map(|d| (d.pid, d.zombies)).collect();
        prop_assert_eq!(&decided, &zombie_counts, "one decision per zombie parent");

        let recovery = oracle_recovery(&p);
        let mut projected = used;
        let mut taken = 0usize;
        for d in &s.decisions {
            let rec = b.visible.iter().find(|r| r.pid == d.pid);
            let verdict = match rec {
                Some(r) if !forgotten.contains(&r.pid) => oracle_verdict(&b, r),
                _ => SessionVerdict::Unreadable,
            };
            let Some(r) = rec.filter(|r| {
                d.pid > 1
                    && r.uid == UID
                    && !protected.contains(&r.pid)
                    && r.state != ProcState::Zombie
                    && r.start_time.is_some()
            }) else {
                prop_assert!(!d.is_target(), "unconditionally protected: {:?}", d);
                continue;
            };
            prop_assert_eq!(d.session_verdict, verdict, "{:?}", d);
            let guard_blocks = p.spare_sessions
                && (verdict == SessionVerdict::Unreadable
                    || (verdict == SessionVerdict::Active && !pressure));
            let needs_override = p.spare_sessions && verdict == SessionVerdict::Active;
            let relief_left = w.limit.is_some_and(|l| l > 0 && projected as f64 / l as f64 >= recovery);
            let policy_blocks = !p.allow_deny.permits(&r.name, r.exe.as_deref())
                || d.zombies < p.min_zombies;
            if guard_blocks || (needs_override && !relief_left) || policy_blocks {
                prop_assert!(!d.is_target(), "protected or not permitted: {:?}", d);
                continue;
            }
            if taken >= p.max_targets {
                prop_assert_eq!(d.reason, Some(SkipReason::RunLimitReached), "{:?}", d);
                continue;
            }
            prop_assert!(d.is_target(), "nothing protects it: {:?}", d);
            prop_assert_eq!(d.override_.is_some(), needs_override, "{:?}", d);
            taken += 1;
            projected = projected.saturating_sub(d.zombies + 1);
        }
        prop_assert_eq!(s.targets().count(), taken);
        prop_assert!(s.decisions.iter().filter(|d| !d.is_target()).all(|d| d.override_.is_none()));
    }
}

fn p_active() -> f64 {
    liveness::DEFAULT_ACTIVE_FRACTION
}
