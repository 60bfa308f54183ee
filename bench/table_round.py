#!/usr/bin/env python3
"""CPU of one of watch's whole-table rounds, sustained: `watch --interval 1s --table-every 1s`
(every round reads the table) beside N extra processes (bench/all.py's fixtures: a tree of
sleeping processes up to 1,400, a leak of zombies above), every thread's CPU over SECS
seconds divided by the seconds.

usage: bench/table_round.py N [SECS]   (after `cargo build --release --examples`)
"""

import os
import sys
import tempfile
import time

import all as b


def main():
    n = int(sys.argv[1])
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 10
    home = tempfile.mkdtemp()
    env_home = {"HOME": home, "XDG_STATE_HOME": os.path.join(home, "state")}
    os.environ.update(env_home)
    extra = b.extra_processes(n) if n else None
    try:
        s = b.Supervised(
            [b.HR, "watch", "--interval", "1s", "--table-every", "1s", "--no-auto-reap", "--no-hangs", "--json"],
            ready=False,
        )
        for _ in range(3):
            if not b.next_reading(s):
                raise SystemExit("watch ended before its third reading")
        a0, t0 = b.cpu_ns(s.pid), time.monotonic()
        time.sleep(secs)
        a1, t1 = b.cpu_ns(s.pid), time.monotonic()
        s.close()
        print(f"watch table round, +{n} processes: {(a1 - a0) / 1e6 / (t1 - t0):.2f} ms a round ({b.machine()})")
    finally:
        if extra:
            extra.close()


if __name__ == "__main__":
    main()
