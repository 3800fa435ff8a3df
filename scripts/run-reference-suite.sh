#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds RMM's own C++ tests from a checkout of RMM against this project's installed package and
# runs them: the emulator's libcuda where the build is the emulator's, the device where it is the
# GPU's. Nothing of RMM's is copied here: name its checkout.
# usage: scripts/run-reference-suite.sh RMM_CHECKOUT [BUILD_DIR]     (BUILD_DIR default: build)
#   writes to $OUT (default BUILD_DIR/reference-suite): the install, the build, one JSON report and
#   log per test program, and summary.txt. RMM_REFERENCE_FILTER: a Google Test filter for all.
set -uo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 1 && -f $1/cpp/tests/CMakeLists.txt ]] ||
  { echo "usage: $0 RMM_CHECKOUT [BUILD_DIR]: RMM_CHECKOUT must hold cpp/tests/CMakeLists.txt" >&2; exit 2; }
reference=$(cd "$1" && pwd)
build=${2:-build}
[[ -f $build/CMakeCache.txt ]] || { echo "$build is not a configured build: build the project first" >&2; exit 2; }
out=$(mkdir -p "${OUT:-$build/reference-suite}" && cd "${OUT:-$build/reference-suite}" && pwd)
prefix=$out/install
echo "== installing $build into $prefix"
cmake --install "$build" --prefix "$prefix" > "$out/install.log" 2>&1 || { tail -5 "$out/install.log"; exit 1; }
echo "== configuring RMM's tests from $reference"
arch=$(sed -n 's/^CMAKE_CUDA_ARCHITECTURES:[A-Z]*=//p' "$build/CMakeCache.txt")
cmake -S scripts/reference-suite -B "$out/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DREFERENCE_TESTS="$reference/cpp/tests" -DCMAKE_PREFIX_PATH="$prefix;${CMAKE_PREFIX_PATH:-}" \
  -DCMAKE_CUDA_ARCHITECTURES="${arch:-90}" > "$out/configure.log" 2>&1 || { tail -20 "$out/configure.log"; exit 1; }
echo "== building (programs that do not compile are listed at the end)"
ninja -C "$out/build" -k 0 -j "${JOBS:-$(nproc)}" > "$out/build.log" 2>&1
echo "   $(grep -c '^FAILED:' "$out/build.log") object file(s) failed to compile"
# The emulator's build runs them on the emulator, as the project's own tests do.
emulator=$PWD/$build/emulator/lib
[[ -d $emulator ]] && export LD_LIBRARY_PATH=$emulator${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
reports=$out/reports
rm -rf "$reports" && mkdir -p "$reports"
for program in $(find "$out/build" -maxdepth 1 -type f -executable -name '*TEST*' | sort); do
  name=$(basename "$program")
  echo "== $name"
  # In the reports' folder: some write files where they run.
  (cd "$reports" && timeout 600 "$program" --gtest_output=json:"$reports/$name.json" \
    ${RMM_REFERENCE_FILTER:+--gtest_filter="$RMM_REFERENCE_FILTER"} > "$reports/$name.log" 2>&1)
done
python3 scripts/reference-suite/summary.py "$reports" "$out/build.log" | tee "$out/summary.txt"
