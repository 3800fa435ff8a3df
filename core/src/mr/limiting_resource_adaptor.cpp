// SPDX-License-Identifier: Apache-2.0
#include <rmm/detail/error.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/mr/before_growth.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>

#include <atomic>

namespace rmm::mr {

namespace detail {
struct limiting_state {
  limiting_state(std::size_t allocation_limit, std::size_t alignment_) : limit{allocation_limit}, alignment{alignment_}
  {
    RMM_EXPECTS(is_pow2(alignment),
                "limiting_resource_adaptor: the alignment must be a power of two, not " + std::to_string(alignment));
  }

  [[nodiscard]] std::size_t charge(std::size_t bytes) const noexcept { return align_up(bytes, alignment); }

  std::size_t const limit;
  std::size_t const alignment;
  std::atomic<std::size_t> allocated{0};
};
}  // namespace detail

limiting_resource_adaptor::limiting_resource_adaptor(any_device_resource upstream,
                                                     std::size_t allocation_limit,
                                                     std::size_t alignment)
  : adaptor_resource{std::move(upstream), std::make_shared<detail::limiting_state>(allocation_limit, alignment)}
{
}

std::size_t limiting_resource_adaptor::get_allocated_bytes() const noexcept
{
  return state().allocated.load(std::memory_order_relaxed);
}

std::size_t limiting_resource_adaptor::get_allocation_limit() const noexcept { return state().limit; }

void* limiting_resource_adaptor::allocate_in(std::size_t bytes, detail::allocation_order order)
{
  auto const charge = state().charge(bytes);
  // Reserve the charge before calling the upstream, with a compare-and-swap so that a request
  // that does not fit never inflates the count another thread sees.
  auto allocated = state().allocated.load(std::memory_order_relaxed);
  do {
    if (charge > state().limit || allocated > state().limit - charge) {
      // Memory that is about to be free again (frees waiting for the device, a cache) counts until
      // its holder hands it back: ask it to, as a pool does before it grows, while it gives some.
      if (charge <= state().limit && detail::call_before_growth(rmm::get_current_cuda_device(), bytes)) {
        allocated = state().allocated.load(std::memory_order_relaxed);
        continue;
      }
      throw rmm::out_of_memory{"limiting_resource_adaptor: allocating " + rmm::format_bytes_exact(bytes) +
                               " would exceed the limit of " + rmm::format_bytes_exact(state().limit) + " (" +
                               rmm::format_bytes_exact(allocated) + " in use); free memory or raise the limit"};
    }
  } while (!state().allocated.compare_exchange_weak(allocated, allocated + charge, std::memory_order_relaxed));

  try {
    return order.allocate(upstream(), bytes);
  } catch (...) {
    state().allocated.fetch_sub(charge, std::memory_order_relaxed);
    throw;
  }
}

void limiting_resource_adaptor::deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept
{
  order.deallocate(upstream(), ptr, bytes);
  state().allocated.fetch_sub(state().charge(bytes), std::memory_order_relaxed);
}

}  // namespace rmm::mr
