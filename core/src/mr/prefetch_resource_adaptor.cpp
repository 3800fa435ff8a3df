#include "../detail/cuda_driver.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>

namespace rmm::mr {

prefetch_resource_adaptor::prefetch_resource_adaptor(any_device_resource upstream) : upstream_{std::move(upstream)} {}

device_async_resource_ref prefetch_resource_adaptor::get_upstream_resource() const noexcept { return upstream_; }

void* prefetch_resource_adaptor::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  void* ptr = upstream_.allocate(stream, bytes);
  if (bytes == 0) { return ptr; }
  auto const prefetch = [&] {
    int const device = get_current_cuda_device().value();
    CUmemLocation const location{CU_MEM_LOCATION_TYPE_DEVICE, device};
    auto const status = rmm::detail::cuda_driver_table().cuMemPrefetchAsync_v2(reinterpret_cast<CUdeviceptr>(ptr),
                                                                               bytes, location, 0, stream.value());
    if (status == CUDA_ERROR_INVALID_VALUE) { return; }  // not managed memory: nothing to migrate
    if (status != CUDA_SUCCESS) {
      rmm::detail::throw_cu_error(status, "cuMemPrefetchAsync_v2(ptr, bytes, location, 0, stream)", __FILE__, __LINE__);
    }
  };
  try {
    prefetch();
  } catch (...) {
    upstream_.deallocate(stream, ptr, bytes);
    throw;
  }
  return ptr;
}

void prefetch_resource_adaptor::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  upstream_.deallocate(stream, ptr, bytes);
}

bool prefetch_resource_adaptor::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* prefetch = dynamic_cast<prefetch_resource_adaptor const*>(&other);
  return prefetch != nullptr && prefetch->upstream_ == upstream_;
}

}  // namespace rmm::mr
