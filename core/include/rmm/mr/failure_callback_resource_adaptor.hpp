// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_stream_view.hpp>
#include <rmm/detail/error.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/detail/adaptor_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <functional>
#include <memory>

namespace rmm::mr {

/// Called with the size of a failed request and the user's argument; returns true to retry.
using failure_callback_t = std::function<bool(std::size_t bytes, void* arg)>;

namespace detail {
/// What copies of a failure_callback_resource_adaptor share.
struct failure_callback_state {
  /**
   * @brief Holds `callback_` and `arg_`.
   *
   * @param callback_ the function to call when an allocation fails
   * @param arg_ passed to every call of `callback_`
   * @throws rmm::logic_error if `callback_` is empty
   */
  failure_callback_state(failure_callback_t callback_, void* arg_) : callback{std::move(callback_)}, arg{arg_}
  {
    RMM_EXPECTS(static_cast<bool>(callback), "failure_callback_resource_adaptor: the callback is empty");
  }
  failure_callback_t callback;  ///< called with the failed request's size and `arg`; true retries
  void* arg;                    ///< the user's argument to `callback`
};
}  // namespace detail

/**
 * Calls a function when the upstream throws `ExceptionType` (by default rmm::out_of_memory) and
 * retries the allocation for as long as the function returns true; when it returns false the
 * exception reaches the caller. The function can free caches, spill, or wait for other work,
 * and must bound its retries itself.
 *
 * Copies share the callback and compare equal.
 */
template <class ExceptionType = rmm::out_of_memory>
class failure_callback_resource_adaptor final
  : public detail::adaptor_resource<failure_callback_resource_adaptor<ExceptionType>, detail::failure_callback_state> {
  using base =
    detail::adaptor_resource<failure_callback_resource_adaptor<ExceptionType>, detail::failure_callback_state>;

 public:
  /**
   * @brief Retries allocations from `upstream` that throw `ExceptionType` while `callback` says so.
   *
   * @param upstream the resource memory comes from
   * @param callback called with the failed request's size and `callback_arg`; returns true to retry
   * @param callback_arg passed to every call of `callback`
   * @throws rmm::logic_error if `callback` is empty
   */
  failure_callback_resource_adaptor(any_device_resource upstream, failure_callback_t callback, void* callback_arg)
    : base{std::move(upstream), std::make_shared<detail::failure_callback_state>(std::move(callback), callback_arg)}
  {
  }

 private:
  friend base;

  void* allocate_in(std::size_t bytes, detail::allocation_order order)
  {
    while (true) {
      try {
        return order.allocate(this->upstream(), bytes);
      } catch (ExceptionType const&) {
        if (!this->state().callback(bytes, this->state().arg)) { throw; }
      }
    }
  }
  void deallocate_in(void* ptr, std::size_t bytes, detail::allocation_order order) noexcept
  {
    order.deallocate(this->upstream(), ptr, bytes);
  }
};

static_assert(cuda::mr::resource_with<failure_callback_resource_adaptor<>, cuda::mr::device_accessible>);

}  // namespace rmm::mr
