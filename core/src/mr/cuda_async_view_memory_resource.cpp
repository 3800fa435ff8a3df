// SPDX-License-Identifier: Apache-2.0
#include "detail/pool_allocation.hpp"

#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>

namespace rmm::mr {

cuda_async_view_memory_resource::cuda_async_view_memory_resource(cudaMemPool_t pool_handle) : pool_{pool_handle}
{
  RMM_EXPECTS(pool_handle != nullptr, "cuda_async_view_memory_resource needs a memory pool handle, got null");
}

void* cuda_async_view_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  return detail::allocate_from_pool(reinterpret_cast<CUmemoryPool>(pool_), bytes, stream,
                                    "cuda_async_view_memory_resource (cudaMallocFromPoolAsync)");
}

void cuda_async_view_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view stream) noexcept
{
  detail::free_to_pool(ptr, stream);
}

bool cuda_async_view_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* view = dynamic_cast<cuda_async_view_memory_resource const*>(&other);
  return view != nullptr && view->pool_handle() == pool_handle();
}

}  // namespace rmm::mr
