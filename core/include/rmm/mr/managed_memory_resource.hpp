// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cstddef>

namespace rmm::mr {

/// Unified (managed) memory from cudaMallocManaged / cudaFree, accessible from host and device.
/// Stateless: all instances are equal.
class managed_memory_resource final : public device_memory_resource {
 public:
  /// @brief Gives the resource the cuda::mr::host_accessible property: its memory is usable from
  /// host code too.
  friend void get_property(managed_memory_resource const&, cuda::mr::host_accessible) noexcept {}

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;
};

static_assert(cuda::mr::resource_with<managed_memory_resource, cuda::mr::device_accessible, cuda::mr::host_accessible>);

}  // namespace rmm::mr
