#!/usr/bin/env python3
"""Benchmark (issue 31 item 3): CPU of one whole-table `watch` round after SECS of quiet ones.

    bench/cold_round.py N SECS K [--headroom PATH]

Starts `bench/all.py`'s fixture of N extra processes and `watch --interval 1s --table-every
SECS --no-auto-reap --no-hangs --json`, then K times: waits until 1.5 s before the next
whole-table round, reads every thread's CPU and the page faults, waits for that round's
reading and 0.3 s more, and reads them again. Each figure is one table round after SECS of
quiet rounds (plus ~1.8 s of quiet rounds, ~0.2 ms). `bench/table_round.py` measures the
same round sustained (every round reads the table), which is warmer. Run it under
`unshare --pid --fork --mount-proc` to keep other programs' processes out of the table.
"""
import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import all as bench  # noqa: E402


def faults(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[7]), int(f[9])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int)
    ap.add_argument("secs", type=float)
    ap.add_argument("k", type=int)
    ap.add_argument("--headroom", default=bench.HR)
    args = ap.parse_args()
    if args.secs < 3:
        raise SystemExit("SECS must be at least 3")
    extra = bench.extra_processes(args.n)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ.update(XDG_STATE_HOME=f"{tmp}/state", HOME=tmp)
            s = bench.watch_started(args.headroom, args.secs)
            try:
                for _ in range(args.k):
                    time.sleep(args.secs - 1.5)
                    a0, f0 = bench.cpu_ns(s.pid), faults(s.pid)
                    if not bench.next_reading(s):
                        raise SystemExit("watch ended before its next whole-table round")
                    time.sleep(0.3)
                    a1, f1 = bench.cpu_ns(s.pid), faults(s.pid)
                    print(f"table round after {args.secs:g} s: {(a1 - a0) / 1e6:.2f} ms "
                          f"(minor faults {f1[0] - f0[0]}, major {f1[1] - f0[1]})", flush=True)
            finally:
                s.close()
    finally:
        extra.close()


if __name__ == "__main__":
    main()
