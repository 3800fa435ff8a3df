#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the benchmarks of the GPU bundle (scripts/build-gpu-bundle.sh) on a GPU host, and rmm-replay
# on the shared allocation logs. JSON results go to $OUT (or build-gpu/); scripts/benchmark-table.py
# turns them into tables.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu}
bench=build-gpu/bench
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
json() { echo --benchmark_out="$out/$1.json" --benchmark_out_format=json; }
$bench/random_allocations_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true $(json random_allocations)
$bench/cuda_calls_bench $(json cuda_calls)
$bench/holes_and_threads_bench --benchmark_min_time=0.3 $(json holes_and_threads)
$bench/adaptor_overhead_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true $(json adaptor_overhead)
$bench/uvector_construction_bench $(json uvector_construction)
$bench/multi_stream_allocations_bench $(json multi_stream_allocations)
traces=(tests/data/traces/*.csv.gz)
build-gpu/tools/rmm-replay "${traces[@]}" --json "$out/replay.json" | tee "$out/replay.txt"
build-gpu/tools/rmm-replay "${traces[@]}" --simulate-device-size 80GiB --json "$out/replay_sim80.json" | tee "$out/replay_sim80.txt"
