// SPDX-License-Identifier: Apache-2.0
#include "../detail/cuda_driver.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/sam_headroom_memory_resource.hpp>

#include <algorithm>

namespace rmm::mr {

namespace {

/// Advises [ptr, ptr + bytes) to prefer `location`.
void prefer(void* ptr, std::size_t bytes, CUmemLocation location)
{
  RMM_CU_TRY(cuMemAdvise_v2(reinterpret_cast<CUdeviceptr>(ptr), bytes, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, location));
}

}  // namespace

sam_headroom_memory_resource::sam_headroom_memory_resource(std::size_t headroom) : headroom_{headroom}
{
  RMM_EXPECTS(rmm::detail::cuda_driver_table().cuMemAdvise_v2 != nullptr,
              "sam_headroom_memory_resource needs a driver for CUDA 12.2 or newer (cuMemAdvise with a location)");
}

void* sam_headroom_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  void* ptr = system_.allocate(stream, bytes);
  try {
    auto const free        = available_device_memory().first;
    auto const allocatable = free > headroom_ ? free - headroom_ : std::size_t{0};
    auto const on_device   = align_down(std::min(allocatable, bytes), CUDA_ALLOCATION_ALIGNMENT);
    if (on_device != 0) {
      CUmemLocation device{};
      device.type = CU_MEM_LOCATION_TYPE_DEVICE;
      device.id   = get_current_cuda_device().value();
      prefer(ptr, on_device, device);
    }
    if (on_device != bytes) {
      CUmemLocation host{};
      host.type = CU_MEM_LOCATION_TYPE_HOST;
      prefer(static_cast<char*>(ptr) + on_device, bytes - on_device, host);
    }
  } catch (...) {
    system_.deallocate(stream, ptr, bytes);  // nothing is lost when the advice is refused
    throw;
  }
  return ptr;
}

void sam_headroom_memory_resource::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  system_.deallocate(stream, ptr, bytes);
}

bool sam_headroom_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  // As RMM's: equal when they place alike (the same headroom), though any instance can free what
  // another allocated (system memory).
  auto const* sam = dynamic_cast<sam_headroom_memory_resource const*>(&other);
  return sam != nullptr && sam->headroom_ == headroom_;
}

}  // namespace rmm::mr
