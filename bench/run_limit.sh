#!/usr/bin/env bash
# Benchmark (issue 5): `headroom run --limit` against the `ps`-polling shell loop a user would
# otherwise write (bench/ps_watchdog.sh), in one run, at the same 200 ms interval.
#
#   bench/run_limit.sh [SECONDS] [RUNS]        (Linux; as root the trees run under a private uid)
#
# 1. Overhead: each watchdog around an idle 20-process tree for SECONDS (default 30): CPU
#    seconds the watchdog used (for the shell loop: itself and every ps/awk it ran) divided by
#    wall seconds. Target for headroom: <= 0.5 % of one core.
# 2. Enforcement, RUNS times each (default 5): a child growing ~1000 MiB/s in 10 ms steps
#    against a 256 MiB limit, starting at a different phase of the 200 ms cycle each run.
#    Peak = the most the child had touched when it died; "grew" = from the step that crossed
#    256 MiB to the child's last step (its own clock); "watchdog gone" = from that step to
#    the watchdog's exit (headroom exits once the tree is verified gone; the loop polls its
#    grace every 100 ms, so its figure runs up to 100 ms late). Target: overshoot <= one
#    interval of growth (200 ms x 1000 MiB/s = 200 MiB).
#    "headroom" is `run --enforce auto` as a uid with no delegated cgroup, i.e. polling;
#    "kernel" (issue 13) is `run --enforce kernel` as the same uid inside a cgroup the
#    script delegated to it (as root: v2 with memory at the root, else v1), the way systemd
#    delegates one to a user's manager. Target for kernel: overshoot 0 (peak <= limit).
# Every command runs under the fixture's supervisor (everything it started is killed when
# the script ends) and under RLIMIT_AS 4 GiB, so a watchdog that fails cannot take the
# machine's memory.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
runs=${2:-5}
limit_mib=256
rate=1000

cargo build --release --quiet --bin headroom --example hr-fixture
work=$(mktemp -d /tmp/headroom-bench.XXXXXX)
chmod 755 "$work"
cp target/release/headroom target/release/examples/hr-fixture bench/ps_watchdog.sh "$work/"
deleg=""
cleanup() {
  [[ -n "${S[1]:-}" ]] && exec {S[1]}>&- || true
  wait 2>/dev/null || true
  rm -rf "$work"
  if [[ -n $deleg ]]; then
    rmdir "$deleg/leaf" 2>/dev/null || true
    rmdir "$deleg" 2>/dev/null || true
  fi
}
trap cleanup EXIT

sup_uid=()
if [[ $(id -u) == 0 ]]; then
  uid=$((3900000000 + $$ % 100000))
  sup_uid=(--uid "$uid")
  mkdir -p "$work/home" && chown "$uid:$uid" "$work/home"
else
  mkdir -p "$work/home"
fi
export HEADROOM_HOME=$work/home

# A cgroup delegated to the benchmark's uid (root only): sets DELEG and LEAF, or says why not.
delegate() {
  local v2 v1 own
  v2=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
  v1=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)memory(,|$)/ {print $5; exit}' /proc/self/mountinfo)
  if [[ -n $v2 ]] && grep -qw memory "$v2/cgroup.subtree_control" 2>/dev/null; then
    deleg=$v2/headroom-bench-$$
    mkdir "$deleg" && echo +memory >"$deleg/cgroup.subtree_control" && mkdir "$deleg/leaf"
    chown "$uid:$uid" "$deleg" "$deleg"/cgroup.{procs,subtree_control,threads} "$deleg/leaf" "$deleg/leaf/cgroup.procs"
    LEAF=$deleg/leaf
  elif [[ -n $v1 ]]; then
    own=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ {print $3; exit}' /proc/self/cgroup)
    deleg=$v1$own/headroom-bench-$$
    mkdir "$deleg" && chown "$uid:$uid" "$deleg" "$deleg"/{cgroup.procs,tasks}
    LEAF=$deleg
  else
    echo "no cgroup memory controller to delegate" >&2
    return 1
  fi
}
hz=$(getconf CLK_TCK)
capped=(prlimit --as=$((4 << 30)) --)

