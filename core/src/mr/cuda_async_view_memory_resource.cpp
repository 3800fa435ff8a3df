#include "../detail/cuda_driver.hpp"

#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>

namespace rmm::mr {

cuda_async_view_memory_resource::cuda_async_view_memory_resource(cudaMemPool_t pool_handle) : pool_{pool_handle}
{
  RMM_EXPECTS(pool_handle != nullptr, "cuda_async_view_memory_resource needs a memory pool handle, got null");
}

void* cuda_async_view_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  void* ptr{nullptr};
  if (bytes == 0) { return ptr; }  // as cudaMallocFromPoolAsync answers; the driver refuses 0 bytes
  CUdeviceptr address{};
  rmm::detail::require_context();
  RMM_CU_TRY_ALLOC(cuMemAllocFromPoolAsync(&address, bytes, pool_, stream.value()), bytes,
                   "cuda_async_view_memory_resource (cudaMallocFromPoolAsync)");
  return reinterpret_cast<void*>(address);
}

void cuda_async_view_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view stream) noexcept
{
  rmm::detail::require_context_noexcept();
  RMM_CU_ASSERT_SUCCESS(cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), stream.value()));
}

bool cuda_async_view_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* view = dynamic_cast<cuda_async_view_memory_resource const*>(&other);
  return view != nullptr && view->pool_handle() == pool_handle();
}

}  // namespace rmm::mr
