#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds everything and runs the test suite on the CPU emulator of CUDA (no GPU needed). Installs
# missing build dependencies first (scripts/install-deps.sh).
# Usage: scripts/test.sh [preset]   (default: default; ci, asan, tsan also work)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
bash scripts/install-deps.sh
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
echo "== configuring ($preset)"
cmake --preset "$preset"
echo "== building (ninja prints [done/total]; a first build takes several minutes)"
cmake --build --preset "$preset"
echo "== testing"
ctest --preset "$preset"
