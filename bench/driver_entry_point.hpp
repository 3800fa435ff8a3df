// SPDX-License-Identifier: Apache-2.0
#pragma once

// A driver entry point as the CUDA runtime resolves it for the program: under the preload shim,
// the shim's hook. Shared by benchmarks that call the driver directly; needs the runtime only.

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

namespace rmm::bench {

/// The entry point `name` (CUDA 12.0 ABI), or the program stops saying it is missing.
template <class Fn>
Fn driver_entry_point(char const* name)
{
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  auto const status = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found);
  if (status != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "the driver has no %s (%s)\n", name, cudaGetErrorString(status));
    std::exit(1);
  }
  return reinterpret_cast<Fn>(fn);
}

}  // namespace rmm::bench
