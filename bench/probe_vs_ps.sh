#!/usr/bin/env bash
# Benchmark (issue: foundation): `headroom probe --json` against `ps -e -o pid,ppid,stat,uid,comm`
# on the same process table of >= 4,000 processes, >= 3,000 of them zombies, in one run.
#
#   bench/probe_vs_ps.sh [RUNS]          (Linux; as root it uses a private uid via setpriv)
#
# Prints the mean wall time of each over RUNS runs (default 30), the ratio, and the
# process-management system calls of one probe (`strace -f -c -e trace=process`) when strace
# is installed: after start-up there must be no fork, clone or exec.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-30}
zombies=${ZOMBIES:-3000}
live=${LIVE:-1000}

cargo build --release --quiet --bin headroom --example hr-fixture
work=$(mktemp -d /tmp/headroom-bench.XXXXXX)
chmod 755 "$work"
cp target/release/headroom target/release/examples/hr-fixture "$work/"
cp target/release/examples/hr-fixture "$work/agency-bench"
cleanup() {
  # Closing the supervisors' stdin makes them SIGKILL everything they started.
  [[ -n "${LEAK[1]:-}" ]] && exec {LEAK[1]}>&- || true
  [[ -n "${TREE[1]:-}" ]] && exec {TREE[1]}>&- || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

as_user=()
sup_uid=()
if [[ $(id -u) == 0 ]]; then
  uid=$((3900000000 + $$ % 100000))
  as_user=(setpriv --reuid="$uid" --regid="$uid" --clear-groups --)
  sup_uid=(--uid "$uid")
  mkdir -p "$work/home" && chown "$uid:$uid" "$work/home"
else
  uid=$(id -u)
  mkdir -p "$work/home"
fi
export HEADROOM_HOME=$work/home

coproc LEAK { "$work/hr-fixture" supervise "${sup_uid[@]}" -- "$work/agency-bench" leak --zombies "$zombies"; }
coproc TREE { "$work/hr-fixture" supervise "${sup_uid[@]}" -- "$work/hr-fixture" tree --depth 2 --fanout "$live"; }
wait_ready() { local line; while read -r line <&"$1"; do [[ $line == ready* ]] && return 0; done; return 1; }
wait_ready "${LEAK[0]}" || { echo "leak fixture failed" >&2; exit 1; }
wait_ready "${TREE[0]}" || { echo "tree fixture failed" >&2; exit 1; }

total=$(ls -d /proc/[0-9]* | wc -l)
zcount=$(awk '$3=="Z"' /proc/[0-9]*/stat 2>/dev/null | wc -l)
echo "process table: $total processes, $zcount zombies (uid $uid holds $((zombies + live + 2)))"

time_it() { # mean milliseconds of RUNS runs of "$@"
  local start end
  "$@" >/dev/null 2>&1 || true
  start=$(date +%s%N)
  for ((i = 0; i < runs; i++)); do "$@" >/dev/null 2>&1 || true; done
  end=$(date +%s%N)
  echo "scale=2; ($end - $start) / 1000000 / $runs" | bc
}
if [[ -n "${PROFILE:-}" ]]; then strace -c "${as_user[@]}" "$work/headroom" probe --json --no-history 2>&1 >/dev/null | head -12; fi
probe_ms=$(time_it "${as_user[@]}" "$work/headroom" probe --json --no-history)
ps_ms=$(time_it "${as_user[@]}" ps -e -o pid,ppid,stat,uid,comm)
echo "headroom probe --json: ${probe_ms} ms per run (mean of $runs)"
echo "ps -e -o pid,ppid,stat,uid,comm: ${ps_ms} ms per run (mean of $runs)"
echo "ratio ps/probe: $(echo "scale=2; $ps_ms / $probe_ms" | bc)x (target >= 2x)"
"${as_user[@]}" "$work/headroom" probe --json --no-history | head -c 300; echo

if command -v strace >/dev/null; then
  echo "--- strace -f -c -e trace=process headroom probe --json --no-history"
  strace -f -c -e trace=process "${as_user[@]}" "$work/headroom" probe --json --no-history 2>&1 >/dev/null | tail -n +1
  echo "(the execve rows are setpriv's and headroom's own start-up exec; no fork/clone/vfork after it)"
fi
