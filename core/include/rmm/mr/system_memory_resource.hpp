// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <cstddef>

namespace rmm::mr {

/// Pageable host memory (aligned operator new) that the device reads and writes directly. Needs a
/// device with pageable memory access (HMM or ATS): the constructor throws rmm::logic_error
/// otherwise. Deallocation waits for the stream it is given before freeing. Stateless: all
/// instances are equal.
class system_memory_resource final : public device_memory_resource {
 public:
  /**
   * @brief A resource for the current device.
   *
   * @throws rmm::logic_error when the current device cannot access pageable memory
   * @throws rmm::cuda_error when there is no usable device
   */
  system_memory_resource();

  /// @brief Gives the resource the cuda::mr::host_accessible property: its memory is usable from
  /// host code too.
  friend void get_property(system_memory_resource const&, cuda::mr::host_accessible) noexcept {}

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;
};

/**
 * @brief Whether system_memory_resource can be used on `device`.
 *
 * @param device the device
 * @return true when `device` can access pageable host memory (cudaDevAttrPageableMemoryAccess)
 * @throws rmm::cuda_error when `device` does not exist or the driver cannot be used
 */
[[nodiscard]] bool is_system_memory_supported(cuda_device_id device);

namespace detail {
using rmm::mr::is_system_memory_supported;  ///< where RMM declares it
}  // namespace detail

static_assert(cuda::mr::resource_with<system_memory_resource, cuda::mr::device_accessible, cuda::mr::host_accessible>);

}  // namespace rmm::mr
