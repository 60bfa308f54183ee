#!/usr/bin/env python3
"""One entry point for headroom's side-by-side benchmarks (issue 31 item 4).

    bench/all.py [--runs N] [--secs S] [--sizes 100,1400,6000] [--earlyoom PATH] [--table-every SECS]
                 [--only NAME]

Every comparison runs headroom and its peer interleaved, in the same run on the same table
and load, N times each, and prints min / median / max of each and the ratio of the medians
(peer / headroom: above 1 is headroom cheaper or faster). The machine (cores, load, task
count) is printed first: on a shared machine compare ratios, not absolute figures.

Comparisons (Linux):
  probe   `probe --json --no-history` vs `ps -e -o pid,ppid,stat,uid,comm` on a table with
          3,000 zombies of a fixture (wall time per run, ms).
  watch   `watch --interval 1s` idle vs `earlyoom --dryrun` (its default 1 s), both running at
          once and measured over the same windows (schedstat of every thread), with 100,
          1,400 or 6,000 extra processes of the benchmark's (sleeping fixtures up to 1,400,
          zombies above: a zombie costs watch's scan the same and the machine no memory).
          Two rows a size: `quiet`, S seconds of quiet rounds alone (no whole-table round in
          the window, checked); `period`, one whole `--table-every` (4 min) from the same
          start, so its rounds are the quiet ones and exactly one whole-table round, with the
          table round's own cost derived from the two. watch's start-up and first round (a
          whole-table one) are counted apart, before either window.
  run     `run --limit 1G` vs the `ps` loop a user would write (bench/ps_watchdog.sh) around
          an idle 20-process tree, CPU ms over S seconds (headroom: its own schedstat; the
          loop: its ticks and its reaped children's, as bench/run_limit.sh counts them).

Also (NAME for --only; sized by [--log-mb MB] [--evidence-rows N]):
  probe   beside ps, the floor readers of bench/floor.c (built with `cc -O2`) on the same
          table: `stat` of every process (no uid), and `status` of every process (state,
          real uid, threads: what probe needs); 4N runs of each.
  log     `log-probe` vs `grep -c ''` on bench/log_probe.sh's session log (MB, default 250),
          4N runs each.
  overshoot  a child growing ~1,000 MiB/s past `run --limit 256M`: how far past the limit it
          got, `--enforce poll`, and `--enforce kernel` in a cgroup delegated to the
          benchmark's uid, vs the ps loop (bench/run_limit.sh's enforcement; root).
  pressure   a working set thrashing in a 48 MiB cgroup to watch's guard acting, the PSI
          source armed vs `pressure = "off"` (the 60 s timer): bench/pressure_reaction.sh,
          N runs each (root and PSI; skipped with the reason otherwise).
  mcp     `headroom mcp` start-up to initialized and a call's round trip vs the Python SDK's
          own server, both from the SDK's client (bench/mcp_roundtrip.py, 2N rounds; needs
          HEADROOM_MCP_PYTHON, a python with the `mcp` package).
  evidence   `evidence --chart` and `--svg` on bench/evidence.sh's log of N rows (default
          1,000,000): wall, CPU and peak RSS.

Every process it starts runs under the fixture's supervisor, which kills all of them when
this script closes its stdin (or dies), or is a short run it waits for. The comparisons
other than probe, watch and run are in bench/more_comparisons.py.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import more_comparisons

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REL = os.path.join(ROOT, "target", "release")
HR = os.path.join(REL, "headroom")
FIX = os.path.join(REL, "examples", "hr-fixture")
HZ = os.sysconf("SC_CLK_TCK")


def machine():
    with open("/proc/loadavg") as f:
        la = f.read().split()
    return f"{os.cpu_count()} cores, load {' '.join(la[:3])}, {la[3].split('/')[1]} tasks"


class Supervised:
    """PROG under `hr-fixture supervise`: ended with everything below it on close()."""

    def __init__(self, argv, ready=True):
        self.p = subprocess.Popen(
            [FIX, "supervise", "--", *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        # The program's own lines can come before the supervisor's `started`.
        self.pid, seen_ready = None, not ready
        while self.pid is None or not seen_ready:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit(f"the supervisor of {argv[0]} ended early")
            if line.startswith("started "):
                self.pid = int(line.split()[1])
            seen_ready = seen_ready or line.startswith("ready")

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def schedstat_ns(pid):
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[0])


def ticks_ms(pid):
    with open(f"/proc/{pid}/stat", errors="replace") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in rest[11:15]) * 1000 // HZ


def spread(xs):
    return min(xs), statistics.median(xs), max(xs)


def row(label, unit, ours, peer, peer_label):
    a, b = spread(ours), spread(peer)
    ratio = b[1] / a[1] if a[1] else float("inf")
    fmt = lambda t: "/".join(f"{v:.2f}" for v in t)  # noqa: E731
    print(
        f"{label:<34} headroom {fmt(a)} {unit}   {peer_label} {fmt(b)} {unit}   "
        f"ratio {ratio:.2f}x   (min/median/max of {len(ours)})"
    )
    sys.stdout.flush()


def timed(argv, env=None):
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return (time.perf_counter() - t) * 1000


def floor_reader(tmp):
    """bench/floor.c built with `cc -O2` in TMP: its path, or None and why not."""
    cc = shutil.which("cc")
    if not cc:
        return None, "no C compiler (cc)"
    exe = os.path.join(tmp, "floor")
    r = subprocess.run([cc, "-O2", "-o", exe, os.path.join(ROOT, "bench", "floor.c")], capture_output=True, text=True)
    if r.returncode:
        return None, f"cc -O2 bench/floor.c failed: {r.stderr.strip()}"
    return exe, None


def bench_probe(args, env):
    leak = Supervised([FIX, "leak", "--zombies", "3000"])
    tmp = tempfile.mkdtemp(prefix="headroom-floor-")
    try:
        floor, why = floor_reader(tmp)
        cmds = {"probe": [HR, "probe", "--json", "--no-history"], "ps": ["ps", "-e", "-o", "pid,ppid,stat,uid,comm"]}
        if floor:
            cmds["floor stat"] = [floor, "stat"]
            cmds["floor status"] = [floor, "status"]
        # A run is one process: a few more samples than the slow comparisons take.
        times = {k: [] for k in cmds}
        for _ in range(args.runs * 4):
            for k, argv in cmds.items():
                times[k].append(timed(argv, env))
        row(f"probe, 3,000 zombies ({machine()})", "ms", times["probe"], times["ps"], "ps")
        if not floor:
            print(f"{'':<34} floors: skipped ({why})")
            return
        # The floors are below probe: the ratio printed is probe's median over the floor's
        # (the target is <= 1.2 for the floor that gives the same facts, `status`).
        probe_mid = statistics.median(times["probe"])
        for k, facts in (("floor stat", "state only"), ("floor status", "state, real uid, threads")):
            lo, mid, hi = spread(times[k])
            print(
                f"{'':<34} {k} ({facts}) {lo:.2f}/{mid:.2f}/{hi:.2f} ms: probe {probe_mid / mid:.2f}x the floor"
            )
    finally:
        leak.close()
        shutil.rmtree(tmp, ignore_errors=True)


def cpu_over(pid, secs, own=True):
    read = schedstat_ns if own else (lambda p: ticks_ms(p) * 1_000_000)
    c0, t0 = read(pid), time.monotonic()
    time.sleep(secs)
    c1, t1 = read(pid), time.monotonic()
    return (c1 - c0) / 1e6 * secs / (t1 - t0)


def extra_processes(n):
    if n <= 1400:
        # A tree of sleeping processes: depth 3, fanout f gives 1 + f + f*f.
        f = 1
        while 1 + f + f * f < n:
            f += 1
        return Supervised([FIX, "tree", "--depth", "3", "--fanout", str(f)])
    return Supervised([FIX, "leak", "--zombies", str(n)])


def cpu_ns(pid):
    """Every thread's CPU time (watch has an output thread; earlyoom one thread)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            total += int(f.read().split()[0])
    return total


