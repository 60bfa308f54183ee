"""The monitor of bench/pressure_reaction.sh (root, reads only).

    python3 pressure_monitor.py PSI_FILE CGROUP WATCH_OUT DIR TIMEOUT_S

Reads its baselines, creates DIR/ready, waits for DIR/go ("PID T0_NS": the thrasher and
when it was started), then samples every 5 ms until watch's `memory` event has come and
the thrasher has ended (or TIMEOUT_S), and prints one line of times from T0.
"""
import json
import os
import sys
import time

psi, cg, out, d, timeout = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
ROUND = "memory pressure: running the memory guards now"


def some_total(path):
    for line in open(path):
        if line.startswith("some "):
            return int(line.split("total=")[1])
    return 0


def limit_hits():
    # v1: memory.failcnt; v2: memory.events `max` (times the cgroup reached memory.max).
    try:
        return int(open(cg + "/memory.failcnt").read())
    except OSError:
        for line in open(cg + "/memory.events"):
            if line.startswith("max "):
                return int(line.split()[1])
    return 0


stall0, hits0 = some_total(psi), limit_hits()
open(d + "/ready", "w").close()
while not os.path.exists(d + "/go"):
    time.sleep(0.001)
pid, t0 = (int(x) for x in open(d + "/go").read().split())


def ms(t):
    return "%d ms" % round((t - t0) / 1e6) if t is not None else "-"


stall = hit = stopped = ended = notice = event_seen = event = None
pos = 0
while time.time_ns() - t0 < timeout * 1e9:
    now = time.time_ns()
    if stall is None and some_total(psi) > stall0:
        stall = now
    if hit is None and limit_hits() > hits0:
        hit = now
    try:
        state = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
    except OSError:
        state = "gone"
    if state in ("T", "t") and stopped is None:
        stopped = now
    if state in ("Z", "X", "gone") and ended is None:
        ended = now
    with open(out) as f:
        f.seek(pos)
        chunk = f.read()
    cut = chunk.rfind("\n") + 1
    pos += cut
    for line in chunk[:cut].splitlines():
        try:
            e = json.loads(line)
        except ValueError:
            continue
        # The round that acted is the last before the `memory` event (other load on the
        # machine can fire the system trigger before). Its `at` is to the second: the time
        # the line was seen is the figure.
        if event is None and e.get("message") == ROUND:
            notice = now
        if event is None and e.get("type") == "memory":
            event, event_seen = e, now
    if event is not None and ended is not None:
        break
    time.sleep(0.005)

acted = stopped if stopped is not None else ended
start = hit if hit is not None else stall
ev = event or {}
print(
    "limit hit %s, first stall %s; memory round from %s; "
    "thrasher %s at %s; `memory` event %s (%s, SIGTERM %s, parked %s, %d MiB over %d MiB) "
    "=> action %s after the limit hit; stall meanwhile %d ms"
    % (
        ms(hit),
        ms(stall),
        ms(notice) if notice else "the timer",
        "stopped" if stopped else "ended",
        ms(acted),
        ms(event_seen),
        ev.get("outcome"),
        ev.get("terminated"),
        ev.get("parked"),
        (ev.get("acted_footprint_bytes") or 0) >> 20,
        (ev.get("acted_effective_bytes") or 0) >> 20,
        "%d ms" % round((acted - start) / 1e6) if acted and start else "-",
        (some_total(psi) - stall0) // 1000,
    )
)
