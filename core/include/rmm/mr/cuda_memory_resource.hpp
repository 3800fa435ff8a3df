// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cstddef>

namespace rmm::mr {

/// Device memory from cudaMalloc / cudaFree. Every deallocation synchronizes the device (that is
/// what cudaFree does), so the stream passed to deallocate is not needed. Stateless: all instances
/// are equal.
class cuda_memory_resource final : public device_memory_resource {
 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  /// cudaMalloc memory has no pending work: no synchronization needed.
  void* do_allocate_sync(std::size_t bytes) override { return do_allocate(bytes, cuda_stream_view{}); }
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;
};

static_assert(cuda::mr::resource_with<cuda_memory_resource, cuda::mr::device_accessible>);

}  // namespace rmm::mr