# CPU ticks of a process and of its reaped children: utime + stime + cutime + cstime.
ticks() {
  local s
  s=$(<"/proc/$1/stat")
  s=${s##*) }
  # shellcheck disable=SC2086
  set -- $s
  echo $((${12} + ${13} + ${14} + ${15}))
}

start() { # start CMD...: run it under the supervisor as coproc S; sets PID
  coproc S { "$work/hr-fixture" supervise "${sup_uid[@]}" --stderr "$work/stderr" -- "$@"; }
  local line
  read -r line <&"${S[0]}"
  PID=${line#started }
}

stop() {
  exec {S[1]}>&-
  wait "$S_PID" 2>/dev/null || true
}

overhead() { # overhead LABEL CMD...
  local label=$1 line c0 c1 t0 t1
  shift
  start "$@"
  while read -r line <&"${S[0]}"; do [[ $line == ready* ]] && break; done
  sleep 1
  local s0 s1
  c0=$(ticks "$PID")
  s0=$(cut -d' ' -f1 "/proc/$PID/schedstat")
  t0=$(date +%s%N)
  sleep "$secs"
  c1=$(ticks "$PID")
  s1=$(cut -d' ' -f1 "/proc/$PID/schedstat")
  t1=$(date +%s%N)
  stop
  local cpu_ms=$(((c1 - c0) * 1000 / hz)) wall_ms=$(((t1 - t0) / 1000000))
  # Ticks (10 ms each) include reaped children (the loop's ps and awk); schedstat is the
  # process's own time in ns (headroom is single-threaded and reaps no helper).
  printf '%-34s %6d ms CPU in %6d ms = %s %% of one core (own, schedstat: %s %%)\n' "$label" \
    "$cpu_ms" "$wall_ms" "$(echo "scale=3; $cpu_ms * 100 / $wall_ms" | bc)" \
    "$(echo "scale=3; ($s1 - $s0) / 10000 / $wall_ms" | bc)"
}

enforce() { # enforce LABEL CMD...: prints one line, sets PEAK, GREW_MS and GONE_MS
  local label=$1 line breach="" last="" end="" code=""
  shift
  PEAK=0
  start "$@"
  [[ $label == *"enforce kernel"* ]] && echo "$PID" >"$LEAF/cgroup.procs"
  while read -r line <&"${S[0]}"; do
    case $line in
      grew\ *)
        read -r _ mib ns <<<"$line"
        ((mib > PEAK)) && PEAK=$mib
        [[ -z $breach ]] && ((mib >= limit_mib)) && breach=$ns
        last=$ns
        ;;
      exited\ * | killed\ *)
        end=$(date +%s%N)
        code=$line
        break
        ;;
    esac
  done
  stop
  if [[ -z $breach ]]; then # never got past the limit (the kernel's cap): from its last step
    GREW_MS=0
    GONE_MS=$(((end - last) / 1000000))
  else
    GREW_MS=$(((last - breach) / 1000000))
    GONE_MS=$(((end - breach) / 1000000))
  fi
  printf '%-30s peak %4d MiB (overshoot %3d MiB), grew %3d ms past the limit, watchdog gone %3d ms after, %s\n' \
    "$label" "$PEAK" $((PEAK - limit_mib)) "$GREW_MS" "$GONE_MS" "$code"
}

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, load $(cut -d' ' -f1-3 /proc/loadavg), $(ls -d /proc/[0-9]* | wc -l) processes"
echo "busiest processes now:"
ps -eo pcpu=,comm= --sort=-pcpu | head -5 | sed 's/^/  /'

echo
echo "== overhead: idle 20-process tree, ${secs} s, 200 ms interval"
tree=("$work/hr-fixture" tree --depth 2 --fanout 19)
overhead "headroom run --limit 1G" "${capped[@]}" "$work/headroom" run --limit 1G -- "${tree[@]}"
overhead "ps loop (ps_watchdog.sh 1024)" "${capped[@]}" bash "$work/ps_watchdog.sh" 1024 0.2 5 -- "${tree[@]}"

echo
echo "== enforcement: ~${rate} MiB/s against ${limit_mib} MiB, 200 ms interval, ${runs} runs each"
labels=(headroom ps)
if [[ $(id -u) == 0 ]] && delegate; then
  labels=(kernel headroom ps)
else
  echo "(kernel: skipped - needs root to delegate a cgroup to the benchmark's uid)"
fi
for label in "${labels[@]}"; do
  worst_peak=0 worst_ms=0 worst_grew=0
  for ((r = 1; r <= runs; r++)); do
    # Start growing at a different point of the polling cycle each run (0, 40, 80, ... ms
    # into it), so the runs cover the whole interval instead of one phase of it.
    hog=("$work/hr-fixture" hog --mib 0 --grow-mib-per-s "$rate" --grow-step-ms 10
      --grow-delay-ms $(((r - 1) * 200 / runs)) --report-growth)
    if [[ $label == kernel ]]; then
      # The shell waits until the script (root) has moved it into the delegated cgroup,
      # then execs headroom there.
      LEAF_NAME=${LEAF##*/} enforce "headroom run --enforce kernel #$r" "${capped[@]}" sh -c \
        'while ! grep -q "/$LEAF_NAME\$" /proc/self/cgroup; do sleep 0.01; done; exec "$@"' sh \
        "$work/headroom" run --limit "${limit_mib}M" --enforce kernel -- "${hog[@]}"
    elif [[ $label == headroom ]]; then
      enforce "headroom run --limit ${limit_mib}M #$r" "${capped[@]}" "$work/headroom" run --limit "${limit_mib}M" --enforce poll -- "${hog[@]}"
    else
      enforce "ps loop #$r" "${capped[@]}" bash "$work/ps_watchdog.sh" "$limit_mib" 0.2 5 -- "${hog[@]}"
    fi
    ((PEAK > worst_peak)) && worst_peak=$PEAK
    ((GREW_MS > worst_grew)) && worst_grew=$GREW_MS
    ((GONE_MS > worst_ms)) && worst_ms=$GONE_MS
  done
  target=200
  [[ $label == kernel ]] && target=0
  echo "  $label worst: peak ${worst_peak} MiB (overshoot $((worst_peak - limit_mib)) MiB; target <= $target), grew ${worst_grew} ms past the limit, watchdog gone ${worst_ms} ms after"
  if [[ $label != ps ]]; then
    echo "  headroom's last line (run #$runs): $(tail -1 "$work/stderr")"
  fi
done
