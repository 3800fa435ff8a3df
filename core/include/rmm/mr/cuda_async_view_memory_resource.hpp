// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace rmm::mr {

/// Stream-ordered allocation (cudaMallocFromPoolAsync / cudaFreeAsync) from a CUDA memory pool
/// owned elsewhere, such as the device's default pool. The pool must outlive the resource.
/// Instances over the same pool are equal.
class cuda_async_view_memory_resource final : public device_memory_resource {
 public:
  /**
   * @brief Allocates from `pool_handle`.
   *
   * @param pool_handle the pool; must outlive the resource
   * @throws rmm::logic_error for a null pool handle
   */
  explicit cuda_async_view_memory_resource(cudaMemPool_t pool_handle);

  /**
   * @brief The pool allocations come from.
   *
   * @return the handle given at construction
   */
  [[nodiscard]] cudaMemPool_t pool_handle() const noexcept { return pool_; }

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;

  cudaMemPool_t pool_;
};

static_assert(cuda::mr::resource_with<cuda_async_view_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
