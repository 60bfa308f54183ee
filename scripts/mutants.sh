#!/usr/bin/env bash
# Mutation testing of the code that decides whom to signal and how (issue 16), against the
# unit tests only (`--lib`): the core's policy.rs, liveness.rs, emergency.rs, patterns.rs and
# memory_guard.rs (crates/headroom-core/src), and crates/headroom-actions/src/actions/terminate.rs,
# crates/headroom-actions/src/actions/escalate.rs, crates/headroom-actions/src/actions/memory_guard.rs and its last step,
# crates/headroom-actions/src/actions/memory_guard/end.rs (the escalation and the kill gate).
# Every mutant that survives the unit tests of its own crate runs the unit tests of the whole
# workspace (`--test-workspace=true`): the core's rules are also tested from the main crate
# (actions, commands), as they were when the core was a module of it (two passes, below).
#
# Every mutant must be caught, or listed in scripts/mutants-equivalent.txt as equivalent (a
# change of code that cannot change behaviour), with a `# why` comment above it. An entry is
# cargo-mutants' name without the line and column (`file: replace X with Y in function`), so
# edits elsewhere in the file do not invalidate the list. The script fails on any other
# survivor, on an entry that names no mutant of a file that was run (stale), on one that
# names several (ambiguous: make the code or the list say which), and on a listed mutant
# that is now caught (the list must stay true).
#
#   scripts/mutants.sh                    # all nine files (slow on 2 cores: hours)
#   scripts/mutants.sh crates/headroom-core/src/patterns.rs   # one file
#   MUTANTS_IN_PLACE=1 scripts/mutants.sh ... # mutate this tree in place (fast, see below)
#   scripts/mutants.sh --check-list       # only check the list names mutants (seconds)
#   scripts/mutants.sh --judge FILE...    # judge the finished run in MUTANTS_OUT again
#
# Builds use the `mutants` profile (no debug info). By default cargo-mutants copies the tree
# and builds it cold; with MUTANTS_IN_PLACE=1 it mutates the files where they are and reuses
# the incremental target directory: run that only in a scratch worktree
# (`git worktree add --detach /tmp/mut HEAD`), never in the one you edit.
#
# Needs `cargo install --locked cargo-mutants`. Not in .ci/run: too slow.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=
case "${1:-}" in --check-list | --judge) mode=$1; shift ;; esac
files=("$@")
if [ ${#files[@]} -eq 0 ]; then
    core=crates/headroom-core/src
    files=("$core/policy.rs" "$core/liveness.rs" "$core/emergency.rs" "$core/patterns.rs"
           "$core/memory_guard.rs" crates/headroom-actions/src/actions/terminate.rs crates/headroom-actions/src/actions/escalate.rs
           crates/headroom-actions/src/actions/memory_guard.rs crates/headroom-actions/src/actions/memory_guard/end.rs)
fi
# Both packages hold files to mutate (the root's alone would be chosen from here).
args=(--workspace --test-workspace=true)
for f in "${files[@]}"; do args+=(--file "$f"); done
# `file:line:col: text` -> `file: text`, the form the list uses.
name() { sed -E '/^$/d; s/^([^:]+):[0-9]+:[0-9]+: /\1: /'; }
# (grep finds nothing while the list holds only comments: not a failure.)
listed=$({ grep -v '^#' scripts/mutants-equivalent.txt || true; } | sed '/^$/d' | sort -u)
# Every entry of a file in `files` names exactly one mutant of `all` (one name a line).
check_entries() {
    local all=$1 bad=0 entry n
    while IFS= read -r entry; do
        [ -n "$entry" ] || continue
        if [[ "$entry" =~ ^[^:]+:[0-9]+:[0-9]+:\  ]]; then
            echo "mutants.sh: listed with a line and column (drop them): $entry" >&2
            bad=1
            continue
        fi
        case " ${files[*]} " in *" ${entry%%: *} "*) ;; *) continue ;; esac
        n=$(grep -cxF -- "$entry" <<<"$all" || true)
        if [ "$n" -eq 0 ]; then
            echo "mutants.sh: listed as equivalent but names no mutant (stale): $entry" >&2
            bad=1
        elif [ "$n" -gt 1 ]; then
            echo "mutants.sh: listed as equivalent but names $n mutants (ambiguous): $entry" >&2
            bad=1
        fi
    done <<<"$listed"
    return "$bad"
}
if [ "$mode" = --check-list ]; then
    all=$(cargo mutants --list "${args[@]}" | name)
    check_entries "$all" || exit 1
    echo "mutants.sh: every listed entry of ${#files[@]} file(s) names exactly one mutant"
    exit 0
