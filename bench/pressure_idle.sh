#!/usr/bin/env bash
# Benchmark (issue 13): the idle cost of `headroom watch` with its memory-pressure source
# armed (PSI on Linux), next to earlyoom `--dryrun` with its defaults, in the same run.
#
#   bench/pressure_idle.sh [SECONDS] [EXTRA]        (Linux; default 60 s, 0 extra)
#
# EXTRA: start that many idle `sleep` processes first (this script's, ended by it), to see
# the cost on a table as large as a busy desktop's: watch's round reads every process,
# earlyoom reads /proc/meminfo. EXTRA_THREADS=T (2 or more) makes each of them a
# T-threaded `hr-fixture threads` instead (most of a desktop's processes are multi-threaded).
#
# Each runs for SECONDS after a 2 s settling time; its CPU is read from
# /proc/PID/schedstat (ns on CPU, the process's own) and wakeups from
# /proc/PID/status (voluntary context switches). watch runs with no guards, no auto-reap,
# no hangs and notifications off, in a private HEADROOM_HOME; earlyoom --dryrun never
# signals. Both are this script's children and are ended by it. Target: watch <= earlyoom.
# BASELINE=/path/to/an/older/headroom adds that binary's watch beside them, to compare a
# change in the same run (same load, same table).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
extra=${2:-0}
threads=${EXTRA_THREADS:-1}
cargo build --release --quiet --bin headroom
if [ "$threads" -gt 1 ]; then cargo build --release --quiet --example hr-fixture; fi
command -v earlyoom >/dev/null || { echo "earlyoom is not installed (apt-get install earlyoom)" >&2; exit 1; }
home=$(mktemp -d /tmp/headroom-bench.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$home"
}
trap cleanup EXIT
for _ in $(seq "$extra"); do
  if [ "$threads" -gt 1 ]; then
    target/release/examples/hr-fixture threads --spawn $((threads - 2)) &
  else
    sleep 100000 &
  fi
  pids+=($!)
done
printf '[notifications]\nenabled = false\n' >"$home/config.toml"

measure() { # measure LABEL PID
  local label=$1 pid=$2 s0 s1 v0 v1
  sleep 2
  s0=$(cut -d' ' -f1 "/proc/$pid/schedstat")
  v0=$(awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$pid/status")
  sleep "$secs"
  s1=$(cut -d' ' -f1 "/proc/$pid/schedstat")
  v1=$(awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$pid/status")
  printf '%-44s %8.2f ms CPU in %d s = %.4f %% of one core, %5d wakeups (%.1f/s)\n' "$label" \
    "$(echo "($s1 - $s0) / 1000000" | bc -l)" "$secs" \
    "$(echo "($s1 - $s0) / 10000000 / $secs" | bc -l)" $((v1 - v0)) \
    "$(echo "($v1 - $v0) / $secs" | bc -l)"
}

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg), $(find /proc -maxdepth 1 -name '[0-9]*' | wc -l) processes ($extra of them this script's sleepers, $threads thread(s) each)"
HEADROOM_HOME=$home target/release/headroom watch --json --no-auto-reap --no-hangs >"$home/watch.out" 2>&1 &
w=$!
pids+=($w)
# The same with a hard RLIMIT_NOFILE of 1,024 (a desktop's usual soft limit, which watch
# cannot raise past): no descriptors kept, every `status` opened and closed each round.
mkdir -p "$home/nofile"
cp "$home/config.toml" "$home/nofile/"
HEADROOM_HOME=$home/nofile prlimit --nofile=1024:1024 target/release/headroom watch --json \
  --no-auto-reap --no-hangs >"$home/nofile/watch.out" 2>&1 &
n=$!
pids+=($n)
earlyoom --dryrun >"$home/earlyoom.out" 2>&1 &
e=$!
pids+=($e)
measure "headroom watch (60 s rounds, pressure armed)" "$w" &
m1=$!
mb=
if [ -n "${BASELINE:-}" ]; then
  mkdir -p "$home/baseline"
  cp "$home/config.toml" "$home/baseline/"
  HEADROOM_HOME=$home/baseline "$BASELINE" watch --json --no-auto-reap --no-hangs \
    >"$home/baseline/watch.out" 2>&1 &
  b=$!
  pids+=($b)
  measure "baseline watch ($BASELINE)" "$b" &
  mb=$!
fi
measure "headroom watch, nofile 1024 (no kept fds)" "$n" &
m3=$!
measure "earlyoom --dryrun (defaults)" "$e" &
m2=$!
wait $m1 $m3 $m2 $mb
grep -m1 'memory pressure source' "$home/watch.out" | sed 's/^/watch said: /'
