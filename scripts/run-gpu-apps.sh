#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs real programs on a GPU three ways and prints their table (docs/apps.md): with the framework's
# own allocator, with it switched off (every tensor or array a cudaMalloc), and switched off under
# the preload shim with its built-in stack (rmm-run --report --log); each shim run's log is then
# replayed through a pool (rmm-replay), which must find the peak the report counted. Programs:
# bench/apps/*.py (PyTorch ResNet-50, GPT-2 and ViT, CuPy, JAX, Numba) and examples/alloc_churn
# (static CUDA runtime); a program that cannot run here (no GPU, its framework missing) says so and
# is skipped. Needs the GPU build (build-gpu, preset gpu). Results: $OUT (or build-gpu/apps): one
# JSON line per run in runs.jsonl, the shim's reports, logs and replays, and the table in apps.md.
# usage: scripts/run-gpu-apps.sh [PROGRAM...]     (default: all; names as in bench/apps, or alloc_churn)
# RMM_APPS_ROUNDS: processes per way where several are run (default 3).
# RMM_APPS_WAYS: run only these ways (e.g. "own shim"; default every way but shim_remapping, the
# shim with its pool growing by remapping, for PyTorch and CuPy, which runs only when named here).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-build-gpu/apps}
mkdir -p "$out"
runs=$out/runs.jsonl
: > "$runs"
rmm_run=$PWD/build-gpu/tools/rmm-run
rmm_replay=$PWD/build-gpu/tools/rmm-replay
apps=$PWD/bench/apps
programs=("$@")
rounds=$(seq "${RMM_APPS_ROUNDS:-3}")
cupy_rounds=$(seq $((${RMM_APPS_ROUNDS:-3} + 2)))  # its processes differ more
((${#programs[@]})) || programs=(torch_resnet50 torch_gpt2 torch_vit cupy_mix jax_mlp jax_transformer
  jax_torch_exchange numba_arrays alloc_churn)
export PYTHONUNBUFFERED=1 PYTHONPATH="$apps${PYTHONPATH:+:$PYTHONPATH}"
if [[ ! -x $rmm_run || ! -x $rmm_replay ]]; then
  echo "run-gpu-apps.sh: build-gpu/tools has no rmm-run or rmm-replay: build build-gpu first" \
    "(scripts/build-gpu-bundle.sh, or cmake --preset gpu && cmake --build --preset gpu)" >&2
  exit 1
fi
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | tee "$out/gpu.txt" ||
  echo "no GPU here (nvidia-smi failed): the programs will say they skipped"

# run PROGRAM WAY [VAR=VALUE...]: one run, its RESULT line (plus the shim's figures) into runs.jsonl.
# A later run of one way overwrites the earlier one's output, report, log and replay.
run() {
  local program=$1 way=$2; shift 2
  [[ -z ${RMM_APPS_WAYS:-} && $way != shim_remapping || " ${RMM_APPS_WAYS:-} " == *" $way "* ]] || return 0
  local tag=$program-$way report=$out/$program-$way.report.json log=$out/$program-$way.log.csv
  local replay=$out/$program-$way.replay.json
  local command=(python3 "$apps/$program.py" "$way")
  [[ $program == alloc_churn ]] && command=("$PWD/build-gpu/examples/alloc_churn/alloc_churn" 50)
  echo "== $tag ($(date +%T))"
  if [[ $way == shim* ]]; then
    rm -f "$report" "$log" "$replay"
    env "$@" "$rmm_run" --report "$report" --log "$log" -- "${command[@]}" > "$out/$tag.out" 2>&1
  else
    env "$@" "${command[@]}" > "$out/$tag.out" 2>&1
  fi
  local status=$?
  tail -3 "$out/$tag.out" | grep -v '^RESULT' | sed 's/^/   /'
  # The log, replayed through a pool on the same device, must have the peak live bytes the report counted.
  if [[ $way == shim* && -s $log ]]; then
    "$rmm_replay" "$log" --resource pool --json "$replay" > "$out/$tag.replay.out" 2>&1 ||
      tail -3 "$out/$tag.replay.out" | sed 's/^/   replay: /'
  fi
  python3 "$apps/collect.py" "$program" "$way" "$status" "$out/$tag.out" "$report" "$log" "$replay" >> "$runs"
}

for program in "${programs[@]}"; do
  case $program in
    torch_resnet50 | torch_gpt2 | torch_vit)
      # A process's step time moves by up to 20% from one to the next: three of each, alternating.
      for round in $rounds; do
        run "$program" own
        run "$program" off PYTORCH_NO_CUDA_MEMORY_CACHING=1
        run "$program" shim PYTORCH_NO_CUDA_MEMORY_CACHING=1
        run "$program" shim_remapping PYTORCH_NO_CUDA_MEMORY_CACHING=1 RMM_POOL_GROWTH=remapping
        # With the Python package built (build-gpu/python): PyTorch through rmm_torch_allocator.
        [[ -d build-gpu/python/rmm ]] && run "$program" python PYTHONPATH="$PWD/build-gpu/python:$PYTHONPATH"
      done ;;
    cupy_mix)
      # Its step is under a millisecond, and whole processes of one way differ by up to 1.8x: five
      # of each, alternating, and the median of their medians.
      for round in $cupy_rounds; do
        run "$program" own; run "$program" off; run "$program" shim
        run "$program" shim_remapping RMM_POOL_GROWTH=remapping
      done ;;
    jax_mlp | jax_transformer)
      # XLA's allocator as shipped (BFC, preallocating), growing, stream-ordered on the device's
      # default pool, and platform (a cudaMalloc per buffer); under the shim the stream-ordered
      # mode is served (docs/apps.md), the platform mode maps its memory itself and passes by,
      # once more with its released allocations kept for reuse.
      for round in $rounds; do
        run "$program" own
        run "$program" own_growing XLA_PYTHON_CLIENT_PREALLOCATE=false
        run "$program" own_async XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async XLA_PYTHON_CLIENT_PREALLOCATE=false
        run "$program" shim XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async XLA_PYTHON_CLIENT_PREALLOCATE=false
      done
      run "$program" off XLA_PYTHON_CLIENT_ALLOCATOR=platform
      run "$program" shim_platform XLA_PYTHON_CLIENT_ALLOCATOR=platform
      # The same with the physical cache: what keeping released allocations saves, and costs.
      run "$program" shim_platform_cached XLA_PYTHON_CLIENT_ALLOCATOR=platform RMM_SHIM_PHYSICAL_CACHE=true ;;
    jax_torch_exchange)
      for round in $rounds; do
        run "$program" own XLA_PYTHON_CLIENT_PREALLOCATE=false
        run "$program" shim PYTORCH_NO_CUDA_MEMORY_CACHING=1 XLA_PYTHON_CLIENT_ALLOCATOR=cuda_async \
          XLA_PYTHON_CLIENT_PREALLOCATE=false
      done ;;
    numba_arrays)
      # Numba may need an older numpy than the one installed: RMM_APPS_NUMBA_PATH puts one first.
      local_path=${RMM_APPS_NUMBA_PATH:+$RMM_APPS_NUMBA_PATH:}$PYTHONPATH
      run "$program" own PYTHONPATH="$local_path"; run "$program" shim PYTHONPATH="$local_path" ;;
    alloc_churn)
      for round in $rounds; do run "$program" own; run "$program" shim; done ;;
    *) echo "unknown program $program" >&2 ;;
  esac
done
python3 "$apps/table.py" "$runs" | tee "$out/apps.md"
