#!/usr/bin/env bash
# Benchmark (issue 31 item 2): what `headroom run --limit 1G` costs around an idle command,
# counted on headroom's own threads only (/proc/PID/task/*/schedstat, ns on the CPU), so the
# load of other processes moves the figure little. Two commands: a 20-process idle tree
# (hr-fixture tree, as bench/run_limit.sh) and one `sleep`.
#
#   bench/run_idle.sh [SECONDS] [ROUNDS] [OTHER_HEADROOM]      (Linux)
#
# With OTHER_HEADROOM (e.g. a copy of an earlier release build), the two binaries run in
# turn, ROUNDS times each, so a before/after comparison shares the machine's load.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
rounds=${2:-2}
other=${3:-}

cargo build --release --quiet --bin headroom --example hr-fixture
work=$(mktemp -d /tmp/headroom-runidle.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp target/release/headroom "$work/headroom"
cp target/release/examples/hr-fixture "$work/"
[[ -n $other ]] && cp "$other" "$work/other"
export HEADROOM_HOME=$work/home
mkdir -p "$HEADROOM_HOME"

# cpu BIN LABEL CMD...: headroom's own CPU over SECS while it supervises CMD.
cpu() {
  local bin=$1 label=$2 pid s0 s1 w0 w1
  shift 2
  "$bin" run --limit 1G -- "$@" >/dev/null 2>&1 &
  pid=$!
  sleep 2 # start-up and the first reads are not the idle cost
  ns() {
    local n=0 f a
    for f in /proc/"$pid"/task/*/schedstat; do
      read -r a _ <"$f"
      n=$((n + a))
    done
    echo "$n"
  }
  s0=$(ns)
  w0=$(date +%s%N)
  sleep "$secs"
  s1=$(ns)
  w1=$(date +%s%N)
  kill -TERM "$pid" # headroom's own child; it ends its tree and exits
  wait "$pid" 2>/dev/null || true
  local wall_ms=$(((w1 - w0) / 1000000))
  printf '%-28s %6.1f ms CPU in %6d ms = %.3f %% of one core (load %s)\n' "$label" \
    "$(echo "($s1 - $s0) / 1000000" | bc -l)" "$wall_ms" \
    "$(echo "($s1 - $s0) / 10000 / $wall_ms" | bc -l)" "$(cut -d' ' -f1 /proc/loadavg)"
}

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(ls -d /proc/[0-9]* | wc -l) processes"
for ((r = 1; r <= rounds; r++)); do
  for b in "$work/headroom" ${other:+"$work/other"}; do
    name=this
    [[ $b == "$work/other" ]] && name=other
    cpu "$b" "$name, 20-process tree" "$work/hr-fixture" tree --depth 2 --fanout 19
    cpu "$b" "$name, sleep" sleep $((secs + 60))
  done
done
