#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs on the GPU host: builds the snapshot made by scripts/gpu-snapshot.sh (.device/src) with 16 jobs
# and runs the given stages. Copied to .device/gpu-run.sh by gpu-snapshot.sh.
# usage: .device/gpu-run.sh STAGE...   (results under $OUT)
#   build        configure and build preset gpu (tests, kernel tests, benchmarks, the shim)
#   build-tools  only the shim and the tools the apps stage needs
#   base         build the engine benchmarks of the baseline snapshot (.device/base), if there is one
#   tests        the whole suite on the GPU (JUnit and log to $OUT)
#   shim-bench   the static-runtime pair benchmark plain, under the shim, switched off, and logging;
#                alloc_churn plain and under rmm-run
#   shim-compare the served pairs (alone and beside idle non-blocking streams) under this tree's shim
#                and the baseline's, in rounds (RMM_COMPARE_ROUNDS, default 5) alternating on one core
#   passthrough  the pass-through calls (null and unknown frees) natively, under the shim and switched
#                off, five processes each, interleaved, with the minimum and median of their medians
#   engine-bench random_allocations and stream_churn, this tree against the baseline
#   random       random_allocations of the pool on its own stream, this tree against the baseline, in
#                rounds alternating on one core, with the median of each case's process medians
#   bench        every other benchmark and rmm-replay (scripts/run-gpu-benchmarks.sh)
#   apps         real programs three ways (scripts/run-gpu-apps.sh; RMM_APPS names some), and
#                PyTorch through the Python package when the python stage ran before
#   pause        a PyTorch trainer of RMM_PAUSE_GIB (default 20) paused from outside with rmm-ctl
#                while another program uses 100 GiB, then resumed and checked; pause and resume
#                timed by size in process (bench/apps/torch_pause.py)
#   python       the Python package: extension, pytest suite (frameworks included), benchmark
#   config       rmm-run --check --build over every example file
#   reference    RMM's own C++ tests, built against the GPU build's install and run on the device
#                (scripts/run-reference-suite.sh; RMM_REFERENCE=<checkout> when snapshotting)
#   python-reference  RMM's own Python tests against the wheel carried in .whl (RMM_REFERENCE too)
#   rl           the RL loop (bench/apps/rl_turns.py) never paused, under the shim and through
#                torch_memory_saver, RMM_RL_TURNS turns each (default 10), and its table; needs the
#                wheel (scripts/build-wheel.sh) and torch_memory_saver's in .whl
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/src"
results=$OUT/results
mkdir -p "$results"
# Hosts of one kind differ in CPU speed by up to 2x: name the CPU beside every result.
# Virtual hosts may name the CPU generically: the family, model and clock tell them apart.
cpu_field() { sed -n "s/^$1[[:space:]]*: *//p" /proc/cpuinfo 2>/dev/null | head -1; }
echo "host CPU: $(cpu_field 'model name') (family $(cpu_field 'cpu family'), model $(cpu_field model)," \
  "$(cpu_field 'cpu MHz') MHz), $(nproc) cores" | tee "$results/host.txt"
