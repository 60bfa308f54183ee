#!/usr/bin/env bash
# Benchmark (issue 25 item 15): `headroom log-probe` on a directory of many old session logs,
# now that an old mtime no longer skips reading a file. N files (default 1000) of old
# heartbeat lines, 256 KiB each, every mtime set 3 days back: the 32 newest by mtime are
# read with the full budget, the rest at their last 16 KiB; past 1,024 files the directory is
# unknown without a file opened. Prints the time per run and the bytes read for N and for 2N.
#
#   bench/log_probe_dir.sh [N] [RUNS]        (Linux or macOS with perl; default 1000 files, 20 runs)
#   BASELINE=/path/to/older/headroom bench/log_probe_dir.sh   also times that binary on the same
#                                            directories (the one before this change skipped
#                                            every file by its old mtime)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
runs=${2:-20}

cargo build --release --quiet --bin headroom
work=$(mktemp -d "${TMPDIR:-/tmp}/headroom-logdir.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp target/release/headroom "$work/"

# One old file's content: heartbeat triplets 3 days old, 256 KiB.
perl -e '
  use POSIX qw(strftime);
  my $t = time - 3 * 86400;
  my $out = "";
  while (length($out) < 256 * 1024) {
    my $ts = strftime("%Y-%m-%dT%H:%M:%S", gmtime($t)) . ".499123Z";
    $out .= "$ts DEBUG tokio-runtime-worker ThreadId(09) agency::send_telemetry_events: client/agency/src/send_telemetry_events.rs:427: telem periodic flush: queue empty, nothing to commit\n";
    $t += 30;
  }
  print $out;' >"$work/one.log"

fill() { # DIR COUNT
  mkdir -p "$1"
  for ((i = 0; i < $2; i++)); do cp "$work/one.log" "$1/process-$i.log"; done
  touch -d '3 days ago' "$1"/*.log 2>/dev/null || touch -t "$(date -v-3d +%Y%m%d%H%M)" "$1"/*.log
}

time_it() { # ms per run of "$@" (best mean of 5 batches, after a warm-up run)
  local best="" start end ms
  "$@" >/dev/null
  for ((b = 0; b < 5; b++)); do
    start=$(date +%s%N)
    for ((i = 0; i < runs; i++)); do "$@" >/dev/null; done
    end=$(date +%s%N)
    ms=$(echo "scale=3; ($end - $start) / 1000000 / $runs" | bc)
    if [[ -z $best ]] || (($(echo "$ms < $best" | bc))); then best=$ms; fi
  done
  echo "$best"
}

for count in "$n" $((2 * n)); do
  dir="$work/logs-$count"
  fill "$dir" "$count"
  ms=$(time_it "$work/headroom" log-probe --json "$dir")
  json=$("$work/headroom" log-probe --json "$dir")
  read_bytes=$(printf '%s' "$json" | sed -n 's/.*"directory":{.*"bytes_read":\([0-9]*\).*/\1/p')
  verdict=$(printf '%s' "$json" | sed -n 's/.*"directory":{"verdict":"\([a-z-]*\)".*/\1/p')
  echo "$count old logs ($((count * 256 / 1024)) MiB), mtimes 3 days back: ${ms} ms per run," \
    "$read_bytes bytes read ($((read_bytes / 1024)) KiB), directory $verdict"
  if [[ -n ${BASELINE:-} ]]; then
    echo "  baseline $(basename "$BASELINE"): $(time_it "$BASELINE" log-probe --json "$dir") ms per run"
  fi
  # The human output, which is what a person waits for; no file list in --json's size.
  echo "  without --json: $(time_it "$work/headroom" log-probe "$dir") ms per run"
done
