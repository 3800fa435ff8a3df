#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks that the stream-ordering tests catch known engine bugs. Copies the working tree (tracked
# and untracked, not ignored files) to a scratch directory, builds stream_safety_test there on the
# CPU emulator, runs it unmutated, then once with each mutation applied. A mutation is caught when
# at least one test that passes unmutated fails with it. Exit status: 0 when every mutation was
# caught, 1 when one was missed, 2 on a setup, build or patch failure.
#
#   tests/mutations/run.sh [PATCH...]      # default: every tests/mutations/*.patch
#
# Environment:
#   RMM_MUTATION_DIR     scratch directory (default: <repository>/build-mutations, git-ignored);
#                        kept between runs, so later runs rebuild only what changed
#   RMM_MUTATION_FILTER  gtest filter for stream_safety_test (default: every test)
#   RMM_MUTATION_TIMEOUT seconds per test run (default: 600); a run that hangs counts as failing
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
scratch=${RMM_MUTATION_DIR:-$root/build-mutations}
filter=${RMM_MUTATION_FILTER:-*}
run_timeout=${RMM_MUTATION_TIMEOUT:-600}
src=$scratch/src
build=$src/build

patches=("$@")
if [[ ${#patches[@]} -eq 0 ]]; then patches=("$here"/*.patch); fi
for p in "${patches[@]}"; do
  [[ -f $p ]] || { echo "no such patch: $p" >&2; exit 2; }
done

log() { printf '%s\n' "$*" >&2; }
count() { if [[ -z $1 ]]; then echo 0; else wc -l <<<"$1" | tr -d ' '; fi; }

# The copy. Files a patch touches are touched after each change, so that ninja never takes an
# object built from a mutated source for current (copies keep the original modification times).
mkdir -p "$src"
(cd "$root" && git ls-files -co --exclude-standard -z | tar --null -T - -cf -) | tar -xf - -C "$src"
mutated_files=$(cat "${patches[@]}" | sed -n 's|^+++ b/||p' | sort -u)

export CCACHE_BASEDIR=$src CCACHE_NOHASHDIR=true  # lets ccache share objects between runs of the copy

build_and_run() {  # $1: label; prints the names of the failing tests
  local label=$1 output status=0
  (cd "$src" && for f in $mutated_files; do touch "$f"; done)
  if ! ninja -C "$build" stream_safety_test >"$scratch/build-$label.log" 2>&1; then
    log "$label: build failed, see $scratch/build-$label.log"
    return 2
  fi
  output=$scratch/run-$label.log
  (cd "$build" && RMM_EXPECTED_BACKEND=emulator LD_LIBRARY_PATH="$build/emulator/lib" \
     timeout "$run_timeout" tests/unit/stream_safety_test --gtest_filter="$filter" >"$output" 2>&1) || status=$?
  if [[ $status -eq 124 ]]; then
    echo "(timed out after ${run_timeout}s)"
  fi
  sed -n 's/^\[  FAILED  \] \([^ ,]*\.[^ ,]*\).*/\1/p' "$output" | sort -u
}

log "scratch copy: $src"
if [[ ! -f $build/build.ninja ]]; then
  (cd "$src" && cmake --preset ci >"$scratch/configure.log" 2>&1) || { log "configure failed: $scratch/configure.log"; exit 2; }
fi

baseline=$(build_and_run unmutated) || exit 2
log "unmutated: $(count "$baseline") failing (these do not count as catching):"
[[ -n $baseline ]] && sed 's/^/    /' <<<"$baseline" >&2

missed=0
results=()
for p in "${patches[@]}"; do
  name=$(basename "$p" .patch)
  (cd "$src" && patch -p1 --quiet --forward <"$p") || { log "$name: does not apply to the current engine"; exit 2; }
  failing=$(build_and_run "$name") || { (cd "$src" && patch -p1 --quiet -R <"$p"); exit 2; }
  (cd "$src" && patch -p1 --quiet -R <"$p")
  new=$(comm -13 <(printf '%s\n' "$baseline") <(printf '%s\n' "$failing") | sed '/^$/d')
  if [[ -n $new ]]; then
    results+=("CAUGHT  $name by $(count "$new") test(s):"$'\n'"$(sed 's/^/    /' <<<"$new")")
  else
    results+=("MISSED  $name")
    missed=1
  fi
done
# Leave the copy built unmutated.
(cd "$src" && for f in $mutated_files; do touch "$f"; done)

printf '%s\n' "${results[@]}"
exit $missed
