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
  using value_type      = typename device_uvector<T>::value_type;
  using reference       = typename device_uvector<T>::reference;
  using const_reference = typename device_uvector<T>::const_reference;
  using pointer         = typename device_uvector<T>::pointer;
  using const_pointer   = typename device_uvector<T>::const_pointer;

  /// No default constructor: the scalar needs a stream to order its deallocation on.
  device_scalar() = delete;

  /// Uninitialized storage for one `T`, allocated on `stream` from `mr`.
  explicit device_scalar(cuda_stream_view stream, mr::any_device_resource mr = mr::get_current_device_resource())
    : storage_{1, stream, std::move(mr)}
  {
  }

  /// Storage holding `initial_value`. Waits for `stream`, so `initial_value` may be a temporary.
  explicit device_scalar(value_type const& initial_value,
                         cuda_stream_view stream,
                         mr::any_device_resource mr = mr::get_current_device_resource())
    : storage_{1, stream, std::move(mr)}
  {
    set_value(initial_value, stream);
  }

  /// Deep copy of `other`'s value, copied on `stream` from `mr` (does not wait).
  explicit device_scalar(device_scalar const& other,
                         cuda_stream_view stream,
                         mr::any_device_resource mr = mr::get_current_device_resource())
    : storage_{other.storage_, stream, std::move(mr)}
  {
  }

  device_scalar(device_scalar const&)                = delete;
  device_scalar& operator=(device_scalar const&)     = delete;
  device_scalar(device_scalar&&) noexcept            = default;
  device_scalar& operator=(device_scalar&&) noexcept = default;
  ~device_scalar()                                   = default;

  /// The value, copied to the host on `stream` (waits for the stream).
  [[nodiscard]] value_type value(cuda_stream_view stream) const { return storage_.front_element(stream); }

  /// Sets the value on `stream` and waits for the stream, so `value` may be a temporary.
  void set_value(value_type const& value, cuda_stream_view stream) { storage_.set_element(0, value, stream); }

  /// Sets the value on `stream` without waiting: `value` must stay alive until the stream
  /// reaches the copy (passing a temporary does not compile).
  void set_value_async(value_type const& value, cuda_stream_view stream)
  {
    storage_.set_element_async(0, value, stream);
  }
  void set_value_async(value_type const&&, cuda_stream_view) = delete;

  /// Sets the value's bytes to zero on `stream` without waiting.
  void set_value_to_zero_async(cuda_stream_view stream) { storage_.set_element_to_zero_async(0, stream); }

  [[nodiscard]] pointer data() noexcept { return storage_.data(); }
  [[nodiscard]] const_pointer data() const noexcept { return storage_.data(); }
  [[nodiscard]] static constexpr std::size_t size() noexcept { return 1; }

  [[nodiscard]] cuda_stream_view stream() const noexcept { return storage_.stream(); }
  /// Orders later work (deallocation) on `stream`; the caller synchronizes streams.
  void set_stream(cuda_stream_view stream) noexcept { storage_.set_stream(stream); }
  [[nodiscard]] device_async_resource_ref memory_resource() const noexcept { return storage_.memory_resource(); }
  /// The device the scalar was created on.
  [[nodiscard]] cuda_device_id device() const noexcept { return storage_.device(); }

 private:
  device_uvector<T> storage_;
};

}  // namespace rmm
