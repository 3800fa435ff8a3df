#!/usr/bin/env bash
# Runs the sub-allocator benchmarks of the GPU bundle (scripts/build-gpu-bundle.sh) on a GPU host.
# JSON results go to $OUT (or build-gpu/); scripts/benchmark-table.py turns them into tables.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
build-gpu/bench/random_allocations_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_out="$out/random_allocations.json" --benchmark_out_format=json
build-gpu/bench/cuda_calls_bench --benchmark_out="$out/cuda_calls.json" --benchmark_out_format=json
build-gpu/bench/holes_and_threads_bench --benchmark_min_time=0.3 \
  --benchmark_out="$out/holes_and_threads.json" --benchmark_out_format=json
