#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job: builds a small CUDA program that knows nothing of rmm (examples/alloc_churn: every
# step cudaMallocs and cudaFrees its buffers, like a framework with its cache off) and runs it
# twice: as it is, and under the preload shim with its built-in stack (rmm-run --report), showing
# the time per step and the shim's report.
#
# On a machine without a GPU it says so and runs the same on the CPU emulator of CUDA that the
# tests use, clearly marked (built against the shared CUDA runtime: the emulator cannot run
# NVIDIA's static one). Installs missing build dependencies first (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"

echo "== configuring and building (first time: a few minutes)"
cmake --preset default >/dev/null
cmake --build --preset default --target alloc_churn alloc_churn_shared hello_rmm rmm-run rmm-ctl rmm-replay rmm_shim rmm_emulator

where_things_are() {
  echo
  echo "== Built: build/tools/rmm-run, build/tools/rmm-replay, build/shim/librmm_shim.so, build/examples/hello_rmm/hello_rmm"
  echo "== (after 'cmake --install build --prefix P': P/bin/rmm-run, P/bin/rmm-ctl, P/bin/rmm-replay, P/lib/librmm_shim.so)"
}

steps=${STEPS:-30}
program=./build/examples/alloc_churn/alloc_churn
status=0
"$program" 1 >/dev/null 2>&1 || status=$?
if [[ $status -eq 0 ]]; then
  echo
  echo "== $program $steps (static CUDA runtime), as it is"
  "$program" "$steps"
  echo
  echo "== the same under the shim: build/tools/rmm-run --report -- $program $steps"
  ./build/tools/rmm-run --report -- "$program" "$steps"
  where_things_are
  exit 0
fi
if [[ $status -ne 2 ]]; then exit "$status"; fi

echo
echo "== No GPU here. Running the same program on the CPU emulator of CUDA (test infrastructure:"
echo "== no GPU is involved, and its times say nothing about a GPU's)"
export LD_LIBRARY_PATH="$PWD/build/emulator/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
program=./build/examples/alloc_churn/alloc_churn_shared
echo
echo "== $program $steps, as it is (emulator)"
"$program" "$steps"
echo
echo "== the same under the shim (emulator): build/tools/rmm-run --report -- $program $steps"
./build/tools/rmm-run --report -- "$program" "$steps"
where_things_are
echo "== To run programs of your own on the emulator (built against the shared CUDA runtime, as"
echo "== build/examples/hello_rmm/hello_rmm is), put it first on the library path:"
echo "   export LD_LIBRARY_PATH=$PWD/build/emulator/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
