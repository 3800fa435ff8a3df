// SPDX-License-Identifier: Apache-2.0
#include "../detail/cuda_driver.hpp"

#include <rmm/error.hpp>
#include <rmm/mr/managed_memory_resource.hpp>

namespace rmm::mr {

void* managed_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view)
{
  void* ptr{nullptr};
  if (bytes == 0) { return ptr; }  // as cudaMallocManaged answers; the driver refuses 0 bytes
  CUdeviceptr address{};
  rmm::detail::require_context();
  RMM_CU_TRY_ALLOC(cuMemAllocManaged(&address, bytes, CU_MEM_ATTACH_GLOBAL), bytes,
                   "managed_memory_resource (cudaMallocManaged)");
  return reinterpret_cast<void*>(address);
}

void managed_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view) noexcept
{
  if (ptr == nullptr) { return; }  // as cudaFree does
  rmm::detail::require_context_noexcept();
  RMM_CU_ASSERT_SUCCESS(cuMemFree_v2(reinterpret_cast<CUdeviceptr>(ptr)));
}

bool managed_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  return dynamic_cast<managed_memory_resource const*>(&other) != nullptr;
}

}  // namespace rmm::mr
