#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>

namespace rmm::mr {

void* cuda_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view)
{
  void* ptr{nullptr};
  detail::check_allocation(cudaMalloc(&ptr, bytes), bytes, "cuda_memory_resource (cudaMalloc)");
  return ptr;
}

void cuda_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view) noexcept
{
  RMM_ASSERT_CUDA_SUCCESS(cudaFree(ptr));
}

bool cuda_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  return dynamic_cast<cuda_memory_resource const*>(&other) != nullptr;
}

}  // namespace rmm::mr
