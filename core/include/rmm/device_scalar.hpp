// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream_view.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace rmm {

/**
 * A single `T` in device memory, stream-ordered, with host-side get and set: a device_uvector of
 * one element (same device, resource and stream rules). Pass data() to kernels.
 */
template <typename T>
class device_scalar {
  static_assert(std::is_trivially_copyable_v<T>, "device_scalar holds trivially copyable types only");

 public:
  using value_type      = typename device_uvector<T>::value_type;       ///< `T`, the stored type
  using reference       = typename device_uvector<T>::reference;        ///< a reference to the value
  using const_reference = typename device_uvector<T>::const_reference;  ///< a const reference to the value
  using pointer         = typename device_uvector<T>::pointer;          ///< the device pointer data() returns
  using const_pointer   = typename device_uvector<T>::const_pointer;    ///< the device pointer data() const returns

  /// No default constructor: the scalar needs a stream to order its deallocation on.
  device_scalar() = delete;

  /**
   * @brief Uninitialized storage for one `T`, allocated on `stream` from `mr`.
   *
   * @param stream the stream the allocation, and later the deallocation, are ordered on
   * @param mr the resource to allocate from (default: the current device's)
   * @throws rmm::out_of_memory when the resource runs out of memory
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when there is no usable device
   */
  explicit device_scalar(cuda_stream_view stream, mr::any_device_resource mr = mr::get_current_device_resource())
    : storage_{1, stream, std::move(mr)}
  {
  }

  /**
   * @brief Storage holding `initial_value`. Waits for `stream`, so `initial_value` may be a temporary.
   *
   * @param initial_value the value to copy to the device
   * @param stream the stream the allocation, the copy and later the deallocation are ordered on
   * @param mr the resource to allocate from (default: the current device's)
   * @throws rmm::out_of_memory when the resource runs out of memory
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when there is no usable device, or the copy or the wait fails
   */
  explicit device_scalar(value_type const& initial_value,
                         cuda_stream_view stream,
                         mr::any_device_resource mr = mr::get_current_device_resource())
    : storage_{1, stream, std::move(mr)}
  {
    set_value(initial_value, stream);
  }

  /**
   * @brief Deep copy of `other`'s value, copied on `stream` from `mr` (does not wait).
   *
   * @param other the scalar to copy; its value must be ready on `stream`
   * @param stream the stream the allocation, the copy and later the deallocation are ordered on
   * @param mr the resource to allocate from (default: the current device's)
   * @throws rmm::out_of_memory when the resource runs out of memory
   * @throws rmm::bad_alloc when the allocation fails for another reason
   * @throws rmm::cuda_error when there is no usable device or the copy fails
   */
  explicit device_scalar(device_scalar const& other,
                         cuda_stream_view stream,
                         mr::any_device_resource mr = mr::get_current_device_resource())
    : storage_{other.storage_, stream, std::move(mr)}
  {
  }

  device_scalar(device_scalar const&)            = delete;
  device_scalar& operator=(device_scalar const&) = delete;
  /// @brief Default move constructor; the moved-from scalar holds no storage
  device_scalar(device_scalar&&) noexcept = default;
  /**
   * @brief Default move assignment operator; frees this scalar's storage (on its stream, on its
   * device), then takes the other scalar's
   *
   * @return a reference to this scalar
   */
  device_scalar& operator=(device_scalar&&) noexcept = default;
  ~device_scalar()                                   = default;

  /**
   * @brief The value, copied to the host on `stream` (waits for the stream).
   *
   * @param stream the stream the copy is ordered on
   * @return the value
   * @throws rmm::cuda_error when the copy or the wait fails
   */
  [[nodiscard]] value_type value(cuda_stream_view stream) const { return storage_.front_element(stream); }

  /**
   * @brief Sets the value on `stream` and waits for the stream, so `value` may be a temporary.
   *
   * @param value the new value
   * @param stream the stream the copy is ordered on
   * @throws rmm::cuda_error when the copy or the wait fails
   */
  void set_value(value_type const& value, cuda_stream_view stream) { storage_.set_element(0, value, stream); }

  /**
   * @brief Sets the value on `stream` without waiting.
   *
   * `value` must stay alive until the stream reaches the copy (passing a temporary does not
   * compile).
   *
   * @param value the new value, read when the stream reaches the copy
   * @param stream the stream the copy is ordered on
   * @throws rmm::cuda_error when the copy cannot be enqueued
   */
  void set_value_async(value_type const& value, cuda_stream_view stream)
  {
    storage_.set_element_async(0, value, stream);
  }
  void set_value_async(value_type const&&, cuda_stream_view) = delete;

  /**
   * @brief Sets the value's bytes to zero on `stream` without waiting.
   *
   * @param stream the stream the memset is ordered on
   * @throws rmm::cuda_error when the memset cannot be enqueued
   */
  void set_value_to_zero_async(cuda_stream_view stream) { storage_.set_element_to_zero_async(0, stream); }

  /**
   * @brief The value's device address, for kernels.
   *
   * @return a device pointer to the value
   */
  [[nodiscard]] pointer data() noexcept { return storage_.data(); }
  /**
   * @brief The value's device address, for kernels.
   *
   * @return a device pointer to the value
   */
  [[nodiscard]] const_pointer data() const noexcept { return storage_.data(); }
  /**
   * @brief The number of elements: always 1.
   *
   * @return 1
   */
  [[nodiscard]] static constexpr std::size_t size() noexcept { return 1; }

  /**
   * @brief The stream the scalar's deallocation is ordered on.
   *
   * @return the stream
   */
  [[nodiscard]] cuda_stream_view stream() const noexcept { return storage_.stream(); }
  /**
   * @brief Orders later work (deallocation) on `stream`; the caller synchronizes streams.
   *
   * @param stream the new stream
   */
  void set_stream(cuda_stream_view stream) noexcept { storage_.set_stream(stream); }
  /**
   * @brief The resource the memory comes from.
   *
   * @return a reference valid while the scalar lives
   */
  [[nodiscard]] device_async_resource_ref memory_resource() const noexcept { return storage_.memory_resource(); }
  /**
   * @brief The device the scalar was created on.
   *
   * @return the device that was current at construction
   */
  [[nodiscard]] cuda_device_id device() const noexcept { return storage_.device(); }

 private:
  device_uvector<T> storage_;
};

}  // namespace rmm
