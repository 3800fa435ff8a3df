// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/detail/adaptor_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <memory>

namespace rmm::mr {

namespace detail {
struct thread_safe_state;
}

/**
 * Serializes every allocation and deallocation of its upstream behind one mutex, for upstreams
 * that are not thread-safe themselves (rmm's own resources all are). The thread inside may come
 * back through the adaptor while its call is served (a before-growth hook handing memory back
 * through the top of a stack does): the mutex is recursive, other threads wait.
 *
 * Copies share the mutex and compare equal.
 */
class thread_safe_resource_adaptor final
  : public detail::adaptor_resource<thread_safe_resource_adaptor, detail::thread_safe_state> {
 public:
  /**
   * @brief Serializes the allocations and deallocations of `upstream` made through this adaptor.
   *
   * @param upstream the resource memory comes from
   */
  explicit thread_safe_resource_adaptor(any_device_resource upstream);

 private:
  friend detail::adaptor_resource<thread_safe_resource_adaptor, detail::thread_safe_state>;
  /// The adaptor's work, once for both orders.
  void* allocate_in(std::size_t bytes, detail::allocation_order order);
  void deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept;
};

static_assert(cuda::mr::resource_with<thread_safe_resource_adaptor, cuda::mr::device_accessible>);

}  // namespace rmm::mr
