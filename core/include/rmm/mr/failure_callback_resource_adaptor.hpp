#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/allocation_order.hpp>
#include <rmm/mr/device_memory_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <functional>
#include <memory>

namespace rmm::mr {

/// Called with the size of a failed request and the user's argument; returns true to retry.
using failure_callback_t = std::function<bool(std::size_t bytes, void* arg)>;

/**
 * Calls a function when the upstream throws `ExceptionType` (by default rmm::out_of_memory) and
 * retries the allocation for as long as the function returns true; when it returns false the
 * exception reaches the caller. The function can free caches, spill, or wait for other work,
 * and must bound its retries itself.
 *
 * Copies share the callback and compare equal.
 */
template <class ExceptionType = rmm::out_of_memory>
class failure_callback_resource_adaptor final : public device_memory_resource {
 public:
  /// Throws rmm::logic_error if `callback` is empty.
  failure_callback_resource_adaptor(any_device_resource upstream, failure_callback_t callback, void* callback_arg)
    : state_{std::make_shared<state>(std::move(upstream), std::move(callback), callback_arg)}
  {
    RMM_EXPECTS(static_cast<bool>(state_->callback), "failure_callback_resource_adaptor: the callback is empty");
  }

  [[nodiscard]] device_async_resource_ref get_upstream_resource() const noexcept { return state_->upstream; }

 private:
  struct state {
    state(any_device_resource upstream_resource, failure_callback_t callback_, void* arg_)
      : upstream{std::move(upstream_resource)}, callback{std::move(callback_)}, arg{arg_}
    {
    }
    any_device_resource upstream;
    failure_callback_t callback;
    void* arg;
  };

  void* do_allocate(std::size_t bytes, cuda_stream_view stream) override
  {
    return allocate_in(bytes, detail::allocation_order::on(stream));
  }
  void do_deallocate(void* ptr, std::size_t bytes, cuda_stream_view stream) noexcept override
  {
    detail::allocation_order::on(stream).deallocate(state_->upstream, ptr, bytes);
  }
  void* do_allocate_sync(std::size_t bytes) override { return allocate_in(bytes, detail::allocation_order::host()); }
  void do_deallocate_sync(void* ptr, std::size_t bytes) noexcept override
  {
    detail::allocation_order::host().deallocate(state_->upstream, ptr, bytes);
  }

  void* allocate_in(std::size_t bytes, detail::allocation_order order)
  {
    while (true) {
      try {
        return order.allocate(state_->upstream, bytes);
      } catch (ExceptionType const&) {
        if (!state_->callback(bytes, state_->arg)) { throw; }
      }
    }
  }

  [[nodiscard]] bool do_is_equal(device_memory_resource const& other) const noexcept override
  {
    auto const* adaptor = dynamic_cast<failure_callback_resource_adaptor const*>(&other);
    return adaptor != nullptr && adaptor->state_ == state_;
  }

  std::shared_ptr<state> state_;
};

}  // namespace rmm::mr
