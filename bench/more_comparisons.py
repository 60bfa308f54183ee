"""The comparisons of bench/all.py beyond probe, watch and run's idle cost (issue 31 item 4):
log-probe vs grep, run's overshoot, the reaction to memory pressure, MCP, the evidence chart.

Each takes (args, env) like all.py's own and uses all.py's helpers (`base`: the running
script, so there is one copy of them). Every long-lived process runs under the fixture's
supervisor; the short ones are timed as direct children and waited for.
"""

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import __main__ as base  # bench/all.py, which imports this module

LIMIT_MIB = 256
RATE_MIB_S = 1000


def fmt(t, digits=2):
    return "/".join(f"{v:.{digits}f}" for v in t)


def note(text):
    print(f"{'':<34} {text}")
    sys.stdout.flush()


def timed_to(argv, out, env=None):
    """Wall ms of ARGV with its output in file OUT: GNU grep stops at the first match when its
    output is /dev/null, which would time nothing."""
    with open(out, "w") as f:
        t = time.perf_counter()
        subprocess.run(argv, stdout=f, stderr=subprocess.DEVNULL, env=env, check=False)
        return (time.perf_counter() - t) * 1000


# --- log-probe vs grep -c '' (bench/log_probe.sh's log) ------------------------------------


def write_session_log(path, size_mb):
    """bench/log_probe.sh's log: old HTTP-churn lines cut to size, one line of real work
    3 h 15 s ago, then 3 h of the incident's heartbeat triplets every 30 s."""
    now = int(time.time())
    ts = lambda t: dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")  # noqa: E731
    line = (
        f'{ts(now - 8 * 3600)}.123Z TRACE hyper_util::client::legacy::pool: reuse idle connection for '
        f'("https", "api.githubcopilot.com")\n'
    ).encode()
    bulk = size_mb * 1000 * 1000 - 300000
    chunk = line * ((1 << 20) // len(line) + 1)
    with open(path, "wb") as f:
        left = bulk
        while left > 0:
            piece = chunk if left >= len(chunk) else chunk[:left]
            f.write(piece)
            left -= len(piece)
        f.write(b"\n")
        w = now - 3 * 3600 - 15
        f.write(f"{ts(w)}.499Z [DEBUG] Forwarding event for session 4da0d54f: assistant.turn_end\n".encode())
        for t in range(now - 3 * 3600, now + 1, 30):
            pid = 32302 + t % 1000
            worker = "DEBUG tokio-runtime-worker"
            f.write(
                (
                    f"{ts(t)}.499123Z {worker} ThreadId(09) agency::send_telemetry_events: "
                    "client/agency/src/send_telemetry_events.rs:427: telem periodic flush: queue empty, nothing to commit\n"
                    f"{ts(t)}.499123Z {worker} ThreadId(09) agency::send_telemetry_events: "
                    f"client/agency/src/send_telemetry_events.rs:282: telem flush: spawned detached child pid={pid}\n"
                    f"{ts(t + 1)}.499123Z {worker} ThreadId(11) otel_receiver::server: "
                    "client/otel_receiver/src/server.rs:136: accepted OTLP signal (not yet processed) signal=/v1/metrics\n"
                ).encode()
            )
        f.flush()
        os.fsync(f.fileno())  # writeback of 250 MB would otherwise compete with the timing


def bench_log(args, env):
    work = tempfile.mkdtemp(prefix="headroom-logbench-")
    try:
        session = os.path.join(work, "session")
        os.mkdir(session)
        log = os.path.join(session, "process-1787933425-86242.log")
        write_session_log(log, args.log_mb)
        out = os.path.join(work, "out")
        probe, grep = [base.HR, "log-probe", session], ["grep", "-c", "", log]
        timed_to(probe, out, env), timed_to(grep, out)  # warm-up: both from the page cache
        ours, peer = [], []
        for _ in range(args.runs * 4):
            ours.append(timed_to(probe, out, env))
            peer.append(timed_to(grep, out))
        base.row(f"log-probe, {args.log_mb} MB log ({base.machine()})", "ms", ours, peer, "grep -c ''")
        j = json.loads(subprocess.run([*probe[:2], "--json", session], capture_output=True, text=True, env=env).stdout)
        d = j.get("directory", {})
        note(f"log-probe read {d.get('bytes_read', 0) // 1024} KiB of {os.path.getsize(log) // 1024} KiB; "
             f"verdict {d.get('verdict')}, age {d.get('age_seconds')} s (expected work, about 10815 s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- run's overshoot at ~1 GB/s (bench/run_limit.sh) ----------------------------------------


def delegate(uid, tag, made):
    """A memory cgroup handed to UID (cgroup v2 with memory at the root, else v1), as systemd
    delegates one to a user's manager: (the leaf, None), or (None, why not). Every directory
    it makes is put first in MADE as it is made, for the caller to remove in that order."""
    mounts = [line.split() for line in open("/proc/self/mountinfo")]
    fstype = lambda m: m[m.index("-") + 1]  # noqa: E731
    v2 = next((m[4] for m in mounts if fstype(m) == "cgroup2"), None)
    v1 = next((m[4] for m in mounts if fstype(m) == "cgroup" and "memory" in m[-1].split(",")), None)
    try:
        v2_memory = v2 and "memory" in open(os.path.join(v2, "cgroup.subtree_control")).read().split()
    except OSError:
        v2_memory = False
    if v2_memory:
        top = os.path.join(v2, tag)
        leaf = os.path.join(top, "leaf")
        os.mkdir(top)
        made.insert(0, top)
        with open(os.path.join(top, "cgroup.subtree_control"), "w") as f:
            f.write("+memory")
        os.mkdir(leaf)
        made.insert(0, leaf)
        owned = [top, leaf] + [os.path.join(top, f) for f in ("cgroup.procs", "cgroup.subtree_control", "cgroup.threads")]
        owned.append(os.path.join(leaf, "cgroup.procs"))
    elif v1:
        own = next(line.split(":")[2].strip() for line in open("/proc/self/cgroup") if "memory" in line.split(":")[1].split(","))
        top = leaf = v1 + own.rstrip("/") + "/" + tag
        os.mkdir(top)
        made.insert(0, top)
        owned = [top, os.path.join(top, "cgroup.procs"), os.path.join(top, "tasks")]
    else:
        return None, "no cgroup memory controller to delegate"
    for p in owned:
        os.chown(p, uid, uid)
    return leaf, None


def enforce(cmd, uid, home, stderr, leaf=None):
    """One run of CMD (a watchdog around a growing hog) as UID: the overshoot in MiB."""
    argv = [base.FIX, "supervise", "--uid", str(uid), "--stderr", stderr, "--", "prlimit", f"--as={4 << 30}", "--", *cmd]
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         env=dict(os.environ, HEADROOM_HOME=home))
    peak, end = 0, None
    try:
        for line in p.stdout:
            if line.startswith("started ") and leaf:
                with open(os.path.join(leaf, "cgroup.procs"), "w") as f:
                    f.write(line.split()[1])
            elif line.startswith("grew "):
                peak = max(peak, int(line.split()[1]))
            elif line.startswith(("exited ", "killed ")):
                end = line.strip()
                break
    finally:
        p.stdin.close()
        p.wait()
    if end is None:
        raise SystemExit(f"the supervisor of {cmd[0]} ended without its exit")
    return peak


def bench_overshoot(args, env):
    if os.getuid() != 0:
        print("overshoot: skipped (needs root: the watchdogs run as a private uid, the kernel cap in a delegated cgroup)")
        return
    uid = 3900000000 + os.getpid() % 100000
    work = tempfile.mkdtemp(prefix="headroom-overshoot-")
    os.chmod(work, 0o755)
    home = os.path.join(work, "home")
    os.mkdir(home)
    os.chown(home, uid, uid)
    stderr = os.path.join(work, "stderr")
    made = []
    try:
        leaf, why = delegate(uid, f"headroom-bench-{os.getpid()}", made)
        kinds = {"poll": [], "ps loop": []}
        if leaf:
            kinds["kernel"] = []
        for r in range(args.runs):
            # A different phase of the 200 ms polling cycle each run.
            hog = [base.FIX, "hog", "--mib", "0", "--grow-mib-per-s", str(RATE_MIB_S), "--grow-step-ms", "10",
                   "--grow-delay-ms", str(r * 200 // args.runs), "--report-growth"]
            run = [base.HR, "run", "--limit", f"{LIMIT_MIB}M", "--enforce"]
            kinds["poll"].append(enforce([*run, "poll", "--", *hog], uid, home, stderr))
            kinds["ps loop"].append(enforce(
                ["bash", os.path.join(base.ROOT, "bench", "ps_watchdog.sh"), str(LIMIT_MIB), "0.2", "5", "--", *hog],
                uid, home, stderr))
            if leaf:
                # The shell waits until this script has moved it into the cgroup, then execs
                # headroom there.
                wait = f'while ! grep -q "/{os.path.basename(leaf)}$" /proc/self/cgroup; do sleep 0.01; done; exec "$@"'
                kinds["kernel"].append(enforce(["sh", "-c", wait, "sh", *run, "kernel", "--", *hog], uid, home, stderr, leaf))
        # Overshoot: how far past the limit the child got (0 when the kernel held it below).
        past = lambda peaks: base.spread([max(0, p - LIMIT_MIB) for p in peaks])  # noqa: E731
        ps = past(kinds["ps loop"])
        for kind in ("poll", "kernel"):
            if kind not in kinds:
                note(f"--enforce kernel: skipped ({why})")
                continue
            ours = past(kinds[kind])
            ratio = f"{ps[2] / ours[2]:.2f}x" if ours[2] > 0 else "- (headroom: none)"
            print(f"{'run --enforce ' + kind + ' overshoot':<34} headroom {fmt(ours, 0)} MiB   ps loop {fmt(ps, 0)} MiB   "
                  f"ratio of the worst {ratio}   (min/median/max of {args.runs}; ~{RATE_MIB_S} MiB/s past {LIMIT_MIB} MiB, "
                  f"200 ms interval; {base.machine()})")
            note(f"peak the child reached: {fmt(base.spread(kinds[kind]), 0)} MiB")
        sys.stdout.flush()
    finally:
        for d in made:
            try:
                os.rmdir(d)
            except OSError as e:
                print(f"cgroup {d} not removed: {e}", file=sys.stderr)
        shutil.rmtree(work, ignore_errors=True)


# --- reaction to real memory pressure (bench/pressure_reaction.sh) -------------------------


def supervised_lines(argv):
    """ARGV's stdout lines, run to its end under the supervisor (which then kills whatever
    it left behind)."""
    s = base.Supervised(argv, ready=False)
    try:
        for line in s.p.stdout:
            if line.startswith(("exited ", "killed ")):
                break
            yield line.rstrip("\n")
    finally:
        s.close()


def bench_pressure(args, env):
    # The script checks root, PSI, python3, setpriv and a memory cgroup, and prints
    # `skipped: why` when one is missing; it removes its cgroup and files itself.
    script = os.path.join(base.ROOT, "bench", "pressure_reaction.sh")
    runs = {"psi": [], "off": []}
    for line in supervised_lines(["bash", script, str(args.runs), "psi off"]):
        m = re.match(r"\s+(psi|off) run \d+: .*=> action (\d+) ms after", line)
        if m:
            runs[m.group(1)].append(float(m.group(2)))
        elif line.startswith("skipped: "):
            print(f"pressure: skipped ({line[len('skipped: '):]})")
            return
        elif line.startswith("  watch said: ") or re.match(r"\s+(psi|off) run", line):
            note(line.strip())  # what the source is, and any run that did not act
    if not runs["psi"] or not runs["off"]:
        print(f"pressure: no figure (runs that acted: psi {len(runs['psi'])}, timer {len(runs['off'])})")
        return
    base.row(f"memory pressure to the guard's action ({base.machine()})", "ms", runs["psi"], runs["off"],
             "timer only (pressure = off, 60 s)")


# --- MCP start-up and one call (bench/mcp_roundtrip.py) ------------------------------------


def bench_mcp(args, env):
    py = args.mcp_python or shutil.which("python3")
    if not py or subprocess.run([py, "-c", "import mcp"], capture_output=True).returncode:
        print(f"mcp: skipped ({py or 'python3'} has no `mcp` package; set HEADROOM_MCP_PYTHON, e.g. /tmp/mcp-venv/bin/python)")
        return
    script = os.path.join(base.ROOT, "bench", "mcp_roundtrip.py")
    cases = {}
    for line in supervised_lines([py, script, base.HR, str(args.runs * 2), "--json"]):
        if line.startswith("{"):
            c = json.loads(line)
            cases[c["name"]] = c
    ours, calls, peer = (cases.get(k) for k in ("headroom mcp (limits)", "headroom mcp (run_list)", "Python SDK MCPServer (echo)"))
    if not (ours and calls and peer):
        print(f"mcp: no figure (cases measured: {', '.join(cases) or 'none'})")
        return
    sdk = f"SDK {peer.get('sdk', '')} MCPServer"
    base.row(f"mcp start-up to initialized ({base.machine()})", "ms", ours["starts"], peer["starts"], sdk)
    base.row("mcp call, run_list (no work) vs echo", "ms", calls["calls"], peer["calls"], "echo")
    lo, mid, hi = base.spread(ours["calls"])
    note(f"a `limits` call (reads the process table): {lo:.2f}/{mid:.2f}/{hi:.2f} ms")


# --- the evidence chart on 1,000,000 rows (bench/evidence.sh) ------------------------------


def write_evidence(path, rows, gaps):
    """bench/evidence.sh's log: ROWS readings a minute apart, GAPS gaps of two hours, a
    cleanup every 10,000 readings."""
    cols = ("at,uid,processes,tasks,zombies,used,limit,limit_source,usage_pct,free_slots,level,"
            "growth_per_min,eta_seconds,trend_samples,partial,top_parent_pid,top_parent_name,"
            "top_parent_zombies,session_signal,action,result,override")
    every = max(1, rows // (gaps + 1))
    t = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc).timestamp()
    with open(path, "w") as f:
        f.write(cols + "\n")
        for i in range(rows):
            t += 7200 if i % every == every - 1 else 60
            at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
            used = 1500 + (i * 7919) % 1200
            zombies = used - 400
            limit, source = (4194304 - (i * 31) % 997, "pid-max") if i % 2 else (2666, "rlimit-nproc")
            head = f"{at},501,{used},{used},{zombies},{used},{limit},{source},{round(100 * used / limit, 2)},{max(0, limit - used)},"
            f.write(f"{head}normal,1.5,,10,false,4242,agency,{zombies},,poll,,\n")
            if i % 10000 == 9999:
                f.write(f"{head}normal,,,0,false,4242,agency,{zombies},cpu_idle=900;log_age=900,kill:15+9,"
                        f"sigkill;reaped={zombies};freed={zombies + 1};verified=true,\n")


def measured(argv, env):
    """Wall s, CPU s (user + system) and peak RSS in MB of one run of ARGV."""
    t = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit(f"{' '.join(argv)} failed ({p.returncode}): {p.stderr.read().decode(errors='replace')}")
    p.stderr.close()
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024


def bench_evidence(args, env):
    work = tempfile.mkdtemp(prefix="headroom-evidence-")
    try:
        write_evidence(os.path.join(work, "evidence.csv"), args.evidence_rows, 400)
        env = dict(env, HEADROOM_HOME=work)
        svg = os.path.join(work, "out.svg")
        for what, extra in (("--chart", ["--chart", "--width", "120"]), ("--svg", ["--svg", svg])):
            runs = [measured([base.HR, "evidence", *extra], env) for _ in range(args.runs)]
            wall, cpu, rss = (base.spread([r[i] for r in runs]) for i in range(3))
            label = f"evidence {what}, {args.evidence_rows:,} rows"
            print(f"{label:<34} {fmt(wall)} s wall, {fmt(cpu)} s CPU, {fmt(rss, 1)} MB peak RSS   "
                  f"(min/median/max of {args.runs}; target < 1 s, < 100 MB; {base.machine()})")
        note(f"SVG: {os.path.getsize(svg) // 1024} KB (target < 500 KB)")
        sys.stdout.flush()
    finally:
        shutil.rmtree(work, ignore_errors=True)
