#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the wheel scripts/build-wheel.sh made into a fresh virtual environment outside the
# source tree and checks the installed tool there: `import rmm`, a Python program under `rmm-run
# --report` whose allocations the shim serves, `rmm-ctl list` finding it, `python -m rmm.run`,
# and the package's pytest suite. Without a GPU, the CUDA emulator of the test build (build/, made
# by scripts/test.sh) is copied out of the tree and stands in for the driver and the runtime.
# Usage: scripts/test-wheel.sh [WHEEL]   (default: the newest dist/rmm-*.whl)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
wheel=${1:-$(ls -t dist/rmm-*.whl 2>/dev/null | head -1)}
[[ -f $wheel ]] || { echo "error: no wheel: run scripts/build-wheel.sh first" >&2; exit 1; }
wheel=$(realpath "$wheel")
tests=$PWD/python/tests
root=$(mktemp -d /tmp/rmm-wheel-test.XXXXXX)
trap 'rm -rf "$root"' EXIT
cd "$root"  # nothing of the source tree on the way from here

echo "== a fresh virtual environment: pip install $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
"$python" -m venv venv
start=$(date +%s%N)
venv/bin/python -m pip install -q --disable-pip-version-check "$wheel"
echo "installed in $(( ($(date +%s%N) - start) / 1000000 )) ms (its dependencies from PyPI included)"
venv/bin/python -m pip install -q --disable-pip-version-check pytest
export PATH=$root/venv/bin:$PATH
for command in rmm-run rmm-ctl rmm-replay; do
  [[ $(command -v "$command") == "$root/venv/bin/$command" ]] || { echo "error: $command is not on PATH" >&2; exit 1; }
done

if ! nvidia-smi > /dev/null 2>&1; then
  emulator=$OLDPWD/build/emulator/lib
  [[ -f $emulator/libcudart.so.13 ]] || { echo "error: no GPU, and no emulator in $emulator: run scripts/test.sh first" >&2; exit 1; }
  cp -r "$emulator" "$root/emulator"
  export LD_LIBRARY_PATH=$root/emulator${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export RMM_EXPECTED_BACKEND=emulator RMM_EMU_DEVICE_MEMORY=4GiB
  echo "(no GPU: the CUDA emulator stands in for the driver and the runtime)"
fi
export XDG_RUNTIME_DIR=$root/runtime && mkdir -m 700 "$XDG_RUNTIME_DIR"

echo "== import rmm"
python -c "import rmm, rmm.shim; print('rmm', rmm.__version__, 'from', rmm.__file__); print('shim:', rmm.shim.library_path())"

echo "== rmm-run --report -- python (allocations through the CUDA runtime)"
cat > alloc.py <<'EOF'
import ctypes, sys, time
import rmm  # loads the CUDA runtime the package depends on (nvidia-cuda-runtime), found again below
cudart = ctypes.CDLL("libcudart.so.13")
pointers = []
for size in (1 << 20, 4 << 20, 1 << 20):
    p = ctypes.c_void_p()
    assert cudart.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(size)) == 0, "cudaMalloc failed"
    pointers.append(p)
if len(sys.argv) > 1:
    print("ready", flush=True)
    time.sleep(float(sys.argv[1]))
for p in pointers:
    assert cudart.cudaFree(p) == 0
print("allocated and freed", len(pointers), "blocks")
EOF
rmm-run --report -- python alloc.py 2>&1 | tee run.txt
grep -q "device 0: 3 allocations served" run.txt || { echo "error: the shim did not serve the 3 allocations" >&2; exit 1; }

echo "== rmm-ctl list, while a program runs under rmm-run"
rmm-run -- python alloc.py 20 > held.txt 2>&1 &
held=$!
for _ in $(seq 100); do grep -q ready held.txt && break; sleep 0.1; done
rmm-ctl list | tee list.txt
grep -qE "^$held +running +python" list.txt || { echo "error: rmm-ctl list did not find process $held" >&2; kill $held; exit 1; }
rmm-ctl "$held" report | head -3
kill $held; wait $held 2>/dev/null || true

echo "== python -m rmm.run"
python -m rmm.run --report -- alloc.py 2>&1 | grep -E "allocations served|allocated and freed"

echo "== the package's tests, against the installed package"
cp -r "$tests" tests
RMM_REPLAY=$(python -c "import rmm.shim; print(rmm.shim.command_path('rmm-replay'))") \
  python -m pytest -q -rs -p no:cacheprovider tests
