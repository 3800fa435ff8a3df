// SPDX-License-Identifier: Apache-2.0
#pragma once

// Stream-ordered allocation from a CUDA memory pool (cuMemAllocFromPoolAsync / cuMemFreeAsync),
// shared by the resources over one: cuda_async (a pool of its own), cuda_async_view (a pool
// owned elsewhere) and cuda_async_managed (the device's default managed pool).

#include "../../detail/cuda_driver.hpp"

#include <rmm/cuda_stream_view.hpp>

#include <cstddef>

namespace rmm::mr::detail {

/**
 * @brief `bytes` from `pool`, ordered on `stream`; null for 0 bytes, as cudaMallocFromPoolAsync
 * answers (the driver refuses them).
 *
 * @throws rmm::out_of_memory or rmm::bad_alloc naming `what` (the resource, and the runtime call
 * it stands for)
 */
[[nodiscard]] inline void* allocate_from_pool(CUmemoryPool pool,
                                              std::size_t bytes,
                                              cuda_stream_view stream,
                                              char const* what)
{
  if (bytes == 0) { return nullptr; }
  CUdeviceptr address{};
  rmm::detail::require_context();
  RMM_CU_TRY_ALLOC(cuMemAllocFromPoolAsync(&address, bytes, pool, stream.value()), bytes, what);
  return reinterpret_cast<void*>(address);
}

/// Gives `ptr` back to its pool, ordered on `stream`; a failure goes to the debug log.
inline void free_to_pool(void* ptr, cuda_stream_view stream) noexcept
{
  rmm::detail::require_context_noexcept();
  RMM_CU_ASSERT_SUCCESS(cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), stream.value()));
}

}  // namespace rmm::mr::detail
