#!/usr/bin/env bash
# Benchmark (issue 13): reaction to real memory pressure — from the start of a working set
# that thrashes in a small memory cgroup to `watch`'s first memory action (its guard ending
# the thrashing tree), with the pressure source armed and with it turned off
# (`[memory] pressure = "off"`), both on a 60 s round timer.
#
#   sudo bench/pressure_reaction.sh [RUNS] [MODES]    (Linux, root; default 3, "psi off")
#
# The pressure is real: a 256 MiB file (this script's, its page cache dropped with
# fadvise) is read through mmap over and over by python3, after it touched 24 MiB of its
# own, inside a 48 MiB memory cgroup this script creates (cgroup v1
# `memory.limit_in_bytes`, or v2 `memory.max`): every pass refaults, and memcg reclaim is a
# memory stall PSI counts. The thrasher is started through a symlink named
# `hrthrash<pid>` (its process name) as a private uid of this script's (`setpriv`), so it
# is the root of that uid's only tree; `watch` runs as the same uid (private
# HEADROOM_HOME, no auto-reap, no hangs, notifications off) with one guard for that name
# at 16 MiB, which the thrasher's private memory (RssAnon, ~26 MiB) exceeds: the guard's
# action is SIGTERM (a busy root is not parked). Nothing else runs as that uid and the
# pattern names only this script's thrasher, so the guard can act on nothing else.
#
# The thrasher starts just after watch's first round, so without the pressure source the
# action waits for the next tick (60 s later: the worst case; a pressure start at a random
# point of the interval waits 30 s on average). Measured by bench/pressure_monitor.py
# polling every 5 ms, from the thrasher's start: the cgroup's first limit hit (v1
# `memory.failcnt`, v2 `memory.events` max: reclaim, the pressure, starts there), the first
# nonzero memory stall (the cgroup's `memory.pressure` on v2, else /proc/pressure/memory's
# `some total`, which other load on the machine moves too), the thrasher's state (stopped:
# parked; ended: SIGTERM), and watch's JSON lines (when the pressure round's notice and
# the `memory` event came, its outcome and the pids it signalled). The action is timed
# from the limit hit. Everything started here is ended here by pid, as a job of this
# script's (trap on exit, INT, TERM, HUP); the cgroup and files are removed (a cgroup that
# cannot be is named). Prints "skipped: <reason>" when the machine cannot do this.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
modes=${2:-psi off}
skip() { echo "skipped: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root to make a memory cgroup and a private uid"
[ -e /proc/pressure/memory ] || skip "/proc/pressure/memory does not exist (no PSI)"
command -v python3 >/dev/null || skip "python3 is not installed (the thrasher)"
command -v setpriv >/dev/null || skip "setpriv is not installed (util-linux)"
if [ -w /sys/fs/cgroup/memory ]; then
  cg=/sys/fs/cgroup/memory/headroom-bench-$$; limit_file=memory.limit_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
  cg=/sys/fs/cgroup/headroom-bench-$$; limit_file=memory.max
else
  skip "no writable memory cgroup (neither v1 /sys/fs/cgroup/memory nor v2 with memory delegated)"
fi
# A uid no process has (like the integration tests' private uids).
uid=$((3000000000 + ($$ % 100000) * 1000 + 999))
if awk -v u="$uid" '/^Uid:/ && $2 == u {found=1} END {exit !found}' /proc/[0-9]*/status 2>/dev/null; then
  skip "uid $uid is in use"
fi
cargo build --release --quiet --bin headroom
work=$(mktemp -d /tmp/headroom-react.XXXXXX)
chmod 755 "$work"
# Only this script's own background jobs are ever signalled, and only while bash still
# holds them as jobs: once one has exited bash has reaped it, and its pid may by then be
# another process's. (A list of pids kept by hand kept the reaped ones, and missed a job
# started just before a signal interrupted the script, whose wait then never returned.)
running() { jobs -p | grep -qx "$1"; }
end() {
  running "$1" || return 0
  kill -CONT "$1" 2>/dev/null || true
  kill "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  for p in $(jobs -p); do end "$p"; done
  if [ -d "$cg" ] && ! rmdir "$cg" 2>/dev/null; then
    echo "cgroup $cg not removed: $(cat "$cg/cgroup.procs" 2>/dev/null | wc -l) processes left in it" >&2
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
mkdir "$cg"
echo 48M >"$cg/$limit_file"
name=hrthrash$$
name=${name:0:15}
cp target/release/headroom "$work/headroom"
# A symlink: the process name is the name it was started by (pyenv's python3 is a shim).
ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$work/$name"
dd if=/dev/urandom of="$work/ws.bin" bs=1M count=256 status=none
chmod 644 "$work/ws.bin"
cat >"$work/thrash.py" <<'EOF'
import mmap, os, sys
own = bytearray(24 << 20)
for off in range(0, len(own), 4096):
    own[off] = 1
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
m = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
s = 0
while True:
    for off in range(0, len(m), 4096):
        s += m[off]
EOF
psi=/proc/pressure/memory
[ -e "$cg/memory.pressure" ] && psi=$cg/memory.pressure
mkdir "$work/home"
chown "$uid:$uid" "$work/home"
as_uid=(setpriv "--reuid=$uid" "--regid=$uid" --clear-groups --)
now_ns() { date +%s%N; }
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); cgroup $cg ($limit_file 48M); stall from $psi; uid $uid"
for mode in $modes; do
  case $mode in
    psi) pressure=auto ;;
    off) pressure=off ;;
    *) echo "unknown mode \`$mode\` (psi, off)" >&2; exit 64 ;;
  esac
  printf '[notifications]\nenabled = false\n[watch]\nauto_reap = false\n[memory]\npressure = "%s"\n[[memory.guard]]\npattern = "%s"\nlimit = "16M"\n' \
    "$pressure" "$name" >"$work/config.toml"
  for i in $(seq "$runs"); do
    : >"$work/watch.out"
    HEADROOM_HOME=$work/home "${as_uid[@]}" "$work/headroom" watch --json --no-auto-reap --no-hangs \
      --interval 60s --config "$work/config.toml" >"$work/watch.out" 2>"$work/watch.err" &
    w=$!
    until grep -q '"type":"reading"' "$work/watch.out" 2>/dev/null; do
      running "$w" || { cat "$work/watch.err" >&2; exit 1; }
      sleep 0.05
    done
    if [ "$i" = 1 ]; then
      python3 -c 'import json, sys
for l in open(sys.argv[1]):
    m = json.loads(l).get("message", "")
    if m.startswith("memory pressure source"):
        print("  watch said: " + m)
        break' "$work/watch.out"
    fi
    rm -f "$work/ready" "$work/go"
    python3 -B bench/pressure_monitor.py "$psi" "$cg" "$work/watch.out" "$work" 75 >"$work/monitor.out" &
    m=$!
    until [ -e "$work/ready" ]; do running "$m" || exit 1; sleep 0.01; done
    t0=$(now_ns)
    sh -c "echo \$\$ >'$cg/cgroup.procs'; exec $(printf '%q ' "${as_uid[@]}") '$work/$name' '$work/thrash.py' '$work/ws.bin'" &
    t=$!
    echo "$t $t0" >"$work/go.new"
    mv "$work/go.new" "$work/go"
    wait "$m" || true
    echo "  $mode run $i: $(cat "$work/monitor.out")"
    end "$t"
    end "$w"
  done
done
