// SPDX-License-Identifier: Apache-2.0
#include "../detail/cuda_driver.hpp"

#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/system_memory_resource.hpp>

#include <fmt/format.h>

#include <new>

namespace rmm::mr {

bool is_system_memory_supported(cuda_device_id device)
{
  CUdevice handle{};
  RMM_CU_TRY(cuDeviceGet(&handle, device.value()));
  int pageable_access{};
  RMM_CU_TRY(cuDeviceGetAttribute(&pageable_access, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, handle));
  return pageable_access != 0;
}

system_memory_resource::system_memory_resource()
{
  auto const device = get_current_cuda_device();
  RMM_EXPECTS(is_system_memory_supported(device),
              fmt::format("system_memory_resource needs a device that can access pageable host memory (HMM or "
                          "ATS), but device {} reports cudaDevAttrPageableMemoryAccess = 0; use "
                          "managed_memory_resource or pinned_host_memory_resource instead",
                          device.value()));
}

void* system_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view)
{
  // operator new with an alignment and nothrow: a failure becomes rmm::out_of_memory below.
  void* ptr = ::operator new (bytes, std::align_val_t{CUDA_ALLOCATION_ALIGNMENT}, std::nothrow);
  if (ptr == nullptr) {
    throw rmm::out_of_memory{fmt::format("system_memory_resource could not allocate {}: host memory exhausted",
                                         rmm::format_bytes_exact(bytes))};
  }
  return ptr;
}

void system_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view stream) noexcept
{
  rmm::detail::require_context_noexcept();
  RMM_CU_ASSERT_SUCCESS(cuStreamSynchronize(stream.value()));  // the device may still be reading or writing it
  ::operator delete (ptr, std::align_val_t{CUDA_ALLOCATION_ALIGNMENT});
}

bool system_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  return dynamic_cast<system_memory_resource const*>(&other) != nullptr;
}

}  // namespace rmm::mr
