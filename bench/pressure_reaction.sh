#!/usr/bin/env bash
# Benchmark (issue 13): reaction to real memory pressure — from the start of a working set
# that thrashes in a small memory cgroup to the start of `watch`'s memory round, with the
# pressure source armed and a 60 s round timer (without the source the round would wait
# for the next tick: up to 60 s, 30 s on average).
#
#   sudo bench/pressure_reaction.sh [RUNS]        (Linux, root; default 5)
#
# The pressure is real: a 256 MiB file (this script's, its page cache dropped with
# fadvise) is read through mmap over and over by python3, started through a symlink named
# `hrthrash<pid>`, inside a 16 MiB memory cgroup this script creates (cgroup v1
# `memory.limit_in_bytes`, or v2 `memory.max`); every pass refaults, and memcg reclaim is a
# memory stall PSI counts (the stall is printed). `watch` (private HEADROOM_HOME, no
# auto-reap, no hangs, notifications off) has one guard for that name at 4 MiB. The
# thrasher starts after watch's first round, so only the pressure source can start a
# round before the next tick 60 s later. Also printed: when the guard's `memory` event came,
# if it did (it did not in the runs in the README: a guard matches the root of a tree, and
# the thrasher's parent is this script's shell). Everything started here is ended here by
# pid; the cgroup is removed. Prints "skipped: <reason>" when the machine cannot do this.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
skip() { echo "skipped: $*"; exit 0; }
[ "$(id -u)" = 0 ] || skip "needs root to make a memory cgroup"
[ -e /proc/pressure/memory ] || skip "/proc/pressure/memory does not exist (no PSI)"
command -v python3 >/dev/null || skip "python3 is not installed (the thrasher)"
if [ -w /sys/fs/cgroup/memory ]; then
  cg=/sys/fs/cgroup/memory/headroom-bench-$$; limit_file=memory.limit_in_bytes
elif grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
  cg=/sys/fs/cgroup/headroom-bench-$$; limit_file=memory.max
else
  skip "no writable memory cgroup (neither v1 /sys/fs/cgroup/memory nor v2 with memory delegated)"
fi
cargo build --release --quiet --bin headroom
work=$(mktemp -d /tmp/headroom-react.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -d "$cg" ] && rmdir "$cg" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir "$cg"
echo 16M >"$cg/$limit_file"
name=hrthrash$$
name=${name:0:15}
# A symlink: the process name is the name it was started by (pyenv's python3 is a shim).
ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$work/$name"
dd if=/dev/urandom of="$work/ws.bin" bs=1M count=256 status=none
cat >"$work/thrash.py" <<'EOF'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
m = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
s = 0
while True:
    for off in range(0, len(m), 4096):
        s += m[off]
EOF
printf '[notifications]\nenabled = false\n[watch]\nauto_reap = false\n[[memory.guard]]\npattern = "%s"\nlimit = "4M"\n' "$name" >"$work/config.toml"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); cgroup $cg ($limit_file 16M)"
for i in $(seq "$runs"); do
  HEADROOM_HOME=$work target/release/headroom watch --json --no-auto-reap --no-hangs \
    --interval 60s --config "$work/config.toml" >"$work/watch.out" 2>&1 &
  w=$!
  pids+=("$w")
  until grep -q '"type":"reading"' "$work/watch.out" 2>/dev/null; do sleep 0.05; done
  grep -m1 'memory pressure source' "$work/watch.out" | sed 's/^/  watch said: /' | cut -c1-160
  psi0=$(awk '/^some/ {sub("total=", "", $5); print $5}' /proc/pressure/memory)
  t0=$(now_ms)
  sh -c "echo \$\$ >'$cg/cgroup.procs'; exec '$work/$name' '$work/thrash.py' '$work/ws.bin'" &
  t=$!
  pids+=("$t")
  round="" result=""
  while [ $(($(now_ms) - t0)) -lt 65000 ]; do
    if [ -z "$round" ] && grep -q '"message":"memory pressure: running the memory guards now"' "$work/watch.out"; then
      round="$(($(now_ms) - t0)) ms"
    fi
    if grep -q '"type":"memory"' "$work/watch.out"; then
      result="$(($(now_ms) - t0)) ms"
      break
    fi
    sleep 0.01
  done
  psi1=$(awk '/^some/ {sub("total=", "", $5); print $5}' /proc/pressure/memory)
  fired=$(grep -c 'memory pressure: running the memory guards now' "$work/watch.out" || true)
  action=$(grep -m1 '"type":"memory"' "$work/watch.out" | grep -o '"outcome":"[a-z_-]*"' | head -1 || true)
  echo "  run $i: memory round started after ${round:-(not by the pressure source)}, its action ($action) reported after ${result:-none within 65 s}; PSI events seen by watch: $fired; memory stall meanwhile: $(((psi1 - psi0) / 1000)) ms"
  kill -CONT "$t" 2>/dev/null || true
  kill "$t" 2>/dev/null || true
  wait "$t" 2>/dev/null || true
  kill "$w" 2>/dev/null || true
  wait "$w" 2>/dev/null || true
  pids=()
done
