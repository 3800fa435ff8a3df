#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs clang-tidy (.clang-tidy's checks) over the library, configuration, shim and tools sources,
# using the compile commands of a configured build (default: build/, from scripts/test.sh).
# Usage: scripts/check-tidy.sh [BUILD_DIR]   (a few minutes per core: it prints each file)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
command -v clang-tidy > /dev/null || { echo "error: clang-tidy not found (Debian: apt install clang-tidy)" >&2; exit 1; }
[[ -f $build/compile_commands.json ]] || { echo "error: no $build/compile_commands.json; configure first (scripts/test.sh)" >&2; exit 1; }
mapfile -t files < <(git ls-files 'core/src/*.cpp' 'config/src/*.cpp' 'shim/src/*.cpp' 'tools/*.cpp')
failed=0
for i in "${!files[@]}"; do
  echo "[$((i + 1))/${#files[@]}] ${files[i]}"
  clang-tidy -p "$build" --quiet "${files[i]}" 2> /dev/null || failed=1
done
((failed == 0)) && echo "no findings" || { echo "clang-tidy found problems (above)" >&2; exit 1; }
