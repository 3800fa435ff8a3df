// SPDX-License-Identifier: Apache-2.0
#include "../detail/cuda_driver.hpp"
#include "detail/pool_allocation.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_managed_memory_resource.hpp>

#include <fmt/format.h>

namespace rmm::mr {

namespace {

/// The current device's default managed pool, or rmm::logic_error saying what is missing.
cudaMemPool_t default_managed_pool()
{
  auto const& cu    = rmm::detail::cuda_driver_table();
  auto const device = get_current_cuda_device();
  if (cu.cuMemGetDefaultMemPool == nullptr) {
    throw rmm::logic_error{
      "cuda_async_managed_memory_resource needs a driver for CUDA 13.0 or newer (managed memory pools); this "
      "driver lacks cuMemGetDefaultMemPool. Use managed_memory_resource instead"};
  }
  CUdevice handle{};
  RMM_CU_TRY(cuDeviceGet(&handle, device.value()));
  int concurrent{};
  RMM_CU_TRY(cuDeviceGetAttribute(&concurrent, CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, handle));
  RMM_EXPECTS(concurrent != 0,
              fmt::format("cuda_async_managed_memory_resource needs concurrent managed access, which device {} lacks "
                          "(cudaDevAttrConcurrentManagedAccess = 0); use managed_memory_resource instead",
                          device.value()));
  CUmemLocation location{};
  location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  location.id   = device.value();
  CUmemoryPool pool{};
  RMM_CU_TRY(cuMemGetDefaultMemPool(&pool, &location, CU_MEM_ALLOCATION_TYPE_MANAGED));
  return reinterpret_cast<cudaMemPool_t>(pool);
}

}  // namespace

cuda_async_managed_memory_resource::cuda_async_managed_memory_resource() : pool_{default_managed_pool()} {}

void* cuda_async_managed_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  return detail::allocate_from_pool(reinterpret_cast<CUmemoryPool>(pool_), bytes, stream,
                                    "cuda_async_managed_memory_resource (cudaMallocFromPoolAsync)");
}

void cuda_async_managed_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view stream) noexcept
{
  detail::free_to_pool(ptr, stream);
}

bool cuda_async_managed_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* managed = dynamic_cast<cuda_async_managed_memory_resource const*>(&other);
  return managed != nullptr && managed->pool_handle() == pool_handle();
}

}  // namespace rmm::mr
