// SPDX-License-Identifier: Apache-2.0
#include "../detail/cuda_driver.hpp"

#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>

namespace rmm::mr {

void* cuda_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view)
{
  void* ptr{nullptr};
  if (bytes == 0) { return ptr; }  // as cudaMalloc answers; cuMemAlloc refuses 0 bytes
  CUdeviceptr address{};
  rmm::detail::require_context();
  RMM_CU_TRY_ALLOC(cuMemAlloc_v2(&address, bytes), bytes, "cuda_memory_resource (cudaMalloc)");
  return reinterpret_cast<void*>(address);
}

void cuda_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view) noexcept
{
  if (ptr == nullptr) { return; }  // as cudaFree does
  rmm::detail::require_context_noexcept();
  RMM_CU_ASSERT_SUCCESS(cuMemFree_v2(reinterpret_cast<CUdeviceptr>(ptr)));
}

bool cuda_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  return dynamic_cast<cuda_memory_resource const*>(&other) != nullptr;
}

}  // namespace rmm::mr