bench=build-gpu/bench
json() { echo --benchmark_out="$results/$1.json" --benchmark_out_format=json; }
# Numba's numpy, when wheels were carried in .whl: installed aside, first on Numba's path only.
numba_site() {
  ls "$here"/../.whl/numpy-*.whl > /dev/null 2>&1 || return 0
  [[ -d /tmp/numba-site ]] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --target /tmp/numba-site "$here"/../.whl/numpy-*.whl || return 0
  echo /tmp/numba-site
}
# The rmm wheel (and torch_memory_saver's, if carried) from .whl, installed once aside; prints where.
wheel_site() {
  ls "$here"/../.whl/rmm-*.whl > /dev/null 2>&1 || { echo "no rmm wheel in .whl (scripts/build-wheel.sh)" >&2; return 1; }
  local wheels=("$here"/../.whl/rmm-*.whl "$here"/../.whl/torch_memory_saver-*.whl)
  [[ -f ${wheels[-1]} ]] || unset 'wheels[-1]'  # torch_memory_saver's is optional
  [[ -d /tmp/rmm-site ]] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
    --target /tmp/rmm-site "${wheels[@]}" >&2 || return 1
  echo /tmp/rmm-site
}
for stage in "$@"; do
  echo "== $stage ($(date +%T))"
  case $stage in
    build)
      cmake --preset gpu -DCMAKE_PREFIX_PATH="$here/prefix" -DZLIB_ROOT="$here/prefix" -DRMM_WARNINGS_AS_ERRORS=OFF \
        > "$results/configure.log" 2>&1 || { tail -30 "$results/configure.log"; exit 1; }
      cmake --build --preset gpu -j 16 -- -k 0 > "$results/build.log" 2>&1 || { grep -E "error|Error" -A5 "$results/build.log" | head -60; exit 1; }
      echo "build ok; warnings: $(grep -c 'warning:' "$results/build.log")"; grep 'warning:' "$results/build.log" | sort -u | head -10 ;;
    build-tools)
      # Only what the apps stage runs: the shim, rmm-run, rmm-replay and alloc_churn.
      cmake --preset gpu -DCMAKE_PREFIX_PATH="$here/prefix" -DZLIB_ROOT="$here/prefix" -DRMM_WARNINGS_AS_ERRORS=OFF \
        > "$results/configure.log" 2>&1 || { tail -30 "$results/configure.log"; exit 1; }
      cmake --build --preset gpu -j 16 --target rmm_shim rmm-run rmm-ctl rmm-replay alloc_churn > "$results/build.log" 2>&1 ||
        { grep -E "error|Error" -A5 "$results/build.log" | head -60; exit 1; }
      echo "tools built" ;;
    base)
      [[ -d $here/base ]] || { echo "no baseline snapshot"; continue; }
      cp bench/suballocators/stream_churn_bench.cpp "$here/base/bench/suballocators/"
      grep -q stream_churn_bench "$here/base/bench/CMakeLists.txt" ||
        sed -i 's|  rmm_add_benchmark(cuda_calls_bench suballocators/cuda_calls_bench.cpp)|&\n  rmm_add_benchmark(stream_churn_bench suballocators/stream_churn_bench.cpp)|' "$here/base/bench/CMakeLists.txt"
      (cd "$here/base" && cmake -S . -B build-base -G Ninja -DCMAKE_BUILD_TYPE=Release -DRMM_TEST_BACKEND=cuda \
          -DRMM_BUILD_TESTS=OFF -DRMM_BUILD_EXAMPLES=OFF -DRMM_BUILD_BENCHMARKS=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
          -DCMAKE_PREFIX_PATH="$here/prefix" -DZLIB_ROOT="$here/prefix" > "$results/base-configure.log" 2>&1 &&
        cmake --build build-base -j 16 --target random_allocations_bench stream_churn_bench rmm_shim \
          > "$results/base-build.log" 2>&1) ||
        { tail -20 "$results/base-build.log"; echo "baseline build failed"; } ;;
    tests) RMM_TEST_NUMBA_PATH=$(numba_site) OUT=$results JOBS=8 scripts/run-gpu-tests.sh | tail -40 ;;
    shim-bench)
      shim=$PWD/build-gpu/shim/librmm_shim.so
      args="--benchmark_repetitions=3 --benchmark_report_aggregates_only=true"
      $bench/shim_pairs_bench $args $(json shim_native) > "$results/shim_native.txt" 2>&1
      LD_PRELOAD=$shim $bench/shim_pairs_bench $args $(json shim_served) > "$results/shim_served.txt" 2>&1
      LD_PRELOAD=$shim RMM_SHIM_ENABLED=false $bench/shim_pairs_bench $args $(json shim_off) > "$results/shim_off.txt" 2>&1
      LD_PRELOAD=$shim RMM_SHIM_LOG_FILE=/tmp/shim-log-%p.csv $bench/shim_pairs_bench $args $(json shim_logging) \
        > "$results/shim_logging.txt" 2>&1
      grep -h "median" "$results"/shim_*.txt | head -60
      build-gpu/examples/alloc_churn/alloc_churn 200
      build-gpu/tools/rmm-run --report -- build-gpu/examples/alloc_churn/alloc_churn 200 ;;
    shim-compare)
      # The served pairs under this tree's shim and the baseline's, in rounds alternating, so that
      # host drift hits both alike; the medians of each process are summarized per case.
      base_shim=$here/base/build-base/shim/librmm_shim.so
      [[ -f $base_shim ]] || { echo "no baseline shim (run the base stage)"; continue; }
      pin=(); command -v taskset > /dev/null && pin=(taskset -c 1)
      for round in $(seq "${RMM_COMPARE_ROUNDS:-5}"); do
        for tree in new base; do
          shim=$PWD/build-gpu/shim/librmm_shim.so; [[ $tree == base ]] && shim=$base_shim
          "${pin[@]}" env LD_PRELOAD=$shim $bench/shim_pairs_bench --benchmark_filter='malloc_free_pair/|malloc_free_pair_beside|malloc_async_pair' \
            --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
            $(json "shimcmp_${tree}_$round") 2>&1 | awk -v t=$tree -v r=$round '/median/ {print t, r, $1, $(NF-4), $(NF-3)}'
        done
      done
      python3 scripts/rounds_summary.py "$results" shimcmp | tee "$results/shim-compare.txt" ;;
    passthrough)
      # A pass-through costs tens of nanoseconds and one process's placement moves that by as
      # much: five processes per way, the ways interleaved, so that host drift hits them all.
      shim=$PWD/build-gpu/shim/librmm_shim.so
      for round in 1 2 3 4 5; do
        for way in native served off; do
          pre=(); [[ $way != native ]] && pre=(LD_PRELOAD=$shim)
          [[ $way == off ]] && pre+=(RMM_SHIM_ENABLED=false)
          env "${pre[@]}" $bench/shim_pairs_bench --benchmark_filter='null_free|unknown_free' --benchmark_repetitions=5 \
            --benchmark_report_aggregates_only=true $(json "passthrough_${way}_$round") > /dev/null 2>&1
        done
      done
      # The foreign free against the driver's own function, alternating in one process.
      for way in native served; do
        pre=(); [[ $way != native ]] && pre=(LD_PRELOAD=$shim)
        env "${pre[@]}" $bench/shim_pairs_bench --benchmark_filter='unknown_free' --benchmark_repetitions=20 \
          --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true \
          $(json "paired_$way") > /dev/null 2>&1
      done
      python3 scripts/passthrough_summary.py "$results" | tee "$results/passthrough.txt" ;;
    engine-bench)
      for tree in new base; do
        dir=build-gpu/bench; [[ $tree == base ]] && dir=$here/base/build-base/bench
        [[ -x $dir/random_allocations_bench ]] || continue
        $dir/random_allocations_bench --benchmark_filter='random_allocations/pool/' --benchmark_repetitions=5 \
          --benchmark_report_aggregates_only=true $(json random_allocations_$tree) > "$results/random_allocations_$tree.txt" 2>&1
        $dir/stream_churn_bench $(json stream_churn_$tree) > "$results/stream_churn_$tree.txt" 2>&1
        echo "-- $tree"; grep -h "median\|reserved\|short_lived\|multi_stream" "$results/random_allocations_$tree.txt" "$results/stream_churn_$tree.txt" | head -30
      done ;;
    random)
      # Rounds (RMM_RANDOM_ROUNDS, default 5) of this tree and the baseline alternating, each process
      # on the same core, so that host drift and placement hit both alike. Each process's medians
      # are printed as they come.
      pin=(); command -v taskset > /dev/null && pin=(taskset -c 1)
      for round in $(seq "${RMM_RANDOM_ROUNDS:-5}"); do
        for tree in new base; do
          dir=build-gpu/bench; [[ $tree == base ]] && dir=$here/base/build-base/bench
          [[ -x $dir/random_allocations_bench ]] || continue
          "${pin[@]}" $dir/random_allocations_bench --benchmark_filter='random_allocations/pool/' \
            --benchmark_repetitions=3 --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true \
            $(json "random_${tree}_$round") 2>&1 | awk -v t=$tree -v r=$round '/median/ {print t, r, $1, $NF}'
        done
      done
      python3 scripts/rounds_summary.py "$results" random | tee "$results/random.txt"
      $bench/cuda_calls_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true 2>&1 | grep median ;;
    bench) OUT=$results scripts/run-gpu-benchmarks.sh > "$results/bench.log" 2>&1; echo "bench rc=$?" ;;
    apps)
      RMM_APPS_NUMBA_PATH=$(numba_site) OUT=$results/apps scripts/run-gpu-apps.sh ${RMM_APPS:-} ;;
    pause)
      (cd bench/apps && python3 torch_pause.py scenario "${RMM_PAUSE_GIB:-20}") 2>&1 | tee "$results/pause-scenario.txt" | tail -40
      (cd bench/apps && PYTORCH_NO_CUDA_MEMORY_CACHING=1 ../../build-gpu/tools/rmm-run -- python3 torch_pause.py sizes) \
        2>&1 | tee "$results/pause-sizes.txt" | tail -12 ;;
    python)
      # The Python package over the GPU build: its extension, its pytest suite on the GPU (the
      # CuPy, Numba and PyTorch tests included), and the DeviceBuffer pair benchmark.
      cmake --preset gpu -DCMAKE_PREFIX_PATH="$here/prefix" -DZLIB_ROOT="$here/prefix" -DRMM_WARNINGS_AS_ERRORS=OFF \
        -DRMM_BUILD_PYTHON=ON > "$results/python-configure.log" 2>&1 || { tail -30 "$results/python-configure.log"; exit 1; }
      cmake --build --preset gpu -j 16 --target _rmm rmm-replay > "$results/python-build.log" 2>&1 ||
        { grep -E "error|Error" -A5 "$results/python-build.log" | head -60; exit 1; }
      (cd build-gpu && RMM_TEST_NUMBA_PATH=$(numba_site) ctest -L python --output-on-failure) > "$results/python-tests.log" 2>&1
      echo "python tests rc=$?"; grep -E "tests passed|Passed|Failed|SKIPPED|passed|failed" "$results/python-tests.log" | tail -30
      # Three runs: hosts of one kind differ, and so do runs on one host.
      for run in 1 2 3; do
        PYTHONPATH=build-gpu/python python3 bench/python/device_buffer_pairs.py > "$results/python-bench-$run.txt" 2>&1
        echo "-- run $run"; cat "$results/python-bench-$run.txt"
      done ;;
    reference)
      [[ -d $here/reference ]] || { echo "no reference checkout (RMM_REFERENCE when snapshotting)"; continue; }
      OUT=$results/reference scripts/run-reference-suite.sh "$here/reference" build-gpu | tail -60 ;;
    python-reference)
      [[ -d $here/reference/python/tests ]] || { echo "no reference Python tests (RMM_REFERENCE when snapshotting)"; continue; }
      site=$(wheel_site) || continue
      rm -rf /tmp/rmm-pyref && cp -r "$here/reference/python/tests" /tmp/rmm-pyref
      (cd /tmp && PYTHONPATH=$site python3 -m pytest -q -p no:cacheprovider --timeout 120 -rfE rmm-pyref \
        --junitxml="$results/python-reference.xml") > "$results/python-reference.txt" 2>&1
      echo "pytest exit=$?"; grep -E "^(FAILED|ERROR)" "$results/python-reference.txt" | cut -c1-200 | head -60
      tail -1 "$results/python-reference.txt" ;;
    rl)
      site=$(wheel_site) || continue
      : > "$results/rl.txt"
      for way in none shim tms; do
        command=(python3 bench/apps/rl_turns.py "$way" "${RMM_RL_TURNS:-10}")
        [[ $way == shim ]] && command=(env PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$site/bin/rmm-run"
          --report "$results/rl-shim-report.json" -- "${command[@]}")
        PYTHONPATH=$site PYTHONUNBUFFERED=1 timeout 600 "${command[@]}" > "$results/rl-$way.out" 2>&1
        echo "rl $way exit=$?"; grep -v '^RESULT' "$results/rl-$way.out" | tail -3
        grep '^RESULT' "$results/rl-$way.out" >> "$results/rl.txt"
      done
      python3 bench/apps/rl_turns.py table "$results/rl.txt" | tee "$results/rl.md" ;;
    config)
      for f in docs/examples/*.toml; do
        env=(); [[ $f == *logging* ]] && env=(RMM_LOGGING_FILE="$results/trace-%p-dev%d.csv")
        env "${env[@]}" build-gpu/tools/rmm-run --check --build --config "$f" > "$results/check-$(basename "$f").txt" 2>&1
        echo "$f exit=$? $(tail -1 "$results/check-$(basename "$f").txt")"
      done ;;
  esac
done
(cd "$OUT" && tar czf results.tar.gz results && rm -rf results)
