#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the build and test dependencies on Debian/Ubuntu. The CUDA 13.0 toolkit is not a Debian
# package: it must already be at /usr/local/cuda (or CUDA_HOME).
set -euo pipefail

packages=(cmake ninja-build g++ make libfmt-dev libtomlplusplus-dev libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev clang-format doxygen)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The Python package: its headers from Debian when the interpreter has none, the build and test
# modules from PyPI.
python=${PYTHON:-python3}
if ! "$python" -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
  echo "installing: python3-dev"
  sudo=""; [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends python3-dev
fi
python_modules=(nanobind scikit-build-core pytest numpy)
missing_modules=()
for m in "${python_modules[@]}"; do
  "$python" -m pip show -q "$m" > /dev/null 2>&1 || missing_modules+=("$m")
done
if ((${#missing_modules[@]})); then
  echo "installing from PyPI: ${missing_modules[*]}"
  "$python" -m pip install -q --disable-pip-version-check "${missing_modules[@]}"
fi

cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [[ ! -x $cuda_home/bin/nvcc ]]; then
  echo "error: the CUDA 13.0 toolkit (nvcc) was not found in $cuda_home; install it or set CUDA_HOME" >&2
  exit 1
fi

# CCCL 3.5 (cuda::mr::any_resource and resource_ref, Thrust, CUB), newer than the toolkit's own
# 3.0.1, from its PyPI wheel: headers only, unpacked into .deps/ where CMake looks for them.
cccl_version=13.3.5.0.6
cccl_prefix=${RMM_DEPS_PREFIX:-$(cd "$(dirname "$0")/.." && pwd)/.deps}/cccl
if [[ ! -f $cccl_prefix/nvidia/cu13/include/cccl/cuda/std/__cccl/version.h ||
      $(cat "$cccl_prefix/.version" 2>/dev/null) != "$cccl_version" ]]; then
  echo "installing from PyPI: nvidia-cuda-cccl==$cccl_version (headers, into $cccl_prefix)"
  rm -rf "$cccl_prefix"
  "$python" -m pip install -q --disable-pip-version-check --root-user-action=ignore --no-deps --target "$cccl_prefix" \
    "nvidia-cuda-cccl==$cccl_version"
  echo "$cccl_version" > "$cccl_prefix/.version"
fi
