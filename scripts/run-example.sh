#!/usr/bin/env bash
# Builds and runs the bundled example (examples/hello_rmm) on the GPU. Without a usable GPU it
# says so and, so you can still see it work, runs it once more on the CPU emulator of CUDA that the
# tests use (clearly marked: no GPU was involved in that run).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
cmake --preset default >/dev/null
cmake --build --preset default --target hello_rmm rmm_emulator >/dev/null

status=0
./build/examples/hello_rmm/hello_rmm || status=$?
if [[ $status -eq 2 ]]; then
  echo
  echo "== No GPU here. Running the same program on the CPU emulator of CUDA (test infrastructure) =="
  LD_LIBRARY_PATH="$PWD/build/emulator/lib" ./build/examples/hello_rmm/hello_rmm
  exit 0
fi
exit $status
