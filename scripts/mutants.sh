#!/usr/bin/env bash
# Mutation testing of the code that decides whom to signal and how (issue 16), against the
# unit tests only (`--lib`): core/policy.rs, core/liveness.rs, core/emergency.rs,
# core/patterns.rs, actions/terminate.rs and actions/escalate.rs.
#
# Every mutant must be caught, or listed in scripts/mutants-equivalent.txt (one
# `file:line:col: description` per line as cargo-mutants prints it, a `# why` comment above
# each) as equivalent: a change of code that cannot change behaviour. The script fails on any
# other survivor, and on a listed mutant that no longer survives (the list must stay true).
#
#   scripts/mutants.sh                    # all six files (slow on 2 cores: hours)
#   scripts/mutants.sh src/core/patterns.rs   # one file
#   MUTANTS_IN_PLACE=1 scripts/mutants.sh ... # mutate this tree in place (fast, see below)
#
# Builds use the `mutants` profile (no debug info). By default cargo-mutants copies the tree
# and builds it cold; with MUTANTS_IN_PLACE=1 it mutates the files where they are and reuses
# the incremental target directory: run that only in a scratch worktree
# (`git worktree add --detach /tmp/mut HEAD`), never in the one you edit.
#
# Needs `cargo install --locked cargo-mutants`. Not in .ci/run: too slow.
set -euo pipefail
cd "$(dirname "$0")/.."
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    files=(src/core/policy.rs src/core/liveness.rs src/core/emergency.rs src/core/patterns.rs
           src/actions/terminate.rs src/actions/escalate.rs)
fi
args=()
for f in "${files[@]}"; do args+=(--file "$f"); done
out=${MUTANTS_OUT:-target/mutants}
mkdir -p "$out"
# Exit 2 (survivors) and 3 (timeouts) are judged below; anything else is a failure to run.
set +e
# In place there is one tree, so one job.
where=(--jobs "${MUTANTS_JOBS:-1}")
if [ -n "${MUTANTS_IN_PLACE:-}" ]; then where=(--in-place); fi
cargo mutants --no-shuffle "${where[@]}" --timeout "${MUTANTS_TIMEOUT:-120}" \
    --profile mutants --output "$out" "${args[@]}" -- --lib
rc=$?
set -e
if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ] && [ "$rc" -ne 3 ]; then
    echo "mutants.sh: cargo mutants failed (exit $rc)" >&2
    exit "$rc"
fi
dir="$out/mutants.out"
# (grep finds nothing while the list holds only comments: not a failure.)
listed=$({ grep -v '^#' scripts/mutants-equivalent.txt || true; } | sed '/^$/d' | sort -u)
# A mutant that makes the tests hang (timeout.txt) is detected by the hang: counted apart.
survived=$(sed '/^$/d' "$dir/missed.txt" 2>/dev/null | sort -u)
timeouts=$(sed '/^$/d' "$dir/timeout.txt" 2>/dev/null | wc -l)
new=$(comm -23 <(echo "$survived") <(echo "$listed") | sed '/^$/d')
caught=$(sed '/^$/d' "$dir/caught.txt" 2>/dev/null | wc -l)
unviable=$(sed '/^$/d' "$dir/unviable.txt" 2>/dev/null | wc -l)
equivalent=$(comm -12 <(echo "$survived") <(echo "$listed") | sed '/^$/d' | wc -l)
echo "mutants.sh: caught $caught, timed out (hang: caught) $timeouts, equivalent (listed) $equivalent, unviable $unviable"
if [ -n "$new" ]; then
    echo "mutants.sh: survivors neither caught nor listed as equivalent:" >&2
    echo "$new" >&2
    exit 1
fi
# A listed mutant of a file that was run must still survive.
for f in "${files[@]}"; do
    stale=$(echo "$listed" | grep -F "$f:" | comm -23 - <(echo "$survived") | sed '/^$/d' || true)
    if [ -n "$stale" ]; then
        echo "mutants.sh: listed as equivalent but now caught (remove from the list):" >&2
        echo "$stale" >&2
        exit 1
    fi
done
