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
  detail::check_allocation(cudaMallocFromPoolAsync(&ptr, bytes, pool_, stream.value()),
                           bytes,
                           "cuda_async_view_memory_resource (cudaMallocFromPoolAsync)");
  return ptr;
}

void cuda_async_view_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view stream) noexcept
{
  RMM_ASSERT_CUDA_SUCCESS(cudaFreeAsync(ptr, stream.value()));
}

bool cuda_async_view_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* view = dynamic_cast<cuda_async_view_memory_resource const*>(&other);
  return view != nullptr && view->pool_handle() == pool_handle();
}

}  // namespace rmm::mr
