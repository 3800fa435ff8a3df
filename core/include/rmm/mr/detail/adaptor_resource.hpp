// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/mr/detail/allocation_order.hpp>
#include <rmm/mr/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <memory>
#include <utility>

namespace rmm::mr::detail {

/**
 * What every adaptor has in common: an upstream, a state its copies share (copies compare equal),
 * and the four allocation entry points, which all reach the adaptor's work written once over an
 * allocation_order. An adaptor defines, for this base (a friend):
 *
 *   void* allocate_in(std::size_t bytes, allocation_order order);
 *   void deallocate_in(void* ptr, std::size_t bytes, allocation_order order) noexcept;
 *
 * `State` may stay incomplete in the adaptor's header.
 */
template <class Derived, class State>
class adaptor_resource : public device_memory_resource {
 public:
  /// The resource this adaptor forwards to.
  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept { return upstream_; }

 protected:
  adaptor_resource(any_device_resource upstream, std::shared_ptr<State> state) noexcept
    : upstream_{std::move(upstream)}, state_{std::move(state)}
  {
  }

  [[nodiscard]] any_device_resource& upstream() const noexcept { return upstream_; }
  [[nodiscard]] State& state() const noexcept { return *state_; }

 private:
  [[nodiscard]] Derived& derived() noexcept { return static_cast<Derived&>(*this); }

  void* do_allocate(std::size_t bytes, cuda_stream_view stream) final
  {
    return derived().allocate_in(bytes, allocation_order::on(stream));
  }
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept final
  {
    derived().deallocate_in(ptr, bytes, allocation_order::on(stream));
  }
  void* do_allocate_sync(std::size_t bytes) final { return derived().allocate_in(bytes, allocation_order::host()); }
  void do_deallocate_sync(void* ptr, std::size_t bytes) noexcept final
  {
    derived().deallocate_in(ptr, bytes, allocation_order::host());
  }
  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept final
  {
    auto const* same = dynamic_cast<Derived const*>(&other);
    return same != nullptr && same->state_ == state_;
  }

  mutable any_device_resource upstream_;  // a shared handle: copies of the adaptor use the same resource
  std::shared_ptr<State> state_;
};

}  // namespace rmm::mr::detail
