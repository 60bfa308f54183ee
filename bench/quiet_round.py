#!/usr/bin/env python3
"""Benchmark (issue 31 item 3): CPU per quiet `watch` round, side by side with earlyoom.

    bench/quiet_round.py [--extra N] SECS RUNS HEADROOM [HEADROOM...]

Each run starts `earlyoom --dryrun` (its default 1 s) and every given headroom binary's
`watch --interval 1s --table-every 600s --no-auto-reap --no-hangs --json` (each with a
private XDG_STATE_HOME), waits 4 s (start-up and the first, whole-table round), then reads
every thread's schedstat at the start and end of SECS seconds: no table round falls in the
window. Prints each program's microseconds of CPU per round (per second), per run and the
median. Two binaries (before and after a change) are measured in the same windows, which is
what BENCHMARKS.md's 2026-12-03 (later) figures are. `--extra N` first starts `bench/all.py`'s
fixture of N extra processes (run it under `unshare --pid --fork --mount-proc`).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time


def cpu(pid):
    t = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
            t += int(f.read().split()[0])
    return t


def main():
    argv = sys.argv[1:]
    extra = None
    if argv[:1] == ["--extra"] and len(argv) > 1:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import all as bench

        extra = bench.extra_processes(int(argv[1]))
        argv = argv[2:]
    if len(argv) < 3:
        raise SystemExit(__doc__)
    try:
        measure(float(argv[0]), int(argv[1]), argv[2:])
    finally:
        if extra:
            extra.close()


def measure(secs, runs, bins):
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            ps = {"earlyoom": subprocess.Popen(["earlyoom", "--dryrun"], stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL)}
            try:
                for i, b in enumerate(bins):
                    env = dict(os.environ, XDG_STATE_HOME=f"{tmp}/state{i}", HOME=tmp)
                    ps[f"{i}:{b}"] = subprocess.Popen(
                        [b, "watch", "--interval", "1s", "--table-every", "600s", "--no-auto-reap",
                         "--no-hangs", "--json"], stdout=subprocess.DEVNULL, env=env)
                time.sleep(4)
                a = {k: cpu(p.pid) for k, p in ps.items()}
                time.sleep(secs)
                z = {k: cpu(p.pid) for k, p in ps.items()}
                for k in ps:
                    res.setdefault(k, []).append((z[k] - a[k]) / 1e3 / secs)
            finally:
                for p in ps.values():
                    p.terminate()
                    p.wait()
    for k, v in res.items():
        print(f"{k}: " + " ".join(f"{x:.1f}" for x in v) + f"  median {statistics.median(v):.1f} us/round")


if __name__ == "__main__":
    main()
