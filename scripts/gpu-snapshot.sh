#!/usr/bin/env bash
# Prepares .device/ (ignored) for building on a GPU host instead of here: a snapshot of the
# committed tree, toml++ and zlib (GPU hosts may lack them) under .device/prefix, and the run
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
cp -r /usr/include/toml++ .device/prefix/include/
cp -r /usr/lib/x86_64-linux-gnu/cmake/tomlplusplus .device/prefix/lib/x86_64-linux-gnu/cmake/
cp /usr/include/zlib.h /usr/include/zconf.h .device/prefix/include/
cp /usr/lib/x86_64-linux-gnu/libz.a .device/prefix/lib/
cp scripts/gpu-host-run.sh .device/gpu-run.sh
du -sh .device
