#!/usr/bin/env bash
# Installs the build and test dependencies on Debian/Ubuntu. The CUDA 13.0 toolkit is not a Debian
# package: it must already be at /usr/local/cuda (or CUDA_HOME).
set -euo pipefail

packages=(cmake ninja-build g++ make libfmt-dev libtomlplusplus-dev libgtest-dev libgmock-dev libbenchmark-dev zlib1g-dev clang-format)

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

cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [[ ! -x $cuda_home/bin/nvcc || ! -f $cuda_home/include/cccl/cuda/stream_ref ]]; then
  echo "error: the CUDA 13.0 toolkit (nvcc and CCCL) was not found in $cuda_home; install it or set CUDA_HOME" >&2
  exit 1
fi
