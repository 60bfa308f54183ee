#!/usr/bin/env bash
# The baseline a user would otherwise write: start a command in its own process group, poll
# `ps` every INTERVAL, and when the group's summed RSS reaches LIMIT_MIB send SIGTERM to the
# group, wait GRACE seconds, then SIGKILL it. Used by bench/run_limit.sh; not part of headroom.
#
#   bench/ps_watchdog.sh LIMIT_MIB INTERVAL GRACE -- CMD [ARGS...]
set -u
limit_kb=$(($1 * 1024))
interval=$2
grace=$3
shift 4
set -m # job control: the background job leads a process group of its own
"$@" &
pid=$!
while kill -0 "$pid" 2>/dev/null; do
  sleep "$interval"
  rss=$(ps -eo pgid=,rss= | awk -v g="$pid" '$1 == g { s += $2 } END { print s + 0 }')
  if ((rss >= limit_kb)); then
    kill -TERM -- "-$pid" 2>/dev/null
    for ((i = 0; i < grace * 10; i++)); do
      kill -0 -- "-$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL -- "-$pid" 2>/dev/null
    wait "$pid"
    exit $?
  fi
done
wait "$pid"
