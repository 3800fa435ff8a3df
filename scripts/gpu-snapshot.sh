#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prepares .device/ (ignored) for building on a GPU host instead of here: a snapshot of the
# committed tree, toml++, zlib and CCCL 3.5 (GPU hosts lack them) under .device/prefix, and the run
# script. Then, with the device tool:
#   run(command=".device/gpu-run.sh build tests shim-bench config", carry=[".device"])
#   run(command=".device/gpu-run.sh bench")      # no carry: keeps the build made by the first call
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .device/src && mkdir -p .device/src .device/prefix/include .device/prefix/lib/x86_64-linux-gnu/cmake
git archive HEAD | tar -x -C .device/src
# A baseline for benchmarks measured in the same run: RMM_BASELINE=<commit> (optional).
rm -rf .device/base
if [[ -n ${RMM_BASELINE:-} ]]; then mkdir -p .device/base && git archive "$RMM_BASELINE" | tar -x -C .device/base; fi
# RMM's own tests for the reference stage: RMM_REFERENCE=<a checkout of RMM> (optional).
rm -rf .device/reference
if [[ -n ${RMM_REFERENCE:-} ]]; then
  mkdir -p .device/reference/cpp && cp -r "$RMM_REFERENCE/cpp/tests" .device/reference/cpp/
  [[ -d $RMM_REFERENCE/cpp/benchmarks/utilities ]] &&
    mkdir -p .device/reference/cpp/benchmarks && cp -r "$RMM_REFERENCE/cpp/benchmarks/utilities" .device/reference/cpp/benchmarks/
  # Its Python tests, for the python-reference stage.
  [[ -d $RMM_REFERENCE/python/rmm/rmm/tests ]] &&
    mkdir -p .device/reference/python && cp -r "$RMM_REFERENCE/python/rmm/rmm/tests" .device/reference/python/
fi
cp -r /usr/include/toml++ .device/prefix/include/
cp -r /usr/lib/x86_64-linux-gnu/cmake/tomlplusplus .device/prefix/lib/x86_64-linux-gnu/cmake/
cp /usr/include/zlib.h /usr/include/zconf.h .device/prefix/include/
cp /usr/lib/x86_64-linux-gnu/libz.a .device/prefix/lib/
# CCCL 3.5 (found there as <prefix>/include/cccl); scripts/install-deps.sh fetches it.
cccl=.deps/cccl/nvidia/cu13/include/cccl
[[ -d $cccl ]] || { echo "error: $cccl is missing: run scripts/install-deps.sh first" >&2; exit 1; }
rm -rf .device/prefix/include/cccl && cp -r "$cccl" .device/prefix/include/cccl
cp scripts/gpu-host-run.sh .device/gpu-run.sh
du -sh .device
