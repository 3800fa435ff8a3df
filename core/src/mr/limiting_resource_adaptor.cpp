#include <rmm/detail/error.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>

#include <atomic>

namespace rmm::mr {

struct limiting_resource_adaptor::state {
  state(any_device_resource upstream_resource, std::size_t allocation_limit, std::size_t alignment_)
    : upstream{std::move(upstream_resource)}, limit{allocation_limit}, alignment{alignment_}
  {
  }

  [[nodiscard]] std::size_t charge(std::size_t bytes) const noexcept { return align_up(bytes, alignment); }

  any_device_resource upstream;
  std::size_t const limit;
  std::size_t const alignment;
  std::atomic<std::size_t> allocated{0};
};

limiting_resource_adaptor::limiting_resource_adaptor(any_device_resource upstream,
                                                     std::size_t allocation_limit,
                                                     std::size_t alignment)
{
  RMM_EXPECTS(is_pow2(alignment),
              "limiting_resource_adaptor: the alignment must be a power of two, not " + std::to_string(alignment));
  state_ = std::make_shared<state>(std::move(upstream), allocation_limit, alignment);
}

device_async_resource_ref limiting_resource_adaptor::get_upstream_resource() const noexcept
{
  return state_->upstream;
}

std::size_t limiting_resource_adaptor::get_allocated_bytes() const noexcept
{
  return state_->allocated.load(std::memory_order_relaxed);
}

std::size_t limiting_resource_adaptor::get_allocation_limit() const noexcept { return state_->limit; }

void* limiting_resource_adaptor::do_allocate(std::size_t bytes, cuda_stream_view stream)
{
  return allocate_in(bytes, detail::allocation_order::on(stream));
}

void limiting_resource_adaptor::do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept
{
  deallocate_in(ptr, bytes, detail::allocation_order::on(stream));
}

void* limiting_resource_adaptor::do_allocate_sync(std::size_t bytes) { return allocate_in(bytes, detail::allocation_order::host()); }

void limiting_resource_adaptor::do_deallocate_sync(void* ptr, std::size_t bytes) noexcept
{
  deallocate_in(ptr, bytes, detail::allocation_order::host());
}

void* limiting_resource_adaptor::allocate_in(std::size_t bytes, detail::allocation_order order)
{
  auto const charge = state_->charge(bytes);
  // Reserve the charge before calling the upstream, with a compare-and-swap so that a request
  // that does not fit never inflates the count another thread sees.
  auto allocated = state_->allocated.load(std::memory_order_relaxed);
  do {
    if (charge > state_->limit || allocated > state_->limit - charge) {
      throw rmm::out_of_memory{"limiting_resource_adaptor: allocating " + rmm::format_bytes_exact(bytes) +
                               " would exceed the limit of " + rmm::format_bytes_exact(state_->limit) +
                               " (" + rmm::format_bytes_exact(allocated) +
                               " in use); free memory or raise the limit"};
    }
  } while (!state_->allocated.compare_exchange_weak(allocated, allocated + charge, std::memory_order_relaxed));

  try {
    return order.allocate(state_->upstream, bytes);
  } catch (...) {
    state_->allocated.fetch_sub(charge, std::memory_order_relaxed);
    throw;
  }
}

void limiting_resource_adaptor::deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept
{
  order.deallocate(state_->upstream, ptr, bytes);
  state_->allocated.fetch_sub(state_->charge(bytes), std::memory_order_relaxed);
}

bool limiting_resource_adaptor::do_is_equal(device_memory_resource const& other) const noexcept
{
  auto const* limiting = dynamic_cast<limiting_resource_adaptor const*>(&other);
  return limiting != nullptr && limiting->state_ == state_;
}

}  // namespace rmm::mr
