#!/usr/bin/env bash
# Runs on the GPU host: builds the snapshot made by scripts/gpu-snapshot.sh (.device/src) with 16 jobs
# and runs the given stages. Copied to .device/gpu-run.sh by gpu-snapshot.sh.
# usage: .device/gpu-run.sh build|tests|bench...   (results under $OUT)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/src"
for stage in "$@"; do
  case $stage in
    build)
      cmake --preset gpu -DCMAKE_PREFIX_PATH="$here/prefix" -DZLIB_ROOT="$here/prefix" -DRMM_WARNINGS_AS_ERRORS=OFF \
        > "$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; exit 1; }
      cmake --build --preset gpu -j 16 > "$OUT/build.log" 2>&1 || { grep -E "error|Error" -A5 "$OUT/build.log" | head -60; exit 1; }
      echo "build ok; warnings: $(grep -c 'warning:' "$OUT/build.log")"; grep 'warning:' "$OUT/build.log" | sort -u | head -10 ;;
    tests) OUT=$OUT JOBS=8 scripts/run-gpu-tests.sh | tail -40 ;;
    config-tests) ctest --test-dir build-gpu -R "config_|rmm_run_test" --output-on-failure | tail -5 ;;
    bench) OUT=$OUT scripts/run-gpu-benchmarks.sh > "$OUT/bench.log" 2>&1; echo "bench rc=$?"; grep -A12 "^resource\|^Resource\|peak" "$OUT/replay.txt" | head -40 ;;
    config)
      for f in docs/examples/*.toml; do
        env=(); [[ $f == *logging* ]] && env=(RMM_LOGGING_FILE="$OUT/trace-%p-dev%d.csv")
        env "${env[@]}" build-gpu/tools/rmm-run --check --build --config "$f" > "$OUT/check-$(basename "$f").txt" 2>&1
        echo "$f exit=$? $(tail -1 "$OUT/check-$(basename "$f").txt")"
      done
      RMM_POOL_INITIAL_SIZE=1GiB RMM_POOL_MAXIMUM_SIZE=90% build-gpu/tools/rmm-run --check --build > "$OUT/check-env.txt" 2>&1; echo "env exit=$?"; cat "$OUT/check-env.txt"
      printf '[[resource]]\ntype = "system"\n' > "$OUT/system.toml"; build-gpu/tools/rmm-run --check --config "$OUT/system.toml"; echo "system exit=$? (expect 2 on H200)" ;;
  esac
done
