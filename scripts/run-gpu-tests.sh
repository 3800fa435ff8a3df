#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the GPU test bundle built by scripts/build-gpu-bundle.sh, on a host with a GPU (only the
# tests matching RMM_TEST_REGEX, when set). Writes a
# JUnit report and the log to $OUT (or build-gpu/) and ends with ctest's summary.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
ctest --test-dir build-gpu --output-on-failure -j "${JOBS:-8}" --timeout 600 ${RMM_TEST_REGEX:+-R "$RMM_TEST_REGEX"} \
  --output-junit "$out/gpu-tests.xml" 2>&1 | tee "$out/gpu-tests.log" | grep -vE "^ +[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed"
exit "${PIPESTATUS[0]}"
