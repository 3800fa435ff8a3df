#include <rmm/mr/thread_safe_resource_adaptor.hpp>

#include <mutex>

namespace rmm::mr {

struct thread_safe_resource_adaptor::state {
  explicit state(any_device_resource upstream_resource) : upstream{std::move(upstream_resource)} {}

  any_device_resource upstream;
  std::mutex mutex;
};

thread_safe_resource_adaptor::thread_safe_resource_adaptor(any_device_resource upstream)
  : state_{std::make_shared<state>(std::move(upstream))}
{
}

device_async_resource_ref thread_safe_resource_adaptor::get_upstream_resource() const noexcept
{
  return state_->upstream;
}

void* thread_safe_resource_adaptor::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  return allocate_in(bytes, detail::allocation_order::on(stream));
}

void thread_safe_resource_adaptor::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  deallocate_in(ptr, bytes, detail::allocation_order::on(stream));
}

void* thread_safe_resource_adaptor::do_allocate_sync(std::size_t bytes) { return allocate_in(bytes, detail::allocation_order::host()); }

void thread_safe_resource_adaptor::do_deallocate_sync(void* ptr, std::size_t bytes) noexcept
{
  deallocate_in(ptr, bytes, detail::allocation_order::host());
}

void* thread_safe_resource_adaptor::allocate_in(std::size_t bytes, detail::allocation_order order)
{
  std::lock_guard lock{state_->mutex};
  return order.allocate(state_->upstream, bytes);
}

void thread_safe_resource_adaptor::deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept
{
  std::lock_guard lock{state_->mutex};
  order.deallocate(state_->upstream, ptr, bytes);
}

bool thread_safe_resource_adaptor::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* thread_safe = dynamic_cast<thread_safe_resource_adaptor const*>(&other);
  return thread_safe != nullptr && thread_safe->state_ == state_;
}

}  // namespace rmm::mr
