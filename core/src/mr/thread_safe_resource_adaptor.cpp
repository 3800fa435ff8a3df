// SPDX-License-Identifier: Apache-2.0
#include <rmm/mr/thread_safe_resource_adaptor.hpp>

#include <mutex>

namespace rmm::mr {

namespace detail {
struct thread_safe_state {
  // Recursive: while the upstream serves a call, the calling thread may come back through this
  // adaptor, as a before-growth hook does when it hands memory back through the top of the stack
  // (rmm/mr/before_growth.hpp). Other threads still wait.
  std::recursive_mutex mutex;
};
}  // namespace detail

thread_safe_resource_adaptor::thread_safe_resource_adaptor(any_device_resource upstream)
  : adaptor_resource{std::move(upstream), std::make_shared<detail::thread_safe_state>()}
{
}

void* thread_safe_resource_adaptor::allocate_in(std::size_t bytes, detail::allocation_order order)
{
  std::lock_guard lock{state().mutex};
  return order.allocate(upstream(), bytes);
}

void thread_safe_resource_adaptor::deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept
{
  std::lock_guard lock{state().mutex};
  order.deallocate(upstream(), ptr, bytes);
}

}  // namespace rmm::mr
