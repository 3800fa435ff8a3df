#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Checks that every C++ and CUDA source of the repository is formatted as .clang-format says.
# Usage: scripts/check-format.sh [--fix]   (--fix formats the files in place)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format > /dev/null || { echo "error: clang-format not found (scripts/install-deps.sh installs it)" >&2; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh')
if [[ ${1:-} == --fix ]]; then
  clang-format -i "${files[@]}"
  echo "formatted ${#files[@]} files"
  exit 0
fi
echo "== checking the formatting of ${#files[@]} files ($(clang-format --version | head -1))"
unformatted=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" > /dev/null 2>&1 || unformatted+=("$f")
done
if ((${#unformatted[@]})); then
  printf 'not formatted: %s\n' "${unformatted[@]}" >&2
  echo "run scripts/check-format.sh --fix (or clang-format -i FILE) and commit the result" >&2
  exit 1
fi
echo "all formatted"