fi
out=${MUTANTS_OUT:-target/mutants}
# Two passes, one verdict. The core's unit tests are a subset of the workspace's, so a mutant
# of a core file they catch is caught by the whole set: pass 1 runs the core files' mutants
# against `cargo test -p headroom-core --lib` alone (a rebuild of the core crate, not of
# both), and pass 2 runs everything not caught or unviable there (`--iterate`: the core's
# survivors and timeouts, and every mutant of the main crate's files) against the unit tests
# of the whole workspace. Pass 1's outcome is kept in $out/pass1 for the verdict.
core_files=()
for f in "${files[@]}"; do
    case $f in crates/headroom-core/*) core_files+=("$f") ;; esac
done
run_mutants() { # OUTPUT-DIR ARGS...: exit 2 (survivors) and 3 (timeouts) are judged below
    local o=$1 rc
    shift
    # In place there is one tree, so one job.
    local where=(--jobs "${MUTANTS_JOBS:-1}")
    if [ -n "${MUTANTS_IN_PLACE:-}" ]; then where=(--in-place); fi
    set +e
    cargo mutants --no-shuffle "${where[@]}" --timeout "${MUTANTS_TIMEOUT:-120}" \
        --profile mutants --output "$o" "$@" -- --lib
    rc=$?
    set -e
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ] && [ "$rc" -ne 3 ]; then
        echo "mutants.sh: cargo mutants failed (exit $rc)" >&2
        exit "$rc"
    fi
}
if [ "$mode" != --judge ]; then
    mkdir -p "$out"
    rm -rf "$out/pass1" "$out/mutants.out"
    if [ ${#core_files[@]} -gt 0 ]; then
        pass1=(--package headroom-core --test-package headroom-core)
        for f in "${core_files[@]}"; do pass1+=(--file "$f"); done
        run_mutants "$out" "${pass1[@]}"
        mv "$out/mutants.out" "$out/pass1"
        mkdir -p "$out/mutants.out"
        for k in caught unviable; do
            if [ -f "$out/pass1/$k.txt" ]; then cp "$out/pass1/$k.txt" "$out/mutants.out/"; fi
        done
        run_mutants "$out" --iterate "${args[@]}"
    else
        run_mutants "$out" "${args[@]}"
    fi
fi
dir="$out/mutants.out"
if [ ! -f "$dir/caught.txt" ]; then
    echo "mutants.sh: no finished run in $dir" >&2
    exit 1
fi
# An outcome of pass 2, with pass 1's caught and unviable (its survivors were run again).
list() {
    { cat "$dir/$1.txt" 2>/dev/null || true
      case $1 in caught | unviable) cat "$out/pass1/$1.txt" 2>/dev/null || true ;; esac
    } | name | sort
}
all=$(for k in caught missed timeout unviable; do list "$k"; done)
check_entries "$all" || exit 1
# A mutant that makes the tests hang (timeout.txt) is detected by the hang: counted apart.
survived=$(list missed)
timeouts=$(list timeout | sed '/^$/d' | wc -l)
new=$(comm -23 <(echo "$survived") <(echo "$listed") | sed '/^$/d')
caught=$(list caught | sed '/^$/d' | wc -l)
unviable=$(list unviable | sed '/^$/d' | wc -l)
equivalent=$(comm -12 <(echo "$survived") <(echo "$listed") | sed '/^$/d' | wc -l)
echo "mutants.sh: caught $caught, timed out (hang: caught) $timeouts, equivalent (listed) $equivalent, unviable $unviable"
if [ -n "$new" ]; then
    echo "mutants.sh: survivors neither caught nor listed as equivalent:" >&2
    echo "$new" >&2
    exit 1
fi
# A listed mutant of a file that was run must still survive.
for f in "${files[@]}"; do
    stale=$(echo "$listed" | grep -F "$f: " | comm -23 - <(echo "$survived") | sed '/^$/d' || true)
    if [ -n "$stale" ]; then
        echo "mutants.sh: listed as equivalent but now caught (remove from the list):" >&2
        echo "$stale" >&2
        exit 1
    fi
done
