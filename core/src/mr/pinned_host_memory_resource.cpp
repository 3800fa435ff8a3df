// SPDX-License-Identifier: Apache-2.0
#include "../detail/cuda_driver.hpp"

#include <rmm/error.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>

namespace rmm::mr {

void* pinned_host_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view)
{
  void* ptr{nullptr};
  if (bytes == 0) { return ptr; }  // as cudaMallocHost answers; the driver refuses 0 bytes
  rmm::detail::require_context();
  RMM_CU_TRY_ALLOC(cuMemAllocHost_v2(&ptr, bytes), bytes, "pinned_host_memory_resource (cudaMallocHost)");
  return ptr;
}

void pinned_host_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view stream) noexcept
{
  rmm::detail::require_context_noexcept();
  RMM_CU_ASSERT_SUCCESS(cuStreamSynchronize(stream.value()));
  if (ptr != nullptr) { RMM_CU_ASSERT_SUCCESS(cuMemFreeHost(ptr)); }  // cudaFreeHost(nullptr) frees nothing
}

bool pinned_host_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  return dynamic_cast<pinned_host_memory_resource const*>(&other) != nullptr;
}

}  // namespace rmm::mr
