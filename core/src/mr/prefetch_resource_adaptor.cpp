// SPDX-License-Identifier: Apache-2.0
#include <rmm/cuda_device.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>
#include <rmm/prefetch.hpp>

namespace rmm::mr {

prefetch_resource_adaptor::prefetch_resource_adaptor(any_device_resource upstream)
  : upstream_{std::make_shared<any_device_resource>(std::move(upstream))}
{
}

device_async_resource_ref prefetch_resource_adaptor::get_upstream_resource() const noexcept { return *upstream_; }

void* prefetch_resource_adaptor::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  void* ptr = upstream_->allocate(stream, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
  if (bytes == 0) { return ptr; }
  try {
    rmm::prefetch(ptr, bytes, get_current_cuda_device(), stream);
  } catch (...) {
    upstream_->deallocate(stream, ptr, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
    throw;
  }
  return ptr;
}

void prefetch_resource_adaptor::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  upstream_->deallocate(stream, ptr, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

bool prefetch_resource_adaptor::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* prefetch = dynamic_cast<prefetch_resource_adaptor const*>(&other);
  return prefetch != nullptr && prefetch->upstream_ == upstream_;  // the same adaptor, or a copy
}

}  // namespace rmm::mr
