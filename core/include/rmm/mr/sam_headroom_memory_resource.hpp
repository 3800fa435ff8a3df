// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/device_memory_resource.hpp>
#include <rmm/mr/system_memory_resource.hpp>

#include <cstddef>

namespace rmm::mr {

/// System memory (as system_memory_resource) placed with a headroom: each allocation prefers the
/// device for as much of it as fits in the device's free memory minus `headroom`, and the host for
/// the rest (cudaMemAdvise with a preferred location). The headroom leaves device memory for what
/// cannot use system memory, such as CUDA's own needs. Needs pageable memory access (HMM or ATS),
/// as system_memory_resource does. All instances are equal: any one frees what another allocated.
class sam_headroom_memory_resource final : public device_memory_resource {
 public:
  /**
   * @brief A resource for the current device.
   *
   * @param headroom bytes of device memory each allocation leaves free
   * @throws rmm::logic_error when the device cannot access pageable memory, or the driver lacks
   *         cuMemAdvise with a location (CUDA 12.2)
   */
  explicit sam_headroom_memory_resource(std::size_t headroom);

  /**
   * @brief The device memory each allocation leaves free.
   *
   * @return the headroom given at construction
   */
  [[nodiscard]] std::size_t headroom() const noexcept { return headroom_; }

  /// @brief Gives the resource the cuda::mr::host_accessible property: it is host memory.
  friend void get_property(sam_headroom_memory_resource const&, cuda::mr::host_accessible) noexcept {}

 private:
  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override;
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override;
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override;

  system_memory_resource system_;
  std::size_t headroom_;
};

static_assert(
  cuda::mr::resource_with<sam_headroom_memory_resource, cuda::mr::device_accessible, cuda::mr::host_accessible>);

}  // namespace rmm::mr
