// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cuda_runtime_api.h>

#include <cstddef>

namespace rmm::mr {

/// Stream-ordered managed memory (CUDA 13): cudaMallocFromPoolAsync from the current device's
/// default *managed* memory pool, so the host and every device can reach what it returns. The
/// pool is the driver's: its attributes (release threshold, ...) are left as they are. Instances
/// over the same pool are equal.
class cuda_async_managed_memory_resource final : public device_memory_resource {
 public:
  /**
   * @brief Allocates from the current device's default managed memory pool.
   *
   * @throws rmm::logic_error when the driver is older than CUDA 13.0 or the device lacks
   *         concurrent managed access, which managed memory pools need
   * @throws rmm::cuda_error when there is no usable device
   */
  cuda_async_managed_memory_resource();

  /**
   * @brief The pool allocations come from.
   *
   * @return the device's default managed memory pool
   */
  [[nodiscard]] cudaMemPool_t pool_handle() const noexcept { return pool_; }

  /// @brief Gives the resource the cuda::mr::host_accessible property: its memory is managed.
  friend void get_property(cuda_async_managed_memory_resource const&, cuda::mr::host_accessible) noexcept {}

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;

  cudaMemPool_t pool_;
};

static_assert(
  cuda::mr::resource_with<cuda_async_managed_memory_resource, cuda::mr::device_accessible, cuda::mr::host_accessible>);

}  // namespace rmm::mr
