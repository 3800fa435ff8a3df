#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the GPU test bundle in build-gpu/: real-CUDA backend, kernel tests included, sm_90.
# The folder is self-contained apart from the system's CUDA driver and runtime (GoogleTest is
# linked statically, fmt is header-only). Run it on a GPU host with scripts/run-gpu-tests.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
cmake --preset gpu
cmake --build --preset gpu
size_mib=$(du -sm build-gpu | cut -f1)
echo "build-gpu: ${size_mib} MiB"
if ((size_mib > 60)); then
  echo "warning: build-gpu is over 60 MiB; the device tool carries at most 64 MiB" >&2
fi
