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

# The log's generator is shared with bench/all.py (`evidence`).
python3 -c 'import sys; sys.path.insert(0, "bench"); import more_comparisons as m
m.write_evidence(sys.argv[3], int(sys.argv[1]), int(sys.argv[2]))' "$rows" "$gaps" "$work/evidence.csv"
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
