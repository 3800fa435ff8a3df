#pragma once

// CCCL 3.0.1 (CUDA 13.0) keeps cuda::mr behind an opt-in macro. rmm's CMake target defines it for
// every consumer; defining it here too keeps headers usable without the target.
#ifndef LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE
#define LIBCUDACXX_ENABLE_EXPERIMENTAL_MEMORY_RESOURCE
#endif

#include <cuda/memory_resource>
#include <cuda/stream_ref>
