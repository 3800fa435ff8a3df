#!/usr/bin/env bash
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
if [[ ! -x $cuda_home/bin/nvcc || ! -f $cuda_home/include/cccl/cuda/stream_ref ]]; then
  echo "error: the CUDA 13.0 toolkit (nvcc and CCCL) was not found in $cuda_home; install it or set CUDA_HOME" >&2
  exit 1
fi
