// SPDX-License-Identifier: Apache-2.0
#pragma once

// CCCL's memory-resource concepts and types (3.5 or newer; see cmake/RmmCccl.cmake).
#include <cuda/memory_resource>
#include <cuda/stream_ref>

#if CCCL_VERSION < 3005000
#error \
  "rmm needs CCCL 3.5 or newer (cuda::mr::any_resource); the CUDA 13.0 toolkit's own CCCL is 3.0.1. Put the nvidia-cuda-cccl headers (scripts/install-deps.sh) ahead of it on the include path."
#endif
