#!/usr/bin/env bash
# Benchmark (issue: watch): `headroom watch` at the default 60 s interval for DURATION seconds
# (default 600): CPU seconds used ÷ wall seconds and peak RSS; then a short run at 1 s
# intervals under strace, counting process-management system calls per round.
#
#   bench/watch.sh [DURATION_SECONDS]        (Linux)
#
# Targets: <= 0.01 % of one core, <= 10 MB peak RSS, zero fork/clone/exec per round.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-600}
cargo build --release --quiet --bin headroom
work=$(mktemp -d /tmp/headroom-watch-bench.XXXXXX)
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
export HEADROOM_HOME=$work

target/release/headroom watch --no-auto-reap >"$work/out" 2>&1 &
pid=$!
start=$(date +%s.%N)
sleep "$duration"
# schedstat's first field is nanoseconds on a CPU: finer than the 10 ms ticks of /proc/PID/stat.
ns=$(cut -d' ' -f1 "/proc/$pid/schedstat")
end=$(date +%s.%N)
cpu=$(echo "scale=6; $ns / 1000000000" | bc)
wall=$(echo "scale=3; $end - $start" | bc)
hwm=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
rounds=$(grep -c '' "$work/out" || true)
kill -TERM "$pid"; wait "$pid" || true
echo "watch at the default interval for ${wall} s: ${rounds} rounds"
echo "CPU: ${cpu} s of ${wall} s = $(echo "scale=5; 100 * $cpu / $wall" | bc) % of one core (target <= 0.01 %)"
echo "peak RSS: $((hwm / 1024)) MB (${hwm} kB; target <= 10 MB)"
echo "processes on this machine: $(ls -d /proc/[0-9]* | wc -l)"

if command -v strace >/dev/null; then
  strace -f -e trace=process -o "$work/strace" target/release/headroom watch --interval 1s --no-auto-reap >/dev/null 2>&1 &
  spid=$!
  sleep 5.5
  # Stop headroom itself (strace's child, which this script started); strace then exits.
  kill -TERM "$(ps -o pid= --ppid "$spid")"; wait "$spid" || true
  calls=$(grep -cE 'clone|fork|execve' "$work/strace" || true)
  echo "strace over ~5 rounds at 1 s: ${calls} fork/clone/exec calls (the start-up execve is 1):"
  grep -E 'clone|fork|execve' "$work/strace" | sed 's/^/  /'
fi