def next_reading(s):
    for line in s.p.stdout:
        if '"type":"reading"' in line:
            return True
    return False


def watch_started(headroom, table_every):
    """`watch --interval 1s --table-every SECS` started and its first reading read; prints the
    machine and watch's start-up CPU (bench/watch_periods.py, bench/cold_round.py)."""
    s = Supervised(
        [headroom, "watch", "--interval", "1s", "--table-every", f"{table_every:g}s",
         "--no-auto-reap", "--no-hangs", "--json"],
        ready=False,
    )
    if not next_reading(s):
        s.close()
        raise SystemExit("watch ended before its first reading")
    print(f"machine: {machine()}; start-up and first round {cpu_ns(s.pid) / 1e6:.2f} ms", flush=True)
    return s


def bench_watch(args, env):
    if not args.earlyoom:
        print("watch: skipped (no earlyoom: --earlyoom PATH, or apt-get install earlyoom)")
        return
    every = args.table_every
    if args.secs + 4 >= every:
        raise SystemExit(f"--secs {args.secs} must be below --table-every {every} less 4 s")
    for n in args.sizes:
        extra = extra_processes(n)
        try:
            quiet, quiet_peer, period, period_peer, table, first, spans = [], [], [], [], [], [], []
            for _ in range(args.runs):
                peer = Supervised([args.earlyoom, "--dryrun"], ready=False)
                time.sleep(2)  # its start-up
                s = Supervised(
                    [HR, "watch", "--interval", "1s", "--table-every", f"{every:g}s", "--no-auto-reap", "--no-hangs", "--json"],
                    ready=False,
                )
                # Start-up and the first round, which reads the whole table: counted apart.
                if not next_reading(s):
                    raise SystemExit("watch ended before its first reading")
                first.append(cpu_ns(s.pid) / 1e6)
                # Both windows start 2 s after the first reading (its tail, the state write, is
                # the first round's) and at the same instant for both programs.
                time.sleep(2)
                a0, b0, t0 = cpu_ns(s.pid), cpu_ns(peer.pid), time.monotonic()
                time.sleep(args.secs)
                a1, b1, t1 = cpu_ns(s.pid), cpu_ns(peer.pid), time.monotonic()
                # The next reading is the next whole-table round, `--table-every` after the
                # first: the period window ends as long after it as the windows started
                # after the first, so it holds exactly one.
                if not next_reading(s):
                    raise SystemExit("watch ended before its second whole-table round")
                if time.monotonic() - t0 < args.secs:
                    raise SystemExit("a whole-table round came inside the quiet window")
                time.sleep(2)
                a2, b2, t2 = cpu_ns(s.pid), cpu_ns(peer.pid), time.monotonic()
                s.close()
                peer.close()
                scale = lambda c0, c1, u0, u1: (c1 - c0) / 1e6 * args.secs / (u1 - u0)  # noqa: E731
                quiet.append(scale(a0, a1, t0, t1))
                quiet_peer.append(scale(b0, b1, t0, t1))
                period.append((a2 - a0) / 1e6)
                period_peer.append((b2 - b0) / 1e6)
                # The table round: the period's CPU less its quiet rounds at the quiet rate.
                table.append((a2 - a0) / 1e6 - (a1 - a0) / 1e6 * (t2 - t0) / (t1 - t0))
                spans.append(t2 - t0)
            span = statistics.median(spans)
            row(f"watch 1s quiet, +{n} processes ({machine()})", f"ms/{args.secs:g}s", quiet, quiet_peer, "earlyoom")
            row(f"watch 1s period, +{n} processes", f"ms/{span:.0f}s", period, period_peer, "earlyoom")
            pad = f"{'':<34}"
            print(f"{pad} the period ({span:.0f} s) holds its quiet rounds and 1 whole-table round; that round alone "
                  f"{'/'.join(f'{v:.2f}' for v in spread(table))} ms")
            lo, mid, hi = spread(first)
            print(f"{pad} watch's start-up and first (whole-table) round: {lo:.2f}/{mid:.2f}/{hi:.2f} ms")
            sys.stdout.flush()
        finally:
            extra.close()


