#pragma once

// The resources the sub-allocator benchmarks compare, configured as RMM's own benchmarks
// configure them, so results compare with RMM's published numbers.

#include <rmm/cuda_device.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <string>

namespace rmm::bench {

inline rmm::mr::any_device_resource make_cuda() { return rmm::mr::cuda_memory_resource{}; }

inline rmm::mr::any_device_resource make_cuda_async() { return rmm::mr::cuda_async_memory_resource{}; }

/// RMM: pool over cuda, initially half of the free memory.
inline rmm::mr::any_device_resource make_pool()
{
  return rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, rmm::percent_of_free_device_memory(50)};
}

/// RMM: binning over a pool with fixed-size bins of 256 KiB .. 4 MiB.
inline rmm::mr::any_device_resource make_binning() { return rmm::mr::binning_memory_resource{make_pool(), 18, 22}; }

/// RMM: arena over cuda, its default size (half of the free memory).
inline rmm::mr::any_device_resource make_arena()
{
  return rmm::mr::arena_memory_resource{rmm::mr::cuda_memory_resource{}};
}

}  // namespace rmm::bench
