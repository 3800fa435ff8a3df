#include <rmm/error.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>

namespace rmm::mr {

void* pinned_host_memory_resource::do_allocate(std::size_t bytes, cuda_stream_view)
{
  void* ptr{nullptr};
  detail::check_allocation(cudaMallocHost(&ptr, bytes), bytes, "pinned_host_memory_resource (cudaMallocHost)");
  return ptr;
}

void pinned_host_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view stream) noexcept
{
  stream.synchronize_no_throw();
  RMM_ASSERT_CUDA_SUCCESS(cudaFreeHost(ptr));
}

bool pinned_host_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  return dynamic_cast<pinned_host_memory_resource const*>(&other) != nullptr;
}

}  // namespace rmm::mr
