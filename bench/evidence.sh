#!/usr/bin/env bash
# Benchmark (issue 28, item 15): `headroom evidence --chart` and `--svg` on a log of ROWS
# readings (default 1,000,000) with GAPS gaps of two hours (default 400) and a cleanup every
# 10,000 readings, RUNS times each (default 5): wall seconds, CPU seconds and peak RSS,
# min / median / max, and the SVG's size.
#
#   bench/evidence.sh [ROWS] [GAPS] [RUNS]        (Linux; python3 and GNU time)
#
# Targets: under 1 s and under 100 MB for either output, an SVG under 500 KB.
# HEADROOM_BIN=path uses that binary instead of building the release one.
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${1:-1000000}
gaps=${2:-400}
runs=${3:-5}
if [ -z "${HEADROOM_BIN:-}" ]; then
  cargo build --release --quiet --bin headroom
  HEADROOM_BIN=target/release/headroom
fi
work=$(mktemp -d /tmp/headroom-evidence-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
export HEADROOM_HOME=$work

python3 - "$rows" "$gaps" "$work/evidence.csv" <<'PY'
import sys, datetime as dt
rows, gaps, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
cols = ("at,uid,processes,tasks,zombies,used,limit,limit_source,usage_pct,free_slots,level,"
        "growth_per_min,eta_seconds,trend_samples,partial,top_parent_pid,top_parent_name,"
        "top_parent_zombies,session_signal,action,result,override")
every = max(1, rows // (gaps + 1))
t = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc).timestamp()
with open(path, "w") as f:
    f.write(cols + "\n")
    for i in range(rows):
        t += 7200 if i % every == every - 1 else 60
        at = dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        used = 1500 + (i * 7919) % 1200
        zombies = used - 400
        limit, source = (4194304 - (i * 31) % 997, "pid-max") if i % 2 else (2666, "rlimit-nproc")
        pct = round(100 * used / limit, 2)
        f.write(f"{at},501,{used},{used},{zombies},{used},{limit},{source},{pct},{max(0, limit - used)},"
                f"normal,1.5,,10,false,4242,agency,{zombies},,poll,,\n")
        if i % 10000 == 9999:
            f.write(f"{at},501,{used},{used},{zombies},{used},{limit},{source},{pct},{max(0, limit - used)},"
                    f"normal,,,0,false,4242,agency,{zombies},cpu_idle=900;log_age=900,kill:15+9,"
                    f"sigkill;reaped={zombies};freed={zombies + 1};verified=true,\n")
PY
size=$(du -m "$work/evidence.csv" | cut -f1)
echo "log: ${rows} readings, ${gaps} gaps, ${size} MB ($("$HEADROOM_BIN" --version))"

# One run: wall seconds, peak RSS in kB, CPU seconds (user + system), by GNU time. On a
# shared machine the wall time is mostly waiting for a core; the CPU time is the cost.
measure() {
  /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$HEADROOM_BIN" evidence "$@" >/dev/null
  awk '{print $1, $2, $3 + $4}' "$work/time"
}

# min / median / max of a column of numbers.
stats() {
  sort -n | awk '{v[NR]=$1} END {printf "min %s  median %s  max %s\n", v[1], v[int((NR+1)/2)], v[NR]}'
}

for what in chart svg; do
  : >"$work/runs"
  for _ in $(seq "$runs"); do
    if [ "$what" = chart ]; then
      measure --chart --width 120 >>"$work/runs"
    else
      measure --svg "$work/out.svg" >>"$work/runs"
    fi
  done
  echo "--$what, $runs runs:"
  echo "  seconds  $(cut -d' ' -f1 "$work/runs" | stats)"
  echo "  CPU s    $(cut -d' ' -f3 "$work/runs" | stats)"
  echo "  MB RSS   $(awk '{print $2 / 1024}' "$work/runs" | stats)"
done
echo "SVG: $(( $(stat -c %s "$work/out.svg") / 1024 )) KB (target < 500 KB)"
