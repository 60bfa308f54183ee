#!/usr/bin/env python3
"""Benchmark (issue 31 item 3): `watch --interval 1s` beside earlyoom over K whole periods.

    bench/watch_periods.py N K [--table-every SECS] [--headroom PATH]

Starts `bench/all.py`'s fixture of N extra processes (sleeping up to 1,400, zombies above),
`earlyoom --dryrun` (its default 1 s) and `watch --interval 1s --table-every SECS
--no-auto-reap --no-hangs --json`, then measures K consecutive periods, each from 2 s
after one whole-table round to 2 s after the next, so each holds its quiet rounds and one
whole-table round. `bench/all.py --only watch` measures the first period after start-up;
this shows whether later ones (a guard runs for days) cost the same. Run it under
`unshare --pid --fork --mount-proc` to keep other programs' processes out of the table.
"""
import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import all as bench  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int)
    ap.add_argument("k", type=int)
    ap.add_argument("--table-every", type=float, default=240)
    ap.add_argument("--headroom", default=bench.HR)
    args = ap.parse_args()
    extra = bench.extra_processes(args.n)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ.update(XDG_STATE_HOME=f"{tmp}/state", HOME=tmp)
            peer = bench.Supervised(["earlyoom", "--dryrun"], ready=False)
            try:
                s = bench.watch_started(args.headroom, args.table_every)
            except BaseException:
                peer.close()
                raise
            try:
                time.sleep(2)
                a0, b0, t0 = bench.cpu_ns(s.pid), bench.cpu_ns(peer.pid), time.monotonic()
                for i in range(1, args.k + 1):
                    if not bench.next_reading(s):
                        raise SystemExit("watch ended before its next whole-table round")
                    time.sleep(2)
                    a, b, t = bench.cpu_ns(s.pid), bench.cpu_ns(peer.pid), time.monotonic()
                    print(f"period {i}: watch {(a - a0) / 1e6:.2f} ms, earlyoom {(b - b0) / 1e6:.2f} ms over {t - t0:.0f} s: "
                          f"ratio {(b - b0) / (a - a0):.2f}x", flush=True)
                    a0, b0, t0 = a, b, t
            finally:
                s.close()
                peer.close()
    finally:
        extra.close()


if __name__ == "__main__":
    main()