def bench_run(args, env):
    tree = [FIX, "tree", "--depth", "2", "--fanout", "19"]
    ours, peer = [], []
    for _ in range(args.runs):
        s = Supervised([HR, "run", "--limit", "1G", "--", *tree])
        ours.append(cpu_over(s.pid, args.secs))
        s.close()
        s = Supervised(["bash", os.path.join(ROOT, "bench", "ps_watchdog.sh"), "1024", "0.2", "5", "--", *tree])
        peer.append(cpu_over(s.pid, args.secs, own=False))
        s.close()
    row(f"run --limit, idle 20-process tree ({machine()})", f"ms/{args.secs}s", ours, peer, "ps loop")


COMPARISONS = (
    ("probe", bench_probe),
    ("watch", bench_watch),
    ("run", bench_run),
    ("log", more_comparisons.bench_log),
    ("overshoot", more_comparisons.bench_overshoot),
    ("pressure", more_comparisons.bench_pressure),
    ("mcp", more_comparisons.bench_mcp),
    ("evidence", more_comparisons.bench_evidence),
)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log-mb", type=int, default=250)
    ap.add_argument("--evidence-rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--secs", type=float, default=10)
    ap.add_argument("--sizes", default="100,1400,6000")
    ap.add_argument("--earlyoom", default=shutil.which("earlyoom"))
    ap.add_argument("--table-every", type=float, default=240, help="watch's --table-every, seconds (its default: 240)")
    ap.add_argument("--only", choices=[name for name, _ in COMPARISONS])
    args = ap.parse_args()
    args.sizes = [int(x) for x in args.sizes.split(",") if x]
    # Only the MCP comparison's: build.rs reads it (a cfg), so a build with it set and one
    # without (this script's, bench/pressure_reaction.sh's) would each rebuild the binary.
    args.mcp_python = os.environ.pop("HEADROOM_MCP_PYTHON", None)
    subprocess.run(
        ["cargo", "build", "--release", "--quiet", "--locked", "--bin", "headroom", "--example", "hr-fixture"],
        cwd=ROOT,
        check=True,
    )
    home = tempfile.mkdtemp(prefix="headroom-bench-")
    env = dict(os.environ, HEADROOM_HOME=home)
    os.environ["HEADROOM_HOME"] = home
    print(f"machine: {machine()}; headroom {subprocess.run([HR, '--version'], capture_output=True, text=True).stdout.strip()}")
    try:
        for name, f in COMPARISONS:
            if args.only in (None, name):
                f(args, env)
    finally:
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    main()
