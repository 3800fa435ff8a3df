#!/usr/bin/env bash
# Builds everything and runs the test suite on the CPU emulator of CUDA (no GPU needed).
# Usage: scripts/test.sh [preset]   (default: default; ci, asan, tsan also work)
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-default}
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
cmake --preset "$preset"
cmake --build --preset "$preset"
ctest --preset "$preset"
