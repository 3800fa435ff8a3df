#include <rmm/detail/format.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/system_memory_resource.hpp>

#include <fmt/format.h>

#include <new>

namespace rmm::mr {

bool is_system_memory_supported(cuda_device_id device)
{
  int pageable_access{};
  RMM_CUDA_TRY(cudaDeviceGetAttribute(&pageable_access, cudaDevAttrPageableMemoryAccess, device.value()));
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
  void* ptr = ::operator new(bytes, std::align_val_t{CUDA_ALLOCATION_ALIGNMENT}, std::nothrow);
  if (ptr == nullptr) {
    throw rmm::out_of_memory{
      fmt::format("system_memory_resource could not allocate {}: host memory exhausted", detail::format_bytes_exact(bytes))};
  }
  return ptr;
}

void system_memory_resource::do_deallocate(void* ptr, std::size_t, cuda_stream_view stream) noexcept
{
  stream.synchronize_no_throw();  // the device may still be reading or writing it
  ::operator delete(ptr, std::align_val_t{CUDA_ALLOCATION_ALIGNMENT});
}

bool system_memory_resource::do_is_equal(device_memory_resource const& other) const noexcept
{
  return dynamic_cast<system_memory_resource const*>(&other) != nullptr;
}

}  // namespace rmm::mr
